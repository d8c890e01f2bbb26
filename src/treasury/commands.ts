// The outgoing transfer commands: one per transition of an outgoing transfer the signer makes
// (docs/OPERATIONS.md, Money out), side by side — signed (planned → sent, every message kept in
// outgoing_messages), expired unseen (sent → planned once the chain was read the late-commit margin
// past its valid_until, or failed after MAX_MESSAGES_SIGNED), not sendable (planned → failed). The chain reader's
// (confirmed, failed on chain, refused by a jetton wallet, bounced at its destination) are
// confirmOutgoing, jettonTransferRefused and jettonTransferBounced, below. Each follows the rule of the payment commands:
//   1. lock the transfer rows (select … for update);
//   2. ask the pure transition (transitions.ts) and refuse what it rejects;
//   3. write the state it returned, with its failure (writeTransition: the one place a transition
//      is written), and tell the store's webhook endpoints of a refund or sweep that ended (events.ts)
//      there, in the same transaction;
//   4. enqueue the wallet's signer job in the same transaction;
//   5. count a failure once the transaction has committed.
// The caller owns the transaction.
import { afterCommit, sql, z, type DatabasePool, type Db } from '../db/pool.ts';
import { OP_JETTON_TRANSFER } from '../chain/detect.ts';
import type { ChainTransaction } from '../chain/transactions.ts';
import { LATE_COMMIT_MARGIN_MS } from '../chain/clock.ts';
import type { Logger } from '../log.ts';
import { outgoingFailures, transfersCarriedMore, treasuryRefundsPaidTwice } from '../metrics.ts';
import { fromBaseUnits } from '../money.ts';
import { bookClosing, type CarriedMoney } from './closing.ts';
import { outgoingEvents } from './events.ts';
import { enqueueWalletSend, failureColumns, planOutgoing, RETRIES } from './outgoing.ts';
import { OUTGOING_STATES, outgoingTransition, type Failure, type OutgoingEvent, type OutgoingTransition } from './transitions.ts';
import type { SignedMessage } from './wallets.ts';
import { treasurySaleMoved, unmatchedMoved, WALLET_LONGEST_LIFETIME_MS } from './treasuryRefunds.ts';

const lockedRow = z.object({ id: z.string(), state: z.enum(OUTGOING_STATES), messages_signed: z.number(), retries: z.number(), landed: z.boolean() });
type Locked = z.infer<typeof lockedRow>;
/** The columns of a locked row (over `outgoing_transfers o`). */
const LOCKED_COLUMNS = sql.fragment`o.id, o.state, o.messages_signed, ${RETRIES} as retries, o.transaction_hash is not null as landed`;

/** Step 1: the rows, locked until the transaction ends, oldest first. */
async function lockTransfers(tx: Db, where: ReturnType<typeof sql.fragment>): Promise<readonly Locked[]> {
  return tx.any(sql.type(lockedRow)`
    select ${LOCKED_COLUMNS} from outgoing_transfers o
    where ${where} order by o.created_at, o.id for update of o
  `);
}

/** Step 2: what the transition says of the locked row. */
function askOne(row: Locked, event: OutgoingEvent, now: Date): OutgoingTransition {
  return outgoingTransition({ state: row.state, messagesSigned: row.messages_signed, retries: row.retries, landed: row.landed }, event, now);
}

/** Step 2, for each row. */
function ask(rows: readonly Locked[], event: OutgoingEvent, now: Date): Array<{ row: Locked; next: OutgoingTransition }> {
  return rows.map((row) => ({ row, next: askOne(row, event, now) }));
}

/**
 * Step 3: the state the transition returned, with its failure's columns (or none), and what else
 * the event records about the transfer; a refund's or sweep's end told to its store's webhook
 * endpoints (refund.confirmed …, events.ts) in the same transaction. The one place an outgoing
 * transfer's state is written.
 */
