// What the chain reader confirms of Kassa's own wallets' transfers (the deposits' and the gas
// wallet's: the signer sent them, signer.ts), one command per transition (transitions.ts says who
// enters and leaves each state): a transaction its signed message started confirmed them (planned,
// sent, or failed unseen → confirmed) or failed them on chain (→ failed); a deposit's jetton wallet
// refused a jetton transfer (confirmed → failed), its destination's jetton wallet bounced it
// (confirmed → failed), or took it (delivered). Each locks, asks and writes through
// writeTransition.ts; each owns its transaction. A treasury refund's (the merchant's wallet) are
// treasuryConfirmations.ts; a closing message's books, closing.ts.
import { sql, z, type DatabasePool, type Db } from '../db/pool.ts';
import { OP_JETTON_TRANSFER } from '../chain/detect.ts';
import type { ChainTransaction } from '../chain/transactions.ts';
import type { Logger } from '../log.ts';
import { outgoingFailures } from '../metrics.ts';
import { fromBaseUnits } from '../money.ts';
import { bookCarriedMoney, bookLandedClosing, closingPrimary, reportCarriedMore, type CarriedMore, type ClosingBooking } from './closing.ts';
import { enqueueWalletSend } from './outgoing.ts';
import type { OutgoingTransition } from './transitions.ts';
import { ask, askOne, LOCKED_COLUMNS, lockedRow, lockTransfers, writeTransition } from './writeTransition.ts';

const sentRow = lockedRow.extend({
  from_address: z.string(),
  to_address: z.string(),
  kind: z.string(),
  final_sweep: z.boolean(),
  payment_id: z.string().nullable(),
  coin_symbol: z.string(),
  amount_base_units: z.string(),
  /** The message that landed (the transfer's newest, or an earlier one committed late). */
  seqno: z.string(),
  valid_until: z.date(),
  message_hash: z.string(),
  message_hash_normalized: z.string(),
  /** A share of the closing message of that refund (closing.ts); its send mode (null: it had no message of its own). */
  closing_of: z.string().nullable(),
  send_mode: z.number().nullable(),
  reason: z.string(),
  store_id: z.string(),
  /** The closing message this transfer leads: where its carry-all went, and the newest transfer its books held when signed. */
  carry_all_to: z.string().nullable(),
  books_lt: z.string().nullable(),
  /** A jetton transfer: the receiving jetton wallet, whose internal_transfer delivers it (null: delivered when it leaves). */
  destination_jetton_wallet: z.string().nullable(),
});

type SentRow = z.infer<typeof sentRow>;

/** The columns naming the message the wallet accepted: its seqno is the one it used (a jetton transfer's query id). */
function landedMessage(row: SentRow) {
  return sql.fragment`wallet_seqno = ${row.seqno}, valid_until = ${sql.timestamp(row.valid_until)}, message_hash = ${row.message_hash},
    message_hash_normalized = ${row.message_hash_normalized}`;
}

/** What the wallet's transaction did: the messages it sent, its fees (with their forwarding), whether it sent as asked, and why not. */
interface Landed {
  out: NonNullable<ChainTransaction['outMessages']>;
  fees: bigint;
  ok: boolean;
  /** Why it sent nothing (failed_on_chain), when it did not. */
  why: string;
}

function landedAs(tx: ChainTransaction): Landed {
  const out = tx.outMessages ?? [];
  const fees = (tx.totalFees ?? 0n) + out.reduce((sum, m) => sum + m.fwdFee, 0n);
  const ok = !tx.compute.skipped && tx.compute.success && tx.actionSuccess !== false && out.length > 0;
  const why = tx.compute.skipped
    ? 'compute_skipped'
    : !tx.compute.success
      ? `compute_failed (exit ${tx.compute.exitCode})`
      : tx.actionSuccess === false
        ? 'action_failed'
        : 'no_message_sent';
  return { out, fees, ok, why };
}

/** The fee split: several transfers in one message (batched top-ups) share its fees equally; the first pays the remainder. */
function feeSplit(fees: bigint, count: number): (n: number) => bigint {
  const share = fees / BigInt(count);
  const remainder = fees - share * BigInt(count);
  return (n) => share + (n === 0 ? remainder : 0n);
}

