// Anomalies: what the books say about a payment beside its status, as BTCPay keeps its
// "additional status" (paid partially, paid over, paid late). Derived from the effects of the
// payment's transfers (payments/transfers.ts effectOf); never stored, never a status of its own.
import type { TransferEffect } from './transfers.ts';
import type { PaymentStatus } from './transitions.ts';

export const ANOMALIES = ['partially_paid', 'overpaid', 'paid_late', 'paid_after_cancel', 'wrong_coin'] as const;
export type Anomaly = (typeof ANOMALIES)[number];

/**
 * - `partially_paid`: money counted toward a payment that did not complete (still pending, or
 *   ended expired or cancelled short of the amount);
 * - `overpaid`: more of the payment's coin than its amount (the completing transfer overshot, or
 *   more arrived after completion);
 * - `paid_late`: money of the payment's coin arrived after it expired;
 * - `paid_after_cancel`: money of the payment's coin arrived after it was cancelled;
 * - `wrong_coin`: money in another coin Kassa accepts.
 * In this order; the refundable money behind each is in `GET /v1/payments/{id}/transfers`.
 */
export function anomaliesOf(status: PaymentStatus, effects: readonly string[]): Anomaly[] {
  const has = (effect: TransferEffect) => effects.includes(effect);
  const found: Anomaly[] = [];
  if (status !== 'completed' && has('partial')) found.push('partially_paid');
  if (has('overpaid') || has('after_completion')) found.push('overpaid');
  if (has('after_expiry')) found.push('paid_late');
  if (has('after_cancel')) found.push('paid_after_cancel');
  if (has('wrong_coin')) found.push('wrong_coin');
  return found;
}
