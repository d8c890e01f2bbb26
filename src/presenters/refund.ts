// The refund object (POST/GET /v1/payments/{paymentID}/refunds): its JSON Schema and its presenter,
// the one place that decides its shape. The treasury plans refunds and answers their rows.
import type { FromSchema } from 'json-schema-to-ts';
import type { OutgoingRow } from '../treasury/outgoing.ts';
import { refundFigures } from '../treasury/refunds.ts';

export const refundSchema = {
  type: 'object',
  required: ['id', 'paymentID', 'coin', 'amount', 'receives', 'fee', 'address', 'status', 'createdAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    paymentID: { type: 'string', format: 'uuid' },
    coin: { type: 'string' },
    amount: {
      type: 'string',
      description:
        'In the coin: as given, or converted from `requested` — what the refund takes from the refundable money of its coin (a TON refund takes its fee besides).',
    },
    receives: {
      type: 'string',
      description:
        'What the destination receives, in the coin: the amount; for the refund of everything a deposit holds (fee taken from it), the amount less the fee (an estimate until confirmed).',
    },
    address: { type: 'string', description: 'As given.' },
    status: {
      type: 'string',
      enum: ['pending', 'sent', 'confirmed', 'failed'],
      description:
        'pending: on the books, not signed yet; sent: signed and broadcast; confirmed: the chain reader saw it leave; failed: it did not leave (the amount is refundable again).',
    },
    transactionHash: { type: 'string', description: "Hex hash of the deposit wallet's transaction that sent it (confirmed, or failed on chain)." },
    fee: {
      type: 'string',
      description:
        "TON the refund costs: once confirmed, what the deposit wallet paid for its transaction (a jetton refund: with the TON its message carried); before, what is set aside for it. A TON refund's fee comes out of the refundable TON; a jetton refund's from Kassa's gas wallet.",
    },
    failureReason: {
      type: 'string',
      description: 'failed: why it did not leave (one sentence; a refund that failed is not tried again: its amount is refundable again).',
    },
    requested: {
      type: 'object',
      description: "A refund asked in the payment's currency: what was asked and the rate that made `amount` (coins per one unit of `currency`).",
      required: ['amount', 'currency', 'rate', 'rateSource'],
      properties: {
        amount: { type: 'string' },
        currency: { type: 'string' },
        rate: { type: 'string' },
        rateSource: { type: 'string', description: "payment: the payment's own rate; else today's rate source (e.g. tonapi+coingecko, fixed)." },
      },
    },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;
export type Refund = FromSchema<typeof refundSchema>;

/** The refund object (the presenter: the one place that decides its shape). */
export function presentRefund(row: OutgoingRow): Refund {
  return {
    id: row.id,
    paymentID: row.payment_id,
    coin: row.coin_symbol,
    amount: row.amount,
    address: row.to_address_given ?? row.to_address,
    status: row.state === 'planned' ? 'pending' : row.state,
    ...(row.transaction_hash !== null ? { transactionHash: row.transaction_hash } : {}),
    ...refundFigures(row),
    ...(row.state === 'failed' && row.failure_reason !== null ? { failureReason: row.failure_reason } : {}),
    ...(row.requested_amount !== null && row.requested_currency !== null && row.exchange_rate !== null
      ? {
          requested: {
            amount: row.requested_amount,
            currency: row.requested_currency,
            rate: row.exchange_rate,
            rateSource: row.exchange_rate_source ?? 'payment',
          },
        }
      : {}),
    createdAt: row.created_at.toISOString(),
  };
}
