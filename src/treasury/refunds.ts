// Refunds (POST/GET /v1/payments/{id}/refunds): money in a payment's deposit wallet that is not
// part of a completed payment's counted amount — and, inside its store's refund window, the sale
// itself (its counted amount, until the sweep) — goes back to an address the merchant gives. A
// refund is an outgoing transfer (kind refund) planned with the payment row locked, so two
// refunds at once cannot take more than the refundable balance; the signer sends it.
import type { TonNetwork } from '../chain/addresses.ts';
import { sql, z, type Db } from '../db/pool.ts';
import {
  fieldBreaksRule,
  KassaError,
  paymentNotFound,
  rateUnavailable,
  refundBelowMinimum,
  refundExceedsBalance,
  refundGasUnpaid,
  tooManyDecimals,
  unusableDestination,
} from '../errors.ts';
import { storeRefundGas } from './gas.ts';
import { checkDestination } from './destinations.ts';
import { coinAmountFor, decimalPlaces, fromBaseUnits, toBaseUnits } from '../money.ts';
import { IS_CREDITED } from '../payments/counted.ts';
import type { StorePayment } from '../payments/view.ts';
import { getRate, type RatePolicy } from '../rates/rates.ts';
import { feeReserveFor, TON_FEE_RESERVE_BASE_UNITS } from './fees.ts';
import { depositMoney, outgoingRow, OUTGOING_COLUMNS, planOutgoing, type OutgoingRow, type RequestedAmount } from './outgoing.ts';

export interface RefundRequest {
  coin: string;
  /** In `currency` when given, else in the coin. */
  amount: string;
  address: string;
  /** The payment's own currency (e.g. USD) when the amount is in it; absent (or the coin): the amount is in the coin. */
  currency?: string;
  /** Which rate converts it: the payment's own (the default), or the day's. */
  rate?: 'payment' | 'current';
}

/** Plans a refund in `tx` (the caller's transaction); throws the API's errors. Returns its row (src/presenters/refund.ts shows it). */
export async function createRefund(
  tx: Db,
  network: TonNetwork,
  storePayment: Pick<StorePayment, 'id' | 'store_id'>,
  request: RefundRequest,
  now: Date,
  policy: RatePolicy | null = null,
): Promise<OutgoingRow> {
  const storeId = storePayment.store_id;
  const payment = await tx.maybeOne(sql.type(refundPayment)`
    select p.id, d.address as deposit_address, p.currency, p.coin_symbol, p.exchange_rate::text as exchange_rate, p.status,
           p.refundable_until, s.refund_window_days
    from payments p join stores s on s.id = p.store_id left join deposit_addresses d on d.payment_id = p.id
    where p.id = ${storePayment.id}
    for update of p
  `);
  if (!payment) throw paymentNotFound();
  const coin = await tx.maybeOne(sql.type(z.object({ symbol: z.string(), decimals: z.number(), minimum: z.string() }))`
    select symbol, decimals::int as decimals, refund_minimum_base_units::text as minimum from coins where symbol = ${request.coin}
  `);
  if (!coin) throw new KassaError('invalid_coin', { param: 'coin' });
  const requested = await requestedAmount(tx, payment, coin, request, now, policy);
  const coinAmount = requested?.coinAmount ?? request.amount;
  if (decimalPlaces(coinAmount) > coin.decimals) throw tooManyDecimals('amount', coin.symbol, coin.decimals);
  const given = request.address.trim() === PAYER ? await payerOf(tx, payment.id, coin.symbol) : request.address;
  const destination = await checkDestination(tx, given, network);
  if ('problem' in destination) throw unusableDestination(destination.problem);
  const amount = toBaseUnits(coinAmount, coin.decimals);
  if (amount <= 0n) throw new KassaError('invalid_amount', { param: 'amount' });
  // A refund never costs more than it moves.
  if (amount < BigInt(coin.minimum)) throw refundBelowMinimum(coin.symbol, fromBaseUnits(BigInt(coin.minimum), coin.decimals));
  const money = await refundableMoney(tx, payment, coin.symbol, now);
  const decision = decideRefund({ coin: coin.symbol, amount, refundable: money.refundable, onlyCustomerMoney: money.onlyCustomerMoney });
  if (!decision.ok) throw refundExceedsBalance(coin.symbol, whyNoMore({ coin, money, available: decision.available }));
  if (coin.symbol !== 'TON') await chargeRefundGas(tx, storeId, decision.feeReserved);
  const row = await planOutgoing(
    tx,
    {
      kind: 'refund',
      reason: 'refund',
      paymentId: payment.id,
      storeId,
      from: payment.deposit_address!,
      to: destination.raw,
      toGiven: given.trim(),
      coin: coin.symbol,
      decimals: coin.decimals,
      amountBaseUnits: amount,
      feeReservedBaseUnits: decision.feeReserved,
      ...(requested ? { requested: requested.requested } : {}),
    },
    now,
  );
  return row!;
}

