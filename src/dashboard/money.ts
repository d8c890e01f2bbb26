// What the dashboard reads of money (issue 24): a payment's money per coin and its timeline, the
// refund form's preview, the store's Money page and its Webhooks page. Every figure comes from the
// SQL that defines it — deposit_money (a deposit's money, migration 000014), reporting.store_money
// (its sum per store, 000021), reporting.deposit_differences (reconciliation) and
// reporting.webhook_outcomes — never from a second computation here. Always scoped by store.
import { friendlyAddress, parseAddress, type TonNetwork } from '../chain/addresses.ts';
import { sql, z, type DatabasePool, type Db } from '../db/pool.ts';
import type { ReportingDb } from '../db/reporting.ts';
import { fromBaseUnits, shownCoinName, shownTicker } from '../money.ts';
import type { TransferRow } from '../payments/transfers.ts';
import type { PaymentView, StorePayment } from '../payments/view.ts';
import { depositMoney, type DepositMoney, type OutgoingRow } from '../treasury/outgoing.ts';
import type { JettonOwnerOf } from '../treasury/destinations.ts';
import type { RefundRequest } from '../treasury/refundRequest.ts';
import { createRefund, refundBalance, refundFigures } from '../treasury/refunds.ts';
import type { JettonWalletOf } from '../treasury/treasuryRefunds.ts';
import { CLOSING_SHARE_WORDS, EFFECT_WORDS, OUTGOING_WORDS, readable } from './words.ts';

const TON_DECIMALS = 9;

/** One coin's money, in coin units (fees in TON), as a page shows it. */
export interface CoinMoney {
  coin: string;
  received: string;
  counted: string;
  refunded: string;
  swept: string;
  /** TON paid (or set aside) for receiving this coin and moving it out. */
  feesTon: string;
  refundable: string;
  /** Counted toward a payment still open (not refundable yet). */
  held: string;
}

/** deposit_money's rows (base units) in coin units. */
function coinMoneyOf(rows: readonly DepositMoney[]): CoinMoney[] {
  return rows.map((row) => ({
    coin: row.coin_symbol,
    received: fromBaseUnits(BigInt(row.received), row.decimals),
    counted: fromBaseUnits(BigInt(row.counted), row.decimals),
    refunded: fromBaseUnits(BigInt(row.refunded), row.decimals),
    swept: fromBaseUnits(BigInt(row.swept), row.decimals),
    feesTon: fromBaseUnits(BigInt(row.fees), TON_DECIMALS),
    refundable: fromBaseUnits(BigInt(row.refundable), row.decimals),
    held: fromBaseUnits(BigInt(row.held), row.decimals),
  }));
}

/**
 * A payment's money per coin, read once from deposit_money: the coins that saw any money (the TON
 * row deposit_money always gives is left out when nothing of it moved); and what refunds may take
 * now, with until when the sale is refundable — the figures GET …/balance answers (refunds.ts
 * refundBalance: the sale's share included while its refund window is open).
 */
export async function paymentMoney(
  db: Db,
  paymentId: string,
  now: Date,
): Promise<{ coins: CoinMoney[]; refundable: RefundableCoin[]; refundableUntil: Date | null }> {
  const [all, balance] = await Promise.all([depositMoney(db, paymentId), refundBalance(db, paymentId, now)]);
  const rows = all.filter((row) => row.received !== '0' || row.refunded !== '0' || row.swept !== '0' || row.fees !== '0' || row.counted !== '0');
  const refundable = all.flatMap((row) => {
    const figures = balance.coins.get(row.coin_symbol);
    return figures && figures.refundable > 0n
      ? [{ coin: row.coin_symbol, amount: units(figures.refundable.toString(), row.decimals), largest: units(figures.largest.toString(), row.decimals) }]
      : [];
  });
  return { coins: coinMoneyOf(rows), refundable, refundableUntil: balance.refundableUntil };
}

/** A coin a refund may take now, as GET …/balance says it: `refundable` (the sale included inside its window) and `largestRefund`. */
export interface RefundableCoin {
  coin: string;
  amount: string;
  /** The largest refund POST …/refunds accepts now ("0": none). */
  largest: string;
}

// ---- the timeline ------------------------------------------------------------------------------

export interface TimelineEvent {
  at: Date;
  /** created, method, transfer, completed, expired, cancelled, sweep, refund, gas_top_up. */
  kind: string;
  text: string;
  /** A chain transaction to link to the explorers. */
  hash?: string | null;
}