/**
 * Which of the transaction's messages was the row's: the one to its destination (a TON transfer),
 * else the only one left to a lone transfer (a jetton transfer's, to its jetton wallet); undefined
 * when none (it failed on chain).
 */
function messageOf(row: SentRow, out: Landed['out'], unused: ReadonlySet<number>, rows: number): number | undefined {
  return [...unused].find((i) => out[i]!.destination === row.to_address) ?? (rows === 1 ? [...unused][0] : undefined);
}

/** What the transaction's books tell once it committed: failures, re-plans superseded, the carried-more check. */
interface Told {
  failed: Array<{ id: string; why: string }>;
  superseded: Array<{ id: string; by: string }>;
  carriedMore: CarriedMore | null;
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
 * to the gas wallet). Several transfers in one message (batched top-ups) share the fee (feeSplit);
 * a closing message's rows are booked by its own rules (closing.ts bookLandedClosing), and what its
 * carry-all took beyond the plan on rows of their own (bookCarriedMoney); a failed transfer confirmed
 * after all fails what was planned again for its money (supersedeReplans).
 */
export async function confirmOutgoing(
  pool: DatabasePool,
  tx: ChainTransaction,
  now: Date,
  log: Logger,
): Promise<'confirmed' | 'failed' | 'repeat' | 'unknown'> {
  const hashes = [tx.inMessage?.hash, tx.inMessage?.hashNormalized].filter((h): h is string => typeof h === 'string');
  if (hashes.length === 0) return 'unknown';
  const landed = landedAs(tx);
  const { result, told } = await pool.transaction(async (db) => {
    const told: Told = { failed: [], superseded: [], carriedMore: null };
    const rows = await lockLanded(db, tx.account, hashes);
    if (rows.length === 0) {
      log.error({ account: tx.account, hash: tx.hash }, 'a Kassa wallet sent a message Kassa has no record of');
      return { result: 'unknown' as const, told };
    }
    // Seen before. A failed row none of whose messages was seen is not: its message landed late.
    if (rows.every((row) => row.state === 'confirmed' || (row.state === 'failed' && row.landed))) return { result: 'repeat' as const, told };
    const feeOf = feeSplit(landed.fees, rows.length);
    const unused = new Set(landed.out.map((_, i) => i));
    // The closing message (closing.ts): each row books what it sent and what it paid; what the
    // carry-all took beyond the plan gets rows of its own (below).
    const primary = closingPrimary(rows);
    const closing = primary && landed.ok ? await bookLandedClosing(db, primary, rows, tx, landed.fees) : null;
    if (landed.ok && closing === undefined)
      log.error({ account: tx.account, hash: tx.hash }, 'a closing message left otherwise than it was signed; its fee is shared equally');
    for (const [n, row] of rows.entries()) {
      const booked = closing?.rows.get(row.id);
      const fee = booked?.fee ?? feeOf(n);
      const index = booked ? null : messageOf(row, landed.out, unused, rows.length);
      if (landed.ok && index !== undefined) {
        const next = askOne(row, { type: 'confirmed' }, now);
        if (!next.ok) continue;
        if (index !== null) unused.delete(index);
        // Failed before (unseen): what was planned again for the same money would pay it twice. Failed
        // first (a payment's counted amount has one sweep that is not failed).
        if (row.state === 'failed') told.superseded.push(...(await supersedeReplans(db, row.id, now)));
        await bookConfirmed(db, row, next, { message: index === null ? null : landed.out[index]!, booked, fee }, tx, now);
      } else {
        const next = askOne(row, { type: 'failed_on_chain', why: landed.why }, now);
        if (!next.ok) continue;
        await bookFailedOnChain(db, row, next, fee, tx, now);
        told.failed.push({ id: row.id, why: landed.why });
      }
    }
    if (closing && primary) told.carriedMore = await bookCarriedMoney(db, primary, closing, tx, now);
    // The wallet's next transfer (if any) can be signed now.
    await enqueueWalletSend(db, rows[0]!.from_address);
    return { result: landed.ok ? ('confirmed' as const) : ('failed' as const), told };
  });
  tellAfterCommit(log, tx, told);
  return result;
}

