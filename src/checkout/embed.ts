// <kassa-pay>, the drop-in element for a shop's own page (issue 30, CONTRACT §11; docs/API.md "The
// drop-in element"): one ES module, {checkout_base_url}/v1/kassa-pay.js, with no dependency for the
// host page. The element holds no token — a payment id or a link id only — and shows the payment in
// its shadow DOM from the checkout's public reads (the JSON view, the methods, the event stream),
// which answer another origin (CORS) only when the store lists it in embedOrigins. Paying (method
// choice, TON Connect with the checkout's own manifest and request, the QR code) happens in the
// checkout itself, framed: that page is framed only by the one listed origin it was opened for
// (`?embed=ORIGIN`, its frame-ancestors), and its embed.js posts to that origin alone. TON Connect's
// UI therefore runs in Kassa's own document under Kassa's CSP; the host page loads none of it.
import fs from 'node:fs';
import { sql, z, type Db } from '../db/pool.ts';
import { asset, type StaticAsset } from '../web/assets.ts';
import { linkState, type LinkState, type PaymentLinkRow } from '../paymentLinks/links.ts';
import type { MethodOffer } from './view.ts';

/** The element's module (served as is: plain JavaScript, no build step). */
export const KASSA_PAY_JS: StaticAsset = asset('text/javascript; charset=utf-8', fs.readFileSync(new URL('./static/kassa-pay.js', import.meta.url), 'utf8'));

/** The origins a store lets embed <kassa-pay> (stores.embed_origins). */
export async function storeEmbedOrigins(db: Db, storeId: string): Promise<string[]> {
  const column = await db.maybeOneFirst(sql.type(z.object({ embed_origins: z.string().nullable() }))`select embed_origins from stores where id = ${storeId}`);
  return column ? column.split(',') : [];
}

/** The request's Origin when it is one of `allowed` (exact, as browsers send it), else null. */
export function listedOrigin(origin: string | undefined, allowed: readonly string[]): string | null {
  if (!origin || origin === 'null') return null;
  return allowed.includes(origin) ? origin : null;
}

/** A page's CSP framed by `origin` alone instead of nobody (frame-ancestors 'none' in web/csp.ts strictCsp). */
export function framedBy(csp: string, origin: string): string {
  if (!csp.includes("frame-ancestors 'none'")) throw new Error("the page's CSP has no frame-ancestors 'none' to replace");
  return csp.replace("frame-ancestors 'none'", `frame-ancestors ${origin}`);
}

/** What the element shows of a link before a payment exists (GET {checkout}/v1/checkout/links/{id}). */
export function publicLinkView(
  link: PaymentLinkRow,
  now: Date,
): {
  id: string;
  state: LinkState;
  currency: string;
  amount?: string;
  minAmount?: string;
  maxAmount?: string;
  description?: string;
} {
  return {
    id: link.id,
    state: linkState(link, now),
    currency: link.currency,
    ...(link.amount !== null ? { amount: link.amount } : {}),
    ...(link.min_amount !== null ? { minAmount: link.min_amount } : {}),
    ...(link.max_amount !== null ? { maxAmount: link.max_amount } : {}),
    ...(link.description !== null ? { description: link.description } : {}),
  };
}

/** The methods a customer may pay with now (GET {checkout}/v1/checkout/payments/{id}/methods): coin, chain, and what each would cost. */
export function publicMethods(offers: readonly MethodOffer[]): { data: Array<{ coin: string; chain: string; coinAmount?: string }> } {
  return {
    data: offers.map((offer) => ({
      coin: offer.method.coin_symbol,
      chain: offer.method.chain_symbol,
      ...(offer.coinAmount !== null ? { coinAmount: offer.coinAmount } : {}),
    })),
  };
}

/** The store of a payment, for the element's reads (null: no such payment). */
export async function paymentStore(db: Db, paymentId: string): Promise<string | null> {
  return db.maybeOneFirst(sql.type(z.object({ store_id: z.string() }))`select store_id from payments where id = ${paymentId}`);
}