const refundPayment = z.object({
  id: z.string(),
  deposit_address: z.string().nullable(),
  currency: z.string(),
  coin_symbol: z.string().nullable(),
  exchange_rate: z.string().nullable(),
  status: z.string(),
  refundable_until: z.date().nullable(),
  refund_window_days: z.number(),
});
type RefundPayment = z.infer<typeof refundPayment>;

/**
 * A refund asked in the payment's currency (fiat): its amount in the coin, converted by the pricing
 * rule (money.ts coinAmountFor: amount × rate, rounded up to the coin's decimals — so the whole
 * price refunded at the payment's own rate is exactly what it asked of the customer), at the
 * payment's own rate (its coin only) or the day's (the rates policy: rate_unavailable when there
 * is none). Null when the amount is in the coin.
 */
async function requestedAmount(
  tx: Db,
  payment: RefundPayment,
  coin: { symbol: string; decimals: number },
  request: RefundRequest,
  now: Date,
  policy: RatePolicy | null,
): Promise<{ coinAmount: string; requested: RequestedAmount } | null> {
  const currency = request.currency?.trim();
  if (currency === undefined || currency === coin.symbol) {
    // A rate converts an amount in another currency; with none it would be silently ignored.
    if (request.rate !== undefined) throw fieldBreaksRule('rate', `is given only with \`currency\` (the payment's currency, ${payment.currency})`);
    return null;
  }
  if (currency !== payment.currency) throw fieldBreaksRule('currency', `must be the payment's currency (${payment.currency}) or the coin (${coin.symbol})`);
  let rate: { rate: string; source: string };
  if ((request.rate ?? 'payment') === 'payment') {
    if (payment.coin_symbol !== coin.symbol || payment.exchange_rate === null)
      throw fieldBreaksRule(
        'rate',
        `must be "current" (today's rate) here: the payment was not priced in ${coin.symbol}, so it has no ${payment.currency}/${coin.symbol} rate of its own`,
      );
    rate = { rate: payment.exchange_rate, source: 'payment' };
  } else {
    const today = policy === null ? null : await getRate(tx, currency, coin.symbol, now, policy);
    if (today === null) throw rateUnavailable(currency, coin.symbol);
    rate = { rate: today.rate, source: today.source };
  }
  const coinAmount = coinAmountFor(request.amount, rate.rate, coin.decimals);
  return { coinAmount, requested: { amount: request.amount, currency, rate: rate.rate, rateSource: rate.source } };
}

/**
 * A jetton refund's TON comes from the shared gas wallet: it is charged to the store, and refused
 * unless the store's refund gas account (what it paid, `kassa gas paid`, less what its jetton
 * refunds cost) covers the refund's reserve. The store row is locked so that two refunds of one
 * store (on different payments) cannot both take the last of it.
 */
async function chargeRefundGas(tx: Db, storeId: string, reserve: bigint): Promise<void> {
  await tx.query(sql.unsafe`select 1 from stores where id = ${storeId} for update`);
  const account = await storeRefundGas(tx, storeId);
  if (account.available < reserve) throw refundGasUnpaid(fromBaseUnits(reserve, 9), fromBaseUnits(account.available > 0n ? account.available : 0n, 9));
}

