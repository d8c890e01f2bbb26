// The books of money out (outgoing_transfers): what is planned, what was signed and sent, what the
// chain confirmed. Plans are written in the transaction that decides them, with the signer's job
// (outgoing__send, one queue per deposit wallet) enqueued beside them. No chain calls here.
import { sql, z, type DatabasePool, type Db } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { fromBaseUnits } from '../money.ts';
import { JETTON_TRANSFER_TON } from '../chain/jettonTransfer.ts';
import { enqueue } from '../worker/enqueue.ts';
import type { Failure } from './transitions.ts';
import { outgoingSendJob } from '../worker/jobs.ts';

export type OutgoingKind = 'sweep' | 'refund' | 'gas_top_up';

/**
 * Adds (or brings forward) the signer's job for one deposit wallet. One queue per wallet: its
 * transfers are signed one at a time, in order, each with the next seqno.
 */
export async function enqueueWalletSend(tx: Db, fromAddress: string, runAt?: Date, preserveRunAt = false): Promise<void> {
  await enqueue(tx, outgoingSendJob(fromAddress, runAt, preserveRunAt));
}

/**
 * 0.01 TON, the one figure for "a TON transfer's fee at most": set aside from the deposit's TON for
 * a TON transfer's fee until the chain says the real one; so also the least worth moving (less is
 * dust: it stays, and is reported) and the smallest TON refund (coins.refund_minimum_base_units of
 * TON, migration 000014, holds the same figure).
 */
export const TON_FEE_RESERVE_BASE_UNITS = 10_000_000n;

/** What a transfer out of a wallet is, on the books (planOutgoing writes it). */
export interface OutgoingPlan {
  kind: OutgoingKind;
  reason: 'payment' | 'held_money' | 'refund' | 'gas';
  paymentId: string;
  storeId: string;
  from: string;
  /** Raw form. */
  to: string;
  /** The destination as the merchant gave it (refunds). */
  toGiven?: string;
  coin: string;
  decimals: number;
  amountBaseUnits: bigint;
  /** nanoTON set aside for its fee (a jetton transfer: with the TON its message carries). */
  feeReservedBaseUnits: bigint;
  /** A gas top-up: the jetton transfer it pays for. */
  forTransferId?: string;
  /** When the wallet's signer job should run (default: now). */
  sendAt?: Date;
  /** A refund asked in the payment's currency: what was asked and the rate that converted it. */
  requested?: RequestedAmount;
}

/** A refund's amount as the merchant asked it in the payment's currency, and the rate that made it the coin amount. */
export interface RequestedAmount {
  amount: string;
  currency: string;
  rate: string;
  rateSource: string;
}

/**
 * The one way a transfer out gets on the books: its row, in the caller's transaction (the one that
 * decided it, with the payment row locked), and the signer's job for its wallet. Returns its row,
 * or null when a unique rule refused it (a completed payment's counted money is swept once).
 */
export async function planOutgoing(tx: Db, plan: OutgoingPlan, now: Date): Promise<OutgoingRow | null> {
  const row = await tx.maybeOne(sql.type(outgoingRow)`
    insert into outgoing_transfers (kind, reason, payment_id, store_id, for_transfer_id, from_address, to_address, to_address_given, coin_symbol,
                                    amount, amount_base_units, fee_reserved_base_units, requested_amount, requested_currency, exchange_rate,
                                    exchange_rate_source, created_at, updated_at)
    values (${plan.kind}, ${plan.reason}, ${plan.paymentId}, ${plan.storeId}, ${plan.forTransferId ?? null}, ${plan.from}, ${plan.to},
            ${plan.toGiven ?? null}, ${plan.coin}, ${fromBaseUnits(plan.amountBaseUnits, plan.decimals)}, ${plan.amountBaseUnits.toString()},
            ${plan.feeReservedBaseUnits.toString()}, ${plan.requested?.amount ?? null}, ${plan.requested?.currency ?? null},
            ${plan.requested?.rate ?? null}, ${plan.requested?.rateSource ?? null}, ${sql.timestamp(now)}, ${sql.timestamp(now)})
    on conflict do nothing
    returning ${OUTGOING_COLUMNS}
  `);
  // A gas top-up joins the gas wallet's waiting batch (its run_at kept: a steady stream of top-ups
  // cannot push the batch back for ever); anything else brings the wallet's job to sendAt.
  if (row) await enqueueWalletSend(tx, plan.from, plan.sendAt, plan.kind === 'gas_top_up');
  return row;
}

