// What the chain reader confirms of a treasury refund (treasuryRefunds.ts: signed by the merchant's
// own wallet, never by Kassa): seen leaving the treasury (awaiting_signature or expired → confirmed,
// or a repeat booked beside it), bounced at the customer's jetton wallet (confirmed → failed), or
// never signed (awaiting_signature → expired). One command per transition (transitions.ts), each
// locking, asking and writing through writeTransition.ts. Kassa's own wallets' confirmations are
// confirmations.ts.
import { sql, z, type DatabasePool } from '../db/pool.ts';
import type { ChainTransaction } from '../chain/transactions.ts';
import type { Logger } from '../log.ts';
import { outgoingFailures, treasuryRefundsPaidTwice } from '../metrics.ts';
import { fromBaseUnits } from '../money.ts';
import { treasurySaleMoved, unmatchedMoved, WALLET_LONGEST_LIFETIME_MS } from './treasuryRefunds.ts';
import { ask, askOne, lockTransfers, writeTransition } from './writeTransition.ts';

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
