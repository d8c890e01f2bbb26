// JSON Schemas of the sandbox network's controls (src/http/routes/sandbox.ts).
import type { FromSchema } from 'json-schema-to-ts';

export { type PaymentParams, paymentParams } from './shared.schema.ts';

export const transferSchema = {
  $id: 'SandboxTransferRequest',
  type: 'object',
  additionalProperties: false,
  required: ['to', 'coin', 'amount'],
  properties: {
    to: { type: 'string', maxLength: 100 },
    coin: { type: 'string', maxLength: 16, coinSymbol: true },
    amount: { type: 'string', maxLength: 40, errorCode: 'invalid_amount' },
    bounce: { type: 'boolean' },
    comment: { type: 'string', maxLength: 1000 },
    fromLookalike: { type: 'boolean' },
    bodyOp: { type: 'integer', minimum: 0, maximum: 4294967295 },
    notify: { type: 'boolean' },
    from: { type: 'string', maxLength: 100 },
    payload: { type: 'string', maxLength: 8000 },
  },
} as const;
export type TransferBody = FromSchema<typeof transferSchema>;
