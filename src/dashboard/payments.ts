// What the dashboard reads of a store's payments: the list (newest first; filters by status, coin
// and creation date; search by payment id, order id, deposit address or transaction hash; keyset
// pages), and one payment with its timeline, books, money per coin (deposit_money, read in
// money.ts) and webhook deliveries. Always scoped by store: another store's payment is simply not found.
import { parseAddress, type TonNetwork } from '../chain/addresses.ts';
import { sql, z, type Db } from '../db/pool.ts';
import { ANOMALY_RULES, anomaliesOf, type Anomaly } from '../payments/anomalies.ts';
import { REFUNDS_OF_PAYMENT } from '../payments/counted.ts';
import { listTransfers, type TransferRow } from '../payments/transfers.ts';
import { PAYMENT_STATUSES, type PaymentStatus } from '../payments/transitions.ts';
import { findStorePayment, receivedAmount, type PaymentView } from '../payments/view.ts';
import { outgoingOfPayment, type OutgoingRow } from '../treasury/outgoing.ts';
import { payerOf } from '../treasury/refundRequest.ts';
import { treasuryRefundable } from '../treasury/treasuryRefunds.ts';
import { KassaError } from '../errors.ts';
import { fromBaseUnits } from '../money.ts';
import { isUuid } from '../uuid.ts';
import { type CoinMoney, paymentMoney, paymentTimeline, type RefundableCoin, type TimelineEvent, timelineTimes } from './money.ts';
import { listWebhookDeliveries, type DeliveryWithAttempts } from '../webhooks/deliveries.ts';

const PAGE_SIZE = 50;

export interface PaymentFilters {
  status?: PaymentStatus;
  anomaly?: Anomaly;
  coin?: string;
  /** Created on or after this day (UTC, YYYY-MM-DD). */
  from?: string;
  /** Created on or before this day (UTC, YYYY-MM-DD). */
  to?: string;
  /** A payment id, an order id, a word of its description, a deposit address (any form) or a transaction hash. */
  q?: string;
  /** The id of the last payment of the previous page. */
  after?: string;
}

const FILTERS: readonly (keyof PaymentFilters)[] = ['status', 'anomaly', 'coin', 'from', 'to', 'q', 'after'];

/**
 * The list's query string, as its schema (http/routes/dashboard.schema.ts) validated it, → filters:
 * only the filters given, the cursor lower-cased. A value the schema refuses never gets here.
 */
export function filtersOf(query: PaymentFilters): PaymentFilters {
  const given = Object.fromEntries(Object.entries(query).filter(([name, value]) => FILTERS.includes(name as keyof PaymentFilters) && value !== undefined));
  return { ...given, ...(query.after ? { after: query.after.toLowerCase() } : {}) };
}

export const listedPayment = z.object({
  id: z.string(),
  status: z.enum(PAYMENT_STATUSES),
  amount: z.string(),
  currency: z.string(),
  order_id: z.string().nullable(),
  coin_symbol: z.string().nullable(),
  coin_amount: z.string().nullable(),
  created_at: z.date(),
  paid_at: z.date().nullable(),
  description: z.string().nullable(),
  coin_decimals: z.number().nullable(),
  sale_refunded_base_units: z.string(),
});
export type ListedPayment = z.infer<typeof listedPayment>;

/** The payments with an anomaly: payments/anomalies.ts ANOMALY_RULES (the definition anomaliesOf reads) as SQL. */
function anomalyCondition(anomaly: Anomaly) {
  const rule = ANOMALY_RULES[anomaly];
  const shown = sql.fragment`exists (select 1 from transfers t where t.payment_id = p.id and t.effect = any(${sql.array([...rule.effects], 'text')}))`;
  return rule.unlessStatus ? sql.fragment`p.status <> ${rule.unlessStatus} and ${shown}` : shown;
}

/**
 * The payments a search names, as a union of index lookups (order id, payment id, a transfer's
 * hash, a deposit address), each limited to the store by the caller's condition on `p`.
 */
