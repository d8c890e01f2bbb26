// JSON Schemas of the payment link endpoints (src/http/routes/paymentLinks.ts) and the request types
// derived from them.
import type { FromSchema } from 'json-schema-to-ts';
import { currencySchema } from '../../presenters/payment.ts';
import { GRAM_TAKEN } from './shared.schema.ts';
import type { ParamsDefinition, QueryDefinition } from '../validate.ts';
import { createPaymentSchema, listPaymentsQuery } from './payments.schema.ts';
import { amountSchema } from './shared.schema.ts';

export const createPaymentLinkSchema = {
  $id: 'CreatePaymentLinkRequest',
  type: 'object',
  additionalProperties: false,
  required: ['currency'],
  properties: {
    currency: {
      ...currencySchema,
      description: `${currencySchema.description} The unit of the price, not the payment coin.${GRAM_TAKEN}`,
      errorCode: 'currency_not_found',
      coinSymbol: true,
    },
    amount: { ...amountSchema, description: 'A fixed price. Omit it for an open amount the customer types.' },
    minAmount: { ...amountSchema, description: 'An open amount: the least the customer may type.' },
    maxAmount: { ...amountSchema, description: 'An open amount: the most the customer may type.' },
    description: createPaymentSchema.properties.description,
    payment_options: createPaymentSchema.properties.payment_options,
    maxPayments: {
      type: 'integer',
      minimum: 1,
      maximum: 1000000,
      description: 'How many completed payments use the link up (no limit when omitted).',
      errorCode: 'invalid_max_payments',
    },
    expiresAt: {
      type: 'string',
      format: 'kassa-time',
      description: 'After this time the link creates no payment (RFC 3339).',
      errorCode: 'invalid_expires_at',
    },
    returnURL: createPaymentSchema.properties.returnURL,
  },
} as const;
export type CreatePaymentLinkBody = FromSchema<typeof createPaymentLinkSchema>;

export const paymentLinkParams = {
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['id'],
    properties: { id: { type: 'string', format: 'uuid', errorCode: 'invalid_payment_link_id', errorParam: 'id' } },
  },
} as const satisfies ParamsDefinition;
export type PaymentLinkParams = FromSchema<typeof paymentLinkParams.schema>;

/** GET /v1/payment-links: the payment list's paging (limit, starting_after: the last link id of the previous page). */
export const listPaymentLinksQuery = {
  schema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      limit: listPaymentsQuery.schema.properties.limit,
      starting_after: { type: 'string', format: 'uuid', description: 'The last payment link id of the previous page.', errorCode: 'invalid_starting_after' },
    },
  },
  published: { limit: listPaymentsQuery.published.limit },
} as const satisfies QueryDefinition;
export type ListPaymentLinksQuery = FromSchema<typeof listPaymentLinksQuery.schema>;

/** POST …/deactivate takes no body, or `{}`. */
export { cancelPaymentSchema as emptyBodySchema, type CancelPaymentBody as EmptyBody } from './payments.schema.ts';
