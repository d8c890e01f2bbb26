// A store's home page figures (issue 32): sales today / 7 / 30 days per price currency and per coin,
// the last 30 days' payments by status, the money waiting (what refunds may take now, what the
// payment addresses still hold, transfers out that failed), a daily sales series for the chart, and
// what needs attention. The SQL reads rows; the figures are made by the plain functions below, so
// each equals what the API answers: sales and statuses are sums over GET /v1/payments, the money
// waiting sums GET /v1/payments/{id}/balance (refundable with the sale inside its refund window,
// as refunds.ts refundableMoney decides it), failed transfers are the refunds' and sweeps' `failed`.
import { sql, z } from '../db/pool.ts';
import type { ReportingDb } from '../db/reporting.ts';
import { fromBaseUnits, priceShare, readableDecimal, sumDecimals } from '../money.ts';
import { REFUNDS_OF_PAYMENT } from '../payments/counted.ts';
import { PAYMENT_STATUSES, type PaymentStatus } from '../payments/transitions.ts';
import { isFiatCurrency } from '../rates/fiat.ts';
import { feeReserveFor } from '../treasury/fees.ts';

/** The windows a sale is summed over: today (UTC), the last 7 and the last 30 days, today included. */
export const SALES_WINDOWS = [
  { key: 'today', days: 1, label: 'Today' },
  { key: '7d', days: 7, label: 'Last 7 days' },
  { key: '30d', days: 30, label: 'Last 30 days' },
] as const;
type SalesWindow = (typeof SALES_WINDOWS)[number]['key'];
const LONGEST = 30;

const DAY_MS = 86_400_000;
/** The UTC midnight `daysBack` days before `now`'s day. */
export const dayStart = (now: Date, daysBack = 0): Date => new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS - daysBack * DAY_MS);
const dayKey = (date: Date) => date.toISOString().slice(0, 10);

// ---- the rows -----------------------------------------------------------------------------------

const saleRow = z.object({ day: z.string(), currency: z.string(), coin_symbol: z.string(), payments: z.number(), amount: z.string(), coin_amount: z.string() });
type SaleRow = z.infer<typeof saleRow>;
const statusRow = z.object({ status: z.enum(PAYMENT_STATUSES), payments: z.number() });
const waitingRow = z.object({
  coin_symbol: z.string(),
  decimals: z.number(),
  refundable: z.string(),
  sale_refundable: z.string(),
  in_deposits: z.string(),
});
type WaitingRow = z.infer<typeof waitingRow>;
const failedRow = z.object({ kind: z.enum(['refund', 'sweep']), coin_symbol: z.string(), transfers: z.number(), amount: z.string() });
type FailedRow = z.infer<typeof failedRow>;

export interface HomeRows {
  sales: readonly SaleRow[];
  statuses: readonly { status: PaymentStatus; payments: number }[];
  waiting: readonly WaitingRow[];
  failed: readonly FailedRow[];
  failedWebhooks: number;
  differences: number;
  /**
   * The store's refund fee balance (nanoTON available) and the reserve a refund in `token` needs, when
   * the store takes a token; `likely`: a token refund is waiting or likely (customers' token money to
   * refund sits at its payment addresses, or the store has refunded a token before).
   */
  refundGas: { available: bigint; needed: bigint; token: string; likely: boolean } | null;
  /** Whether the store has a treasury (its own wallet): without one every sale stays in Kassa's wallets. */
  hasTreasury?: boolean;
}

/**
 * What the home page reads: the store's completed sales and payments of the last 30 days, its money
 * in payment addresses, what failed. A report: it may read the replica (db/reporting.ts), in one
 * read-only transaction, its statements one after another on that transaction's connection.
 */
