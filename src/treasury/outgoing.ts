// The books of money out (outgoing_transfers): what is planned, what was signed and sent, what the
// chain confirmed. Plans are written in the transaction that decides them, with the signer's job
// (outgoing__send, one queue per deposit wallet) enqueued beside them. No chain calls here.
import { sql, z, type DatabasePool, type Db } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { outgoingFailures } from '../metrics.ts';
import { fromBaseUnits } from '../money.ts';
import { OP_JETTON_TRANSFER } from '../chain/detect.ts';
import { JETTON_TRANSFER_TON } from '../chain/jettonTransfer.ts';
import type { ChainTransaction } from '../chain/transactions.ts';
import { enqueue } from '../worker/enqueue.ts';
import { outgoingEvents } from './events.ts';
import { OUTGOING_STATES, outgoingTransition, type Failure, type OutgoingState } from './transitions.ts';
import { outgoingSendJob, saleSweepJob } from '../worker/jobs.ts';

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
  refundable_until: z.date().nullable(),
});

async function paymentToPlan(tx: Db, paymentId: string) {
  return tx.maybeOne(sql.type(paymentForPlan)`
    select p.id, p.store_id, p.status, p.coin_symbol, p.coin_amount_base_units::text as coin_amount_base_units, c.decimals::int as decimals,
           d.address as deposit_address, s.treasury, p.refundable_until
    from payments p join stores s on s.id = p.store_id
    left join coins c on c.symbol = p.coin_symbol
    left join deposit_addresses d on d.payment_id = p.id
    where p.id = ${paymentId}
  `);
}

/**
 * What completion sets going for the sale's money (the complete command's `onCompleted` hook, in
 * the completing transaction): with a refund window (the store's refund_window_days), the sale
 * stays refundable from its deposit until paid_at + the window (payments.refundable_until) and the
 * sweep's job is scheduled for then; without one, the sweep is planned at once.
 */
export async function planSaleSweep(tx: Db, paymentId: string, now: Date): Promise<boolean> {
  const until = await tx.maybeOneFirst(sql.type(z.object({ until: z.date().nullable() }))`
    update payments p set refundable_until = p.paid_at + make_interval(days => s.refund_window_days)
    from stores s where s.id = p.store_id and p.id = ${paymentId} and p.paid_at is not null and s.refund_window_days > 0
    returning p.refundable_until as until
  `);
  if (until === null) return planPaymentSweep(tx, paymentId, now);
  await enqueue(tx, saleSweepJob(paymentId, until));
  return false;
}

/**
 * The sweep at the end of a sale's refund window (its job, and the recurring planner after it):
 * with the payment row locked — a refund of the same sale waits for it, or it waits for the
 * refund — plans what is left of the merchant's counted money. Returns whether one was planned.
 */
export async function sweepSaleAfterWindow(pool: DatabasePool, paymentId: string, now: Date): Promise<boolean> {
  return pool.transaction(async (tx) => {
    await tx.query(sql.unsafe`select 1 from payments where id = ${paymentId} for update`);
    return planPaymentSweep(tx, paymentId, now);
  });
}

/**
 * Plans the sweep of a completed payment's counted amount to its store's treasury and enqueues
 * the signer, in the caller's transaction (the one that completes the payment, the sale's window
 * ending, or the recurring planner once the store has a treasury), which holds the payment row
 * locked. A sale with a refund window is swept only once it ended, and only what refunds of it
 * left of the merchant's money (deposit_money's merchant_unswept; TON under the dust line stays).
 * Nothing when the store has no treasury, or the sweep is already planned. Returns whether one was planned.
 */