const outgoingTimes = z.object({ id: z.string(), confirmed_at: z.date().nullable(), failed_at: z.date().nullable() });

/** The times a payment's transfers out were confirmed or failed, and when it expired or was cancelled. */
export async function timelineTimes(
  db: Db,
  paymentId: string,
): Promise<{ outgoing: Map<string, z.infer<typeof outgoingTimes>>; expiredAt: Date | null; cancelledAt: Date | null }> {
  const [rows, payment] = await Promise.all([
    db.any(sql.type(outgoingTimes)`select id, confirmed_at, failed_at from outgoing_transfers where payment_id = ${paymentId}`),
    db.one(sql.type(z.object({ expired_at: z.date().nullable(), cancelled_at: z.date().nullable() }))`
      select expired_at, cancelled_at from payments where id = ${paymentId}
    `),
  ]);
  return { outgoing: new Map(rows.map((row) => [row.id, row])), expiredAt: payment.expired_at, cancelledAt: payment.cancelled_at };
}

/**
 * The payment's story in time order: created, method chosen, each transfer in, completed /
 * expired / cancelled, and each transfer out (planned, then confirmed or failed). Pure.
 */
export function paymentTimeline(input: {
  payment: Pick<PaymentView, 'created_at' | 'method_selected_at' | 'paid_at' | 'coin_symbol' | 'coin_amount' | 'chain_symbol'>;
  expiredAt: Date | null;
  cancelledAt: Date | null;
  transfers: readonly TransferRow[];
  outgoing: readonly OutgoingRow[];
  outgoingTimes: ReadonlyMap<string, { confirmed_at: Date | null; failed_at: Date | null }>;
}): TimelineEvent[] {
  const { payment } = input;
  const events: TimelineEvent[] = [{ at: payment.created_at, kind: 'created', text: 'Created' }];
  if (payment.method_selected_at) {
    const amount = payment.coin_amount && payment.coin_symbol ? `: ${payment.coin_amount} ${shownTicker(payment.coin_symbol)} to pay` : '';
    events.push({
      at: payment.method_selected_at,
      kind: 'method',
      text: `Method chosen: ${payment.coin_symbol ? shownCoinName(payment.coin_symbol) : '?'} on the ${payment.chain_symbol ?? 'TON'} network${amount}`,
    });
  }
  for (const t of input.transfers) {
    events.push({
      at: t.chain_time,
      kind: 'transfer',
      text: `Received ${t.amount ?? t.amount_base_units} ${t.coin_symbol ? shownTicker(t.coin_symbol) : '(unknown token)'}: ${EFFECT_WORDS[t.effect]}`,
      hash: t.hash,
    });
  }
  if (payment.paid_at) events.push({ at: payment.paid_at, kind: 'completed', text: 'Completed' });
  if (input.expiredAt) events.push({ at: input.expiredAt, kind: 'expired', text: 'Expired' });
  if (input.cancelledAt) events.push({ at: input.cancelledAt, kind: 'cancelled', text: 'Cancelled' });
  for (const o of input.outgoing) {
    const kind =
      o.source === 'treasury'
        ? 'Refund from the treasury'
        : o.reason === 'leftover' || o.reason === 'gas_return'
          ? CLOSING_SHARE_WORDS[o.reason]
          : OUTGOING_WORDS[o.kind];
    const what = `${kind} of ${o.amount} ${shownTicker(o.coin_symbol)}`;
    events.push({ at: o.created_at, kind: o.kind, text: o.source === 'treasury' ? `${what} asked (for the merchant's wallet to sign)` : `${what} planned` });
    const times = input.outgoingTimes.get(o.id);
    if (times?.confirmed_at) {
      events.push({
        at: times.confirmed_at,
        kind: o.kind,
        text: `${what} done${o.fee ? ` (network fee ${readable(o.fee, 'TON')} GRAM)` : ''}`,
        hash: o.transaction_hash,
      });
    }
    if (times?.failed_at) events.push({ at: times.failed_at, kind: o.kind, text: `${what} failed: ${o.failure_reason ?? 'no reason recorded'}` });
  }
  // Chain time has whole seconds (a transfer in the second its payment was created reads as before
  // it): events are ordered by the second, and within one second in the story's order (the order
  // they were added in).
  const second = (date: Date) => Math.floor(date.getTime() / 1000);
  return events
    .map((event, index) => ({ event, index }))
    .sort((a, b) => second(a.event.at) - second(b.event.at) || a.index - b.index)
    .map((e) => e.event);
}