function searchCondition(storeId: string, q: string) {
  const lookups = [
    sql.fragment`select id from payments where store_id = ${storeId} and order_id = ${q}`,
    // A word of its description (the store's payments only; LIKE's own characters taken as typed).
    sql.fragment`select id from payments where store_id = ${storeId} and description ilike ${`%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`}`,
  ];
  if (isUuid(q)) lookups.push(sql.fragment`select ${q.toLowerCase()}::uuid`);
  if (/^[0-9a-fA-F]{64}$/.test(q)) lookups.push(sql.fragment`select payment_id from transfers where hash = ${q.toLowerCase()}`);
  const address = parseAddress(q);
  if (address) lookups.push(sql.fragment`select payment_id from deposit_addresses where address = ${address.toRawString()}`);
  return sql.fragment`p.id in (${sql.join(lookups, sql.fragment` union `)})`;
}

/** At most this many rows in one CSV export (newest first; the file says when more matched). */
export const CSV_MAX_ROWS = 10_000;

export async function listStorePayments(
  // The list page reads the primary (a pool); the CSV export a report's ReportingDb (db/reporting.ts).
  db: Pick<Db, 'any'>,
  storeId: string,
  filters: PaymentFilters,
  limit = PAGE_SIZE,
): Promise<{ rows: readonly ListedPayment[]; hasMore: boolean }> {
  const conditions = [sql.fragment`p.store_id = ${storeId}`];
  if (filters.status) conditions.push(sql.fragment`p.status = ${filters.status}`);
  if (filters.coin) conditions.push(sql.fragment`p.coin_symbol = ${filters.coin}`);
  if (filters.anomaly) conditions.push(anomalyCondition(filters.anomaly));
  if (filters.from) conditions.push(sql.fragment`p.created_at >= ${filters.from}::date::timestamp at time zone 'UTC'`);
  if (filters.to) conditions.push(sql.fragment`p.created_at < (${filters.to}::date + 1)::timestamp at time zone 'UTC'`);
  if (filters.q) conditions.push(searchCondition(storeId, filters.q));
  if (filters.after) {
    conditions.push(sql.fragment`(p.created_at, p.id) < (select a.created_at, a.id from payments a where a.id = ${filters.after} and a.store_id = ${storeId})`);
  }
  const rows = await db.any(sql.type(listedPayment)`
    select p.id, p.status, p.amount::text as amount, p.currency, p.order_id, p.coin_symbol, p.coin_amount::text as coin_amount, p.created_at, p.paid_at,
           p.description, c.decimals::int as coin_decimals, refunds.sale_refunded_base_units
    from payments p left join coins c on c.symbol = p.coin_symbol
    ${REFUNDS_OF_PAYMENT}
    where ${sql.join(conditions, sql.fragment` and `)}
    order by p.created_at desc, p.id desc
    limit ${limit + 1}
  `);
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
}

/**
 * A fingerprint per store of its newest page of payments (an index scan, whatever the store's
 * size): a new payment, or a change of status or of money received among them, changes it. The
 * live payments list compares it with the one the page was rendered with.
 */
export async function listFingerprints(db: Db, storeIds: readonly string[]): Promise<Map<string, string>> {
  const rows = await db.any(sql.type(z.object({ store_id: z.string(), fingerprint: z.string() }))`
    select s.id as store_id, md5(coalesce((
      select string_agg(p.id::text || p.status || coalesce(p.paid_at::text, '') ||
             coalesce((select max(t.recorded_at)::text from transfers t where t.payment_id = p.id), ''), ',' order by p.created_at desc, p.id desc)
      from (select id, status, paid_at, created_at from payments where store_id = s.id order by created_at desc, id desc limit ${PAGE_SIZE}) p
    ), '')) as fingerprint
    from stores s where s.id = any(${sql.array([...storeIds], 'uuid')})
  `);
  return new Map(rows.map((row) => [row.store_id, row.fingerprint]));
}

const CSV_COLUMNS = ['id', 'status', 'amount', 'currency', 'coin_amount', 'coin', 'order_id', 'created_at', 'paid_at'] as const;

/**
 * A formula's first character (= + - @) where a spreadsheet could start a cell: at the start of the
 * value or of a line, or after a separator some spreadsheet splits on (`,` `;` tab `|`) — a file
 * opened with `;` as its separator splits `x;=1+1;` into a cell `=1+1`, whatever the quotes said
 * for `,`. Spaces and quotes between do not stop a formula. Tab and CR first are OWASP's too.
 */