export async function planPaymentSweep(tx: Db, paymentId: string, now: Date): Promise<boolean> {
  const p = await paymentToPlan(tx, paymentId);
  if (
    p?.status !== 'completed' ||
    p.treasury === null ||
    p.deposit_address === null ||
    p.coin_symbol === null ||
    p.coin_amount_base_units === null ||
    p.decimals === null ||
    (p.refundable_until !== null && p.refundable_until > now)
  )
    return false;
  let amount = BigInt(p.coin_amount_base_units);
  if (p.refundable_until !== null) {
    const coin = p.coin_symbol;
    amount = BigInt((await depositMoney(tx, p.id)).find((m) => m.coin_symbol === coin)?.merchant_unswept ?? '0');
    if (amount <= 0n || (coin === 'TON' && amount < TON_FEE_RESERVE_BASE_UNITS)) return false;
  }
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
      amountBaseUnits: amount,
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
      -- A sale inside its refund window waits; after it, only while refunds left some of it (above the dust line).
      and (p.refundable_until is null or (p.refundable_until <= ${sql.timestamp(now)} and exists (
        select 1 from deposit_money(p.id) m where m.coin_symbol = p.coin_symbol
          and m.merchant_unswept >= case when m.coin_symbol = 'TON' then ton_fee_reserve_base_units() else 1 end)))
      and not exists (select 1 from outgoing_transfers o where o.payment_id = p.id and o.kind = 'sweep' and o.reason = 'payment'
                      and ${blocksReplanning(now)})
    limit 500
  `);
  for (const id of unswept) {
    if (await sweepSaleAfterWindow(pool, id, now)) planned += 1;
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

// ---- confirmation (the chain reader) --------------------------------------------------------

const sentRow = z.object({
  id: z.string(),
  state: z.string(),
  from_address: z.string(),
  to_address: z.string(),
  kind: z.string(),
  coin_symbol: z.string(),
  amount_base_units: z.string(),
  /** The message that landed (the transfer's newest, or an earlier one committed late). */
  seqno: z.string(),
  valid_until: z.date(),
  message_hash: z.string(),
  message_hash_normalized: z.string(),
});

/** The columns naming the message the wallet accepted: its seqno is the one it used (a jetton transfer's query id). */
function landedMessage(row: z.infer<typeof sentRow>) {
  return sql.fragment`wallet_seqno = ${row.seqno}, valid_until = ${sql.timestamp(row.valid_until)}, message_hash = ${row.message_hash},
    message_hash_normalized = ${row.message_hash_normalized}`;
}

/**
 * The chain reader saw a transaction of one of Kassa's wallets started by an external message
 * (only Kassa's signer can sign one): the outgoing transfers that message carries are confirmed
 * (their messages left) or failed (the wallet accepted it but sent nothing), with the fee and the
 * transaction. Idempotent. 'unknown' means money may have moved that the books did not plan
 * (reconciliation will show it).
 *
 * Per transfer: a TON transfer's sent amount is its message's value; a jetton transfer moved its
 * amount of the jetton (the TON attached to its message is part of its fee: the excess returns
 * to the gas wallet). Several transfers in one message (batched top-ups) share the fee.
 */
export async function confirmOutgoing(
  pool: DatabasePool,
  tx: ChainTransaction,
  now: Date,
  log: Logger,
): Promise<'confirmed' | 'failed' | 'repeat' | 'unknown'> {
  const hashes = [tx.inMessage?.hash, tx.inMessage?.hashNormalized].filter((h): h is string => typeof h === 'string');
  if (hashes.length === 0) return 'unknown';
  const out = tx.outMessages ?? [];
  const fees = (tx.totalFees ?? 0n) + out.reduce((sum, m) => sum + m.fwdFee, 0n);
  const ok = !tx.compute.skipped && tx.compute.success && tx.actionSuccess !== false && out.length > 0;
  const failed: Array<{ id: string; why: string }> = [];
  const result = await pool.transaction(async (db) => {
    failed.length = 0;
    const ended: string[] = [];
    // By any message ever signed for them (outgoing_messages): one that expired unseen may land late.
    const rows = await db.any(sql.type(sentRow)`
      select o.id, o.state, o.from_address, o.to_address, o.kind, o.coin_symbol, o.amount_base_units::text as amount_base_units,
             m.wallet_seqno::text as seqno, m.valid_until, m.message_hash, m.message_hash_normalized
      from outgoing_transfers o
      join lateral (select * from outgoing_messages m where m.transfer_id = o.id
                    and (m.message_hash = any(${sql.array(hashes, 'text')}) or m.message_hash_normalized = any(${sql.array(hashes, 'text')}))
                    limit 1) m on true
      where o.from_address = ${tx.account}
      order by o.id
      for update of o
    `);
    if (rows.length === 0) {
      log.error({ account: tx.account, hash: tx.hash }, 'a Kassa wallet sent a message Kassa has no record of');
      return 'unknown' as const;
    }
    if (rows.every((row) => row.state === 'confirmed' || row.state === 'failed')) return 'repeat' as const;
    const share = fees / BigInt(rows.length);
    const remainder = fees - share * BigInt(rows.length);
    const unused = new Set(out.map((_, i) => i));
    for (const [n, row] of rows.entries()) {
      const fee = share + (n === 0 ? remainder : 0n);
      // Its message: the one to its destination (a TON transfer), else the one to a jetton wallet.
      const index = [...unused].find((i) => out[i]!.destination === row.to_address) ?? (rows.length === 1 ? [...unused][0] : undefined);
      if (ok && index !== undefined) {
        if (!outgoingTransition({ state: row.state as OutgoingState, messagesSigned: 0, retries: 0 }, { type: 'confirmed' }, now).ok) continue;
        unused.delete(index);
        const message = out[index]!;
        const jetton = row.coin_symbol !== 'TON';
        const sent = jetton ? BigInt(row.amount_base_units) : message.value;
        const paid = jetton ? fee + message.value : fee;
        await db.query(sql.typeAlias('void')`
          update outgoing_transfers set state = 'confirmed', failure_reason = null, failure_kind = null, retry_at = null, failed_at = null, sent_amount_base_units = ${sent.toString()}, fee_base_units = ${paid.toString()},
            fee = ${fromBaseUnits(paid, 9)}, transaction_hash = ${tx.hash}, transaction_lt = ${tx.lt},
            ${landedMessage(row)}, confirmed_at = ${sql.timestamp(now)}, updated_at = ${sql.timestamp(now)}
          where id = ${row.id}
        `);
        ended.push(row.id);
        // A top-up arrived (or is about to): the deposit's jetton transfer can go.
        if (row.kind === 'gas_top_up') await enqueueWalletSend(db, row.to_address, new Date(now.getTime() + 1_000));
      } else {
        const why = tx.compute.skipped
          ? 'compute_skipped'
          : !tx.compute.success
            ? `compute_failed (exit ${tx.compute.exitCode})`
            : tx.actionSuccess === false
              ? 'action_failed'
              : 'no_message_sent';
        const next = outgoingTransition({ state: row.state as OutgoingState, messagesSigned: 0, retries: 0 }, { type: 'failed_on_chain', why }, now);
        if (!next.ok) continue;
        await db.query(sql.typeAlias('void')`
          update outgoing_transfers set state = ${next.to}, ${failureColumns(next.failure, now)}, fee_base_units = ${fee.toString()},
            fee = ${fromBaseUnits(fee, 9)}, transaction_hash = ${tx.hash}, transaction_lt = ${tx.lt}, ${landedMessage(row)},
            updated_at = ${sql.timestamp(now)}
          where id = ${row.id}
        `);
        failed.push({ id: row.id, why });
        ended.push(row.id);
      }
    }
    // The store's webhook endpoints hear of each refund and sweep that ended.
    await outgoingEvents(db, ended, now);
    // The wallet's next transfer (if any) can be signed now.
    await enqueueWalletSend(db, rows[0]!.from_address);
    return ok ? ('confirmed' as const) : ('failed' as const);
  });
  // Counted and told after commit.
  for (const f of failed) {
    outgoingFailures.inc({ kind: 'on_chain' });
    log.error({ transferId: f.id, account: tx.account, hash: tx.hash, why: f.why }, 'an outgoing transfer failed on chain');
  }
  return result;
}

/**
 * A deposit's jetton wallet ran the `transfer` its deposit sent (query id = the deposit's wallet
 * seqno). The deposit's own transaction already confirmed the message left; when the jetton
 * wallet refused it, the jettons did not move: the transfer is failed (its TON came back as a
 * bounce, booked by the reader). Returns whether it changed anything.
 */
export async function jettonTransferRefused(
  pool: DatabasePool,
  account: { deposit: string; coin: string | null },
  tx: ChainTransaction,
  now: Date,
  log: Logger,
): Promise<boolean> {
  const body = tx.inMessage?.body?.beginParse();
  if (!body || body.remainingBits < 96 || body.loadUint(32) !== OP_JETTON_TRANSFER) return false;
  const queryId = body.loadUintBig(64);
  const succeeded = !tx.compute.skipped && tx.compute.success && tx.compute.exitCode === 0 && tx.actionSuccess !== false && !tx.aborted;
  if (succeeded) return false;
  const why = tx.compute.skipped ? 'compute_skipped' : !tx.compute.success || tx.compute.exitCode !== 0 ? `exit code ${tx.compute.exitCode}` : 'action_failed';
  const next = outgoingTransition(
    { state: 'confirmed', messagesSigned: 0, retries: 0 },
    { type: 'refused_by_jetton_wallet', why: `${why}, transaction ${tx.hash}` },
    now,
  );
  if (!next.ok) return false;
  const id = await pool.transaction(async (db) => {
    const refused = await db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
      update outgoing_transfers set state = ${next.to}, ${failureColumns(next.failure, now)}, updated_at = ${sql.timestamp(now)}
      where from_address = ${account.deposit} and coin_symbol = ${account.coin} and wallet_seqno = ${queryId.toString()} and state = 'confirmed'
      returning id
    `);
    if (refused) await outgoingEvents(db, [refused], now);
    return refused;
  });
  if (id) {
    outgoingFailures.inc({ kind: 'on_chain' });
    log.error({ transferId: id, jettonWallet: tx.account, hash: tx.hash, why }, 'a jetton transfer out of a deposit was refused by its jetton wallet');
  }
  return id !== null;
}

