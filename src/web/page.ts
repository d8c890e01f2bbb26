// The page of both UIs, the checkout's and the dashboard's (issue 33: one web foundation): one HTML
// document with one head (charset, viewport, referrer, robots, colour scheme, title, stylesheets of
// this origin, <style> elements carrying the response's CSP nonce, deferred scripts of this origin)
// and the response headers every page sends. Each UI brings its own body and policy (web/csp.ts).
import { html, type Html } from './html.ts';

type ReferrerPolicy = 'no-referrer' | 'same-origin';

interface PageDocument {
  lang: string;
  title: string;
  /** The page's referrer policy, in its meta element (the response header says the same: pageHeaders). */
  referrer: ReferrerPolicy;
  /** Stylesheets of this origin, in order (each UI's own first: base.css sits at its top). */
  stylesheets: readonly (string | { href: string; id: string })[];
  /**
   * <style> elements allowed by this response's CSP nonce (web/csp.ts `styleNonce`); their text is
   * trusted markup made by the caller (Html), never user input.
   */
  nonceStyles?: { nonce: string; styles: readonly { css: Html; id?: string }[] };
  /** Scripts of this origin, deferred, in order. */
  scripts?: readonly string[];
  /** Without JavaScript the page reloads itself every this many seconds (an open payment). */
  noscriptRefreshSeconds?: number;
  body: Html;
}

export function pageDocument({ lang, title, referrer, stylesheets, nonceStyles, scripts = [], noscriptRefreshSeconds, body }: PageDocument): string {
  return html`<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="${referrer}">
<meta name="robots" content="noindex, nofollow">
<meta name="color-scheme" content="light dark">
<title>${title}</title>
<link rel="icon" href="data:,">
${noscriptRefreshSeconds ? html`<noscript><meta http-equiv="refresh" content="${noscriptRefreshSeconds}"></noscript>` : ''}
${stylesheets.map((sheet) => (typeof sheet === 'string' ? html`<link rel="stylesheet" href="${sheet}">` : html`<link rel="stylesheet" href="${sheet.href}" id="${sheet.id}">`))}
${(nonceStyles?.styles ?? []).map((style) => html`<style${style.id ? html` id="${style.id}"` : ''} nonce="${nonceStyles!.nonce}">${style.css}</style>`)}
${scripts.map((src) => html`<script src="${src}" defer></script>`)}
</head>
<body>
${body}
</body>
</html>
`.value;
}

/** What pageHeaders needs of a Koa context. */
interface ResponseHeaders {
  type: string;
  set(field: string, value: string): void;
}

/** The headers of every HTML page: not cached, its CSP, its referrer policy, never framed. */
export function pageHeaders(ctx: ResponseHeaders, { csp, referrer }: { csp: string; referrer: ReferrerPolicy }): void {
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Content-Security-Policy', csp);
  ctx.set('Referrer-Policy', referrer);
  ctx.set('X-Frame-Options', 'DENY');
}
