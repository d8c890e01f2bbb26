// JSON Schemas of the refund endpoints (src/http/routes/refunds.ts) and the request types derived from them.
import type { FromSchema } from 'json-schema-to-ts';
import { amountSchema, GRAM_TAKEN } from './shared.schema.ts';

export { type PaymentParams, paymentParams } from './shared.schema.ts';

export const createRefundSchema = {
  $id: 'CreateRefundRequest',
  type: 'object',
  additionalProperties: false,
  required: ['coin', 'amount', 'address'],
  properties: {
    coin: {
      type: 'string',
      minLength: 1,
      maxLength: 16,
      description: `The coin to refund (e.g. "TON"), one the deposit holds refundable.${GRAM_TAKEN}`,
      examples: ['TON'],
      errorCode: 'invalid_coin',
      coinSymbol: true,
    },
    amount: {
      ...amountSchema,
      description: 'In the coin (at most its decimals), or in `currency` when given. Converted, it must fit the refundable balance of the coin.',
      examples: ['0.5'],
    },
    currency: {
      type: 'string',
      minLength: 1,
      maxLength: 16,
      description:
        "The currency `amount` is in: the payment's own currency (e.g. USD), converted into the coin by the pricing rule (amount × rate, rounded up to the coin's decimals) at `rate`; or the coin itself (the default). GRAM is taken for TON.",
      examples: ['USD'],
      coinSymbol: true,
    },
    rate: {
      type: 'string',
      enum: ['payment', 'current'],
      description:
        "With `currency`: which rate converts it — `payment` (the default): the rate the payment was priced with (only for the payment's own coin); `current`: today's rate, under the same rules as a new payment's price (503 rate_unavailable when there is none).",
    },
    from: {
      type: 'string',
      enum: ['deposit', 'treasury'],
      description:
        "Where the refund is paid from: `deposit` (the default) — the payment's deposit wallet, signed and sent by Kassa; `treasury` — a sale whose counted amount was swept to the store's treasury, refunded from there: the refund answers `awaiting_signature` with a TON Connect request (`tonconnect`) and a `ton://` link for the merchant's wallet to sign (Kassa holds no key of the treasury).",
    },
    address: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      description:
        'Where the refund goes: a basechain TON address of the network (raw or user-friendly), none of Kassa\'s own wallets; or "payer": the address that paid the payment that coin (when one did). It may be a wallet never deployed: the refund is sent non-bounceable.',
      errorCode: 'invalid_address',
    },
  },
} as const;
/** A POST /v1/payments/{id}/refunds body as validated (the treasury's RefundRequest). */
export type CreateRefundBody = FromSchema<typeof createRefundSchema>;