/** nanoTON set aside for a transfer of `coin` out of a deposit: its fee, and for a jetton the TON its message carries. */
export function feeReserveFor(coin: string): bigint {
  return coin === 'TON' ? TON_FEE_RESERVE_BASE_UNITS : JETTON_TRANSFER_TON + TON_FEE_RESERVE_BASE_UNITS;
}

/**
 * A sweep's: a TON sweep's fee is inside its amount (the message carries the amount less
 * TON_FEE_RESERVE, or the whole balance with the fee taken from it), so nothing more is set aside;
 * a jetton sweep's TON is Kassa's gas, like a jetton refund's.
 */
function sweepFeeReserve(coin: string): bigint {
  return coin === 'TON' ? 0n : feeReserveFor(coin);
}

// ---- a deposit's money (the SQL function deposit_money, migration 000014) ---------------------

const moneyRow = z.object({
  coin_symbol: z.string(),
  decimals: z.number(),
  received: z.string(),
  held: z.string(),
  counted: z.string(),
  refunded: z.string(),
  swept: z.string(),
  fees: z.string(),
  merchant_unswept: z.string(),
  gas: z.string().nullable(),
  gas_free: z.string().nullable(),
  refundable: z.string(),
  last_money_at: z.date().nullable(),
});
export type DepositMoney = z.infer<typeof moneyRow>;

/**
 * A payment's deposit money per coin (base units; fees and gas in nanoTON): the one definition
 * (deposit_money in SQL), read by the refunds API, the sweep planner, GET …/balance and reporting.
 */
export async function depositMoney(db: Db, paymentId: string): Promise<readonly DepositMoney[]> {
  return db.any(sql.type(moneyRow)`
    select coin_symbol, decimals, received::text as received, held::text as held, counted::text as counted, refunded::text as refunded,
           swept::text as swept, fees::text as fees, merchant_unswept::text as merchant_unswept, gas::text as gas,
           gas_free::text as gas_free, refundable::text as refundable, last_money_at
    from deposit_money(${paymentId}) order by coin_symbol <> 'TON', coin_symbol
  `);
}

/**
 * What of `coin` in the payment's deposit wallet is refundable (base units), fees of refunds and
 * held-money sweeps already taken (deposit_money). Lock the payment row first when acting on it.
 */
export async function refundableBaseUnits(tx: Db, paymentId: string, coin: string): Promise<bigint> {
  const value = await tx.maybeOneFirst(sql.type(z.object({ refundable: z.string() }))`
    select refundable::text as refundable from deposit_money(${paymentId}) where coin_symbol = ${coin}
  `);
  return BigInt(value ?? '0');
}

const paymentForPlan = z.object({
  id: z.string(),
  store_id: z.string(),
  status: z.string(),
  coin_symbol: z.string().nullable(),
  coin_amount_base_units: z.string().nullable(),
  decimals: z.number().nullable(),
  deposit_address: z.string().nullable(),
  treasury: z.string().nullable(),
});

async function paymentToPlan(tx: Db, paymentId: string) {
  return tx.maybeOne(sql.type(paymentForPlan)`
    select p.id, p.store_id, p.status, p.coin_symbol, p.coin_amount_base_units::text as coin_amount_base_units, c.decimals::int as decimals,
           d.address as deposit_address, s.treasury
    from payments p join stores s on s.id = p.store_id
    left join coins c on c.symbol = p.coin_symbol
    left join deposit_addresses d on d.payment_id = p.id
    where p.id = ${paymentId}
  `);
}

/**
 * Plans the sweep of a completed payment's counted amount to its store's treasury and enqueues
 * the signer, in the caller's transaction (the one that completes the payment, or the recurring
 * planner once the store has a treasury). Nothing when the store has no treasury, or the sweep is
 * already planned. Returns whether one was planned.
 */