async function writeTransition(
  tx: Db,
  row: Locked,
  next: Extract<OutgoingTransition, { ok: true }>,
  now: Date,
  also?: ReturnType<typeof sql.fragment>,
): Promise<void> {
  const columns = [
    sql.fragment`state = ${next.to}, held_unbooked_since = null`,
    failureColumns(next.failure, now),
    ...(also ? [also] : []),
    sql.fragment`updated_at = ${sql.timestamp(now)}`,
  ];
  await tx.query(sql.typeAlias('void')`update outgoing_transfers set ${sql.join(columns, sql.fragment`, `)} where id = ${row.id}`);
  // A refund or sweep that ended: its store's webhook endpoints hear of it (events.ts skips the rest).
  if (next.to === 'confirmed' || next.to === 'failed') await outgoingEvents(tx, [row.id], now);
}

/** Step 5: a failure is counted and told once the transaction has committed. */
function countFailure(tx: Db, log: Logger, transferId: string, wallet: string, failure: Failure, kind: string): void {
  afterCommit(tx, () => {
    outgoingFailures.inc({ kind });
    log.error({ transferId, wallet, reason: failure.reason, failureKind: failure.kind }, 'an outgoing transfer failed');
  });
}

/**
 * `signed`: the transfers of one signed message (the gas wallet's batch, or one transfer) are
 * recorded with it — seqno, valid_until, hash, the message itself — before it is broadcast, and
 * the wallet's job is set for after it can no longer land (unseenCheckAt). Throws when one of them is no longer planned
 * (another run took it): then nothing is recorded and the message is never broadcast.
 */
export async function recordSigned(
  tx: Db,
  args: { wallet: string; ids: readonly string[]; seqno: number; validUntil: Date; sendMode: number; message: SignedMessage; now: Date },
): Promise<void> {
  const { now } = args;
  const rows = await lockTransfers(tx, sql.fragment`o.id = any(${sql.array([...args.ids], 'uuid')})`);
  const asked = ask(rows, { type: 'signed' }, now);
  if (rows.length !== args.ids.length || asked.some(({ next }) => !next.ok)) throw new Error('another run took some of these transfers; nothing recorded');
  for (const { row, next } of asked) {
    if (!next.ok) continue;
    await writeTransition(
      tx,
      row,
      next,
      now,
      sql.fragment`wallet_seqno = ${args.seqno}, valid_until = ${sql.timestamp(args.validUntil)},
        send_mode = ${args.sendMode}, message_hash = ${args.message.hash}, message_hash_normalized = ${args.message.hashNormalized},
        signed_message = ${sql.binary(args.message.boc)}, messages_signed = messages_signed + 1, signed_at = ${sql.timestamp(now)}`,
    );
    // Kept for good: should this message land late, after a newer one was signed, it still confirms the transfer.
    await tx.query(sql.typeAlias('void')`
      insert into outgoing_messages (transfer_id, wallet_seqno, valid_until, message_hash, message_hash_normalized, signed_at)
      values (${row.id}, ${args.seqno}, ${sql.timestamp(args.validUntil)}, ${args.message.hash}, ${args.message.hashNormalized}, ${sql.timestamp(now)})
      on conflict do nothing
    `);
  }
  await enqueueWalletSend(tx, args.wallet, unseenCheckAt(args.validUntil));
}

/**
 * When the wallet's job looks again at a message in flight that nobody confirmed: just after it can
 * no longer land, LATE_COMMIT_MARGIN_MS past its valid_until (its confirmation wakes the job sooner).
 */
export function unseenCheckAt(validUntil: Date, now?: Date): Date {
  return new Date(Math.max(validUntil.getTime() + LATE_COMMIT_MARGIN_MS, now?.getTime() ?? 0) + 2_000);
}

/**
 * `expired_unseen`: the transfers of `wallet` in flight whose message the chain has been read
 * LATE_COMMIT_MARGIN_MS past (valid_until + the margin before the reader's settled_until, read in
 * this transaction: it moves only after the reader booked the blocks) without seeing it can never
 * land: each is planned again (signed afresh), or failed after MAX_MESSAGES_SIGNED messages.
 * Returns what moved.
 *
 * The margin matters: a wallet accepts a message up to its valid_until, but the shard block that
 * holds that transaction may be committed to the masterchain (and so read) later. Planned again
 * before that, the transfer would be signed again with the next seqno once the first message
 * landed: paid twice (issue 31). Past the margin the old message cannot land, so the wallet's
 * next message may use any seqno; should one land later all the same, outgoing_messages still
 * names its transfer.
 */