// ---- the refund preview ------------------------------------------------------------------------

/** Thrown inside the preview's transaction to roll it back with what it found. */
class PreviewDone extends Error {
  readonly figures: RefundPreview;
  constructor(figures: RefundPreview) {
    super('refund preview');
    this.figures = figures;
  }
}

export interface RefundPreview {
  /** "treasury": paid from the store's own wallet, which signs it (else from the payment address). */
  from?: 'treasury';
  coin: string;
  /** What leaves the deposit (coin units). */
  amount: string;
  /** The network fee in TON: what is set aside for it (the real one is known once confirmed). */
  fee: string;
  /** What reaches the destination (coin units). */
  arrives: string;
  /** The destination as given, and in the network's user-friendly form. */
  address: string;
  destination: string;
}

/**
 * What a refund would do — the fee set aside and what arrives — found by running the API's own
 * command (createRefund) in a transaction that is rolled back: the preview refuses exactly what the
 * refund would refuse (KassaError, with its param), and its figures are the refund's.
 */
export async function previewRefund(
  pool: DatabasePool,
  network: TonNetwork,
  payment: Pick<StorePayment, 'id' | 'store_id'>,
  request: RefundRequest,
  now: Date,
  ownerOf: JettonOwnerOf | null = null,
  walletOf: JettonWalletOf | null = null,
): Promise<RefundPreview> {
  try {
    await pool.transaction(async (tx) => {
      const row = await createRefund(tx, network, payment, request, now, null, ownerOf, walletOf);
      const figures = refundFigures(row);
      const parsed = parseAddress(row.to_address);
      throw new PreviewDone({
        ...(row.source === 'treasury' ? { from: 'treasury' as const } : {}),
        coin: row.coin_symbol,
        amount: row.amount,
        fee: figures.fee,
        arrives: figures.receives,
        address: request.address.trim(),
        destination: parsed ? friendlyAddress(parsed, network) : row.to_address,
      });
    });
  } catch (error) {
    if (error instanceof PreviewDone) return error.figures;
    throw error;
  }
  throw new Error('the refund preview ended without its figures');
}

// ---- the store's Money page ----------------------------------------------------------------------

const storeMoneyRow = z.object({
  coin_symbol: z.string(),
  decimals: z.number(),
  payments_with_money: z.number(),
  received: z.string(),
  counted: z.string(),
  refunded: z.string(),
  swept: z.string(),
  fees: z.string(),
  held: z.string(),
  merchant_unswept: z.string(),
  refundable: z.string(),
  in_deposits: z.string(),
  gas: z.string(),
});

interface StoreCoinMoney extends CoinMoney {
  payments: number;
  merchantUnswept: string;
  inDeposits: string;
}

interface Difference {
  paymentId: string;
  coin: string;
  account: string;
  booked: string;
  onChain: string;
  difference: string;
  checkedAt: Date;
}

export interface StoreMoney {
  coins: StoreCoinMoney[];
  /** Every coin's fees together (TON). */
  feesTon: string;
  /** Kassa's own TON in the store's deposits (gas for jetton transfers). */
  gasTon: string;
  differences: Difference[];
  /** The treasury, user-friendly for the network, or null when the store has none. */
  treasury: string | null;
  /** The last reconciliation of any of the store's deposits, or null. */
  lastReconciledAt: Date | null;
}

const units = (value: string, decimals: number) => fromBaseUnits(BigInt(value), decimals);

/**
 * The store's money per coin (reporting.store_money), its reconciliation differences, its treasury.
 * A report: it may read the replica (db/reporting.ts), in one read-only transaction.
 */
