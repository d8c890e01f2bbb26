// JSON Schemas of the plan and subscription endpoints (src/http/routes/subscriptions.ts) and the
// request types derived from them.
import type { FromSchema } from 'json-schema-to-ts';
import { currencySchema } from '../../presenters/payment.ts';
import { INTERVAL_UNITS, SUBSCRIPTION_STATUSES } from '../../subscriptions/calendar.ts';
import type { ParamsDefinition, QueryDefinition } from '../validate.ts';
import { amountSchema, GRAM_TAKEN } from './shared.schema.ts';

const days = (what: string, maximum: number) =>
  ({ type: 'integer', minimum: 0, maximum, description: `${what} (0–${maximum}).`, errorCode: 'invalid_days' }) as const;

export const createPlanSchema = {
  $id: 'CreatePlanRequest',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'currency', 'amount', 'interval'],
  properties: {
    name: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      pattern: '\\S',
      description: 'The plan’s name, as customers see it (not blank).',
      errorCode: 'invalid_plan_name',
    },
    currency: {
      ...currencySchema,
      description: `${currencySchema.description} The unit of the price and of the subscriptions’ credit.${GRAM_TAKEN}`,
      errorCode: 'currency_not_found',
      coinSymbol: true,
    },
    amount: { ...amountSchema, description: 'The price of one period.' },
    interval: { type: 'string', enum: [...INTERVAL_UNITS], description: 'The period’s calendar unit.', errorCode: 'invalid_interval' },
    intervalCount: {
      type: 'integer',
      minimum: 1,
      maximum: 365,
      default: 1,
      description: 'How many intervals a period lasts (1–365).',
      errorCode: 'invalid_interval',
    },
    trialDays: { ...days('Free days before the first period', 365), default: 0 },
    graceDays: { ...days('Days a subscription stays past_due before it expires', 90), default: 3 },
    reminderDays: {
      ...days('Days before a period ends that subscription.renewal_upcoming is sent when the credit will not cover it; 0: none', 90),
      default: 3,
    },
    customerMayCancel: {
      type: 'boolean',
      default: true,
      description: 'Whether subscribers may cancel (at the end of the paid period) from the customer’s portal.',
      errorCode: 'invalid_request',
    },
  },
} as const;
export type CreatePlanBody = FromSchema<typeof createPlanSchema>;

export const updatePlanSchema = {
  $id: 'UpdatePlanRequest',
  type: 'object',
  additionalProperties: false,
  required: ['amount'],
  properties: {
    amount: {
      ...amountSchema,
      description: 'The new price of one period, in the plan’s currency: charged from the next period on; the period running keeps its price.',
    },
  },
} as const;
export type UpdatePlanBody = FromSchema<typeof updatePlanSchema>;

export const createSubscriptionSchema = {
  $id: 'CreateSubscriptionRequest',
  type: 'object',
  additionalProperties: false,
  required: ['planID', 'customer'],
  properties: {
    planID: { type: 'string', format: 'uuid', description: 'An active plan of the store.', errorCode: 'invalid_plan_id' },
    customer: {
      type: 'object',
      additionalProperties: false,
      required: ['reference'],
      errorCode: 'invalid_customer',
      properties: {
        reference: { type: 'string', minLength: 1, maxLength: 200, description: 'The shop’s own reference for the customer.' },
        email: { type: 'string', pattern: '^[^@\\s]+@[^@\\s]+$', maxLength: 254 },
        telegramUserID: { type: 'integer', minimum: 1, maximum: 9007199254740991 },
      },
    },
    trialDays: { ...days('Free days before the first period, instead of the plan’s', 365) },
  },
} as const;
export type CreateSubscriptionBody = FromSchema<typeof createSubscriptionSchema>;

export const cancelSubscriptionSchema = {
  $id: 'CancelSubscriptionRequest',
  type: 'object',
  additionalProperties: false,
  properties: {
    atPeriodEnd: {
      type: 'boolean',
      default: false,
      description: 'true: it stays as it is until the current period ends, then is cancelled; false: cancelled now.',
      errorCode: 'invalid_request',
    },
  },
} as const;
export type CancelSubscriptionBody = FromSchema<typeof cancelSubscriptionSchema>;

export const addCreditSchema = {
  $id: 'AddCreditRequest',
  type: 'object',
  additionalProperties: false,
  required: ['amount', 'note'],
  properties: {
    amount: { ...amountSchema, description: 'Credit to add, in the plan’s currency.' },
    note: { type: 'string', minLength: 1, maxLength: 500, description: 'Why (kept in the ledger and the audit log).', errorCode: 'invalid_note' },
  },
} as const;
export type AddCreditBody = FromSchema<typeof addCreditSchema>;

export const planParams = {
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['id'],
    properties: { id: { type: 'string', format: 'uuid', errorCode: 'invalid_plan_id', errorParam: 'id' } },
  },
} as const satisfies ParamsDefinition;
export type PlanParams = FromSchema<typeof planParams.schema>;

export const subscriptionParams = {
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['id'],
    properties: { id: { type: 'string', format: 'uuid', errorCode: 'invalid_subscription_id', errorParam: 'id' } },
  },
} as const satisfies ParamsDefinition;
export type SubscriptionParams = FromSchema<typeof subscriptionParams.schema>;

export const listPlansQuery = {
  schema: { type: 'object', additionalProperties: false, properties: {} },
  published: {},
} as const satisfies QueryDefinition;

export const listSubscriptionsQuery = {
  schema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      status: { type: 'string', enum: [...SUBSCRIPTION_STATUSES], description: 'Only subscriptions in this status.', errorCode: 'invalid_subscription_status' },
      customer_reference: { type: 'string', minLength: 1, maxLength: 200, description: 'Only the customer’s subscriptions.', errorCode: 'invalid_customer' },
    },
  },
  published: {},
} as const satisfies QueryDefinition;
export type ListSubscriptionsQuery = FromSchema<typeof listSubscriptionsQuery.schema>;

export const advanceClockSchema = {
  $id: 'AdvanceClockRequest',
  type: 'object',
  additionalProperties: false,
  required: ['seconds'],
  properties: {
    seconds: { type: 'integer', minimum: 1, maximum: 315360000, description: 'How far to move the billing clock ahead.', errorCode: 'invalid_seconds' },
  },
} as const;
export type AdvanceClockBody = FromSchema<typeof advanceClockSchema>;
