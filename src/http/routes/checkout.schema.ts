// JSON Schemas of the checkout's public JSON endpoints (src/http/routes/checkout.ts).
import type { FromSchema } from 'json-schema-to-ts';
import { paymentIdParams } from './shared.schema.ts';

/** The payment id of the checkout's routes (`…/v1/checkout/payments/:paymentId/…`). */
export const checkoutParams = paymentIdParams('paymentId');

export const selectMethodSchema = {
  $id: 'SelectMethodRequest',
  type: 'object',
  additionalProperties: false,
  required: ['paymentMethodID'],
  properties: { paymentMethodID: { type: 'string', format: 'uuid' } },
} as const;
export type SelectMethodBody = FromSchema<typeof selectMethodSchema>;
