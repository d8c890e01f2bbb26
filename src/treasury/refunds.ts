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
  refundBelowMinimum,
  refundExceedsBalance,
  refundGasUnpaid,
  tooManyDecimals,
  unusableDestination,
} from '../errors.ts';
import { debitForRefund } from '../subscriptions/engine.ts';
import { storeRefundGas } from './gas.ts';
import { checkDestination, type JettonOwnerOf } from './destinations.ts';
import { decimalPlaces, fromBaseUnits, toBaseUnits } from '../money.ts';
import type { StorePayment } from '../payments/view.ts';
import type { RatePolicy } from '../rates/rates.ts';
import { feeReserveFor, TON_FEE_RESERVE_BASE_UNITS } from './fees.ts';
import { PAYER, payerOf, requestedAmount, type RefundRequest } from './refundRequest.ts';
import { createTreasuryRefund, type JettonWalletOf } from './treasuryRefunds.ts';
import { depositMoney, outgoingRow, OUTGOING_COLUMNS, planOutgoing, type OutgoingRow } from './outgoing.ts';

/**
 * Plans a refund in `tx` (the caller's transaction); throws the API's errors. Returns its row
 * (src/presenters/refund.ts shows it). `ownerOf` asks the chain whom a destination belongs to as a
 * jetton wallet (every caller that serves a person gives it; see destinations.ts); `walletOf` asks a
 * jetton master for the treasury's jetton wallet (a jetton refund from the treasury).
 */
export async function createRefund(
  tx: Db,
  network: TonNetwork,
  storePayment: Pick<StorePayment, 'id' | 'store_id'>,
  request: RefundRequest,
  now: Date,
  policy: RatePolicy | null = null,
  ownerOf: JettonOwnerOf | null = null,
  walletOf: JettonWalletOf | null = null,
): Promise<OutgoingRow> {
  const row =
    request.from === 'treasury'
      ? await createTreasuryRefund(tx, network, storePayment, request, now, policy, walletOf)
      : await createDepositRefund(tx, network, storePayment, request, now, policy, ownerOf);
  // A subscription's payment: the refund's ledger row (its value taken from credit; the period stays).
  if (row.payment_id !== null) await debitForRefund(tx, network, row.payment_id, row.coin_symbol, BigInt(row.amount_base_units), row.id);
  return row;
}

async function createDepositRefund(
  tx: Db,
  network: TonNetwork,
  storePayment: Pick<StorePayment, 'id' | 'store_id'>,
  request: RefundRequest,
  now: Date,
  policy: RatePolicy | null,
  ownerOf: JettonOwnerOf | null,
): Promise<OutgoingRow> {
  const storeId = storePayment.store_id;
  const payment = await tx.maybeOne(sql.type(refundPayment)`
    select p.id, d.address as deposit_address, p.currency, p.coin_symbol, p.exchange_rate::text as exchange_rate, p.status,
           p.refundable_until, s.refund_window_days, p.settlement
    from payments p join stores s on s.id = p.store_id left join deposit_addresses d on d.payment_id = p.id
    where p.id = ${storePayment.id}
    for update of p
  `);
  if (!payment) throw paymentNotFound();
  // Paid to the treasury itself (issue 43): no deposit ever held its money.
  if (payment.settlement === 'treasury') {
    throw fieldBreaksRule(
      'from',
      'is "treasury" for a payment paid to the store\'s treasury: its money is there, never in a deposit — the same request with "from": "treasury" answers a refund awaiting the merchant\'s signature',
    );
  }
  const coin = await tx.maybeOne(sql.type(z.object({ symbol: z.string(), decimals: z.number(), minimum: z.string() }))`
    select symbol, decimals::int as decimals, refund_minimum_base_units::text as minimum from coins where symbol = ${request.coin}
  `);
  if (!coin) throw new KassaError('invalid_coin', { param: 'coin' });
  const requested = await requestedAmount(tx, payment, coin, request, now, policy);
  const coinAmount = requested?.coinAmount ?? request.amount;
  if (decimalPlaces(coinAmount) > coin.decimals) throw tooManyDecimals('amount', coin.symbol, coin.decimals);
  const given = request.address.trim() === PAYER ? await payerOf(tx, payment.id, coin.symbol) : request.address;
  const destination = await checkDestination(tx, given, network, ownerOf);
  if ('problem' in destination) throw unusableDestination(destination.problem);
  const amount = toBaseUnits(coinAmount, coin.decimals);
  if (amount <= 0n) throw new KassaError('invalid_amount', { param: 'amount' });
  // A refund never costs more than it moves.
  if (amount < BigInt(coin.minimum)) throw refundBelowMinimum(coin.symbol, fromBaseUnits(BigInt(coin.minimum), coin.decimals));
  const money = await refundableMoney(tx, payment, coin.symbol, now);
  const decision = decideRefund({ coin: coin.symbol, amount, refundable: money.refundable });
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
  settlement: z.enum(['deposit', 'treasury']),
});
type RefundPayment = z.infer<typeof refundPayment>;

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

/**
 * What a refund of `coin` may take from the payment's deposit now, and what else the deposit holds
 * (base units): the books' refundable money (deposit_money: the customer's), plus — while the sale
 * is inside its refund window (payments.refundable_until after `now`, its sweep not planned) — what
 * is left of its counted amount.
 */
