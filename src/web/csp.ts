// The Content-Security-Policy of Kassa's pages, the checkout's and the dashboard's (issue 33: one web
// foundation): nothing inline, nothing third-party, unless an option names it.

export interface CspOptions {
  /** This response's nonce for its <style> elements (TON Connect's UI, the store's colour). */
  styleNonce?: string;
  /** Hashes (`sha256-<base64>`) of the exact text of <style> elements a served library writes (the Telegram Mini App route: Telegram's script's empty one). */
  styleHashes?: readonly string[];
  /** Origins a page's script may connect to beside its own (an open payment's wallet bridges). */
  connectOrigins?: readonly string[];
  /** The origin of the store's logo. */
  imageOrigin?: string | null;
  /** Origins that may frame the page (CSP frame-ancestors); none unless given (the checkout's Telegram Mini App route: Telegram's web clients). */
  frameAncestors?: readonly string[];
}

export function strictCsp({ styleNonce, styleHashes, connectOrigins, imageOrigin, frameAncestors }: CspOptions = {}): string {
  const inlineStyles = [...(styleNonce ? [`'nonce-${styleNonce}'`] : []), ...(styleHashes ?? []).map((hash) => `'${hash}'`)];
  return [
    "default-src 'none'",
    imageOrigin ? `img-src 'self' data: ${imageOrigin}` : "img-src 'self' data:",
    ["style-src 'self'", ...inlineStyles].join(' '),
    "script-src 'self'",
    connectOrigins?.length ? `connect-src 'self' ${connectOrigins.join(' ')}` : "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    frameAncestors?.length ? `frame-ancestors ${frameAncestors.join(' ')}` : "frame-ancestors 'none'",
  ].join('; ');
}

/** The policy of a page that needs nothing beyond itself: the dashboard's pages, the checkout's message pages. */
export const PAGE_CSP = strictCsp();