export async function homeRows(db: ReportingDb, storeId: string, now: Date): Promise<HomeRows> {
  const since = dayStart(now, LONGEST - 1);
  const [sales, statuses, waiting, failed, attention, tokens, tokenRefunds] = await Promise.all([
    // Net of refunds (counted.ts REFUNDS_OF_PAYMENT: the sale's part, from the payment address or the
    // treasury): the price less its refunded share, the coin amount less what of the sale went back.
    db.any(sql.type(saleRow)`
      select to_char(p.paid_at at time zone 'UTC', 'YYYY-MM-DD') as day, p.currency, p.coin_symbol, count(*)::int as payments,
             trim_scale(sum(p.amount - coalesce(round(p.amount * refunds.sale_refunded_base_units::numeric / nullif(p.coin_amount_base_units, 0), 9), 0)))::text as amount,
             trim_scale(sum(p.coin_amount - refunds.sale_refunded_base_units::numeric / 10::numeric ^ c.decimals))::text as coin_amount
      from payments p join coins c on c.symbol = p.coin_symbol
      ${REFUNDS_OF_PAYMENT}
      where p.store_id = ${storeId} and p.status = 'completed' and p.paid_at >= ${sql.timestamp(since)} and p.paid_at <= ${sql.timestamp(now)}
      group by 1, 2, 3
    `),
    db.any(sql.type(statusRow)`
      select status, count(*)::int as payments from payments
      where store_id = ${storeId} and created_at >= ${sql.timestamp(since)} and created_at <= ${sql.timestamp(now)}
      group by status
    `),
    // deposit_money once per payment with money (as reporting.store_money; JIT off, as every report
    // reads: db/reporting.ts). The sale's share is refundable while its window is open and its sweep
    // not planned (treasury/refunds.ts refundableMoney's rule).
    db.any(sql.type(waitingRow)`
      select m.coin_symbol, m.decimals::int as decimals, sum(m.refundable)::text as refundable,
             coalesce(sum(m.merchant_unswept) filter (
               where p.status = 'completed' and p.coin_symbol = m.coin_symbol and p.refundable_until > ${sql.timestamp(now)}
                 and not exists (select 1 from outgoing_transfers o where o.payment_id = p.id and o.kind = 'sweep' and o.reason = 'payment' and o.state <> 'failed')
             ), 0)::text as sale_refundable,
             sum(m.held + m.merchant_unswept + m.refundable)::text as in_deposits
      from payments p
      join deposit_addresses d on d.payment_id = p.id
      cross join lateral deposit_money(p.id) m
      where p.store_id = ${storeId} and exists (select 1 from transfers t where t.payment_id = p.id)
      group by m.coin_symbol, m.decimals
    `),
    db.any(sql.type(failedRow)`
      select kind, coin_symbol, count(*)::int as transfers, sum(amount)::text as amount
      from outgoing_transfers where store_id = ${storeId} and state = 'failed' and kind in ('refund', 'sweep')
      group by kind, coin_symbol
    `),
    db.one(sql.type(z.object({ webhooks: z.number(), differences: z.number(), has_treasury: z.boolean() }))`
      select (select count(*) from reporting.webhook_outcomes where store_id = ${storeId} and status = 'failed' and created_at >= ${sql.timestamp(since)})::int as webhooks,
             (select count(*) from reporting.deposit_differences where store_id = ${storeId})::int as differences,
             (select treasury is not null from stores where id = ${storeId}) as has_treasury
    `),
    db.anyFirst(sql.type(z.object({ coin_symbol: z.string() }))`
      select distinct pm.coin_symbol from store_payment_methods spm join payment_methods pm on pm.id = spm.payment_method_id
      where spm.store_id = ${storeId} and pm.coin_symbol <> 'TON' order by pm.coin_symbol
    `),
    db.exists(sql.unsafe`select 1 from outgoing_transfers where store_id = ${storeId} and kind = 'refund' and coin_symbol <> 'TON'`),
  ]);
  const token = tokens[0];
  // Warned of only when a token refund is waiting or likely: a new store that takes USDT and has
  // refunded none, with no customer's USDT to give back, is not opened on it (issue 47 item 3).
  const likely = tokenRefunds || waiting.some((w) => w.coin_symbol !== 'TON' && BigInt(w.refundable) > 0n);
  // The store's refund fee account (treasury/gas.ts storeRefundGas reads the same function).
  const available = async () =>
    BigInt(await db.oneFirst(sql.type(z.object({ available: z.string() }))`select available::text as available from store_refund_gas(${storeId})`));
  const refundGas = token === undefined ? null : { available: await available(), needed: feeReserveFor(token), token, likely };
  return {
    sales,
    statuses,
    waiting,
    failed,
    failedWebhooks: attention.webhooks,
    differences: attention.differences,
    refundGas,
    hasTreasury: attention.has_treasury,
  };
}