/** `address` naming the payer instead of an address. */
export const PAYER = 'payer';

/**
 * The one address that paid the payment `coin` (the incoming message's source for TON, the sender
 * in the jetton `internal_transfer` for a jetton), as booked; invalid_address when none or several.
 */
async function payerOf(tx: Db, paymentId: string, coin: string): Promise<string> {
  const senders = await tx.anyFirst(sql.type(z.object({ sender: z.string() }))`
    select distinct t.sender from transfers t
    where t.payment_id = ${paymentId} and t.coin_symbol = ${coin} and t.sender is not null and ${IS_CREDITED}
    order by sender
  `);
  if (senders.length === 0) throw unusableDestination(`no payer of ${coin} is known for this payment: name an address`);
  if (senders.length > 1) throw unusableDestination(`the payment's ${coin} came from ${senders.length} addresses: name the one to refund`);
  return senders[0]!;
}

/**
 * What a refund of `coin` may take from the payment's deposit now, and what else the deposit holds
 * (base units): the books' refundable money (deposit_money: the customer's), plus — while the sale
 * is inside its refund window (payments.refundable_until after `now`, its sweep not planned) — what
 * is left of its counted amount. `onlyCustomerMoney` (TON): the deposit holds nothing else, nothing
 * planned or in flight, so the refund of all of it may carry the whole balance.
 */
export interface RefundableMoney {
  refundable: bigint;
  onlyCustomerMoney: boolean;
  /** The payment's coin: its counted amount, what is left of it in the deposit, and whether (and until when) a refund may take it. */
  sale: { counted: bigint; left: bigint; refundableUntil: Date | null; windowOpen: boolean; sweptAt: Date | null } | null;
  /** Counted toward the payment while it is open. */
  held: bigint;
  /** Refunds of this coin planned or in flight. */
  inFlight: bigint;
}

export async function refundableMoney(
  tx: Db,
  payment: Pick<RefundPayment, 'id' | 'deposit_address' | 'status' | 'coin_symbol' | 'refundable_until'>,
  coin: string,
  now: Date,
): Promise<RefundableMoney> {
  const rows = payment.deposit_address === null ? [] : await depositMoney(tx, payment.id);
  const row = rows.find((r) => r.coin_symbol === coin);
  const ton = rows.find((r) => r.coin_symbol === 'TON');
  const out = await tx.one(sql.type(z.object({ busy: z.boolean(), in_flight: z.string(), swept_at: z.date().nullable() }))`
    select exists (select 1 from outgoing_transfers where from_address = ${payment.deposit_address} and state in ('planned', 'sent')) as busy,
      coalesce((select sum(amount_base_units) from outgoing_transfers where payment_id = ${payment.id} and kind = 'refund'
                and coin_symbol = ${coin} and state in ('planned', 'sent')), 0)::text as in_flight,
      (select min(created_at) from outgoing_transfers where payment_id = ${payment.id} and kind = 'sweep' and reason = 'payment' and state <> 'failed') as swept_at
  `);
  let sale: RefundableMoney['sale'] = null;
  if (payment.status === 'completed' && payment.coin_symbol === coin) {
    const until = payment.refundable_until;
    sale = {
      counted: BigInt(row?.counted ?? '0'),
      left: BigInt(row?.merchant_unswept ?? '0'),
      refundableUntil: until,
      windowOpen: until !== null && until > now && out.swept_at === null,
      sweptAt: out.swept_at,
    };
  }
  const saleOpen = sale?.windowOpen === true;
  const refundable = BigInt(row?.refundable ?? '0') + (saleOpen ? sale!.left : 0n);
  // Held TON (counted toward a payment still open) is not the customer's to take back either; the
  // merchant's TON is, while its sale's window is open.
  const merchantTon = BigInt(ton?.merchant_unswept ?? '0');
  const onlyCustomerMoney =
    !out.busy && ton !== undefined && (merchantTon === 0n || (saleOpen && coin === 'TON')) && BigInt(ton.held) === 0n && BigInt(ton.gas ?? '0') <= 0n;
  return { refundable, onlyCustomerMoney, sale, held: BigInt(row?.held ?? '0'), inFlight: BigInt(out.in_flight) };
}

