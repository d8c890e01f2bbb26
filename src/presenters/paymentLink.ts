// A payment link (POST/GET /v1/payment-links): its JSON Schema and its presenter.
import type { FromSchema } from 'json-schema-to-ts';
import { linkState, paymentLinkUrl, type PaymentLinkRow } from '../paymentLinks/links.ts';
import { currencySchema } from './payment.ts';

export const paymentLinkSchema = {
  type: 'object',
  required: ['id', 'url', 'active', 'state', 'currency', 'payments', 'amountPaid', 'createdAt', 'createdVia'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    url: {
      type: 'string',
      format: 'uri',
      description: "{checkout_base_url}/l/{id}: the link's page; its button (a POST, never a visit) creates one payment and shows its checkout.",
    },
    active: {
      type: 'boolean',
      description:
        'Whether a customer can ask for a payment now (state open; while every place of maxPayments is held by payments being paid, its page says to try again later).',
    },
    state: {
      type: 'string',
      enum: ['open', 'deactivated', 'expired', 'used_up'],
      description: 'open; deactivated (POST …/deactivate); expired (past expiresAt); used_up (maxPayments payments completed).',
    },
    currency: currencySchema,
    amount: { type: 'string', description: 'The fixed price (absent for an open amount).' },
    minAmount: { type: 'string', description: 'An open amount: the least the customer may type.' },
    maxAmount: { type: 'string', description: 'An open amount: the most the customer may type.' },
    description: { type: 'string' },
    payment_options: {
      type: 'object',
      properties: { methods: { type: 'array', items: { type: 'object', properties: { coin: { type: 'string' }, chain: { type: 'string' } } } } },
    },
    maxPayments: {
      type: 'integer',
      description: 'The most payments the link takes: completed ones and those being paid (pending, or created before expiry) hold a place; never exceeded.',
    },
    expiresAt: { type: 'string', format: 'date-time', description: 'After it the link takes no payment; a payment the link made expires no later than it.' },
    returnURL: { type: 'string', format: 'uri' },
    payments: { type: 'integer', description: 'How many of its payments completed.' },
    amountPaid: { type: 'string', description: 'The sum of their amounts, in the link’s currency.' },
    createdAt: { type: 'string', format: 'date-time' },
    createdVia: { type: 'string', enum: ['api', 'dashboard'], description: 'api: made with POST /v1/payment-links; dashboard: made in the dashboard.' },
    deactivatedAt: { type: 'string', format: 'date-time' },
  },
} as const;
type PresentedPaymentLink = FromSchema<typeof paymentLinkSchema>;

export function presentPaymentLink(row: PaymentLinkRow, { checkoutBaseUrl }: { checkoutBaseUrl: string }, now: Date): PresentedPaymentLink {
  const state = linkState(row, now);
  return {
    id: row.id,
    url: paymentLinkUrl(checkoutBaseUrl, row.id),
    active: state === 'open',
    state,
    currency: row.currency,
    ...(row.amount !== null ? { amount: row.amount } : {}),
    ...(row.min_amount !== null ? { minAmount: row.min_amount } : {}),
    ...(row.max_amount !== null ? { maxAmount: row.max_amount } : {}),
    ...(row.description !== null ? { description: row.description } : {}),
    ...(row.coin_symbol !== null ? { payment_options: { methods: [{ coin: row.coin_symbol, chain: row.chain_symbol! }] } } : {}),
    ...(row.max_payments !== null ? { maxPayments: row.max_payments } : {}),
    ...(row.expires_at !== null ? { expiresAt: row.expires_at.toISOString() } : {}),
    ...(row.return_url !== null ? { returnURL: row.return_url } : {}),
    payments: row.payments,
    amountPaid: row.amount_paid,
    createdAt: row.created_at.toISOString(),
    createdVia: row.created_via,
    ...(row.deactivated_at !== null ? { deactivatedAt: row.deactivated_at.toISOString() } : {}),
  };
}