/** The rows the transaction's message carries, by any message ever signed for them (outgoing_messages: one that expired unseen may land late), locked. */
async function lockLanded(db: Db, account: string, hashes: readonly string[]): Promise<readonly SentRow[]> {
  return db.any(sql.type(sentRow)`
    select ${LOCKED_COLUMNS}, o.from_address, o.to_address, o.kind, o.final_sweep, o.payment_id, o.coin_symbol, o.amount_base_units::text as amount_base_units,
           m.wallet_seqno::text as seqno, m.valid_until, m.message_hash, m.message_hash_normalized, o.closing_of, o.send_mode,
           o.reason, o.store_id, o.carry_all_to, o.books_lt::text as books_lt, o.destination_jetton_wallet
    from outgoing_transfers o
    join lateral (select * from outgoing_messages m where m.transfer_id = o.id
                  and (m.message_hash = any(${sql.array([...hashes], 'text')}) or m.message_hash_normalized = any(${sql.array([...hashes], 'text')}))
                  limit 1) m on true
    where o.from_address = ${account}
    order by o.id
    for update of o
  `);
}

/**
 * `confirmed`, booked: what it sent (a closing row: as bookLandedClosing says; a jetton transfer: its
 * amount; a TON transfer: its message's value) and what it paid (a jetton transfer: its share of the
 * fees and the TON its message carried), with the transaction and the message that landed.
 */
async function bookConfirmed(
  db: Db,
  row: SentRow,
  next: Extract<OutgoingTransition, { ok: true }>,
  how: { message: Landed['out'][number] | null; booked: ClosingBooking | undefined; fee: bigint },
  tx: ChainTransaction,
  now: Date,
): Promise<void> {
  const { message, booked, fee } = how;
  const jetton = row.coin_symbol !== 'TON';
  const sent = booked ? booked.sent : jetton ? BigInt(row.amount_base_units) : message!.value;
  const paid = booked ? booked.fee : jetton ? fee + message!.value : fee;
  await writeTransition(
    db,
    row,
    next,
    now,
    // Delivered when it left: TON; a jetton transfer once its receiving jetton wallet took it (jettonTransferDelivered).
    sql.fragment`sent_amount_base_units = ${sent.toString()}, fee_base_units = ${paid.toString()}, fee = ${fromBaseUnits(paid, 9)},
      transaction_hash = ${tx.hash}, transaction_lt = ${tx.lt}, ${landedMessage(row)}, confirmed_at = ${sql.timestamp(now)},
      delivered_at = ${jetton && row.destination_jetton_wallet !== null ? null : sql.timestamp(now)}`,
  );
  // A top-up arrived (or is about to): the deposit's jetton transfer can go.
  if (row.kind === 'gas_top_up') await enqueueWalletSend(db, row.to_address, new Date(now.getTime() + 1_000));
}

/** `failed_on_chain`, booked: the wallet accepted the message and sent nothing; its fee share is paid all the same. */
async function bookFailedOnChain(db: Db, row: SentRow, next: Extract<OutgoingTransition, { ok: true }>, fee: bigint, tx: ChainTransaction, now: Date) {
  await writeTransition(
    db,
    row,
    next,
    now,
    sql.fragment`fee_base_units = ${fee.toString()}, fee = ${fromBaseUnits(fee, 9)}, transaction_hash = ${tx.hash}, transaction_lt = ${tx.lt},
      ${landedMessage(row)}`,
  );
}

/** Counted and told after commit: re-plans superseded, the carried-more check, failures on chain. */
function tellAfterCommit(log: Logger, tx: ChainTransaction, told: Told): void {
  for (const s of told.superseded) {
    outgoingFailures.inc({ kind: 'superseded' });
    log.error(
      { transferId: s.id, by: s.by, account: tx.account, hash: tx.hash },
      'a failed outgoing transfer was confirmed after all (its message landed late); the transfer planned again for its money is failed, not sent',
    );
  }
  if (told.carriedMore) reportCarriedMore(log, tx, told.carriedMore);
  for (const f of told.failed) {
    outgoingFailures.inc({ kind: 'on_chain' });
    log.error({ transferId: f.id, account: tx.account, hash: tx.hash, why: f.why }, 'an outgoing transfer failed on chain');
  }
}