/**
 * The largest refund of `coin` the API accepts now (0: none — less than the coin's smallest
 * refund, `minimum`), as POST …/refunds decides it: the figure the balance answer states.
 */
export function largestRefund(money: RefundableMoney, coin: string, minimum: bigint): bigint {
  const decision = decideRefund({ coin, amount: money.refundable, refundable: money.refundable, onlyCustomerMoney: money.onlyCustomerMoney });
  const available = decision.ok ? money.refundable : decision.available;
  return available >= minimum ? available : 0n;
}

const instant = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * refund_exceeds_balance's explanation (pure): what is refundable, why the rest is not (the sale
 * swept or its window over, held toward the open payment, taken by refunds in flight, the fee's
 * reserve) and what to do next.
 */
export function whyNoMore(args: { coin: { symbol: string; decimals: number; minimum: string }; money: RefundableMoney; available: bigint }): string {
  const { coin, money, available } = args;
  const amount = (units: bigint) => `${fromBaseUnits(units, coin.decimals)} ${coin.symbol}`;
  const minimum = BigInt(coin.minimum);
  const parts: string[] = [
    available >= minimum
      ? `at most ${amount(available)} is refundable now`
      : `nothing is refundable now (${amount(available > 0n ? available : 0n)} is less than the smallest refund, ${amount(minimum)})`,
  ];
  const sale = money.sale;
  if (sale?.windowOpen) parts.push(`that includes what is left of the sale (${amount(sale.left)}), refundable until ${instant(sale.refundableUntil!)}`);
  else if (sale !== null && sale.counted > 0n) {
    const whose = `the sale's counted ${amount(sale.counted)} is the merchant's`;
    if (sale.sweptAt !== null && sale.refundableUntil !== null)
      parts.push(`${whose}: its refund window ended on ${instant(sale.refundableUntil)} and it was swept to the treasury on ${instant(sale.sweptAt)}`);
    else if (sale.sweptAt !== null)
      parts.push(`${whose}: swept to the treasury on ${instant(sale.sweptAt)} (the store had no refund window when it completed)`);
    else if (sale.refundableUntil !== null) parts.push(`${whose}: its refund window ended on ${instant(sale.refundableUntil)}`);
    else parts.push(`${whose}: the store had no refund window when it completed`);
  }
  if (money.held > 0n) parts.push(`${amount(money.held)} is held toward the payment, which is still open`);
  if (money.inFlight > 0n) parts.push(`${amount(money.inFlight)} is taken by refunds planned or in flight`);
  const reserved = money.refundable - available;
  if (coin.symbol === 'TON' && reserved > 0n)
    parts.push(
      `${amount(reserved)} is reserved for the refund's fee (other money is in the deposit, so the fee is paid on top of the amount; only the refund of everything a deposit holds takes its fee from itself)`,
    );
  const next =
    sale !== null && !sale.windowOpen && sale.counted > 0n
      ? " A sale refunded after its window will be paid from the treasury, signed by the merchant; for sales to come, a refund window (`kassa store update ID --refund-window-days N`, or the dashboard's Settings) keeps each refundable from its deposit for N days."
      : '';
  return `${parts.join('; ')}.${next}`;
}

/**
 * Whether a refund of `amount` fits the refundable money (the fee policy, docs/API.md). A TON
 * refund's fee comes out of the refundable TON on top of the amount (the destination receives
 * `amount`), so amount + its fee reserve must fit — except the refund of everything refundable
 * from a deposit that holds nothing else (`onlyCustomerMoney`): it carries the whole balance, its
 * fee taken from it (no reserve). A jetton refund's TON is Kassa's gas (never the customer's TON),
 * so its amount alone must fit. `available`: the largest refund that would.
 */