export async function planPaymentSweep(tx: Db, paymentId: string, now: Date): Promise<boolean> {
  const p = await paymentToPlan(tx, paymentId);
  if (
    p?.status !== 'completed' ||
    p.treasury === null ||
    p.deposit_address === null ||
    p.coin_symbol === null ||
    p.coin_amount_base_units === null ||
    p.decimals === null
  )
    return false;
  const row = await planOutgoing(
    tx,
    {
      kind: 'sweep',
      reason: 'payment',
      paymentId: p.id,
      storeId: p.store_id,
      from: p.deposit_address,
      to: p.treasury,
      coin: p.coin_symbol,
      decimals: p.decimals,
      amountBaseUnits: BigInt(p.coin_amount_base_units),
      feeReservedBaseUnits: sweepFeeReserve(p.coin_symbol),
    },
    now,
  );
  return row !== null;
}

/**
 * For `outgoing_transfers o` joined to its store `s`: the transfer stops a new one being planned
 * for the same money — it is not failed, or it failed and may not be tried again yet (a transient
 * failure before its retry_at; a permanent one to the treasury the store still has).
 */
function blocksReplanning(now: Date) {
  return sql.fragment`(o.state <> 'failed'
    or (o.failure_kind = 'transient' and o.retry_at > ${sql.timestamp(now)})
    or (o.failure_kind is distinct from 'transient' and o.to_address = s.treasury))`;
}

const dueRow = z.object({ payment_id: z.string(), coin_symbol: z.string(), decimals: z.number() });

/**
 * The recurring planner: sweeps for completed payments whose store got a treasury after they
 * completed, and held money whose REFUND_HOLD_DAYS have passed (counted from the last money that
 * reached the deposit; dust below TON_FEE_RESERVE_BASE_UNITS stays). A payment whose sweep failed for
 * good is not planned again (failure_kind permanent). Returns how many it planned.
 */
export async function planDueSweeps(pool: DatabasePool, options: { holdDays: number; now: Date; log?: Logger }): Promise<number> {
  const { now } = options;
  let planned = 0;
  // A sweep that failed stops the next one, unless it failed for a passing reason and its retry
  // time came, or it failed for good and the treasury has changed since (the merchant mended it).
  const unswept = await pool.anyFirst(sql.type(z.object({ id: z.string() }))`
    select p.id from payments p join stores s on s.id = p.store_id
    where p.status = 'completed' and s.treasury is not null and p.coin_symbol is not null
      and not exists (select 1 from outgoing_transfers o where o.payment_id = p.id and o.kind = 'sweep' and o.reason = 'payment'
                      and ${blocksReplanning(now)})
    limit 500
  `);
  for (const id of unswept) {
    if (await pool.transaction((tx) => planPaymentSweep(tx, id, now))) planned += 1;
  }
  const heldSince = new Date(now.getTime() - options.holdDays * 86_400_000);
  const held = await pool.any(sql.type(dueRow)`
    select p.id as payment_id, m.coin_symbol, m.decimals from payments p join stores s on s.id = p.store_id
    cross join lateral deposit_money(p.id) m
    where s.treasury is not null and p.status in ('completed', 'expired', 'cancelled')
      -- Only deposits that got money beyond an exact payment are worth asking (most get none).
      and exists (select 1 from transfers t where t.payment_id = p.id and t.effect not in ('not_credited', 'not_counted', 'unknown_token')
                  and (p.status <> 'completed' or t.effect not in ('partial', 'completed')))
      and m.refundable > 0 and m.last_money_at < ${sql.timestamp(heldSince)}
      and not exists (select 1 from outgoing_transfers o where o.payment_id = p.id and o.coin_symbol = m.coin_symbol and o.reason = 'held_money'
                      and o.state = 'failed' and ${blocksReplanning(now)})
  `);
  for (const row of held) {
    const done = await pool.transaction(async (tx) => {
      await tx.query(sql.unsafe`select 1 from payments where id = ${row.payment_id} for update`);
      const p = (await paymentToPlan(tx, row.payment_id))!;
      if (p.treasury === null || p.deposit_address === null) return false;
      const amount = await refundableBaseUnits(tx, row.payment_id, row.coin_symbol);
      if (amount <= 0n) return false;
      if (row.coin_symbol === 'TON' && amount < TON_FEE_RESERVE_BASE_UNITS) return false;
      const plan: OutgoingPlan = {
        kind: 'sweep',
        reason: 'held_money',
        paymentId: p.id,
        storeId: p.store_id,
        from: p.deposit_address,
        to: p.treasury,
        coin: row.coin_symbol,
        decimals: row.decimals,
        amountBaseUnits: amount,
        feeReservedBaseUnits: sweepFeeReserve(row.coin_symbol),
      };
      return (await planOutgoing(tx, plan, now)) !== null;
    });
    if (done) planned += 1;
  }
  if (planned > 0) options.log?.info({ planned }, 'sweeps planned');
  return planned;
}

