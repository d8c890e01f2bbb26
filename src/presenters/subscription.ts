// Plans, subscriptions and ledger rows (docs/API.md, Subscriptions): their JSON Schemas and presenters.
import type { FromSchema } from 'json-schema-to-ts';
import { INTERVAL_UNITS, SUBSCRIPTION_STATUSES } from '../subscriptions/calendar.ts';
import type { LedgerRow, PlanRow, SubscriptionRow } from '../subscriptions/records.ts';
import { telegramPaymentUrl } from '../telegram/telegramUrls.ts';
import { currencySchema } from './payment.ts';

export const planSchema = {
  type: 'object',
  required: [
    'id',
    'name',
    'currency',
    'amount',
    'interval',
    'intervalCount',
    'trialDays',
    'graceDays',
    'reminderDays',
    'customerMayCancel',
    'active',
    'createdAt',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    currency: currencySchema,
    amount: { type: 'string', description: 'The price of one period, in currency (a change applies from the next period charged).' },
    interval: { type: 'string', enum: [...INTERVAL_UNITS] },
    intervalCount: { type: 'integer', description: 'How many intervals a period lasts.' },
    trialDays: { type: 'integer' },
    graceDays: { type: 'integer', description: 'Days past_due before the subscription expires.' },
    reminderDays: { type: 'integer', description: 'Days before a period ends that subscription.renewal_upcoming is sent when the credit will not cover it.' },
    customerMayCancel: { type: 'boolean', description: 'Whether subscribers may cancel (at the end of the paid period) from the customer’s portal.' },
    active: { type: 'boolean', description: 'False once archived: no new subscriptions; its subscribers go on.' },
    createdAt: { type: 'string', format: 'date-time' },
    archivedAt: { type: 'string', format: 'date-time' },
  },
} as const;

export function presentPlan(row: PlanRow): FromSchema<typeof planSchema> {
  return {
    id: row.id,
    name: row.name,
    currency: row.currency,
    amount: row.amount,
    interval: row.interval_unit,
    intervalCount: row.interval_count,
    trialDays: row.trial_days,
    graceDays: row.grace_days,
    reminderDays: row.reminder_days,
    customerMayCancel: row.customer_may_cancel,
    active: row.archived_at === null,
    createdAt: row.created_at.toISOString(),
    ...(row.archived_at !== null ? { archivedAt: row.archived_at.toISOString() } : {}),
  };
}

export const subscriptionSchema = {
  type: 'object',
  required: ['id', 'status', 'planID', 'customer', 'currentPeriodEnd', 'credit', 'cancelAtPeriodEnd', 'createdAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    status: {
      type: 'string',
      enum: [...SUBSCRIPTION_STATUSES],
      description:
        'trialing (free days before the first period); active (the current period is paid); past_due (a period is due and unpaid: checkoutURL pays it); expired (unpaid past the grace days); cancelled. expired and cancelled are final.',
    },
    planID: { type: 'string', format: 'uuid' },
    customer: {
      type: 'object',
      required: ['reference'],
      properties: { reference: { type: 'string' }, email: { type: 'string' }, telegramUserID: { type: 'integer' } },
    },
    currentPeriodEnd: { type: 'string', format: 'date-time', description: 'The end of the paid (or trial) period: the next period is due then.' },
    credit: { type: 'string', description: 'Money paid and not yet charged, in the plan’s currency.' },
    cancelAtPeriodEnd: { type: 'boolean' },
    checkoutURL: { type: 'string', format: 'uri', description: 'The open renewal payment’s checkout, while one is open.' },
    telegramURL: { type: 'string', format: 'uri', description: 'The open renewal payment in the store’s Telegram Mini App, when the store has one.' },
    renewalPaymentID: { type: 'string', format: 'uuid', description: 'The open renewal payment (created or pending, before its expiry).' },
    portalURL: {
      type: 'string',
      format: 'uri',
      description:
        'The customer’s portal: {checkout_base_url}/s/{token}, a secret URL. Only in the answer that issues it (POST /v1/subscriptions, and POST /v1/subscriptions/{id}/portal, which issues a new one): Kassa keeps only its hash, so it is in no other answer, no replay and no event.',
    },
    createdAt: { type: 'string', format: 'date-time' },
    cancelledAt: { type: 'string', format: 'date-time' },
    expiredAt: { type: 'string', format: 'date-time' },
  },
} as const;
export type PresentedSubscription = FromSchema<typeof subscriptionSchema>;