interface RefundableMoney {
  refundable: bigint;
  /** The payment's coin: its counted amount, what is left of it in the deposit, and whether (and until when) a refund may take it. */
  sale: { counted: bigint; left: bigint; refundableUntil: Date | null; windowOpen: boolean; sweptAt: Date | null } | null;
  /** Counted toward the payment while it is open. */
  held: bigint;
  /** Refunds of this coin planned or in flight. */
  inFlight: bigint;
}

async function refundableMoney(
  tx: Db,
  payment: Pick<RefundPayment, 'id' | 'deposit_address' | 'status' | 'coin_symbol' | 'refundable_until'>,
  coin: string,
  now: Date,
): Promise<RefundableMoney> {
  const rows = payment.deposit_address === null ? [] : await depositMoney(tx, payment.id);
  const row = rows.find((r) => r.coin_symbol === coin);
  const out = await tx.one(sql.type(z.object({ in_flight: z.string(), swept_at: z.date().nullable() }))`
    select coalesce((select sum(amount_base_units) from outgoing_transfers where payment_id = ${payment.id} and kind = 'refund'
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
  return { refundable, sale, held: BigInt(row?.held ?? '0'), inFlight: BigInt(out.in_flight) };
}

/**
 * The largest refund of `coin` the API accepts now (0: none — less than the coin's smallest
 * refund, `minimum`), as POST …/refunds decides it: the figure the balance answer states.
 */
export function largestRefund(money: Pick<RefundableMoney, 'refundable'>, coin: string, minimum: bigint): bigint {
  const decision = decideRefund({ coin, amount: money.refundable, refundable: money.refundable });
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
  const reserved = money.refundable - available;
  // TON: all of it is refundable too, its fee taken from it (decideRefund).
  const everything = coin.symbol === 'TON' && reserved > 0n && money.refundable > reserved && money.refundable >= minimum;
  const under = `is under the smallest refund, ${amount(minimum)}`;
  const parts: string[] = [
    everything
      ? `at most ${amount(money.refundable)} is refundable now: all of it, its fee taken from it (${amount(money.refundable - reserved)} arrives; what the fee does not use arrives too when this empties the deposit, else it is refundable again), ${
          available >= minimum
            ? `or at most ${amount(available)} with its fee paid on top (${amount(reserved)} reserved for it)`
            : `never less (less than all leaves ${amount(available > 0n ? available : 0n)} once ${amount(reserved)} is reserved for its fee, and ${under})`
        }`
      : available >= minimum
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
  if (coin.symbol === 'TON' && reserved > 0n && !everything)
    parts.push(`${amount(reserved)} is reserved for the refund's fee (a refund of less than everything pays its fee on top of the amount)`);
  const afterWindow = sale !== null && !sale.windowOpen && sale.counted > 0n;
  const fromTreasury =
    afterWindow && sale.sweptAt !== null
      ? ' Next step: refund the sale from the treasury — the same request with "from": "treasury" answers a refund awaiting the merchant\'s signature (a TON Connect request and a ton:// link; the dashboard\'s payment page offers "Sign with your wallet").'
      : '';
  const next = afterWindow
    ? `${fromTreasury} For sales to come, a refund window (\`kassa store update ID --refund-window-days N\`, or the dashboard's Settings) keeps each refundable from its deposit for N days.`
    : '';
  return `${parts.join('; ')}.${next}`;
}

/**
 * Whether a refund of `amount` fits the refundable money (the fee policy, docs/API.md). A TON
 * refund's fee comes out of the refundable TON on top of the amount (the destination receives
 * `amount`), so amount + its fee reserve must fit — except the refund of everything refundable,
 * whatever else the deposit holds: its fee is taken from it (no reserve beside it; the destination
 * receives the amount less the reserve, and what the fee did not use is refundable again). It must
 * be more than the reserve. A jetton refund's TON is Kassa's gas (never the customer's TON), so its
 * amount alone must fit. `available`: the largest refund short of everything that would.
 */
export function decideRefund(args: { coin: string; amount: bigint; refundable: bigint }): { ok: true; feeReserved: bigint } | { ok: false; available: bigint } {
  const reserve = feeReserveFor(args.coin);
  if (args.coin !== 'TON') return args.amount <= args.refundable ? { ok: true, feeReserved: reserve } : { ok: false, available: args.refundable };
  if (args.amount + reserve <= args.refundable) return { ok: true, feeReserved: reserve };
  if (args.amount === args.refundable && args.amount > reserve) return { ok: true, feeReserved: 0n };
  const available = args.refundable - reserve;
  return { ok: false, available: available > 0n ? available : 0n };
}

/**
 * What a refund costs and what its destination receives (docs/API.md, the fee policy): the fee in
 * TON (the real one once confirmed; before, what is set aside for it), and what arrives in the
 * refund's coin: its amount, or — the refund of everything, fee taken from it — the amount less the fee.
 */
export function refundFigures(row: OutgoingRow): { fee: string; receives: string } {
  // From the treasury: the treasury pays the fee on top (the customer receives the amount, or what the chain says moved).
  if (row.source === 'treasury') {
    const fee =
      row.fee_base_units !== null
        ? BigInt(row.fee_base_units)
        : row.coin_symbol === 'TON'
          ? TON_FEE_RESERVE_BASE_UNITS
          : BigInt(row.request_amount_base_units ?? '0');
    const receives =
      row.state === 'confirmed' && row.sent_amount_base_units !== null && row.coin_symbol === 'TON'
        ? fromBaseUnits(BigInt(row.sent_amount_base_units), 9)
        : row.amount;
    return { fee: fromBaseUnits(fee, 9), receives };
  }
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
