// JSON Schema pieces more than one route file's schemas use: amounts, URLs, the
// payment id in a path, and the error code each body field's failures get (src/http/validate.ts).
// Each route file's own schemas sit beside it (payments.ts + payments.schema.ts, …).
import type { FromSchema } from 'json-schema-to-ts';
import type { ErrorCode } from '../../errors.ts';
import type { ParamsDefinition } from '../validate.ts';

/** A positive decimal: no leading zeros, and not zero ("0", "0.00" are refused, as the server refuses them: 0 is not positive). */
export const AMOUNT_PATTERN = '^(?:[1-9]\\d*(?:\\.\\d+)?|0\\.\\d*[1-9]\\d*)$';

export const amountSchema = {
  type: 'string',
  pattern: AMOUNT_PATTERN,
  maxLength: 40,
  description: 'Positive decimal string without leading zeros, e.g. "10.50".',
  examples: ['10.50'],
} as const;

export const urlSchema = (what: string) =>
  ({
    type: 'string',
    maxLength: 512,
    format: 'uri',
    description: `${what}: HTTPS, at most 512 characters, a public host (no localhost, private, loopback or link-local addresses, no credentials).`,
  }) as const;

/**
 * A payment id in the path, under the route's own parameter name (`:id`, or the checkout's
 * `:paymentId`): a UUID in either case, kept lower-case; anything else is 400 invalid_payment_id
 * with param `paymentID`, the name docs/API.md gives it.
 */
export const paymentIdParams = <Name extends string>(name: Name) =>
  ({
    schema: {
      type: 'object',
      additionalProperties: false,
      required: [name],
      properties: { [name]: { type: 'string', format: 'uuid' } } as { [K in Name]: { readonly type: 'string'; readonly format: 'uuid' } },
    },
    fields: { [name]: { code: 'invalid_payment_id', message: 'paymentID must be a UUID.', param: 'paymentID' } } as Record<
      Name,
      ParamsDefinition['fields'][string]
    >,
  }) as const satisfies ParamsDefinition;

/** The payment id of the merchant routes (`/v1/payments/:id/…`). */
export const paymentParams = paymentIdParams('id');

/** The error code of each body field (docs/API.md, Errors); its type and status are the catalogue's (src/errors.ts). */
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

/** The validated `:id` of the merchant routes. */
export type PaymentParams = FromSchema<typeof paymentParams.schema>;
