// The gas top-up planner: a jetton transfer out of a deposit lacks the TON its message needs, so the
// gas wallet sends it some. Whether to plan one now (the failed top-ups' cap and backoff, the pure
// whenToTopUp of whatToSend.ts, whose backoff is the transition's retryAfter) and the plan itself
// (once per shortfall, on the books through planOutgoing, the gas wallet's job a moment later so
// top-ups planned meanwhile share its message). The signer asks it and waits; it signs nothing here.
import { sql, z, type Db } from '../db/pool.ts';
import { paymentOf, planOutgoing, type OutgoingRow } from './outgoing.ts';
import { whenToTopUp } from './whatToSend.ts';

/** The gas wallet's job waits this long after a top-up is planned, so top-ups planned meanwhile share its message. */
const GAS_BATCH_WINDOW_MS = 1_000;

/** Whether to plan a top-up for `transferId` now, given the top-ups for it that failed before: plan, wait or give up. */
export async function whenToTopUpFor(db: Db, transferId: string, now: Date): Promise<ReturnType<typeof whenToTopUp>> {
  // Top-ups for this transfer that failed before: backoff, and a cap after which the transfer itself fails.
  const failed = await db.one(sql.type(z.object({ count: z.number(), last_failed_at: z.date().nullable() }))`
    select count(*)::int as count, max(failed_at) as last_failed_at from outgoing_transfers
    where for_transfer_id = ${transferId} and kind = 'gas_top_up' and state = 'failed'
  `);
  return whenToTopUp({ count: failed.count, lastFailedAt: failed.last_failed_at }, now);
}

/**
 * Plans a top-up of `topUp` nanoTON from the gas wallet to the transfer's deposit, in the caller's
 * transaction, unless one is under way (planned, sent, or confirmed in the last 30 seconds).
 * Returns whether it planned one.
 */
export async function planGasTopUp(tx: Db, args: { transfer: OutgoingRow; gas: string; topUp: bigint; now: Date }): Promise<boolean> {
  const { transfer, now } = args;
  const pending = await tx.exists(sql.unsafe`
    select 1 from outgoing_transfers where for_transfer_id = ${transfer.id} and kind = 'gas_top_up'
      and (state in ('planned', 'sent') or (state = 'confirmed' and confirmed_at > ${sql.timestamp(new Date(now.getTime() - 30_000))}))
  `);
  if (pending) return false;
  await planOutgoing(
    tx,
    {
      kind: 'gas_top_up',
      reason: 'gas',
      paymentId: paymentOf(transfer),
      storeId: transfer.store_id,
      forTransferId: transfer.id,
      from: args.gas,
      to: transfer.from_address,
      coin: 'TON',
      decimals: 9,
      amountBaseUnits: args.topUp,
      feeReservedBaseUnits: 0n,
      sendAt: new Date(now.getTime() + GAS_BATCH_WINDOW_MS),
    },
    now,
  );
  return true;
}
