// The payment as read for its presenter (src/presenters/payment.ts): the merchant's view in one
// query — by id, or as the store's payment (with the token's check: retrieve's one round trip) —
// and the amount received so far.
import { tokenValidSql, type TokenCheck } from '../auth/tokens.ts';
import { prepared, sql, z, type Db, type FragmentSqlToken } from '../db/pool.ts';
import { authInvalid } from '../errors.ts';
import { fromBaseUnits, toBaseUnits } from '../money.ts';
import { COUNTED_OF_PAYMENT, REFUNDS_OF_PAYMENT } from './counted.ts';
import { PAYMENT_STATUSES } from './transitions.ts';

export const paymentView = z.object({
  id: z.string(),
  store_id: z.string(),
  status: z.enum(PAYMENT_STATUSES),
  amount: z.string(),
  currency: z.string(),
  order_id: z.string().nullable(),
  description: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  webhook_url: z.string().nullable(),
  return_url: z.string().nullable(),
  payment_link_id: z.string().nullable(),
  /** The subscription whose period it pays (the billing engine's renewal), else null. */
  subscription_id: z.string().nullable(),
  payment_method_id: z.string().nullable(),
  coin_symbol: z.string().nullable(),
  coin_name: z.string().nullable(),
  coin_decimals: z.number().nullable(),
  coin_kind: z.string().nullable(),
  chain_symbol: z.string().nullable(),
  chain_name: z.string().nullable(),
  coin_amount: z.string().nullable(),
  address: z.string().nullable(),
  address_friendly: z.string().nullable(),
  created_at: z.date(),
  expires_at: z.date(),
  method_selected_at: z.date().nullable(),
  paid_at: z.date().nullable(),
  transaction_hashes: z.array(z.string()),
  /** Base units of the coin counted toward the payment (numeric as text). */
  received_base_units: z.string(),
  /** Base units of the payment's coin refunded, and of them the sale's (counted.ts REFUNDS_OF_PAYMENT; numeric as text). */
  refunded_base_units: z.string(),
  sale_refunded_base_units: z.string(),
  /** The effects of every transfer on the payment's books (for its anomalies). */
  transfer_effects: z.array(z.string()),
  /** "<bot>/<app>": the store's Telegram Mini App when it has both (the payment's telegramURL), else null. */
  telegram_mini_app: z.string().nullable(),
  /** The Telegram user recorded on the payment (src/telegram/payer.ts): id as text (bigint), username. */
  telegram_user_id: z.string().nullable(),
  telegram_username: z.string().nullable(),
  /** deposit or treasury (CONTRACT §12): as the payment was created. */
  settlement: z.enum(['deposit', 'treasury']),
  /** Treasury settlement: the reference the customer sends (9 characters, no dash); null for a deposit. */
  reference: z.string().nullable(),
});
export type PaymentView = z.infer<typeof paymentView>;

/**
 * A payment `p` with what its method brings: the counted transfers (`counted`), the method `pm`,
 * its coin `c` and chain `ch`, and the deposit address `d` (all absent before a method is chosen).
 * The FROM clause of the merchant's view and of the checkout's.
 */
export const PAYMENT_WITH_METHOD = sql.fragment`
  payments p
  ${COUNTED_OF_PAYMENT}
  left join payment_methods pm on pm.id = p.payment_method_id
  left join coins c on c.symbol = p.coin_symbol
  left join chains ch on ch.symbol = pm.chain_symbol
  left join deposit_addresses d on d.payment_id = p.id
`;

/** Everything the presenter needs, in one query. */
export const PAYMENT_VIEW = sql.fragment`
  select p.id, p.store_id, p.status, p.amount::text as amount, p.currency, p.order_id, p.description, p.metadata,
         p.webhook_url, p.return_url, p.payment_link_id, p.subscription_id, p.payment_method_id, p.coin_symbol, c.name as coin_name,
         c.decimals::int as coin_decimals, c.kind as coin_kind, pm.chain_symbol, ch.name as chain_name,
         p.coin_amount::text as coin_amount, coalesce(d.address, p.settlement_address) as address,
         coalesce(d.address_friendly, p.settlement_address_friendly) as address_friendly, p.created_at, p.expires_at,
         p.method_selected_at, p.paid_at,
         coalesce(counted.hashes, array[]::text[]) as transaction_hashes, coalesce(counted.total_base_units, 0)::text as received_base_units,
         coalesce(counted.effects, array[]::text[]) as transfer_effects,
         refunds.refunded_base_units, refunds.sale_refunded_base_units,
         (select s.telegram_bot || '/' || s.telegram_app from stores s where s.id = p.store_id) as telegram_mini_app,
         p.telegram_user_id::text as telegram_user_id, p.telegram_username, p.settlement, p.reference
  from ${PAYMENT_WITH_METHOD}
  ${REFUNDS_OF_PAYMENT}
`;

