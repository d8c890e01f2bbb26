// The checkout's public JSON view of a payment (GET {checkout}/v1/checkout/payments/{id}, the method
// choice and the events stream): its JSON Schema and its presenter. Nothing private: no metadata,
// no order_id, no webhook URL (docs/API.md, The hosted checkout).
import type { FromSchema } from 'json-schema-to-ts';
import { isFinal, PAYMENT_STATUSES } from '../payments/transitions.ts';
import { type PaymentView, receivedAmount } from '../payments/view.ts';
import { currencySchema, paymentDetailsSchema, presentPaymentDetails } from './payment.ts';

export const checkoutViewSchema = {
  type: 'object',
  required: ['id', 'status', 'amount', 'currency', 'store', 'timer'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    status: { type: 'string', enum: PAYMENT_STATUSES },
    amount: { type: 'string' },
    currency: currencySchema,
    store: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
    description: { type: 'string' },
    timer: {
      type: 'object',
      required: ['expiresAt'],
      properties: { expiresAt: { type: 'string', format: 'date-time' }, paidAt: { type: 'string', format: 'date-time', description: 'Only when completed.' } },
    },
    paymentDetails: paymentDetailsSchema,
    returnURL: { type: 'string', format: 'uri', description: 'Only once the payment has ended.' },
  },
} as const;
export type CheckoutView = FromSchema<typeof checkoutViewSchema>;

/** What the view is made of: the checkout's row (src/checkout/view.ts) has these and more. */
type CheckoutViewRow = Pick<
  PaymentView,
  | 'id'
  | 'status'
  | 'amount'
  | 'currency'
  | 'description'
  | 'return_url'
  | 'coin_symbol'
  | 'coin_name'
  | 'coin_decimals'
  | 'chain_symbol'
  | 'chain_name'
  | 'reference'
  | 'coin_amount'
  | 'address_friendly'
  | 'expires_at'
  | 'paid_at'
  | 'transaction_hashes'
  | 'received_base_units'
> & { store_name: string };

/**
 * The public JSON view (GET {checkout}/v1/checkout/payments/{id} and the events stream). Same field names as
 * the merchant's payment object where they overlap; returnURL only once the payment has ended.
 */
export function presentCheckout(row: CheckoutViewRow, checkoutBaseUrl: string): CheckoutView {
  const completed = row.status === 'completed';
  const details = presentPaymentDetails(row, checkoutBaseUrl, receivedAmount(row));
  return {
    id: row.id,
    status: row.status,
    amount: row.amount,
    currency: row.currency,
    store: { name: row.store_name },
    ...(row.description !== null ? { description: row.description } : {}),
    timer: {
      expiresAt: row.expires_at.toISOString(),
      ...(completed && row.paid_at ? { paidAt: row.paid_at.toISOString() } : {}),
    },
    ...(details ? { paymentDetails: details } : {}),
    ...(isFinal(row.status) && row.return_url !== null ? { returnURL: row.return_url } : {}),
  };
}