/**
 * `superseded`: transfer `id` was failed, and a message of it landed after all (confirmed in this
 * transaction). What was planned again for the same money, not confirmed yet, is failed (permanent)
 * so it never pays it twice: a sweep of the same payment, reason and coin; a top-up for the same
 * jetton transfer; a refund asked again alike (same payment, destination, coin and amount) — each
 * created after it. A re-plan already signed carries the seqno of the message that landed (the
 * signer signs a wallet's next message only once the one before is booked or past the margin), so
 * it cannot land any more. Returns what it failed.
 */
async function supersedeReplans(tx: Db, id: string, now: Date): Promise<Array<{ id: string; by: string }>> {
  const rows = await lockTransfers(
    tx,
    sql.fragment`o.state in ('planned', 'sent') and exists (
      select 1 from outgoing_transfers t where t.id = ${id} and o.id <> t.id and o.from_address = t.from_address and o.kind = t.kind
        and o.coin_symbol = t.coin_symbol and o.created_at > t.created_at
        and case t.kind
          when 'sweep' then o.payment_id = t.payment_id and o.reason = t.reason
          when 'gas_top_up' then o.for_transfer_id = t.for_transfer_id
          else o.payment_id = t.payment_id and o.to_address = t.to_address and o.amount_base_units = t.amount_base_units
        end)`,
  );
  const moved: Array<{ id: string; by: string }> = [];
  for (const { row, next } of ask(rows, { type: 'superseded', by: id }, now)) {
    if (!next.ok) continue;
    await writeTransition(tx, row, next, now);
    moved.push({ id: row.id, by: id });
  }
  return moved;
}

/**
 * A deposit's jetton wallet ran the `transfer` its deposit sent (query id = the transfer's own,
 * transferQueryId; the deposit's wallet seqno before query_id was recorded). The deposit's own transaction already confirmed the message left; when the jetton
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
  // The transfers that message carried (query id = its seqno); the transition refuses all but a confirmed one.
  const id = await pool.transaction(async (db) => {
    const rows = await lockTransfers(
      db,
      sql.fragment`o.from_address = ${account.deposit} and o.coin_symbol = ${account.coin} and coalesce(o.query_id, o.wallet_seqno) = ${queryId.toString()}`,
    );
    let refused: string | null = null;
    for (const { row, next } of ask(rows, { type: 'refused_by_jetton_wallet', why: `${why}, transaction ${tx.hash}` }, now)) {
      if (!next.ok) continue;
      await writeTransition(db, row, next, now);
      refused = row.id;
    }
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
 * the transfer's own, or the deposit's wallet seqno before query_id — and amount), of any coin the
 * deposit sends (the reader watches the sending jetton wallet of every jetton transfer on its way): the destination's jetton wallet
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
    const row = await db.maybeOne(sql.type(lockedRow)`
      select ${LOCKED_COLUMNS} from outgoing_transfers o
      where o.from_address = ${account.deposit} and o.coin_symbol = ${account.coin} and coalesce(o.query_id, o.wallet_seqno) = ${bounce.queryId.toString()}
        and o.amount_base_units = ${bounce.amount.toString()} and o.kind <> 'gas_top_up'
      order by o.created_at desc limit 1
      for update of o
    `);
    if (!row) return null;
    const next = askOne(row, { type: 'bounced_at_destination', why }, now);
    if (!next.ok) return null;
    await writeTransition(db, row, next, now);
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

/**
 * `delivered`: the receiving jetton wallet of a jetton transfer out of a deposit took it — its
 * `internal_transfer` from the sending jetton wallet, with the transfer's query id, succeeded
 * (the reader matched it). The transfer was confirmed when it left the deposit; only now is it
 * delivered, and only now does its store hear refund.confirmed or sweep.confirmed. Idempotent.
 */
export async function jettonTransferDelivered(pool: DatabasePool, transferId: string, tx: ChainTransaction, now: Date, log: Logger): Promise<boolean> {
  const delivered = await pool.transaction(async (db) => {
    const [row] = await lockTransfers(db, sql.fragment`o.id = ${transferId} and o.delivered_at is null`);
    if (!row) return false;
    const next = askOne(row, { type: 'delivered' }, now);
    if (!next.ok) return false;
    await writeTransition(db, row, next, now, sql.fragment`delivered_at = ${sql.timestamp(now)}`);
    return true;
  });
  if (delivered) log.info({ transferId, jettonWallet: tx.account, hash: tx.hash }, 'a jetton transfer out reached its destination');
  return delivered;
}
