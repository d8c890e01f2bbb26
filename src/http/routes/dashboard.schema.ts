// JSON Schemas of the dashboard's forms and query strings (src/http/routes/dashboard*.ts), checked by
// the API's own validator (http/validate.ts) on the parsed form: a field the API has takes the API's
// schema (a refund's coin, amount and address are CreateRefundRequest's), so the form and the API
// refuse the same input with the same message. Empty inputs count as not given. A refusal is shown
// beside its field (the error's param is the form field's name).
import type { FromSchema } from 'json-schema-to-ts';
import { TOKEN_SCOPES } from '../../auth/scopes.ts';
import { ROLES } from '../../dashboard/roles.ts';
import { TOKEN_LIFETIME_NAMES } from '../../dashboard/tokens.ts';
import { ANOMALIES } from '../../payments/anomalies.ts';
import { PAYMENT_STATUSES } from '../../payments/transitions.ts';
import type { QueryDefinition } from '../validate.ts';
import { LINK_EXPIRIES, PAYMENT_EXPIRIES } from '../../dashboard/paymentLinks.ts';
import { createPaymentLinkSchema } from './paymentLinks.schema.ts';
import { createPaymentSchema } from './payments.schema.ts';
import { createRefundSchema } from './refunds.schema.ts';
import { createEndpointSchema } from './webhookEndpoints.schema.ts';
import { assignUnmatchedSchema, keepUnmatchedSchema, refundUnmatchedSchema } from './unmatchedTransfers.schema.ts';
import { addCreditSchema, createPlanSchema, createSubscriptionSchema, listSubscriptionsQuery } from './subscriptions.schema.ts';

const text = (maxLength: number) => ({ type: 'string', maxLength }) as const;
const form = <const P extends Record<string, object>, const R extends readonly (keyof P & string)[] = readonly []>(properties: P, required?: R) =>
  ({ type: 'object', additionalProperties: false, properties, required: (required ?? []) as unknown as R }) as const;

/** A form with no fields (sign-out, redeliver, revoke, remove, rotate). */
export const emptyForm = form({});

/** Where to go after signing in (checked again by safeNext). */
const next = text(2048);

export const signInForm = form({ email: text(254), password: text(1024), next });
export type SignInForm = FromSchema<typeof signInForm>;

/** Forgotten password: the address a reset link goes to. */
export const forgotPasswordForm = form({ email: text(254) });
export type ForgotPasswordForm = FromSchema<typeof forgotPasswordForm>;

/** The invitation's form (username: the email, for password managers). */
export const invitationForm = form({ password: text(1024), confirm: text(1024), username: text(254) });
export type InvitationForm = FromSchema<typeof invitationForm>;

/**
 * The refund form: CreateRefundRequest itself (POST /v1/payments/{id}/refunds), plus the review's
 * `confirmed` and the confirmation's one-time `key` (the API's X-Idempotency-Key).
 */
const { $id: _refundId, ...refundRequest } = createRefundSchema;
export const refundForm = {
  ...refundRequest,
  properties: {
    ...refundRequest.properties,
    confirmed: { type: 'string', enum: ['yes'] },
    key: { type: 'string', format: 'uuid', errorCode: 'invalid_idempotency_key' },
  },
} as const;
export type RefundForm = FromSchema<typeof refundForm>;

export const invitationCreateForm = form({ email: text(254), role: { type: 'string', enum: ROLES } }, ['email']);
export type InvitationCreateForm = FromSchema<typeof invitationCreateForm>;

/** The Password page's form: the current password (unless a recent passkey sign-in stands for it), the new one twice; `username` is the hidden field password managers file the new password under (unread). */
export const passwordForm = form({ username: text(254), current: text(1024), next: text(1024), confirm: text(1024) });
export type PasswordForm = FromSchema<typeof passwordForm>;

export const roleForm = form({ role: { type: 'string', enum: ROLES } }, ['role']);
export type RoleForm = FromSchema<typeof roleForm>;

export const tokenForm = form({ scope: { type: 'string', enum: TOKEN_SCOPES }, lifetime: { type: 'string', enum: TOKEN_LIFETIME_NAMES }, name: text(400) });
export type TokenForm = FromSchema<typeof tokenForm>;

export const passkeyForm = form({ name: text(200), credential: text(16_384), current: text(1024), username: text(254) });
export type PasskeyForm = FromSchema<typeof passkeyForm>;

export const passkeySignInForm = form({ credential: text(16_384), next });
export type PasskeySignInForm = FromSchema<typeof passkeySignInForm>;

export const appearanceForm = form({
  name: text(200),
  'display-name': text(200),
  'logo-url': text(2048),
  'accent-color': text(32),
  intent: { type: 'string', enum: ['preview', 'save'] },
});
export type AppearanceForm = FromSchema<typeof appearanceForm>;

