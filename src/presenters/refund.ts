// The refund object (POST/GET /v1/payments/{paymentID}/refunds): its JSON Schema and its presenter,
// the one place that decides its shape. The treasury plans refunds and answers their rows.
import type { FromSchema } from 'json-schema-to-ts';
import type { OutgoingRow } from '../treasury/outgoing.ts';

export const refundSchema = {
  type: 'object',
  required: ['id', 'paymentID', 'coin', 'amount', 'address', 'status', 'createdAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    paymentID: { type: 'string', format: 'uuid' },
    coin: { type: 'string' },
    amount: { type: 'string', description: 'As given. The transfer that empties the deposit wallet carries what it holds, its fee taken from it.' },
    address: { type: 'string', description: 'As given.' },
    status: {
      type: 'string',
      enum: ['pending', 'sent', 'confirmed', 'failed'],
      description:
        'pending: on the books, not signed yet; sent: signed and broadcast; confirmed: the chain reader saw it leave; failed: it did not leave (the amount is refundable again).',
    },
    transactionHash: { type: 'string', description: "Hex hash of the deposit wallet's transaction that sent it (confirmed, or failed on chain)." },
    fee: { type: 'string', description: 'TON the deposit wallet paid for that transaction.' },
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
    ...(row.fee !== null ? { fee: row.fee } : {}),
    createdAt: row.created_at.toISOString(),
  };
}