/**
 * A deposit's jetton wallet took back an `internal_transfer` it had sent (`bounce`: its query id —
 * the deposit's wallet seqno that signed the transfer — and amount): the destination's jetton wallet
 * refused the jettons (a stablecoin wallet its issuer froze), so the transfer out that the deposit's
 * own transaction confirmed moved nothing. It is failed through the transition
 * (`bounced_at_destination`): its amount is the deposit's again (deposit_money counts a failed
 * transfer's fee, never its amount), so a refund can be asked again and reconciliation finds the
 * jetton wallet's balance equal to its books. Idempotent. Returns whether it changed anything.
 */
export async function jettonTransferBounced(
  pool: DatabasePool,
  account: { deposit: string; coin: string | null },
  bounce: { queryId: bigint; amount: bigint },
  tx: ChainTransaction,
  now: Date,
  log: Logger,
): Promise<boolean> {
  const why = `refused by ${tx.inMessage?.source ?? 'its jetton wallet'}, returned in transaction ${tx.hash}`;
  const failed = await pool.transaction(async (db) => {
    const row = await db.maybeOne(sql.type(z.object({ id: z.string(), state: z.enum(OUTGOING_STATES) }))`
      select id, state from outgoing_transfers
      where from_address = ${account.deposit} and coin_symbol = ${account.coin} and wallet_seqno = ${bounce.queryId.toString()}
        and amount_base_units = ${bounce.amount.toString()} and kind <> 'gas_top_up'
      order by created_at desc limit 1
      for update
    `);
    if (!row) return null;
    const next = outgoingTransition({ state: row.state, messagesSigned: 0, retries: 0 }, { type: 'bounced_at_destination', why }, now);
    if (!next.ok) return null;
    await db.query(sql.typeAlias('void')`
      update outgoing_transfers set state = ${next.to}, ${failureColumns(next.failure, now)}, updated_at = ${sql.timestamp(now)}
      where id = ${row.id}
    `);
    await outgoingEvents(db, [row.id], now);
    return row.id;
  });
  if (failed === null) return false;
  outgoingFailures.inc({ kind: 'bounced' });
  log.error(
    { transferId: failed, jettonWallet: tx.account, hash: tx.hash, amount: bounce.amount.toString(), refusedBy: tx.inMessage?.source ?? null },
    "a jetton transfer out of a deposit bounced at its destination's jetton wallet; the jettons came back",
  );
  return true;
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