export async function expireUnseen(tx: Db, args: { wallet: string; network: string; now: Date; log: Logger }): Promise<Array<{ id: string; to: string }>> {
  const { now } = args;
  const rows = await lockTransfers(
    tx,
    sql.fragment`o.from_address = ${args.wallet} and o.state = 'sent'
      and o.valid_until + make_interval(secs => ${LATE_COMMIT_MARGIN_MS / 1000}) < (select settled_until from chain_reader where network = ${args.network})`,
  );
  const moved: Array<{ id: string; to: string }> = [];
  for (const { row, next } of ask(rows, { type: 'expired_unseen' }, now)) {
    if (!next.ok) continue;
    await writeTransition(
      tx,
      row,
      next,
      now,
      sql.fragment`wallet_seqno = null, valid_until = null, message_hash = null, message_hash_normalized = null, signed_message = null, send_mode = null`,
    );
    if (next.failure) countFailure(tx, args.log, row.id, args.wallet, next.failure, 'expired');
    else
      afterCommit(tx, () =>
        args.log.warn({ transferId: row.id, wallet: args.wallet }, 'an outgoing message expired unseen; it is signed again with a fresh seqno'),
      );
    moved.push({ id: row.id, to: next.to });
  }
  return moved;
}

/**
 * `not_sendable`: the signer will not send a planned transfer (the books and the chain disagree,
 * or it is too little to move): failed, permanent or transient as the transition says. The
 * wallet's job runs again for its next transfer. Returns the failure, or null when the transfer
 * was no longer planned.
 */
export async function failUnsendable(
  tx: Db,
  args: { id: string; wallet: string; reason: string; permanent: boolean; now: Date; log: Logger },
): Promise<Failure | null> {
  const { now } = args;
  const [row] = await lockTransfers(tx, sql.fragment`o.id = ${args.id}`);
  if (!row) return null;
  const next = askOne(row, { type: 'not_sendable', reason: args.reason, permanent: args.permanent }, now);
  if (!next.ok) return null;
  await writeTransition(tx, row, next, now);
  await enqueueWalletSend(tx, args.wallet);
  if (next.failure) countFailure(tx, args.log, row.id, args.wallet, next.failure, next.failure.kind);
  return next.failure ?? null;
}

