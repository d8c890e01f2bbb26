// Anomalies: what the books say about a payment beside its status, as BTCPay keeps its
// "additional status" (paid partially, paid over, paid late). Derived from the effects of the
// payment's transfers (payments/transfers.ts effectOf); never stored, never a status of its own.
import type { TransferEffect } from './transfers.ts';
import type { PaymentStatus } from './transitions.ts';

export const ANOMALIES = ['partially_paid', 'overpaid', 'paid_late', 'paid_after_cancel', 'wrong_coin'] as const;
export type Anomaly = (typeof ANOMALIES)[number];

/**
 * The one definition of each anomaly: the transfer effects that show it, and the status that rules it
 * out. `anomaliesOf` reads it for one payment; the dashboard's list filter (dashboard/payments.ts)
 * turns the same rows into SQL, so the two cannot drift apart.
 * - `partially_paid`: money counted toward a payment that did not complete (still pending, or
 *   ended expired or cancelled short of the amount);
 * - `overpaid`: more of the payment's coin than its amount (the completing transfer overshot, or
 *   more arrived after completion);
 * - `paid_late`: money of the payment's coin arrived after it expired;
 * - `paid_after_cancel`: money of the payment's coin arrived after it was cancelled;
 * - `wrong_coin`: money in another coin Kassa accepts.
 */
export const ANOMALY_RULES: Readonly<Record<Anomaly, { effects: readonly TransferEffect[]; unlessStatus?: PaymentStatus }>> = {
  partially_paid: { effects: ['partial'], unlessStatus: 'completed' },
  overpaid: { effects: ['overpaid', 'after_completion'] },
  paid_late: { effects: ['after_expiry'] },
  paid_after_cancel: { effects: ['after_cancel'] },
  wrong_coin: { effects: ['wrong_coin'] },
};

/** The payment's anomalies, in ANOMALIES' order; the refundable money behind each is in `GET /v1/payments/{id}/transfers`. */
export function anomaliesOf(status: PaymentStatus, effects: readonly string[]): Anomaly[] {
  return ANOMALIES.filter((anomaly) => {
    const rule = ANOMALY_RULES[anomaly];
    return rule.unlessStatus !== status && rule.effects.some((effect) => effects.includes(effect));
  });
}
