// The one way an outgoing transfer's state changes, shared by every command of money out — the
// signer's (signerCommands.ts), the chain reader's (confirmations.ts, treasuryConfirmations.ts) and
// the closing message's books (closing.ts). Each command follows the rule of the payment commands:
//   1. lock the transfer rows (lockTransfers: select … for update);
//   2. ask the pure transition (transitions.ts) and refuse what it rejects (askOne, ask);
//   3. write the state it returned, with its failure (writeTransition: the one place a transition
//      is written), and tell the store's webhook endpoints of a refund or sweep that ended (events.ts)
//      there, in the same transaction, with a subscription's ledger settled for a refund that ended
//      (subscriptions/engine.ts settleRefundLedger);
//   4. enqueue the wallet's signer job in the same transaction (outgoing.ts enqueueWalletSend);
//   5. count a failure once the transaction has committed (countFailure).
// The caller owns the transaction.
import { afterCommit, sql, z, type Db } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { outgoingFailures } from '../metrics.ts';
import { settleRefundLedger } from '../subscriptions/engine.ts';
import { outgoingEvents } from './events.ts';
import { failureColumns, RETRIES } from './outgoing.ts';
import { OUTGOING_STATES, outgoingTransition, type Failure, type OutgoingEvent, type OutgoingTransition } from './transitions.ts';

export const lockedRow = z.object({ id: z.string(), state: z.enum(OUTGOING_STATES), messages_signed: z.number(), retries: z.number(), landed: z.boolean() });
type Locked = z.infer<typeof lockedRow>;
/** The columns of a locked row (over `outgoing_transfers o`). */
export const LOCKED_COLUMNS = sql.fragment`o.id, o.state, o.messages_signed, ${RETRIES} as retries, o.transaction_hash is not null as landed`;

/** Step 1: the rows, locked until the transaction ends, oldest first. */
export async function lockTransfers(tx: Db, where: ReturnType<typeof sql.fragment>): Promise<readonly Locked[]> {
  return tx.any(sql.type(lockedRow)`
    select ${LOCKED_COLUMNS} from outgoing_transfers o
    where ${where} order by o.created_at, o.id for update of o
  `);
}

/** Step 2: what the transition says of the locked row. */
export function askOne(row: Locked, event: OutgoingEvent, now: Date): OutgoingTransition {
  return outgoingTransition({ state: row.state, messagesSigned: row.messages_signed, retries: row.retries, landed: row.landed }, event, now);
}

/** Step 2, for each row. */
export function ask(rows: readonly Locked[], event: OutgoingEvent, now: Date): Array<{ row: Locked; next: OutgoingTransition }> {
  return rows.map((row) => ({ row, next: askOne(row, event, now) }));
}

/**
 * Step 3: the state the transition returned, with its failure's columns (or none), and what else
 * the event records about the transfer; a refund's or sweep's end told to its store's webhook
 * endpoints (refund.confirmed …, events.ts) in the same transaction. The one place an outgoing
 * transfer's state is written.
 */
export async function writeTransition(
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
  // A refund of a subscription's payment that failed or expired unsigned gives back to its credit what
  // it took (once; taken again should it land after all): subscriptions/engine.ts settleRefundLedger.
  if (next.to === 'confirmed' || next.to === 'failed' || next.to === 'expired') await settleRefundLedger(tx, row.id);
}

/** Step 5: a failure is counted and told once the transaction has committed. */
export function countFailure(tx: Db, log: Logger, transferId: string, wallet: string, failure: Failure, kind: string): void {
  afterCommit(tx, () => {
    outgoingFailures.inc({ kind });
    log.error({ transferId, wallet, reason: failure.reason, failureKind: failure.kind }, 'an outgoing transfer failed');
  });
}
