// One transfer of a payment's books as the API shows it (GET /v1/payments/{paymentID}/transfers):
// its JSON Schema and its presenter.
import type { FromSchema } from 'json-schema-to-ts';
import { COUNTED_EFFECTS } from '../payments/counted.ts';
import { TRANSFER_EFFECTS, type TransferRow } from '../payments/transfers.ts';

export const transferSchema = {
  type: 'object',
  required: ['hash', 'lt', 'account', 'coin', 'amount', 'amountBaseUnits', 'sender', 'chainTime', 'recordedAt', 'effect', 'counted'],
  properties: {
    hash: { type: 'string', description: 'The transaction hash (hex).' },
    lt: { type: 'string', description: 'Logical time of the transaction.' },
    account: { type: 'string', description: 'The account the transaction belongs to (the deposit address or its jetton wallet), raw form.' },
    coin: { type: ['string', 'null'] },
    jettonMaster: { type: 'string', description: 'For a jetton transfer: the master of the jetton wallet that sent it, raw form.' },
    amount: { type: ['string', 'null'] },
    amountBaseUnits: { type: 'string' },
    sender: { type: ['string', 'null'] },
    comment: { type: 'string' },
    chainTime: { type: 'string', format: 'date-time' },
    recordedAt: { type: 'string', format: 'date-time' },
    effect: { type: 'string', enum: TRANSFER_EFFECTS, description: 'What the transfer did to the payment (docs/API.md, How payments get paid).' },
    counted: { type: 'boolean', description: 'Whether it counts toward the payment.' },
    detail: { type: 'string' },
    notifiedToken: {
      type: 'object',
      description: 'An unverified jetton notification in the same transaction: the master and amount it claims',
      required: ['master', 'amountBaseUnits'],
      properties: { master: { type: ['string', 'null'] }, amountBaseUnits: { type: 'string' } },
    },
  },
} as const;
type PresentedTransfer = FromSchema<typeof transferSchema>;

/** GET /v1/payments/{id}/transfers entries. */
export function presentTransfer(row: TransferRow): PresentedTransfer {
  return {
    hash: row.hash,
    lt: row.lt,
    account: row.account,
    coin: row.coin_symbol,
    ...(row.jetton_master ? { jettonMaster: row.jetton_master } : {}),
    amount: row.amount,
    amountBaseUnits: row.amount_base_units,
    sender: row.sender,
    ...(row.comment !== null ? { comment: row.comment } : {}),
    chainTime: row.chain_time.toISOString(),
    recordedAt: row.recorded_at.toISOString(),
    effect: row.effect,
    counted: (COUNTED_EFFECTS as readonly string[]).includes(row.effect),
    ...(row.detail !== null ? { detail: row.detail } : {}),
    ...(row.notified_amount_base_units !== null
      ? { notifiedToken: { master: row.notified_jetton_master, amountBaseUnits: row.notified_amount_base_units } }
      : {}),
  };
}