/**
 * Earlier transient failures of the same transfer (same payment, kind, reason, coin): what a new
 * failure's backoff and cap count (transitions.ts). For a query over `outgoing_transfers o`.
 */
export const RETRIES = sql.fragment`(select count(*)::int from outgoing_transfers f
  where f.payment_id = o.payment_id and f.kind = o.kind and f.reason = o.reason and f.coin_symbol = o.coin_symbol
    and f.id <> o.id and f.state = 'failed' and f.failure_kind = 'transient')`;

/** The columns a transition's failure (or its absence) sets. */
export function failureColumns(failure: Failure | undefined, now: Date) {
  return failure
    ? sql.fragment`failure_reason = ${failure.reason}, failure_kind = ${failure.kind}, retry_at = ${failure.retryAt ? sql.timestamp(failure.retryAt) : null},
        failed_at = ${sql.timestamp(now)}`
    : sql.fragment`failure_reason = null, failure_kind = null, retry_at = null, failed_at = null`;
}

// ---- reading --------------------------------------------------------------------------------

export const outgoingRow = z.object({
  id: z.string(),
  kind: z.enum(['sweep', 'refund', 'gas_top_up']),
  reason: z.string(),
  payment_id: z.string(),
  store_id: z.string(),
  from_address: z.string(),
  to_address: z.string(),
  to_address_given: z.string().nullable(),
  coin_symbol: z.string(),
  amount: z.string(),
  amount_base_units: z.string(),
  state: z.enum(['planned', 'sent', 'confirmed', 'failed']),
  wallet_seqno: z.string().nullable(),
  valid_until: z.date().nullable(),
  message_hash: z.string().nullable(),
  messages_signed: z.number(),
  broadcasts: z.number(),
  sent_amount_base_units: z.string().nullable(),
  fee: z.string().nullable(),
  fee_base_units: z.string().nullable(),
  fee_reserved_base_units: z.string(),
  transaction_hash: z.string().nullable(),
  failure_reason: z.string().nullable(),
  failure_kind: z.enum(['permanent', 'transient']).nullable(),
  retry_at: z.date().nullable(),
  requested_amount: z.string().nullable(),
  requested_currency: z.string().nullable(),
  exchange_rate: z.string().nullable(),
  exchange_rate_source: z.string().nullable(),
  created_at: z.date(),
});
export type OutgoingRow = z.infer<typeof outgoingRow>;

export const OUTGOING_COLUMNS = sql.fragment`
  id, kind, reason, payment_id, store_id, from_address, to_address, to_address_given, coin_symbol, amount::text as amount,
  amount_base_units::text as amount_base_units, state, wallet_seqno::text as wallet_seqno, valid_until, message_hash,
  messages_signed, broadcasts, sent_amount_base_units::text as sent_amount_base_units, fee::text as fee,
  fee_base_units::text as fee_base_units, fee_reserved_base_units::text as fee_reserved_base_units, transaction_hash, failure_reason,
  failure_kind, retry_at, requested_amount::text as requested_amount, requested_currency, exchange_rate::text as exchange_rate,
  exchange_rate_source, created_at
`;

export async function outgoingOfPayment(db: Db, paymentId: string, kind?: OutgoingKind): Promise<readonly OutgoingRow[]> {
  const only = kind ? sql.fragment`and kind = ${kind}` : sql.fragment``;
  return db.any(sql.type(outgoingRow)`select ${OUTGOING_COLUMNS} from outgoing_transfers where payment_id = ${paymentId} ${only} order by created_at, id`);
}
