// JSON Schemas of the payment endpoints (src/http/routes/payments.ts): the one source of truth for
// request validation (ajv, src/http/validate.ts), for the request types (derived below with
// json-schema-to-ts's FromSchema, types only) and for the OpenAPI document. Each field names the
// error code its failures get (`errorCode`, src/http/validate.ts).
import type { FromSchema } from 'json-schema-to-ts';
import { PAYMENT_STATUSES } from '../../payments/transitions.ts';
import { currencySchema } from '../../presenters/payment.ts';
import { GRAM_TAKEN } from './shared.schema.ts';
import { FIAT_CURRENCIES } from '../../rates/fiat.ts';
import type { QueryDefinition } from '../validate.ts';
import { amountSchema as amount, urlSchema as url } from './shared.schema.ts';

export { type PaymentParams, paymentParams } from './shared.schema.ts';

/** Optional fields shared by both create operations. */
const commonProperties = {
  ttl: {
    type: 'integer',
    minimum: 900,
    maximum: 43200,
    default: 3600,
    description: 'Seconds until the payment expires (900 to 43200).',
    errorCode: 'invalid_ttl',
  },
  order_id: { type: 'string', minLength: 1, maxLength: 128, description: 'Merchant order id (at most 128 characters).', errorCode: 'invalid_order_id' },
  description: {
    type: 'string',
    maxLength: 512,
    description: 'Merchant text shown to the customer (at most 512 characters).',
    errorCode: 'invalid_description',
  },
  metadata: {
    type: 'object',
    maxProperties: 10,
    propertyNames: { minLength: 1, maxLength: 64 },
    additionalProperties: { type: 'string', maxLength: 512 },
    description: 'Up to 10 keys of at most 64 characters; string values of at most 512 characters.',
    errorCode: 'invalid_metadata',
  },
  webhookURL: { ...url('Where the completed event is POSTed'), errorCode: 'invalid_webhook_url' },
  returnURL: { ...url('Extension: where the checkout page links back to when the payment ends'), errorCode: 'invalid_return_url' },
} as const;

export const createPaymentSchema = {
  $id: 'CreatePaymentRequest',
  type: 'object',
  additionalProperties: false,
  required: ['amount', 'currency'],
  properties: {
    amount,
    currency: {
      ...currencySchema,
      description: `${currencySchema.description} The unit of value, not the payment coin.${GRAM_TAKEN}`,
      errorCode: 'currency_not_found',
      coinSymbol: true,
    },
    payment_options: {
      type: 'object',
      additionalProperties: false,
      errorCode: 'invalid_payment_options',
      properties: {
        methods: {
          type: 'array',
          minItems: 1,
          maxItems: 1,
          description: 'Exactly one {coin, chain} for Preselected mode; omit payment_options for Customer Choice.',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['coin', 'chain'],
            properties: {
              coin: { type: 'string', maxLength: 32, description: `The coin's ticker.${GRAM_TAKEN}`, coinSymbol: true },
              chain: { type: 'string', maxLength: 32 },
            },
          },
        },
      },
    },
    ...commonProperties,
  },
} as const;
/** A POST /v1/payments body as validated (assignable to the domain's PaymentInput, src/payments/drafts.ts). */
export type CreatePaymentBody = FromSchema<typeof createPaymentSchema>;

export const createInvoiceSchema = {
  $id: 'CreateInvoiceRequest',
  type: 'object',
  additionalProperties: false,
  required: ['invoiceType'],
  properties: {
    invoiceType: { type: 'string', enum: ['FIAT', 'CRYPTO'], errorCode: 'invalid_invoice_type' },
    fiatAmount: { ...amount, description: 'Required for FIAT.' },
    fiatCurrency: {
      type: 'string',
      enum: FIAT_CURRENCIES,
      description: 'Required for FIAT; optional for CRYPTO (informational).',
      errorCode: 'currency_not_found',
    },
    cryptoAmount: { ...amount, description: 'Required for CRYPTO.' },
    paymentMethodID: {
      type: 'string',
      format: 'uuid',
      description: 'Required for CRYPTO; optional for FIAT (locks the payment to that method).',
      errorCode: 'invalid_payment_method_id',
    },
    ...commonProperties,
  },
} as const;
/** A POST /v1/payments/create body as validated (assignable to the domain's InvoiceInput). */
export type CreateInvoiceBody = FromSchema<typeof createInvoiceSchema>;

/** No body, or `{}` (the redeliver request takes the same). */
export const cancelPaymentSchema = {
  $id: 'CancelPaymentRequest',
  type: 'object',
  additionalProperties: false,
  properties: {},
} as const;
export type CancelPaymentBody = FromSchema<typeof cancelPaymentSchema>;

/** GET /v1/payments: the list's query parameters, each at most once. */
export const listPaymentsQuery = {
  schema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      status: { type: 'string', enum: PAYMENT_STATUSES, description: 'Only payments in this status.', errorCode: 'invalid_status' },
      created_after: {
        type: 'string',
        format: 'kassa-time',
        description: 'Only payments created after this time (RFC 3339).',
        errorCode: 'invalid_created_after',
      },
      limit: {
        type: 'string',
        pattern: '^(?:[1-9]|0[1-9]|[1-9]\\d|00[1-9]|0[1-9]\\d|100)$',
        description: 'Page size, 1 to 100 (default 20).',
        errorCode: 'invalid_limit',
      },
      starting_after: { type: 'string', format: 'uuid', description: 'The last payment id of the previous page.', errorCode: 'invalid_starting_after' },
      payment_link: {
        type: 'string',
        format: 'uuid',
        description: 'Only the payments created by visits of this payment link (newest first).',
        errorCode: 'invalid_payment_link_id',
      },
      order_id: {
        type: 'string',
        minLength: 1,
        maxLength: 128,
        description: "Only payments with this order_id (the merchant's, exactly as sent at creation; every payment with it, newest first).",
        errorCode: 'invalid_order_id',
      },
    },
  },
  published: {
    created_after: { type: 'string', format: 'date-time', description: 'Only payments created after this time (RFC 3339).' },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size, 1 to 100 (default 20).' },
  },
} as const satisfies QueryDefinition;
export type ListPaymentsQuery = FromSchema<typeof listPaymentsQuery.schema>;