// ---- the figures (pure) -------------------------------------------------------------------------

/** Sums of one currency (a fiat, or a coin a payment was priced in) or of one coin, per window. */
export interface SalesLine {
  /** The price currency (USD, EUR, … or a coin's symbol) or the coin. */
  currency: string;
  /** Per window: the sum and how many sales. */
  windows: Record<SalesWindow, { amount: string; payments: number }>;
}

export interface HomeFigures {
  /** Per price currency (what the payments were created in), fiat first, the most sold first. */
  byPrice: SalesLine[];
  /** Per coin paid (the payments' coinAmount). */
  byCoin: SalesLine[];
  /** The store's main fiat: the price currency of most sales in 30 days (null: no sale priced in fiat). */
  mainFiat: string | null;
  /** The chart's series: one point per day of the last 30 (oldest first) in `chart.currency`. */
  chart: { currency: string; days: { day: string; amount: string; payments: number }[] } | null;
  /** Payments created in the last 30 days, per status (every status, 0 included). */
  statuses: { status: PaymentStatus; payments: number }[];
  /** Per coin with any: what refunds may take now, and what the payment addresses still hold. */
  waiting: { coin: string; refundable: string; inDeposits: string }[];
  /** Transfers out that failed, per kind and coin. */
  failed: { kind: 'refund' | 'sweep'; coin: string; transfers: number; amount: string }[];
  attention: {
    /** No treasury: every sale stays in Kassa's wallets (said first on the home page). */
    noTreasury: boolean;
    failedWebhooks: number;
    failedRefunds: number;
    failedSweeps: number;
    differences: number;
    /** The refund fee balance when it is below what one token refund needs (TON) and a token refund is waiting or likely. */
    refundGasLow: { available: string; needed: string; token: string } | null;
  };
}

const lines = (rows: readonly { key: string; day: string; amount: string; payments: number }[], days: readonly string[]): SalesLine[] => {
  const byKey = new Map<string, SalesLine>();
  const windowStart = Object.fromEntries(SALES_WINDOWS.map((w) => [w.key, days[days.length - w.days]!])) as Record<SalesWindow, string>;
  const parts = new Map<string, Record<SalesWindow, string[]>>();
  for (const row of rows) {
    let line = byKey.get(row.key);
    if (!line) {
      line = { currency: row.key, windows: { today: { amount: '0', payments: 0 }, '7d': { amount: '0', payments: 0 }, '30d': { amount: '0', payments: 0 } } };
      byKey.set(row.key, line);
      parts.set(row.key, { today: [], '7d': [], '30d': [] });
    }
    for (const w of SALES_WINDOWS) {
      if (row.day < windowStart[w.key]) continue;
      line.windows[w.key].payments += row.payments;
      parts.get(row.key)![w.key].push(row.amount);
    }
  }
  for (const [key, line] of byKey) for (const w of SALES_WINDOWS) line.windows[w.key].amount = sumDecimals(parts.get(key)![w.key]);
  return [...byKey.values()];
};

const mostSold = (a: SalesLine, b: SalesLine) => b.windows['30d'].payments - a.windows['30d'].payments || a.currency.localeCompare(b.currency);