/**
 * The one reader of a payment's view: the payment `where` selects, or null — with, when `check` is
 * given and not yet made, its bearer token's database check in the same statement (auth_invalid when
 * the token is not valid, before anything about the payment is used; `Guards.merchantInline`).
 *
 * Two shortcuts kept because bench/api measured what they buy (docs/PERFORMANCE.md, issue 23): without
 * them (the token checked in its own statement by the guard, the view parsed by zod from ~30 columns)
 * Kassa spent a median 36 % more CPU per retrieve (and 33 % per create, which also checks its token
 * inline) in the same runs — past the 10 % the issue allowed. The token's check folded in saves a
 * round trip (a retrieve is 1 statement, not 2); the view as one JSON column has node-postgres
 * describe and parse one field instead of ~30 (issue 13: 228–230 → 202–206 µs of Kassa's CPU per
 * retrieve). The JSON is not parsed by a schema: its types are the ones `paymentView` checks (the
 * list's reader), its times turned back into Dates.
 */
async function readPaymentView(db: Db, where: FragmentSqlToken, check?: TokenCheck): Promise<PaymentView | null> {
  const pending = check !== undefined && !check.checked;
  const row = (await db.one(
    prepared(sql.unsafe`
    select ${pending ? tokenValidSql(check.token, check.now) : sql.fragment`true`} as token_valid, row_to_json(v)::text as view
    from (select 1) as one left join lateral (${PAYMENT_VIEW} where ${where}) as v on true
  `),
  )) as { token_valid: boolean; view: string | null };
  if (!row.token_valid) throw authInvalid();
  if (pending) check.checked = true;
  return row.view === null ? null : viewFromJson(row.view);
}

/** The payment's view by its id alone, for callers that have made sure whose it is (or need not: the sandbox, the commands). */
export async function findPaymentView(db: Db, paymentId: string): Promise<PaymentView | null> {
  return readPaymentView(db, sql.fragment`p.id = ${paymentId}`);
}

/** A payment of the store that asks for it, as `findStorePayment` found it: its view. */
export type StorePayment = PaymentView;

/**
 * The one answer to "is this payment this store's?" (the API's `guards.storePayment`, the dashboard's
 * `storePayment`, a list's cursor): the payment's view when it is the store's, else null — another
 * store's payment is not found, never forbidden (docs/API.md). Commands that act on a store's payment
 * take what this returned, so none of them asks again. `check`: the bearer token's database check
 * still to make (`Guards.merchantInline`), made in the same statement.
 */
export async function findStorePayment(db: Db, storeId: string, paymentId: string, check?: TokenCheck): Promise<StorePayment | null> {
  return readPaymentView(db, sql.fragment`p.id = ${paymentId} and p.store_id = ${storeId}`, check);
}

type Times = 'created_at' | 'expires_at' | 'method_selected_at' | 'paid_at';

/** PAYMENT_VIEW's row as `row_to_json` writes it: the same fields, its timestamps as ISO 8601 text. */
function viewFromJson(text: string): PaymentView {
  const json = JSON.parse(text) as Omit<PaymentView, Times> & Record<Times, string | null>;
  return {
    ...json,
    created_at: new Date(json.created_at!),
    expires_at: new Date(json.expires_at!),
    method_selected_at: json.method_selected_at === null ? null : new Date(json.method_selected_at),
    paid_at: json.paid_at === null ? null : new Date(json.paid_at),
  };
}

/**
 * The coin amount counted so far, written as every amount of the API ("2", never "2.0": a sum of
 * numeric amounts in SQL keeps their scale, so it is made from base units); "0" before a method.
 */
export function receivedAmount(row: Pick<PaymentView, 'coin_decimals' | 'received_base_units'>): string {
  return row.coin_decimals === null ? '0' : fromBaseUnits(BigInt(row.received_base_units), row.coin_decimals);
}

/** The payment's coin refunded ("0" before a method), written as every amount of the API. */
export function refundedAmount(row: Pick<PaymentView, 'coin_decimals' | 'refunded_base_units'>): string {
  return row.coin_decimals === null ? '0' : fromBaseUnits(BigInt(row.refunded_base_units), row.coin_decimals);
}

/** How much of the sale was refunded: none, part of it, or all of it (a completed payment's; else none). */
export function saleRefunded(row: Pick<PaymentView, 'status' | 'coin_amount' | 'coin_decimals' | 'sale_refunded_base_units'>): 'none' | 'part' | 'full' {
  const refunded = BigInt(row.sale_refunded_base_units);
  if (row.status !== 'completed' || refunded === 0n || row.coin_decimals === null || row.coin_amount === null) return 'none';
  return refunded >= toBaseUnits(row.coin_amount, row.coin_decimals) ? 'full' : 'part';
}