const FORMULA_START = /(^|[,;\t|\r\n])([\s"]*)([=+\-@])/g;

/**
 * One CSV cell (RFC 4180) that no common separator turns into a formula: every place a cell could
 * start with = + - @ (FORMULA_START) gets a ' before that character, and a value starting with tab or
 * CR gets one in front, as spreadsheets show a text cell. Cells with `,` `"` or a line break are quoted.
 */
function csvCell(value: string | null): string {
  if (value === null) return '';
  const defused = value.replace(FORMULA_START, "$1$2'$3");
  const safe = /^[\t\r]/.test(defused) ? `'${defused}` : defused;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The filtered list as CSV (header, then newest first). */
export function paymentsCsv(rows: readonly ListedPayment[]): string {
  const lines = rows.map((p) =>
    [p.id, p.status, p.amount, p.currency, p.coin_amount, p.coin_symbol, p.order_id, p.created_at.toISOString(), p.paid_at?.toISOString() ?? null]
      .map(csvCell)
      .join(','),
  );
  return `${[CSV_COLUMNS.join(','), ...lines].join('\r\n')}\r\n`;
}

/** The coins a filter can offer: the store's enabled methods' coins. */
export async function storeCoins(db: Db, storeId: string): Promise<readonly string[]> {
  return db.anyFirst(sql.type(z.object({ coin_symbol: z.string() }))`
    select distinct pm.coin_symbol from store_payment_methods spm join payment_methods pm on pm.id = spm.payment_method_id
    where spm.store_id = ${storeId} order by pm.coin_symbol
  `);
}

export interface PaymentPage {
  payment: PaymentView;
  received: string;
  anomalies: Anomaly[];
  transfers: readonly TransferRow[];
  outgoing: readonly OutgoingRow[];
  /** The coins a refund may take now, as GET …/balance says (the sale included inside its refund window). */
  refundable: RefundableCoin[];
  /** Until when the sale is refundable from its deposit (null: no window, or not completed). */
  refundableUntil: Date | null;
  /** What a refund from the store's treasury may take of the sale now (coin units of the sale's coin), or null when the sale is not there (no treasury, not completed, not moved yet). */
  treasuryRefundable: string | null;
  /** The one address that paid the sale's coin (as booked, raw), the refund's "back to the sender"; null when none or several. */
  payer: string | null;
  /** When the page was read. */
  now: Date;
  /** Per coin, read once from deposit_money (dashboard/money.ts). */
  money: CoinMoney[];
  timeline: TimelineEvent[];
  deliveries: DeliveryWithAttempts[];
  network: TonNetwork;
}

/** Everything the payment page shows, or null when it is not the store's payment. */
export async function loadPaymentPage(db: Db, storeId: string, paymentId: string, network: TonNetwork, now: Date): Promise<PaymentPage | null> {
  if (!isUuid(paymentId)) return null;
  const payment = await findStorePayment(db, storeId, paymentId.toLowerCase());
  if (!payment) return null;
  const [transfers, outgoing, deliveries, money, times, treasury, payer] = await Promise.all([
    listTransfers(db, payment.id),
    outgoingOfPayment(db, payment.id),
    listWebhookDeliveries(db, payment.id),
    paymentMoney(db, payment.id, now),
    timelineTimes(db, payment.id),
    treasuryRefundable(db, payment.id),
    payment.coin_symbol === null
      ? null
      : payerOf(db, payment.id, payment.coin_symbol).catch((error: unknown) => {
          if (error instanceof KassaError) return null;
          throw error;
        }),
  ]);
  return {
    payment,
    received: receivedAmount(payment),
    anomalies: anomaliesOf(payment.status, payment.transfer_effects),
    transfers,
    outgoing,
    refundable: money.refundable,
    refundableUntil: money.refundableUntil,
    treasuryRefundable: treasury === null ? null : fromBaseUnits(treasury.available, treasury.decimals),
    payer,
    now,
    money: money.coins,
    timeline: paymentTimeline({ payment, expiredAt: times.expiredAt, cancelledAt: times.cancelledAt, transfers, outgoing, outgoingTimes: times.outgoing }),
    deliveries,
    network,
  };
}