export function decideRefund(args: {
  coin: string;
  amount: bigint;
  refundable: bigint;
  onlyCustomerMoney: boolean;
}): { ok: true; feeReserved: bigint } | { ok: false; available: bigint } {
  const reserve = feeReserveFor(args.coin);
  if (args.coin !== 'TON') return args.amount <= args.refundable ? { ok: true, feeReserved: reserve } : { ok: false, available: args.refundable };
  if (args.amount + reserve <= args.refundable) return { ok: true, feeReserved: reserve };
  if (args.onlyCustomerMoney && args.amount === args.refundable) return { ok: true, feeReserved: 0n };
  const available = args.onlyCustomerMoney ? args.refundable : args.refundable - reserve;
  return { ok: false, available: available > 0n ? available : 0n };
}

/**
 * What a refund costs and what its destination receives (docs/API.md, the fee policy): the fee in
 * TON (the real one once confirmed; before, what is set aside for it), and what arrives in the
 * refund's coin: its amount, or — the refund of everything, fee taken from it — the amount less the fee.
 */
export function refundFigures(row: OutgoingRow): { fee: string; receives: string } {
  const reserved = BigInt(row.fee_reserved_base_units);
  const fee = row.fee_base_units !== null ? BigInt(row.fee_base_units) : reserved > 0n ? reserved : TON_FEE_RESERVE_BASE_UNITS;
  const feeText = fromBaseUnits(fee, 9);
  if (row.coin_symbol !== 'TON' || reserved > 0n) return { fee: feeText, receives: row.amount };
  if (row.state === 'confirmed' && row.sent_amount_base_units !== null) return { fee: feeText, receives: fromBaseUnits(BigInt(row.sent_amount_base_units), 9) };
  const receives = BigInt(row.amount_base_units) - fee;
  return { fee: feeText, receives: fromBaseUnits(receives > 0n ? receives : 0n, 9) };
}

/** The payment's refunds, oldest first. */
export async function listRefunds(db: Db, paymentId: string): Promise<readonly OutgoingRow[]> {
  return db.any(sql.type(outgoingRow)`
    select ${OUTGOING_COLUMNS} from outgoing_transfers where payment_id = ${paymentId} and kind = 'refund' order by created_at, id
  `);
}

export interface RefundBalance {
  refundableUntil: Date | null;
  coins: Map<string, { refundable: bigint; largest: bigint }>;
}

/**
 * What GET …/balance says of refunds: per coin the payment's deposit holds, what refunds may take
 * now (the sale included while inside its window) and the largest refund POST …/refunds accepts
 * now; and until when the sale is refundable from its deposit (null: no window, or not completed).
 */
export async function refundBalance(db: Db, paymentId: string, now: Date): Promise<RefundBalance> {
  const payment = await db.one(sql.type(
    refundPayment
      .pick({ id: true, deposit_address: true, status: true, coin_symbol: true, refundable_until: true })
      .extend({ coins: z.array(z.string()), minimums: z.array(z.string()) }),
  )`
    select p.id, d.address as deposit_address, p.status, p.coin_symbol, p.refundable_until,
      array(select symbol from coins order by symbol) as coins, array(select refund_minimum_base_units::text from coins order by symbol) as minimums
    from payments p left join deposit_addresses d on d.payment_id = p.id where p.id = ${paymentId}
  `);
  const coins = new Map<string, { refundable: bigint; largest: bigint }>();
  for (const m of payment.deposit_address === null ? [] : await depositMoney(db, paymentId)) {
    const money = await refundableMoney(db, payment, m.coin_symbol, now);
    const minimum = BigInt(payment.minimums[payment.coins.indexOf(m.coin_symbol)] ?? '0');
    coins.set(m.coin_symbol, { refundable: money.refundable, largest: largestRefund(money, m.coin_symbol, minimum) });
  }
  return { refundableUntil: payment.status === 'completed' ? payment.refundable_until : null, coins };
}
