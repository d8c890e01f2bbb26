// Expiry, decided in bulk: one statement expires every payment that is due (`expireDuePayments`,
// payments/commands.ts). A `created` payment is due on wall-clock time; a `pending` one when the
// chain reader has booked every transaction made before its expiresAt (the chain's clock:
// chain_reader.settled_until), so money sent in time completes it even when its block is read late.
// The chain reader expires after every step.
import { pastExpiry } from './transitions.ts';

/**
 * The rule, as a plain function (the SQL of `expireDuePayments` says the same): `created` expires
 * at expiresAt by the wall clock; `pending` once the chain is settled up to expiresAt (its counted
 * sum is short, or it would be completed already).
 */
export function isDue(payment: { status: string; expiresAt: Date }, clocks: { now: Date; chainSettledAt: Date | null }): boolean {
  if (payment.status === 'created') return pastExpiry(clocks.now, payment.expiresAt);
  if (payment.status === 'pending') return clocks.chainSettledAt !== null && pastExpiry(clocks.chainSettledAt, payment.expiresAt);
  return false;
}