export function homeFigures(rows: HomeRows, now: Date): HomeFigures {
  const days = Array.from({ length: LONGEST }, (_, i) => dayKey(dayStart(now, LONGEST - 1 - i)));
  const inRange = rows.sales.filter((r) => r.day >= days[0]! && r.day <= days.at(-1)!);
  const byPrice = lines(
    inRange.map((r) => ({ key: r.currency, day: r.day, amount: r.amount, payments: r.payments })),
    days,
  ).sort((a, b) => Number(isFiatCurrency(b.currency)) - Number(isFiatCurrency(a.currency)) || mostSold(a, b));
  const byCoin = lines(
    inRange.map((r) => ({ key: r.coin_symbol, day: r.day, amount: r.coin_amount, payments: r.payments })),
    days,
  ).sort(mostSold);
  const mainFiat = byPrice.find((line) => isFiatCurrency(line.currency))?.currency ?? null;
  const chartCurrency = mainFiat ?? byCoin[0]?.currency ?? null;
  const chartRows = mainFiat
    ? inRange.filter((r) => r.currency === mainFiat).map((r) => ({ day: r.day, amount: r.amount, payments: r.payments }))
    : inRange.filter((r) => r.coin_symbol === chartCurrency).map((r) => ({ day: r.day, amount: r.coin_amount, payments: r.payments }));
  const chart =
    chartCurrency === null
      ? null
      : {
          currency: chartCurrency,
          days: days.map((day) => {
            const of = chartRows.filter((r) => r.day === day);
            return { day, amount: sumDecimals(of.map((r) => r.amount)), payments: of.reduce((n, r) => n + r.payments, 0) };
          }),
        };
  const count = new Map(rows.statuses.map((s) => [s.status, s.payments]));
  const failed = rows.failed.map((f) => ({ kind: f.kind, coin: f.coin_symbol, transfers: f.transfers, amount: f.amount }));
  const failedOf = (kind: 'refund' | 'sweep') => failed.filter((f) => f.kind === kind).reduce((n, f) => n + f.transfers, 0);
  const gas = rows.refundGas;
  return {
    byPrice,
    byCoin,
    mainFiat,
    chart,
    statuses: PAYMENT_STATUSES.map((status) => ({ status, payments: count.get(status) ?? 0 })),
    waiting: rows.waiting
      .map((w) => ({
        coin: w.coin_symbol,
        refundable: fromBaseUnits(BigInt(w.refundable) + BigInt(w.sale_refundable), w.decimals),
        inDeposits: fromBaseUnits(BigInt(w.in_deposits), w.decimals),
      }))
      .filter((w) => w.refundable !== '0' || w.inDeposits !== '0')
      .sort((a, b) => Number(b.coin === 'TON') - Number(a.coin === 'TON') || a.coin.localeCompare(b.coin)),
    failed,
    attention: {
      noTreasury: rows.hasTreasury === false,
      failedWebhooks: rows.failedWebhooks,
      failedRefunds: failedOf('refund'),
      failedSweeps: failedOf('sweep'),
      differences: rows.differences,
      refundGasLow:
        gas?.likely && gas.available < gas.needed
          ? { available: fromBaseUnits(gas.available > 0n ? gas.available : 0n, 9), needed: fromBaseUnits(gas.needed, 9), token: gas.token }
          : null,
    },
  };
}

/** The sales of every coin together in the store's main fiat, per window, at today's rates (coins per unit of fiat); null when a coin sold has no rate now. */
export interface SalesTotal {
  currency: string;
  windows: Record<SalesWindow, string> | null;
  /** The coins sold with no rate now (the total is then not given). */
  unpriced: string[];
}

/** The net sales per coin (byCoin) in `currency` at `rates` (coin per unit of the currency), to cents. Pure. */
export function salesTotal(byCoin: readonly SalesLine[], currency: string, rates: ReadonlyMap<string, string | null>): SalesTotal {
  const unpriced = byCoin.filter((line) => !rates.get(line.currency)).map((line) => line.currency);
  if (unpriced.length) return { currency, windows: null, unpriced };
  const windows = Object.fromEntries(
    SALES_WINDOWS.map((w) => [
      w.key,
      readableDecimal(sumDecimals(byCoin.map((line) => priceShare(line.windows[w.key].amount, '1', rates.get(line.currency)!, 9))), 2),
    ]),
  ) as Record<SalesWindow, string>;
  return { currency, windows, unpriced: [] };
}
