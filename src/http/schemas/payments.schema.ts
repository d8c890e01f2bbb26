// JSON Schemas of the payment endpoints: the one source of truth for request validation (ajv)
// and for the OpenAPI document. Each top-level field names the error code its failures get.

import type { ErrorCode } from '../../errors.ts';
import { PAYMENT_STATUSES } from '../../payments/transitions.ts';
import { FIAT_CURRENCIES } from '../../rates/fiat.ts';
import type { QueryDefinition } from '../validate.ts';

/** A fiat code or a coin ticker: which coins exist is data (the `coins` table), checked when the payment is drafted. */
export const currencySchema = {
  type: 'string',
  minLength: 1,
  maxLength: 32,
  description: `Fiat code (${FIAT_CURRENCIES.join(', ')}) or coin ticker (GET /v1/payment-methods lists the coins), case-sensitive.`,
} as const;
export const AMOUNT_PATTERN = '^(0|[1-9]\\d*)(\\.\\d+)?$';

const amount = {
  type: 'string',
  pattern: AMOUNT_PATTERN,
  maxLength: 40,
  description: 'Positive decimal string without leading zeros, e.g. "10.50".',
  examples: ['10.50'],
} as const;

const url = (what: string) =>
  ({
    type: 'string',
    maxLength: 512,
    format: 'uri',
    description: `${what}: HTTPS, at most 512 characters, a public host (no localhost, private, loopback or link-local addresses, no credentials).`,
  }) as const;

/** Optional fields shared by both create operations. */
const commonProperties = {
  ttl: { type: 'integer', minimum: 900, maximum: 43200, default: 3600, description: 'Seconds until the payment expires (900 to 43200).' },
  order_id: { type: 'string', minLength: 1, maxLength: 128, description: 'Merchant order id (at most 128 characters).' },
  description: { type: 'string', maxLength: 512, description: 'Merchant text shown to the customer (at most 512 characters).' },
  metadata: {
    type: 'object',
    maxProperties: 10,
    propertyNames: { minLength: 1, maxLength: 64 },
    additionalProperties: { type: 'string', maxLength: 512 },
    description: 'Up to 10 keys of at most 64 characters; string values of at most 512 characters.',
  },
  webhookURL: url('Where the completed event is POSTed'),
  returnURL: url('Extension: where the checkout page links back to when the payment ends'),
} as const;

export const createPaymentSchema = {
  $id: 'CreatePaymentRequest',
  type: 'object',
  additionalProperties: false,
  required: ['amount', 'currency'],
  properties: {
    amount,
    currency: { ...currencySchema, description: `${currencySchema.description} The unit of value, not the payment coin.` },
    payment_options: {
      type: 'object',
      additionalProperties: false,
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
            properties: { coin: { type: 'string', maxLength: 32 }, chain: { type: 'string', maxLength: 32 } },
          },
        },
      },
    },
    ...commonProperties,
  },
} as const;

export const createInvoiceSchema = {
  $id: 'CreateInvoiceRequest',
  type: 'object',
  additionalProperties: false,
  required: ['invoiceType'],
  properties: {
    invoiceType: { type: 'string', enum: ['FIAT', 'CRYPTO'] },
    fiatAmount: { ...amount, description: 'Required for FIAT.' },
    fiatCurrency: { type: 'string', enum: [...FIAT_CURRENCIES], description: 'Required for FIAT; optional for CRYPTO (informational).' },
    cryptoAmount: { ...amount, description: 'Required for CRYPTO.' },
    paymentMethodID: { type: 'string', format: 'uuid', description: 'Required for CRYPTO; optional for FIAT (locks the payment to that method).' },
    ...commonProperties,
  },
} as const;

export const cancelPaymentSchema = {
  $id: 'CancelPaymentRequest',
  type: 'object',
  additionalProperties: false,
  properties: {},
} as const;

export const createRefundSchema = {
  $id: 'CreateRefundRequest',
  type: 'object',
  additionalProperties: false,
  required: ['coin', 'amount', 'address'],
  properties: {
    coin: { type: 'string', minLength: 1, maxLength: 16, description: 'The coin to refund (e.g. "TON"), one the deposit holds refundable.', examples: ['TON'] },
    amount: { ...amount, description: "At most the refundable balance of that coin; at most the coin's decimals.", examples: ['0.5'] },
    address: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      description:
        'Where the refund goes: a TON address of the network (raw or user-friendly). It may be a wallet never deployed: the refund is sent non-bounceable.',
    },
  },
} as const;

export interface CreateRefundBody {
  coin: string;
  amount: string;
  address: string;
}

/** The error code of each field (docs/API.md, Errors); its type and status are the catalogue's (src/errors.ts). */
export const FIELD_CODES: Record<string, ErrorCode> = {
  amount: 'invalid_amount',
  currency: 'currency_not_found',
  payment_options: 'invalid_payment_options',
  ttl: 'invalid_ttl',
  order_id: 'invalid_order_id',
  description: 'invalid_description',
  metadata: 'invalid_metadata',
  webhookURL: 'invalid_webhook_url',
  returnURL: 'invalid_return_url',
  invoiceType: 'invalid_invoice_type',
  fiatAmount: 'invalid_amount',
  fiatCurrency: 'currency_not_found',
  cryptoAmount: 'invalid_amount',
  paymentMethodID: 'invalid_payment_method_id',
  // `coin` has no code of its own here (the sandbox's transfer uses the name too): a coin Kassa
  // does not know is `invalid_coin`, decided by the refund command.
  address: 'invalid_address',
};

/** The bodies these schemas accept are the domain's inputs (src/payments/drafts.ts). */
export type { PaymentInput as CreatePaymentBody, InvoiceInput as CreateInvoiceBody } from '../../payments/drafts.ts';

/** GET /v1/payments: the list's query parameters, each at most once. */
export const listPaymentsQuery = {
  schema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      status: { type: 'string', enum: [...PAYMENT_STATUSES], description: 'Only payments in this status.' },
      created_after: { type: 'string', format: 'kassa-time', description: 'Only payments created after this time (RFC 3339).' },
      limit: { type: 'string', pattern: '^(?:[1-9]|0[1-9]|[1-9]\\d|00[1-9]|0[1-9]\\d|100)$', description: 'Page size, 1 to 100 (default 20).' },
      starting_after: { type: 'string', format: 'uuid', description: 'The last payment id of the previous page.' },
    },
  },
  fields: {
    status: { code: 'invalid_status', message: `status must be one of ${PAYMENT_STATUSES.join(', ')}.` },
    created_after: { code: 'invalid_created_after', message: 'created_after must be an RFC 3339 time.' },
    limit: { code: 'invalid_limit', message: 'limit must be an integer from 1 to 100.' },
    starting_after: { code: 'invalid_starting_after', message: 'starting_after must be a payment id.' },
  },
} as const satisfies QueryDefinition;

export interface ListPaymentsQuery {
  status?: (typeof PAYMENT_STATUSES)[number];
  created_after?: string;
  limit?: string;
  starting_after?: string;
}
