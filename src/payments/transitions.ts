// The one function that decides every payment status change (docs/API.md, Payment statuses).
// Pure: no I/O, no clock of its own — `now` is given.

/** Every status a payment can have, in the order of its life (docs/API.md, Payment statuses). */
export const PAYMENT_STATUSES = ['created', 'pending', 'completed', 'expired', 'cancelled'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export type PaymentEvent =
  /** The customer (or the merchant at creation) chose the method: price fixed, address assigned. */
  | { type: 'select_method' }
  /** The confirmed sum reached coinAmount; `paidAt` is the on-chain time of the reaching transfer. */
  | { type: 'confirm'; paidAt: Date }
  | { type: 'expire' }
  | { type: 'cancel' };

export type Rejection = 'payment_not_cancellable' | 'payment_expired' | 'method_already_selected' | 'payment_not_open' | 'paid_too_late' | 'not_due';

type Transition = { ok: true; to: PaymentStatus; changed: boolean } | { ok: false; reason: Rejection };

interface TransitionSubject {
  status: PaymentStatus;
  expiresAt: Date;
}

/**
 * The expiry boundary, the one place it is written: a moment at or after expiresAt is too late
 * (a transfer made then does not count; a payment is due then). The expiry statement's SQL
 * (`expireDuePayments`, payments/commands.ts) says the same with `expires_at <= …`.
 */
export function pastExpiry(at: Date, expiresAt: Date): boolean {
  return at.getTime() >= expiresAt.getTime();
}

const move = (to: PaymentStatus): Transition => ({ ok: true, to, changed: true });
const stay = (to: PaymentStatus): Transition => ({ ok: true, to, changed: false });
const reject = (reason: Rejection): Transition => ({ ok: false, reason });

export function transition(payment: TransitionSubject, event: PaymentEvent, now: Date): Transition {
  const { status } = payment;
  const due = pastExpiry(now, payment.expiresAt);
  switch (event.type) {
    case 'select_method':
      if (status === 'created') return due ? reject('payment_expired') : move('pending');
      if (status === 'pending') return reject('method_already_selected');
      return reject('payment_not_open');
    case 'confirm':
      if (status !== 'pending') return reject('payment_not_open');
      // Counts when the transfer happened before expiresAt, even if it is seen later.
      return pastExpiry(event.paidAt, payment.expiresAt) ? reject('paid_too_late') : move('completed');
    case 'expire':
      if (status === 'created' || status === 'pending') return due ? move('expired') : reject('not_due');
      return reject('payment_not_open');
    case 'cancel':
      if (status === 'created' || status === 'pending') return move('cancelled');
      if (status === 'cancelled') return stay('cancelled');
      return reject('payment_not_cancellable');
  }
}

/** Statuses from which no move exists. */
export function isFinal(status: PaymentStatus): boolean {
  return status === 'completed' || status === 'expired' || status === 'cancelled';
}
