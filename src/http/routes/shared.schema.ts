// JSON Schema pieces more than one route file's schemas use: amounts, URLs and the payment id in a
// path. Each route file's own schemas sit beside it (payments.ts + payments.schema.ts, …); each
// field names there the error code its failures get (`errorCode`, src/http/validate.ts).
import type { FromSchema } from 'json-schema-to-ts';
import type { ParamsDefinition } from '../validate.ts';
import { AMOUNT_MAX_LENGTH } from '../../money.ts';

/** A positive decimal: no leading zeros, and not zero ("0", "0.00" are refused, as the server refuses them: 0 is not positive). */
const AMOUNT_PATTERN = '^(?:[1-9]\\d*(?:\\.\\d+)?|0\\.\\d*[1-9]\\d*)$';

export const amountSchema = {
  type: 'string',
  pattern: AMOUNT_PATTERN,
  maxLength: AMOUNT_MAX_LENGTH,
  description: 'Positive decimal string without leading zeros, e.g. "10.50".',
  examples: ['10.50'],
  errorCode: 'invalid_amount',
} as const;

/** What a field taking a coin's ticker says of the coin's new name (validate.ts `coinSymbol`). */
export const GRAM_TAKEN = ' GRAM (Toncoin’s name since June 2026) is taken for TON; answers say TON.';

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
      properties: { [name]: { type: 'string', format: 'uuid', errorCode: 'invalid_payment_id', errorParam: 'paymentID' } } as {
        [K in Name]: { readonly type: 'string'; readonly format: 'uuid'; readonly errorCode: 'invalid_payment_id'; readonly errorParam: 'paymentID' };
      },
    },
  }) as const satisfies ParamsDefinition;

/** The payment id of the merchant routes (`/v1/payments/:id/…`). */
export const paymentParams = paymentIdParams('id');

/** The validated `:id` of the merchant routes. */
export type PaymentParams = FromSchema<typeof paymentParams.schema>;