export const methodsForm = form({ methods: { anyOf: [text(64), { type: 'array', maxItems: 64, items: text(64) }] } });
export type MethodsForm = FromSchema<typeof methodsForm>;

/** The treasury as typed and how the store settles there (a select: deposit or treasury; the store command's rule refuses anything else); `confirmed`: the owner saw the treasury back in their wallet's form and confirmed (the second post saves). */
export const treasuryForm = form({ treasury: text(200), settlement: text(16), confirmed: { type: 'string', enum: ['yes'] } });
export type TreasuryForm = FromSchema<typeof treasuryForm>;

/** The refund window as typed: its range is the store command's rule (stores.ts refundWindowDays), said beside the field. */
export const refundWindowForm = form({ 'refund-window-days': text(16) });
export type RefundWindowForm = FromSchema<typeof refundWindowForm>;

/** The store's Telegram Mini App as typed: the rules are the store command's (stores.ts telegramBot, telegramApp, telegramBotId). */
export const telegramForm = form({ 'telegram-bot': text(64), 'telegram-app': text(64), 'telegram-bot-id': text(32) });
export type TelegramForm = FromSchema<typeof telegramForm>;

/** The sites that may embed the payment element, as typed (comma-separated; the rule is stores.ts embedOrigins'). */
export const embedForm = form({ 'embed-origins': text(4096) });
export type EmbedForm = FromSchema<typeof embedForm>;

/** The amount under which unmatched money raises no alert, as typed (the rule is stores.ts unmatchedDust's). */
export const dustForm = form({ 'unmatched-dust': text(32) });
export type DustForm = FromSchema<typeof dustForm>;

const day = (description: string) => ({ type: 'string', format: 'kassa-day', description }) as const;

/** The payments list's and its CSV's filters (other parameters, such as a notice, are left alone). */
export const paymentsQuery = {
  schema: {
    type: 'object',
    additionalProperties: true,
    properties: {
      status: { type: 'string', enum: PAYMENT_STATUSES },
      anomaly: { type: 'string', enum: ANOMALIES },
      coin: { type: 'string', pattern: '^[A-Za-z0-9]{1,16}$', coinSymbol: true },
      from: day('Created on or after this day (UTC).'),
      to: day('Created on or before this day (UTC).'),
      q: text(200),
      after: { type: 'string', format: 'uuid' },
    },
  },
} as const satisfies QueryDefinition;
export type PaymentsQuery = FromSchema<typeof paymentsQuery.schema>;

/** The audit log's page (the id of the last row of the previous page). */
export const auditQuery = {
  schema: { type: 'object', additionalProperties: true, properties: { before: { type: 'string', pattern: '^\\d{1,18}$' } } },
} as const satisfies QueryDefinition;
export type AuditQuery = FromSchema<typeof auditQuery.schema>;

/**
 * The Payment links page's forms: the API's own schemas for the fields the API has (a link's is
 * CreatePaymentLinkRequest's, a payment's CreatePaymentRequest's), so the form and the API refuse the
 * same input with the same message; the expiry is a choice the handler turns into the API's
 * expiresAt or ttl, and a link's limit (typed as text) is checked by the API's schema once a number.
 */
export const linkForm = form(
  {
    amount: createPaymentLinkSchema.properties.amount,
    currency: createPaymentLinkSchema.properties.currency,
    description: createPaymentLinkSchema.properties.description,
    maxPayments: { type: 'string', pattern: '^\\d{1,9}$', errorCode: 'invalid_max_payments' },
    expires: { type: 'string', enum: Object.keys(LINK_EXPIRIES) as (keyof typeof LINK_EXPIRIES)[], errorCode: 'invalid_expires_at' },
  },
  ['currency'],
);
export type LinkForm = FromSchema<typeof linkForm>;

export const oneOffPaymentForm = form(
  {
    amount: createPaymentSchema.properties.amount,
    currency: createPaymentSchema.properties.currency,
    description: createPaymentSchema.properties.description,
    expires: { type: 'string', enum: Object.keys(PAYMENT_EXPIRIES) as (keyof typeof PAYMENT_EXPIRIES)[], errorCode: 'invalid_ttl' },
  },
  ['amount', 'currency'],
);
export type OneOffPaymentForm = FromSchema<typeof oneOffPaymentForm>;

/** Unmatched money: assign to a payment (a suggestion's button, or a typed id), keep with a note — the API's own fields. */
export const assignUnmatchedForm = form({ paymentID: assignUnmatchedSchema.properties.paymentID }, ['paymentID']);
export type AssignUnmatchedForm = FromSchema<typeof assignUnmatchedForm>;
export const keepUnmatchedForm = form({ note: keepUnmatchedSchema.properties.note }, ['note']);
export type KeepUnmatchedForm = FromSchema<typeof keepUnmatchedForm>;

