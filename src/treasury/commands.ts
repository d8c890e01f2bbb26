// The outgoing transfer commands: one per transition of an outgoing transfer the signer makes
// (docs/OPERATIONS.md, Money out), side by side — signed (planned → sent, every message kept in
// outgoing_messages), expired unseen (sent → planned once the chain was read the late-commit margin
// past its valid_until, or failed after MAX_MESSAGES_SIGNED), not sendable (planned → failed). The chain reader's
// (confirmed, failed on chain, refused by a jetton wallet) are confirmOutgoing and
// jettonTransferRefused in outgoing.ts. Each follows the rule of the payment commands:
//   1. lock the transfer rows (select … for update);
//   2. ask the pure transition (transitions.ts) and refuse what it rejects;
//   3. write the state it returned, with its failure;
//   4. enqueue the wallet's signer job, and tell the store's webhook endpoints of a refund or sweep
//      that ended (events.ts), in the same transaction;
//   5. count a failure once the transaction has committed.
// The caller owns the transaction.
import { afterCommit, sql, z, type Db } from '../db/pool.ts';
import { LATE_COMMIT_MARGIN_MS } from '../chain/clock.ts';
import type { Logger } from '../log.ts';
import { outgoingFailures } from '../metrics.ts';
import { outgoingEvents } from './events.ts';
import { enqueueWalletSend, failureColumns, RETRIES } from './outgoing.ts';
import { OUTGOING_STATES, outgoingTransition, type Failure, type OutgoingEvent, type OutgoingTransition } from './transitions.ts';
import type { SignedMessage } from './wallets.ts';

const lockedRow = z.object({ id: z.string(), state: z.enum(OUTGOING_STATES), messages_signed: z.number(), retries: z.number() });
type Locked = z.infer<typeof lockedRow>;

/** Step 1: the rows, locked until the transaction ends, oldest first. */
async function lockTransfers(tx: Db, where: ReturnType<typeof sql.fragment>): Promise<readonly Locked[]> {
  return tx.any(sql.type(lockedRow)`
    select o.id, o.state, o.messages_signed, ${RETRIES} as retries from outgoing_transfers o
    where ${where} order by o.created_at, o.id for update of o
  `);
}

/** Step 2: what the transition says of each row. */
function ask(rows: readonly Locked[], event: OutgoingEvent, now: Date): Array<{ row: Locked; next: OutgoingTransition }> {
  return rows.map((row) => ({ row, next: outgoingTransition({ state: row.state, messagesSigned: row.messages_signed, retries: row.retries }, event, now) }));
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
    await tx.query(sql.typeAlias('void')`
      update outgoing_transfers set state = ${next.to}, wallet_seqno = ${args.seqno}, valid_until = ${sql.timestamp(args.validUntil)},
        send_mode = ${args.sendMode}, message_hash = ${args.message.hash}, message_hash_normalized = ${args.message.hashNormalized},
        signed_message = ${sql.binary(args.message.boc)}, messages_signed = messages_signed + 1,
        signed_at = ${sql.timestamp(now)}, updated_at = ${sql.timestamp(now)}
      where id = ${row.id}
    `);
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
    await tx.query(sql.typeAlias('void')`
      update outgoing_transfers set state = ${next.to}, ${failureColumns(next.failure, now)},
        wallet_seqno = null, valid_until = null, message_hash = null, message_hash_normalized = null, signed_message = null, send_mode = null,
        updated_at = ${sql.timestamp(now)}
      where id = ${row.id}
    `);
    if (next.failure) countFailure(tx, args.log, row.id, args.wallet, next.failure, 'expired');
    else
      afterCommit(tx, () =>
        args.log.warn({ transferId: row.id, wallet: args.wallet }, 'an outgoing message expired unseen; it is signed again with a fresh seqno'),
      );
    moved.push({ id: row.id, to: next.to });
  }
  await outgoingEvents(
    tx,
    moved.filter((m) => m.to === 'failed').map((m) => m.id),
    now,
  );
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
  const next = outgoingTransition(
    { state: row.state, messagesSigned: row.messages_signed, retries: row.retries },
    { type: 'not_sendable', reason: args.reason, permanent: args.permanent },
    now,
  );
  if (!next.ok) return null;
  await tx.query(sql.typeAlias('void')`
    update outgoing_transfers set state = ${next.to}, ${failureColumns(next.failure, now)}, updated_at = ${sql.timestamp(now)}
    where id = ${row.id}
  `);
  await outgoingEvents(tx, [row.id], now);
  await enqueueWalletSend(tx, args.wallet);
  if (next.failure) countFailure(tx, args.log, row.id, args.wallet, next.failure, next.failure.kind);
  return next.failure ?? null;
}