/** `portalToken`: the portal's token just issued (its creation, a re-issue): the answer shows its portalURL, once. */
export function presentSubscription(row: SubscriptionRow, { checkoutBaseUrl }: { checkoutBaseUrl: string }, portalToken?: string): PresentedSubscription {
  const open = row.open_payment_id;
  const telegram = open !== null ? telegramPaymentUrl(row.telegram_mini_app, open) : null;
  return {
    id: row.id,
    status: row.status,
    planID: row.plan_id,
    customer: {
      reference: row.customer_reference,
      ...(row.customer_email !== null ? { email: row.customer_email } : {}),
      ...(row.customer_telegram_user_id !== null ? { telegramUserID: Number(row.customer_telegram_user_id) } : {}),
    },
    currentPeriodEnd: row.current_period_end.toISOString(),
    credit: row.credit,
    cancelAtPeriodEnd: row.cancel_at_period_end,
    ...(open !== null ? { checkoutURL: `${checkoutBaseUrl}/${open}`, renewalPaymentID: open } : {}),
    ...(telegram ? { telegramURL: telegram } : {}),
    ...(portalToken !== undefined ? { portalURL: portalUrl(checkoutBaseUrl, portalToken) } : {}),
    createdAt: row.created_at.toISOString(),
    ...(row.cancelled_at !== null ? { cancelledAt: row.cancelled_at.toISOString() } : {}),
    ...(row.expired_at !== null ? { expiredAt: row.expired_at.toISOString() } : {}),
  };
}

/** The customer's portal of a subscription: `{checkout_base_url}/s/{token}`. */
export const portalUrl = (checkoutBaseUrl: string, token: string): string => `${checkoutBaseUrl}/s/${token}`;

export const ledgerEntrySchema = {
  type: 'object',
  required: ['id', 'kind', 'amount', 'currency', 'balanceAfter', 'actor', 'createdAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    kind: {
      type: 'string',
      enum: ['credit', 'charge', 'adjustment', 'refund'],
      description:
        'credit: a completed payment’s money; charge: a period charged; adjustment: a manual credit; refund: money given back to the customer (positive: a refund that failed gave its amount back to the credit).',
    },
    amount: {
      type: 'string',
      description: 'The change of the credit, in the plan’s currency: negative for a charge or a refund (positive for a refund that failed, giving it back).',
    },
    currency: currencySchema,
    balanceAfter: { type: 'string', description: 'The credit after this entry.' },
    periodStart: { type: 'string', format: 'date-time', description: 'A charge: the start of the period it paid for.' },
    periodEnd: { type: 'string', format: 'date-time', description: 'A charge: the end of the period it paid for.' },
    paymentID: { type: 'string', format: 'uuid', description: 'A credit: the payment whose money it is.' },
    actor: { type: 'string', description: 'kassa (the billing engine or a payment’s completion), or the API token’s id that made a manual credit.' },
    note: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time', description: 'By the billing clock.' },
  },
} as const;

export function presentLedgerEntry(row: LedgerRow): FromSchema<typeof ledgerEntrySchema> {
  return {
    id: row.id,
    kind: row.kind,
    amount: row.amount,
    currency: row.currency,
    balanceAfter: row.balance_after,
    ...(row.period_start !== null ? { periodStart: row.period_start.toISOString() } : {}),
    ...(row.period_end !== null ? { periodEnd: row.period_end.toISOString() } : {}),
    ...(row.payment_id !== null ? { paymentID: row.payment_id } : {}),
    actor: row.actor,
    ...(row.note !== null ? { note: row.note } : {}),
    createdAt: row.created_at.toISOString(),
  };
}