/**
 * The Webhooks page's add form: the URL as typed (its rule is the command's, webhooks/endpoints.ts
 * endpointUrlProblem, said beside the field) and the checked event types — one (a string) or several
 * (an array), each one of the API's (CreateWebhookEndpointRequest's events), once: an unknown type is
 * refused as the API refuses it, never dropped.
 */
const eventType = createEndpointSchema.properties.events.items;
export const endpointForm = form({
  url: { ...text(2048), examples: ['https://shop.example/kassa/webhooks'] },
  events: {
    anyOf: [eventType, { type: 'array', maxItems: createEndpointSchema.properties.events.maxItems, uniqueItems: true, items: eventType }],
    errorCode: 'invalid_event_types',
  },
});
export type EndpointAddForm = FromSchema<typeof endpointForm>;

/** The Money page's refund fee top-up: the amount in TON as typed (parsed by the route: a comma decimal is read as meant). */
export const refundFeesForm = form({ amount: text(32) });
export type RefundFeesForm = FromSchema<typeof refundFeesForm>;
/** A new store's essentials (the "Set up Kassa" page and an owner's "New store"): its name, its coins (checkboxes), its refund window as typed. */
const storeEssentials = {
  name: text(400),
  methods: methodsForm.properties.methods,
  refundWindowDays: text(16),
} as const;
export const newStoreForm = form(storeEssentials);
export type NewStoreForm = FromSchema<typeof newStoreForm>;

/** First-run setup: the setup code from the start line, the store's essentials, the first owner's email and password (twice). */
export const setupForm = form({ ...storeEssentials, code: text(40), email: text(254), password: text(1024), confirm: text(1024) });
export type SetupForm = FromSchema<typeof setupForm>;
/** Give unmatched money back: to its sender, or the address typed (empty: the sender). */
export const refundUnmatchedForm = form({ address: refundUnmatchedSchema.properties.address });
export type RefundUnmatchedForm = FromSchema<typeof refundUnmatchedForm>;

/**
 * The Subscriptions pages' forms: the API's own schemas for the fields the API has (a plan's are
 * CreatePlanRequest's, a subscription's CreateSubscriptionRequest's, a credit's AddCreditRequest's),
 * so the form and the API refuse the same input with the same message. A whole number is typed as
 * text: its shape is checked here, its range by the API's schema once the route made it a number.
 */
const whole = (errorCode: string) => ({ type: 'string', pattern: '^\\d{1,9}$', errorCode }) as const;
export const planForm = form(
  {
    name: createPlanSchema.properties.name,
    amount: createPlanSchema.properties.amount,
    currency: createPlanSchema.properties.currency,
    interval: createPlanSchema.properties.interval,
    intervalCount: whole('invalid_interval'),
    trialDays: whole('invalid_days'),
    graceDays: whole('invalid_days'),
    reminderDays: whole('invalid_days'),
  },
  ['name', 'amount', 'currency', 'interval'],
);
export type PlanForm = FromSchema<typeof planForm>;

const customerFields = createSubscriptionSchema.properties.customer.properties;
export const subscriptionForm = form(
  {
    planID: createSubscriptionSchema.properties.planID,
    reference: { ...customerFields.reference, errorCode: 'invalid_customer' },
    email: { ...customerFields.email, errorCode: 'invalid_customer' },
    telegramUserID: { type: 'string', pattern: '^\\d{1,16}$', errorCode: 'invalid_customer' },
    trialDays: whole('invalid_days'),
  },
  ['planID', 'reference'],
);
export type SubscriptionForm = FromSchema<typeof subscriptionForm>;

export const creditForm = form({ amount: addCreditSchema.properties.amount, note: addCreditSchema.properties.note }, ['amount', 'note']);
export type CreditForm = FromSchema<typeof creditForm>;

/** Cancel now, or at the current period's end (the API's atPeriodEnd). */
export const cancelForm = form({ when: { type: 'string', enum: ['now', 'period_end'], errorCode: 'invalid_request' } }, ['when']);
export type CancelForm = FromSchema<typeof cancelForm>;

/** The subscriptions list's filters: the API's own (status, a customer's reference); a notice is left alone. */
export const subscriptionsQuery = {
  schema: {
    type: 'object',
    additionalProperties: true,
    properties: { status: listSubscriptionsQuery.schema.properties.status, customer: listSubscriptionsQuery.schema.properties.customer_reference },
  },
} as const satisfies QueryDefinition;
export type SubscriptionsQuery = FromSchema<typeof subscriptionsQuery.schema>;
