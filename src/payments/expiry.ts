// Expiry, decided in bulk: one statement expires every payment that is due. A `created` payment
// is due on wall-clock time; a `pending` one when the chain reader has booked every transaction
// made before its expiresAt (the chain's clock: chain_reader.settled_until), so money sent in time
// completes it even when its block is read late. The chain reader runs this after every step.
import { sql, z, type Db } from '../db/pool.ts';
import { paymentTransitions } from '../metrics.ts';
import { pastExpiry } from './transitions.ts';

/**
 * The rule, as a plain function (the SQL below says the same): `created` expires at expiresAt by
 * the wall clock; `pending` once the chain is settled up to expiresAt (its counted sum is short,
 * or it would be completed already).
 */
export function isDue(payment: { status: string; expiresAt: Date }, clocks: { now: Date; chainSettledAt: Date | null }): boolean {
  if (payment.status === 'created') return pastExpiry(clocks.now, payment.expiresAt);
  if (payment.status === 'pending') return clocks.chainSettledAt !== null && pastExpiry(clocks.chainSettledAt, payment.expiresAt);
  return false;
}

/** Expires every due payment in one statement; returns how many. */
export async function expireDuePayments(db: Db, clocks: { now: Date; chainSettledAt: Date | null }): Promise<number> {
  const settled = clocks.chainSettledAt === null ? null : sql.timestamp(clocks.chainSettledAt);
  // The range on expires_at bounds the index scan to what can be due (never every open payment).
  const bound = new Date(Math.max(clocks.now.getTime(), clocks.chainSettledAt?.getTime() ?? 0));
  const expired = await db.oneFirst(sql.type(z.object({ n: z.number() }))`
    with due as (
      update payments set status = 'expired', expired_at = ${sql.timestamp(clocks.now)}
      where status in ('created', 'pending') and expires_at <= ${sql.timestamp(bound)}
        and ((status = 'created' and expires_at <= ${sql.timestamp(clocks.now)})
          or (status = 'pending' and ${settled === null ? sql.fragment`false` : sql.fragment`expires_at <= ${settled}`}))
      returning 1
    )
    select count(*)::int as n from due
  `);
  if (expired > 0) paymentTransitions.inc({ to: 'expired' }, expired);
  return expired;
}
