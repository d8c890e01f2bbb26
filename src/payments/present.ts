// The payment presenter: the only place that decides the outward JSON shape of a payment,
// including which fields each status shows (docs/API.md, The payment object).
import { tokenValidSql, type TokenCheck } from '../auth/tokens.ts';
import { prepared, sql, z, type Db } from '../db/pool.ts';
import { authInvalid } from '../errors.ts';
import { fromBaseUnits } from '../money.ts';
import { chainImageUrl, coinImageUrl } from './methods.ts';
import { anomaliesOf } from './anomalies.ts';
import { COUNTED_OF_PAYMENT } from './counted.ts';
import { PAYMENT_STATUSES, type PaymentStatus } from './transitions.ts';

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
  /** The effects of every transfer on the payment's books (for its anomalies). */
  transfer_effects: z.array(z.string()),
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
         p.webhook_url, p.return_url, p.payment_method_id, p.coin_symbol, c.name as coin_name,
         c.decimals::int as coin_decimals, c.kind as coin_kind, pm.chain_symbol, ch.name as chain_name,
         p.coin_amount::text as coin_amount, d.address, d.address_friendly, p.created_at, p.expires_at,
         p.method_selected_at, p.paid_at,
         coalesce(counted.hashes, array[]::text[]) as transaction_hashes, coalesce(counted.total_base_units, 0)::text as received_base_units,
         coalesce(counted.effects, array[]::text[]) as transfer_effects
  from ${PAYMENT_WITH_METHOD}
`;

export async function findPaymentView(db: Db, paymentId: string, options: { storeId?: string } = {}): Promise<PaymentView | null> {
  const store = options.storeId === undefined ? sql.fragment`true` : sql.fragment`p.store_id = ${options.storeId}`;
  return db.maybeOne(prepared(sql.type(paymentView)`${PAYMENT_VIEW} where p.id = ${paymentId} and ${store}`));
}

/**
 * The merchant's read of one payment and its bearer token's database check, in one statement
 * (`Guards.merchantInline`): auth_invalid when the token is not valid — before anything about the
 * payment is used — else the payment of the token's store, or null. The row is not parsed by a
 * schema (the hot path of retrieve): node-postgres's types are the ones `paymentView` checks.
 */
export async function findPaymentViewChecked(db: Db, paymentId: string, check: TokenCheck): Promise<PaymentView | null> {
  const row = (await db.one(
    prepared(sql.unsafe`
    select ${tokenValidSql(check.token, check.now)} as token_valid, v.*
    from (select 1) as one left join lateral (${PAYMENT_VIEW} where p.id = ${paymentId} and p.store_id = ${check.token.storeId}) as v on true
  `),
  )) as { token_valid: boolean } & ({ [K in keyof PaymentView]: PaymentView[K] } | { id: null });
  if (!row.token_valid) throw authInvalid();
  check.checked = true;
  if (row.id === null) return null;
  const { token_valid: _checked, ...view } = row;
  return view as PaymentView;
}

/** RFC 3339 in UTC with milliseconds. */
export const rfc3339 = (date: Date): string => date.toISOString();

export interface PresentOptions {
  checkoutBaseUrl: string;
}

/**
 * The payment object (docs/API.md). paymentDetails is present once a method was chosen (pending,
 * completed, and expired/cancelled payments that had reached pending); transactionSignatures and
 * timer.paidAt only when completed. `anomalies` (extension): what the books say beside the status
 * (payments/anomalies.ts), an empty list when nothing.
 */
export function presentPayment(payment: PaymentView, { checkoutBaseUrl }: PresentOptions) {
  const status: PaymentStatus = payment.status;
  const completed = status === 'completed';
  const details = presentPaymentDetails(payment, checkoutBaseUrl, receivedAmount(payment));
  return {
    id: payment.id,
    status,
    ...(payment.order_id !== null ? { order_id: payment.order_id } : {}),
    amount: payment.amount,
    currency: payment.currency,
    checkoutURL: `${checkoutBaseUrl}/${payment.id}`,
    ...(details ? { paymentDetails: details } : {}),
    timer: {
      createdAt: rfc3339(payment.created_at),
      expiresAt: rfc3339(payment.expires_at),
      ...(completed && payment.paid_at ? { paidAt: rfc3339(payment.paid_at) } : {}),
    },
    metadata: payment.metadata,
    ...(payment.description !== null ? { description: payment.description } : {}),
    ...(payment.return_url !== null ? { returnURL: payment.return_url } : {}),
    anomalies: anomaliesOf(status, payment.transfer_effects),
  };
}

export type PresentedPayment = ReturnType<typeof presentPayment>;

/**
 * The coin amount counted so far, written as every amount of the API ("2", never "2.0": a sum of
 * numeric amounts in SQL keeps their scale, so it is made from base units); "0" before a method.
 */
export function receivedAmount(row: Pick<PaymentView, 'coin_decimals' | 'received_base_units'>): string {
  return row.coin_decimals === null ? '0' : fromBaseUnits(BigInt(row.received_base_units), row.coin_decimals);
}

type DetailFields = Pick<
  PaymentView,
  'status' | 'coin_symbol' | 'coin_name' | 'chain_symbol' | 'chain_name' | 'coin_amount' | 'address_friendly' | 'transaction_hashes'
>;

/**
 * The payment object's paymentDetails (docs/API.md), for the merchant's payment object and the checkout's view alike;
 * undefined until a method is chosen. `receivedAmount` (extension): the confirmed sum counted
 * toward the payment so far. transactionSignatures only once completed.
 */
export function presentPaymentDetails(row: DetailFields, checkoutBaseUrl: string, receivedAmount: string) {
  if (row.coin_symbol === null || row.coin_amount === null || row.chain_symbol === null) return undefined;
  return {
    ...(row.address_friendly !== null ? { address: row.address_friendly } : {}),
    coinAmount: row.coin_amount,
    coin: { name: row.coin_name ?? row.coin_symbol, symbol: row.coin_symbol, imgUrl: coinImageUrl(checkoutBaseUrl, row.coin_symbol) },
    chain: { name: row.chain_name ?? row.chain_symbol, symbol: row.chain_symbol, imgUrl: chainImageUrl(checkoutBaseUrl, row.chain_symbol) },
    receivedAmount,
    ...(row.status === 'completed' ? { transactionSignatures: row.transaction_hashes } : {}),
  };
}
