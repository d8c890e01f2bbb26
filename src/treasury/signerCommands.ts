// What the signer (signer.ts) changes on the books, one command per transition it makes
// (transitions.ts says who enters and leaves each state): signed (planned → sent, every message
// kept in outgoing_messages), expired unseen (sent → planned once the chain was read the
// late-commit margin past its valid_until, or failed after MAX_MESSAGES_SIGNED), not sendable
// (planned → failed). Each locks, asks and writes through writeTransition.ts; the caller owns the
// transaction. What the chain reader confirms is confirmations.ts.
import { afterCommit, sql, type Db } from '../db/pool.ts';
import { LATE_COMMIT_MARGIN_MS } from '../chain/clock.ts';
import type { Logger } from '../log.ts';
import { enqueueWalletSend } from './outgoing.ts';
import type { Failure } from './transitions.ts';
import type { SignedMessage } from './wallets.ts';
import { ask, askOne, countFailure, lockTransfers, writeTransition } from './writeTransition.ts';

/** What a signed message's record is given besides the ids of the transfers it carries (recordSigned's arguments). */
export type SignedRecord = { wallet: string; seqno: number; validUntil: Date; sendMode: number; message: SignedMessage; now: Date };

/**
 * `signed`: the transfers of one signed message (the gas wallet's batch, or one transfer) are
 * recorded with it — seqno, valid_until, hash, the message itself — before it is broadcast, and
 * the wallet's job is set for after it can no longer land (unseenCheckAt). Throws when one of them is no longer planned
 * (another run took it): then nothing is recorded and the message is never broadcast.
 */
export async function recordSigned(tx: Db, args: SignedRecord & { ids: readonly string[] }): Promise<void> {
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