// ---- confirmation (the chain reader) --------------------------------------------------------

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
  const superseded: Array<{ id: string; by: string }> = [];
  const carriedMore: Array<{ id: string; kind: 'refund' | 'final_sweep'; paymentId: string | null; beyond: bigint; to: string }> = [];
  const result = await pool.transaction(async (db) => {
    failed.length = 0;
    superseded.length = 0;
    carriedMore.length = 0;
    // By any message ever signed for them (outgoing_messages): one that expired unseen may land late.
    const rows = await db.any(sql.type(sentRow)`
      select ${LOCKED_COLUMNS}, o.from_address, o.to_address, o.kind, o.final_sweep, o.payment_id, o.coin_symbol, o.amount_base_units::text as amount_base_units,
             m.wallet_seqno::text as seqno, m.valid_until, m.message_hash, m.message_hash_normalized, o.closing_of, o.send_mode,
             o.reason, o.store_id, o.carry_all_to, o.books_lt::text as books_lt, o.destination_jetton_wallet
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
    // Seen before. A failed row none of whose messages was seen is not: its message landed late.
    if (rows.every((row) => row.state === 'confirmed' || (row.state === 'failed' && row.landed))) return 'repeat' as const;
    const share = fees / BigInt(rows.length);
    const remainder = fees - share * BigInt(rows.length);
    const unused = new Set(out.map((_, i) => i));
    // The closing message (closing.ts): each row books what it sent and what it paid; what the
    // carry-all took beyond the plan gets rows of its own (below).
    const primary = rows.find((row) => row.carry_all_to !== null && row.closing_of === null);
    const closing = primary && ok ? await closingBookings(db, primary, rows, tx, fees) : null;
    if (ok && closing === undefined)
      log.error({ account: tx.account, hash: tx.hash }, 'a closing message left otherwise than it was signed; its fee is shared equally');
    for (const [n, row] of rows.entries()) {
      const booked = closing?.rows.get(row.id);
      const fee = booked?.fee ?? share + (n === 0 ? remainder : 0n);
      // Its message: the one to its destination (a TON transfer), else the one to a jetton wallet;
      // a closing share too small to send had none (null).
      const index = booked ? null : ([...unused].find((i) => out[i]!.destination === row.to_address) ?? (rows.length === 1 ? [...unused][0] : undefined));
      if (ok && index !== undefined) {
        const next = askOne(row, { type: 'confirmed' }, now);
        if (!next.ok) continue;
        if (index !== null) unused.delete(index);
        // Failed before (unseen): what was planned again for the same money would pay it twice. Failed
        // first (a payment's counted amount has one sweep that is not failed).
        if (row.state === 'failed') superseded.push(...(await supersedeReplans(db, row.id, now)));
        const message = index === null ? null : out[index]!;
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
      } else {
        const why = tx.compute.skipped
          ? 'compute_skipped'
          : !tx.compute.success
            ? `compute_failed (exit ${tx.compute.exitCode})`
            : tx.actionSuccess === false
              ? 'action_failed'
              : 'no_message_sent';
        const next = askOne(row, { type: 'failed_on_chain', why }, now);
        if (!next.ok) continue;
        await writeTransition(
          db,
          row,
          next,
          now,
          sql.fragment`fee_base_units = ${fee.toString()}, fee = ${fromBaseUnits(fee, 9)}, transaction_hash = ${tx.hash}, transaction_lt = ${tx.lt},
            ${landedMessage(row)}`,
        );
        failed.push({ id: row.id, why });
      }
    }
    // What the carry-all took beyond the plan (closing.ts bookClosing): each owner's on a row of its
    // own, confirmed by this transaction, to the carry-all's destination.
    if (closing && primary) {
      // A share the wallet skipped (+2) went with the carry-all: its row says where its money went.
      if (closing.skippedShares.length > 0)
        await db.query(sql.typeAlias('void')`
          update outgoing_transfers set to_address = ${primary.carry_all_to!} where id = any(${sql.array(closing.skippedShares, 'uuid')})
        `);
      for (const c of closing.carried) await bookCarried(db, primary, c, tx, now);
      const late = closing.carried.filter((c) => c.why === 'arrived_since').reduce((sum, c) => sum + c.amount, 0n);
      const kind = primary.kind === 'refund' ? 'refund' : primary.final_sweep ? 'final_sweep' : null;
      if (kind && late > 0n) carriedMore.push({ id: primary.id, kind, paymentId: primary.payment_id, beyond: late, to: primary.carry_all_to! });
    }
    // The wallet's next transfer (if any) can be signed now.
    await enqueueWalletSend(db, rows[0]!.from_address);
    return ok ? ('confirmed' as const) : ('failed' as const);
  });
  // Counted and told after commit.
  for (const s of superseded) {
    outgoingFailures.inc({ kind: 'superseded' });
    log.error(
      { transferId: s.id, by: s.by, account: tx.account, hash: tx.hash },
      'a failed outgoing transfer was confirmed after all (its message landed late); the transfer planned again for its money is failed, not sent',
    );
  }
  for (const c of carriedMore) {
    transfersCarriedMore.inc({ kind: c.kind });
    log.error(
      { transferId: c.id, kind: c.kind, paymentId: c.paymentId, beyondBaseUnits: c.beyond.toString(), to: c.to, account: tx.account, hash: tx.hash },
      "a closing message's carry-all took money that reached the deposit after the books were read: it went to the treasury or the gas wallet (booked as swept there), not to the refund's address",
    );
  }
  for (const f of failed) {
    outgoingFailures.inc({ kind: 'on_chain' });
    log.error({ transferId: f.id, account: tx.account, hash: tx.hash, why: f.why }, 'an outgoing transfer failed on chain');
  }
  return result;
}

const SHARE_ORDER = ['held_money', 'leftover', 'gas_return'];

/**
 * The closing message's books (closing.ts bookClosing): its actions rebuilt from the rows in the
 * order they were signed (the refund, the shares with a message of their own as closingShares lists
 * them, the carry-all), the money that reached the deposit between the books the signer saw
 * (books_lt) and this transaction, by owner (net of its receiving fee, as deposit_money counts it),
 * and each row's sent amount and fee. undefined when the messages are not those it was signed with.
 */
async function closingBookings(
  db: Db,
  primary: z.infer<typeof sentRow>,
  rows: ReadonlyArray<z.infer<typeof sentRow>>,
  tx: ChainTransaction,
  total: bigint,
): Promise<ReturnType<typeof bookClosing>> {
  const shares = rows.filter((row) => row.closing_of === primary.id).sort((a, b) => SHARE_ORDER.indexOf(a.reason) - SHARE_ORDER.indexOf(b.reason));
  const own = shares.filter((row) => row.send_mode !== null);
  const refund = primary.kind === 'refund';
  const asAction = (row: z.infer<typeof sentRow>, role: 'primary' | 'share') => ({
    of: row.id,
    role,
    to: row.to_address,
    amount: BigInt(row.amount_base_units),
  });
  const actions = refund
    ? [
        asAction(primary, 'primary'),
        ...own.map((row) => asAction(row, 'share')),
        { of: 'carry_all', role: 'carry_all' as const, to: primary.carry_all_to!, amount: 0n },
      ]
    : [...own.map((row) => asAction(row, 'share')), asAction(primary, 'primary')];
  const late = await db.one(sql.type(z.object({ customer: z.string(), kassa: z.string() }))`
    select coalesce(sum(t.amount_base_units - coalesce(t.fee_base_units, 0)) filter (where t.effect not in ('not_credited', 'not_counted', 'unknown_token')), 0)::text as customer,
           coalesce(sum(t.amount_base_units - coalesce(t.fee_base_units, 0)) filter (where t.effect = 'not_counted'), 0)::text as kassa
    from transfers t
    where t.account = ${primary.from_address} and t.coin_symbol = 'TON' and t.lt > ${primary.books_lt ?? '0'} and t.lt < ${tx.lt}
  `);
  return bookClosing({
    primary: { id: primary.id, kind: refund ? 'refund' : 'sweep', amount: BigInt(primary.amount_base_units) },
    actions,
    unsent: shares.filter((row) => row.send_mode === null).map((row) => ({ id: row.id, amount: BigInt(row.amount_base_units) })),
    out: tx.outMessages ?? [],
    skipped: tx.skippedActions ?? null,
    total,
    late: { customer: BigInt(late.customer), kassa: BigInt(late.kassa) },
  });
}

/**
 * Money a closing message's carry-all took beyond the plan (closing.ts CarriedMoney), on a row of its
 * own: a sweep to the carry-all's destination — the customer's as held money, Kassa's as a gas
 * return — beside the message's primary (closing_of), confirmed by the same transaction.
 */
async function bookCarried(db: Db, primary: z.infer<typeof sentRow>, carried: CarriedMoney, tx: ChainTransaction, now: Date): Promise<void> {
  const row = await planOutgoing(
    db,
    {
      kind: 'sweep',
      reason: carried.owner === 'customer' ? 'held_money' : 'gas_return',
      paymentId: primary.payment_id!,
      storeId: primary.store_id,
      from: primary.from_address,
      to: primary.carry_all_to!,
      coin: 'TON',
      decimals: 9,
      amountBaseUnits: carried.amount,
      feeReservedBaseUnits: 0n,
      closingOf: primary.id,
    },
    now,
  );
  if (!row) throw new Error('the money a closing message carried could not be booked');
  const [locked] = await lockTransfers(db, sql.fragment`o.id = ${row.id}`);
  const next = askOne(locked!, { type: 'confirmed' }, now);
  if (!next.ok) throw new Error('the money a closing message carried could not be confirmed');
  await writeTransition(
    db,
    locked!,
    next,
    now,
    sql.fragment`sent_amount_base_units = ${carried.sent.toString()}, fee_base_units = ${carried.fee.toString()}, fee = ${fromBaseUnits(carried.fee, 9)},
      transaction_hash = ${tx.hash}, transaction_lt = ${tx.lt}, wallet_seqno = ${primary.seqno}, valid_until = ${sql.timestamp(primary.valid_until)},
      message_hash = ${primary.message_hash}, message_hash_normalized = ${primary.message_hash_normalized}, confirmed_at = ${sql.timestamp(now)},
      delivered_at = ${sql.timestamp(now)}`,
  );
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

/**
 * A treasury jetton refund bounced at the customer's jetton wallet (a frozen USDT wallet): the
 * treasury's jetton wallet took the `internal_transfer` back (its query id is the refund's own,
 * transferQueryId, and its amount what the refund moved — signed for another amount than asked, that
 * amount: issue 48.13). The refund confirmed when it left the treasury is failed
 * (`bounced_at_destination`): the money is the treasury's again. Idempotent.
 */
export async function treasuryJettonBounced(
  pool: DatabasePool,
  refundId: string,
  amount: bigint,
  tx: ChainTransaction,
  now: Date,
  log: Logger,
): Promise<boolean> {
  const why = `refused by ${tx.inMessage?.source ?? 'its jetton wallet'}, returned to the treasury in transaction ${tx.hash}`;
  const failed = await pool.transaction(async (db) => {
    const [row] = await lockTransfers(db, sql.fragment`o.id = ${refundId}`);
    if (!row) return false;
    const moved = await db.oneFirst(sql.type(z.object({ moved: z.string() }))`
      select coalesce(sent_amount_base_units, amount_base_units)::text as moved from outgoing_transfers where id = ${refundId}
    `);
    if (BigInt(moved) !== amount) return false;
    const next = askOne(row, { type: 'bounced_at_destination', why }, now);
    if (!next.ok) return false;
    await writeTransition(db, row, next, now);
    return true;
  });
  if (failed) {
    outgoingFailures.inc({ kind: 'bounced' });
    log.error(
      { transferId: refundId, jettonWallet: tx.account, hash: tx.hash },
      "a treasury jetton refund bounced at the customer's jetton wallet; the jettons came back to the treasury",
    );
  }
  return failed;
}

// ---- refunds from the treasury (signed by the merchant's wallet; treasuryRefunds.ts) -----------

/**
 * The chain reader saw a transfer with a treasury refund's reference leave the treasury
 * (treasuryTransferSeen; or reach its customer from another account, through the ton:// link): the
 * refund is confirmed with what the chain says moved — or, when it was confirmed already (the
 * merchant's wallet signed the request twice), the repeat is booked in treasury_refund_repeats.
 * Kassa cannot stop a wallet it holds no key of, so what left is on the books, and every way it
 * differs from what was asked is kept beside the refund and logged:
 * - signed for another amount (issue 48 item 13): amount becomes what moved, what was asked is kept
 *   (askedAmount), and refund.confirmed tells the store what moved;
 * - what left the treasury for the sale now exceeds what was swept to it (an expired refund asked
 *   again, then signed anyway by a wallet ignoring validUntil; issue 48 item 6): by how much
 *   (beyondSale), an error line, kassa_treasury_refunds_paid_twice_total{why="beyond_sale"};
 * - paid after Kassa had found it expired (its amount freed, perhaps asked again and paid again within
 *   the sale, where beyondSale says nothing): when it had expired (paidAfterExpiry), an error line,
 *   kassa_treasury_refunds_paid_twice_total{why="after_expiry"};
 * - paid from another account (paidFrom).
 * Idempotent (by the transaction). Returns what it did.
 */
export async function confirmTreasuryRefund(
  pool: DatabasePool,
  seen: { refundId: string; sent: bigint; fee: bigint; paidFrom?: string },
  tx: ChainTransaction,
  now: Date,
  log: Logger,
): Promise<'confirmed' | 'repeat' | 'paid_again'> {
  let told: { asked: bigint; beyondSale: bigint; paymentId: string; wasExpired: boolean } | null = null;
  const outcome = await pool.transaction(async (db) => {
    told = null;
    // The sale (or the unmatched transfer) first, as createTreasuryRefund (createUnmatchedRefund) locks it, so what its treasury refunds took is read whole.
    const owner = await db.maybeOne(sql.type(z.object({ payment_id: z.string().nullable(), unmatched_transfer_id: z.string().nullable() }))`
      select payment_id, unmatched_transfer_id from outgoing_transfers where id = ${seen.refundId}
    `);
    if (owner === null) return 'repeat' as const;
    const paymentId = owner.payment_id;
    if (paymentId !== null) await db.query(sql.unsafe`select 1 from payments where id = ${paymentId} for update`);
    const unmatched =
      owner.unmatched_transfer_id === null
        ? null
        : await db.one(sql.type(z.object({ id: z.string(), state: z.string() }))`
            select id, state from unmatched_transfers where id = ${owner.unmatched_transfer_id} for update
          `);
    const [row] = await lockTransfers(db, sql.fragment`o.id = ${seen.refundId}`);
    if (!row) return 'repeat' as const;
    const next = askOne(row, { type: 'treasury_transfer_seen' }, now);
    if (next.ok) {
      const asked = BigInt(
        await db.oneFirst(sql.type(z.object({ amount_base_units: z.string() }))`
          select amount_base_units::text as amount_base_units from outgoing_transfers where id = ${seen.refundId}
        `),
      );
      // Books = chain: a wallet that signed another amount moved that amount; the refund says so.
      const differs = seen.sent !== asked && seen.sent > 0n;
      // What left the treasury for the sale before this transfer (this refund was not confirmed), and with it.
      const { moved, swept } = paymentId !== null ? await treasurySaleMoved(db, paymentId) : await unmatchedMoved(db, unmatched!.id);
      // Unmatched money assigned or kept meanwhile (its refund expired, then signed anyway): all of this transfer is the second time.
      const resolvedOtherwise = unmatched !== null && (unmatched.state === 'assigned' || unmatched.state === 'kept');
      const beyondSale = resolvedOtherwise ? seen.sent : moved + seen.sent > swept ? moved + seen.sent - swept : 0n;
      await writeTransition(
        db,
        row,
        next,
        now,
        sql.fragment`sent_amount_base_units = ${seen.sent.toString()}, fee_base_units = ${seen.fee.toString()}, fee = ${fromBaseUnits(seen.fee, 9)},
          transaction_hash = ${tx.hash}, transaction_lt = ${tx.lt}, confirmed_at = ${sql.timestamp(now)}, expired_at = null,
          expired_before_paid_at = outgoing_transfers.expired_at,
          paid_from = ${seen.paidFrom ?? null}, beyond_sale_base_units = ${beyondSale > 0n ? beyondSale.toString() : null},
          asked_amount_base_units = ${differs ? asked.toString() : null},
          amount_base_units = ${(differs ? seen.sent : asked).toString()},
          amount = ${differs ? sql.fragment`(select trim_scale(${seen.sent.toString()}::numeric / power(10::numeric, c.decimals)) from coins c where c.symbol = outgoing_transfers.coin_symbol)` : sql.fragment`amount`}`,
      );
      // The unmatched transfer it sends back is refunded (whether it awaited this refund or was open again after it expired).
      if (unmatched !== null && (unmatched.state === 'refunding' || unmatched.state === 'open'))
        await db.query(sql.typeAlias('void')`
          update unmatched_transfers set state = 'refunded', resolved_at = ${sql.timestamp(now)} where id = ${unmatched.id}
        `);
      told = { asked: differs ? asked : seen.sent, beyondSale, paymentId: paymentId ?? unmatched!.id, wasExpired: row.state === 'expired' };
      return 'confirmed' as const;
    }
    const known = await db.exists(sql.unsafe`select 1 from outgoing_transfers where id = ${seen.refundId} and transaction_hash = ${tx.hash}`);
    if (known) return 'repeat' as const;
    const inserted = await db.maybeOne(sql.type(z.object({ transaction_hash: z.string() }))`
      insert into treasury_refund_repeats (transfer_id, transaction_hash, transaction_lt, amount_base_units, seen_at)
      values (${seen.refundId}, ${tx.hash}, ${tx.lt}, ${seen.sent.toString()}, ${sql.timestamp(now)})
      on conflict do nothing returning transaction_hash
    `);
    return inserted ? ('paid_again' as const) : ('repeat' as const);
  });
  if (outcome === 'paid_again') {
    treasuryRefundsPaidTwice.inc({ why: 'signed_twice' });
    log.error(
      { transferId: seen.refundId, account: tx.account, hash: tx.hash, amount: seen.sent.toString() },
      "a treasury refund was paid again: the merchant's wallet signed its request twice (booked as paidAgain on the refund)",
    );
  } else if (outcome === 'confirmed') {
    log.info({ transferId: seen.refundId, hash: tx.hash, paidFrom: seen.paidFrom ?? null }, 'a treasury refund left the treasury');
    const said = told as { asked: bigint; beyondSale: bigint; paymentId: string; wasExpired: boolean } | null;
    if (said && said.asked !== seen.sent)
      log.error(
        { transferId: seen.refundId, paymentId: said.paymentId, hash: tx.hash, asked: said.asked.toString(), sent: seen.sent.toString() },
        'a treasury refund was signed for another amount than it asked: booked as what moved (amount; askedAmount keeps what was asked), and refund.confirmed says what moved',
      );
    if (said?.wasExpired) {
      treasuryRefundsPaidTwice.inc({ why: 'after_expiry' });
      log.error(
        { transferId: seen.refundId, paymentId: said.paymentId, hash: tx.hash, amount: seen.sent.toString() },
        'a treasury refund was paid after it had expired (a wallet ignoring validUntil signed it anyway): its amount had been freed and may have been refunded again; booked as paidAfterExpiry on the refund',
      );
    }
    if (said && said.beyondSale > 0n) {
      treasuryRefundsPaidTwice.inc({ why: 'beyond_sale' });
      log.error(
        { transferId: seen.refundId, paymentId: said.paymentId, hash: tx.hash, beyondSale: said.beyondSale.toString(), confirmedAfterExpiry: said.wasExpired },
        'treasury refunds paid more of a sale than was swept to the treasury: the same money was refunded twice (a refund asked again after its request expired, then signed anyway); booked as beyondSale on the refund',
      );
    }
  }
  return outcome;
}

/**
 * `signature_expired`: treasury refunds awaiting the merchant's signature that can no longer land
 * (heldUntil: validUntil + the longest lifetime a wallet signs, WALLET_LONGEST_LIFETIME_MS, + the
 * late-commit margin) and were not seen: the chain has been read LATE_COMMIT_MARGIN_MS past
 * validUntil + that lifetime (`chainSettledAt` less the margin: the reader's expiry clock).
 * Expired: their amount may be asked again. Returns how many.
 */
export async function expireTreasuryRefunds(pool: DatabasePool, args: { expiryClock: Date; now: Date }): Promise<number> {
  const signedBefore = new Date(args.expiryClock.getTime() - WALLET_LONGEST_LIFETIME_MS);
  return pool.transaction(async (db) => {
    const due = sql.fragment`o.state = 'awaiting_signature' and o.valid_until < ${sql.timestamp(signedBefore)}`;
    // The unmatched transfers they send back first (as createUnmatchedRefund and confirmTreasuryRefund lock them).
    const unmatched = await db.anyFirst(sql.type(z.object({ id: z.string() }))`
      select u.id from unmatched_transfers u where u.id in (select o.unmatched_transfer_id from outgoing_transfers o where ${due})
      order by u.id for update of u
    `);
    const rows = await lockTransfers(db, due);
    let moved = 0;
    for (const { row, next } of ask(rows, { type: 'signature_expired' }, args.now)) {
      if (!next.ok) continue;
      await writeTransition(db, row, next, args.now, sql.fragment`expired_at = ${sql.timestamp(args.now)}`);
      moved += 1;
    }
    // Unmatched money whose refund expired unseen is open again (a person may refund, assign or keep it).
    if (unmatched.length > 0)
      await db.query(sql.typeAlias('void')`
        update unmatched_transfers u set state = 'open' where u.id = any(${sql.array([...unmatched], 'uuid')}) and u.state = 'refunding'
          and not exists (select 1 from outgoing_transfers o where o.unmatched_transfer_id = u.id and o.state = 'awaiting_signature')
      `);
    return moved;
  });
}
