// Unmatched money sent back (issue 43, CONTRACT §12: POST /v1/unmatched-transfers/{id}/refund): a
// transfer into a treasury that named no payment (payments/treasuryTransfers.ts keeps it) refunded
// whole from the treasury it reached, as a treasury refund of a sale is (treasuryRefunds.ts
// planTreasuryRefund: awaiting_signature, the TON Connect request the merchant's wallet signs, the
// reference in its payload). The chain reader's side — confirmed (the transfer refunded), expired
// (the transfer open again) — is treasuryConfirmations.ts confirmTreasuryRefund and expireTreasuryRefunds.
import type { TonNetwork } from '../chain/addresses.ts';
import { sql, z, type Db } from '../db/pool.ts';
import { KassaError, unmatchedTransferNotOpen, unusableDestination } from '../errors.ts';
import { LOCKED_UNMATCHED, lockedUnmatched } from '../payments/treasuryTransfers.ts';
import { checkDestination } from './destinations.ts';
import { OUTGOING_COLUMNS, outgoingRow, type OutgoingRow } from './outgoing.ts';
import { heldUntil, type JettonWalletOf, planTreasuryRefund } from './treasuryRefunds.ts';

/**
 * POST /v1/unmatched-transfers/{id}/refund {address?}: a person sends an unmatched transfer back,
 * whole (its amount and coin), from the treasury it reached — a treasury refund like a sale's
 * (treasuryRefunds.ts planTreasuryRefund: `awaiting_signature`, the TON Connect request the merchant's
 * wallet signs, the reference in its payload) to its sender, or the address given. The transfer is
 * `refunding` until the chain reader sees the refund leave (`refunded`) or the refund expires unseen
 * after its hold (`open` again). In the caller's transaction, which also writes the audit row.
 * Refused: an unknown transfer (404), one not open (409: a refund of it already in a wallet
 * included), an address Kassa cannot send to, or none when the sender is unknown (400 invalid_address).
 */
export async function createUnmatchedRefund(
  tx: Db,
  network: TonNetwork,
  storeId: string,
  unmatchedId: string,
  address: string | undefined,
  now: Date,
  walletOf: JettonWalletOf | null,
): Promise<OutgoingRow> {
  const row = await tx.maybeOne(sql.type(lockedUnmatched)`${LOCKED_UNMATCHED} where u.id = ${unmatchedId} and u.store_id = ${storeId} for update of u`);
  if (!row) throw new KassaError('unmatched_transfer_not_found', { param: 'id' });
  if (row.state !== 'open') {
    const awaiting = await tx.maybeOneFirst(sql.type(z.object({ valid_until: z.date() }))`
      select valid_until from outgoing_transfers where unmatched_transfer_id = ${row.id} and state = 'awaiting_signature'
    `);
    throw unmatchedTransferNotOpen(row.state, awaiting === null ? null : heldUntil(awaiting));
  }
  const given = address?.trim() || row.sender;
  if (!given) throw unusableDestination('the chain names no sender of this transfer: name an address');
  const destination = await checkDestination(tx, given, network);
  if ('problem' in destination) throw unusableDestination(destination.problem);
  if (destination.raw === row.treasury) throw unusableDestination('the treasury itself: the money would not leave it');
  const decimals = await tx.oneFirst(
    sql.type(z.object({ decimals: z.number() }))`select decimals::int as decimals from coins where symbol = ${row.coin_symbol}`,
  );
  const refund = await planTreasuryRefund(
    tx,
    network,
    {
      owner: { unmatchedId: row.id, storeId },
      storeId,
      treasury: row.treasury,
      coin: row.coin_symbol,
      decimals,
      amount: BigInt(row.amount_base_units),
      destination: destination.raw,
      given,
      requested: null,
    },
    now,
    walletOf,
  );
  await tx.query(sql.typeAlias('void')`update unmatched_transfers set state = 'refunding' where id = ${row.id}`);
  return refund;
}

/** An unmatched transfer's refunds, oldest first; 404 when the store has no such transfer. */
export async function unmatchedRefunds(db: Db, storeId: string, unmatchedId: string): Promise<readonly OutgoingRow[]> {
  if (!(await db.exists(sql.unsafe`select 1 from unmatched_transfers where id = ${unmatchedId} and store_id = ${storeId}`)))
    throw new KassaError('unmatched_transfer_not_found', { param: 'id' });
  return db.any(sql.type(outgoingRow)`
    select ${OUTGOING_COLUMNS} from outgoing_transfers where unmatched_transfer_id = ${unmatchedId} order by created_at, id
  `);
}
