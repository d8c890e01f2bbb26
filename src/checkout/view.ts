// The checkout's public view of a payment: what the hosted page shows and nothing more (docs/API.md, The hosted checkout:
// no metadata, no order_id, no webhook URL). One query loads it for one payment or for the many that
// the live-status feed watches; its presenter (src/presenters/checkout.ts) decides its JSON shape.
import { Address } from '@ton/core';
import type { TonNetwork } from '../config.ts';
import { prepared, sql, z, type Db } from '../db/pool.ts';
import { toBaseUnits } from '../money.ts';
import { listStoreMethods, type MethodRow } from '../payments/methods.ts';
import { priceFor } from '../payments/pricing.ts';
import type { RatePolicy } from '../rates/rates.ts';
import { PAYMENT_WITH_METHOD, paymentView } from '../payments/view.ts';

/** The merchant view's columns the page may show, and what only the page needs. */
const checkoutRow = paymentView
  .pick({
    id: true,
    store_id: true,
    status: true,
    amount: true,
    currency: true,
    description: true,
    return_url: true,
    coin_symbol: true,
    coin_name: true,
    coin_decimals: true,
    coin_kind: true,
    chain_symbol: true,
    chain_name: true,
    coin_amount: true,
    address_friendly: true,
    reference: true,
    created_at: true,
    expires_at: true,
    paid_at: true,
    transaction_hashes: true,
    received_base_units: true,
    telegram_mini_app: true,
  })
  .extend({
    store_name: z.string(),
    store_logo_url: z.string().nullable(),
    store_accent_color: z.string().nullable(),
    jetton_master: z.string().nullable(),
    received_base_units: z.string(),
    exchange_rate: z.string().nullable(),
  });
export type CheckoutRow = z.infer<typeof checkoutRow>;

/**
 * The rows behind the page. `store_name` is what customers see: the display name, else the name. Received so far is the sum of the counted transfers in the books
 * (effects partial, completed, overpaid), in base units.
 */
function checkoutQuery(ids: readonly string[], network: TonNetwork) {
  return sql.type(checkoutRow)`
    select p.id, p.store_id, coalesce(s.display_name, s.name) as store_name, s.telegram_bot || '/' || s.telegram_app as telegram_mini_app, s.logo_url as store_logo_url, s.accent_color as store_accent_color, p.status, p.amount::text as amount, p.currency, p.description, p.return_url,
           p.coin_symbol, c.name as coin_name, c.decimals::int as coin_decimals, c.kind as coin_kind,
           pm.chain_symbol, ch.name as chain_name, p.coin_amount::text as coin_amount, coalesce(d.address_friendly, p.settlement_address_friendly) as address_friendly, p.reference,
           jm.master_address as jetton_master, p.exchange_rate::text as exchange_rate, p.created_at, p.expires_at, p.paid_at,
           coalesce(counted.hashes, array[]::text[]) as transaction_hashes,
           coalesce(counted.total_base_units, 0)::text as received_base_units
    from ${PAYMENT_WITH_METHOD}
    join stores s on s.id = p.store_id
    left join jetton_masters jm on jm.coin_symbol = p.coin_symbol and jm.network = ${network}
    where p.id = any(${sql.array(ids as string[], 'uuid')})
  `;
}

export async function findCheckoutRow(db: Db, paymentId: string, network: TonNetwork): Promise<CheckoutRow | null> {
  return db.maybeOne(prepared(checkoutQuery([paymentId], network)));
}

/** Many payments at once (the live-status feed), keyed by id; unknown ids are absent. */
export async function findCheckoutRows(db: Db, paymentIds: readonly string[], network: TonNetwork): Promise<Map<string, CheckoutRow>> {
  const rows = new Map<string, CheckoutRow>();
  for (let start = 0; start < paymentIds.length; start += 500) {
    for (const row of await db.any(checkoutQuery(paymentIds.slice(start, start + 500), network))) rows.set(row.id, row);
  }
  return rows;
}

/** Base units of the coin still to send (0 when paid in full or more); null before a method is fixed. */
export function amounts(row: CheckoutRow): { required: bigint; received: bigint; remaining: bigint; decimals: number } | null {
  if (row.coin_amount === null || row.coin_decimals === null) return null;
  const decimals = row.coin_decimals;
  const required = toBaseUnits(row.coin_amount, decimals);
  const received = BigInt(row.received_base_units);
  return { required, received, remaining: received >= required ? 0n : required - received, decimals };
}

export interface MethodOffer {
  method: MethodRow;
  /** What the customer would send if they chose it now; null when it cannot be priced or paid now. */
  coinAmount: string | null;
}

/**
 * The store's methods with the exact coin amount each would cost now (the same pricing that fixes
 * coinAmount when one is chosen). A jetton without a master on this network cannot be paid here.
 */
export async function methodOffers(db: Db, row: CheckoutRow, network: TonNetwork, now: Date, policy: RatePolicy): Promise<MethodOffer[]> {
  const methods = await listStoreMethods(db, row.store_id);
  const masters = new Set(
    await db.anyFirst(sql.type(z.object({ coin_symbol: z.string() }))`select coin_symbol from jetton_masters where network = ${network}`),
  );
  const offers: MethodOffer[] = [];
  for (const method of methods) {
    if (method.coin_kind === 'jetton' && !masters.has(method.coin_symbol)) continue;
    try {
      offers.push({ method, coinAmount: (await priceFor(db, row.amount, row.currency, method, now, policy)).coinAmount });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      // No fresh rate right now: show it, but not choosable. A pair that can never be priced: hide it.
      if (code === 'rate_unavailable') offers.push({ method, coinAmount: null });
      else if (code !== 'unsupported_payment_method') throw error;
    }
  }
  return offers;
}

/** A jetton master in the user-friendly bounceable form wallets expect in `jetton=`. */
export function friendlyMaster(raw: string, network: TonNetwork): string {
  return Address.parseRaw(raw).toString({ urlSafe: true, bounceable: true, testOnly: network === 'testnet' });
}