export async function storeMoney(db: ReportingDb, storeId: string, network: TonNetwork): Promise<StoreMoney> {
  const [rows, differences, store, reconciled] = await Promise.all([
    // deposit_money once per payment with money: thousands of small plans, which PostgreSQL's JIT
    // would spend seconds compiling (measured: 2.3 s of 3.5 s at 20,000 payments) for nothing: every
    // report reads with JIT off (db/reporting.ts).
    db.any(sql.type(storeMoneyRow)`
      select coin_symbol, decimals, payments_with_money::int as payments_with_money, received::text as received, counted::text as counted,
             refunded::text as refunded, swept::text as swept, fees::text as fees, held::text as held, merchant_unswept::text as merchant_unswept,
             refundable::text as refundable, in_deposits::text as in_deposits, gas::text as gas
      from reporting.store_money where store_id = ${storeId}
      order by coin_symbol <> 'TON', coin_symbol
    `),
    db.any(sql.type(
      z.object({
        payment_id: z.string(),
        coin_symbol: z.string(),
        decimals: z.number(),
        account: z.string(),
        booked: z.string(),
        on_chain: z.string(),
        difference: z.string(),
        checked_at: z.date(),
      }),
    )`
      select d.payment_id, d.coin_symbol, c.decimals::int as decimals, d.account, d.booked_base_units::text as booked,
             d.on_chain_base_units::text as on_chain, d.difference_base_units::text as difference, d.checked_at
      from reporting.deposit_differences d join coins c on c.symbol = d.coin_symbol
      where d.store_id = ${storeId}
      order by d.checked_at desc limit 200
    `),
    db.one(sql.type(z.object({ treasury: z.string().nullable() }))`select treasury from stores where id = ${storeId}`),
    db.oneFirst(sql.type(z.object({ at: z.date().nullable() }))`
      select max(r.checked_at) as at from deposit_reconciliations r join payments p on p.id = r.payment_id where p.store_id = ${storeId}
    `),
  ]);
  const coins = rows
    .filter((row) => row.received !== '0' || row.refunded !== '0' || row.swept !== '0' || row.fees !== '0')
    .map((row) => ({
      coin: row.coin_symbol,
      payments: row.payments_with_money,
      received: units(row.received, row.decimals),
      counted: units(row.counted, row.decimals),
      refunded: units(row.refunded, row.decimals),
      swept: units(row.swept, row.decimals),
      feesTon: units(row.fees, TON_DECIMALS),
      refundable: units(row.refundable, row.decimals),
      held: units(row.held, row.decimals),
      merchantUnswept: units(row.merchant_unswept, row.decimals),
      inDeposits: units(row.in_deposits, row.decimals),
    }));
  const fees = rows.reduce((sum, row) => sum + BigInt(row.fees), 0n);
  const gas = rows.find((row) => row.coin_symbol === 'TON')?.gas ?? '0';
  const treasury = store.treasury === null ? null : parseAddress(store.treasury);
  return {
    coins,
    feesTon: fromBaseUnits(fees, TON_DECIMALS),
    gasTon: units(gas, TON_DECIMALS),
    differences: differences.map((d) => ({
      paymentId: d.payment_id,
      coin: d.coin_symbol,
      account: d.account,
      booked: units(d.booked, d.decimals),
      onChain: units(d.on_chain, d.decimals),
      difference: units(d.difference, d.decimals),
      checkedAt: d.checked_at,
    })),
    treasury: treasury ? friendlyAddress(treasury, network) : store.treasury,
    lastReconciledAt: reconciled,
  };
}

// ---- the Webhooks page: recent deliveries -------------------------------------------------------------------------

const outcomeRow = z.object({
  delivery_id: z.string(),
  payment_id: z.string(),
  order_id: z.string().nullable(),
  reason: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number(),
  url: z.string(),
  created_at: z.date(),
  last_http_status: z.number().nullable(),
  last_error: z.string().nullable(),
});
export type WebhookOutcome = z.infer<typeof outcomeRow>;

/** Webhook deliveries the Webhooks page shows at a time (a page of them: the page stays a few screens tall on a phone). */
export const DELIVERIES_PER_PAGE = 10;

/** The store's most recent webhook deliveries (reporting.webhook_outcomes): failed first, then pending, then delivered; newest first within; `offset` skips as many. */
export async function recentWebhookOutcomes(db: Db, storeId: string, limit = 50, offset = 0): Promise<readonly WebhookOutcome[]> {
  return db.any(sql.type(outcomeRow)`
    select delivery_id, payment_id, order_id, reason, status, attempts, url, created_at, last_http_status, last_error
    from reporting.webhook_outcomes where store_id = ${storeId}
    order by case status when 'failed' then 0 when 'pending' then 1 else 2 end, created_at desc, delivery_id
    limit ${limit} offset ${offset}
  `);
}
