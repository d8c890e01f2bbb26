// The OpenAPI 3.1 document of the HTTP API, built from the same JSON Schemas that validate
// requests (src/http/routes/*.schema.ts) and that type the presenters' answers (src/presenters/).
// Served at GET /openapi.json.
import type Router from '@koa/router';
import { statusOf, typeOf, type ErrorCode } from '../errors.ts';
import type { AppDeps, KassaState } from './context.ts';
import type { Guards } from './guards.ts';
import { checkoutViewSchema } from '../presenters/checkout.ts';
import { endpointDeliverySchema, webhookDeliverySchema } from '../presenters/delivery.ts';
import { webhookEndpointSchema } from '../presenters/webhookEndpoint.ts';
import { unmatchedTransferSchema } from '../presenters/unmatched.ts';
import { assignUnmatchedSchema, keepUnmatchedSchema, listUnmatchedQuery, refundUnmatchedSchema, unmatchedParams } from './routes/unmatchedTransfers.schema.ts';
import { paymentLinkSchema } from '../presenters/paymentLink.ts';
import { ledgerEntrySchema, planSchema, subscriptionSchema } from '../presenters/subscription.ts';
import {
  addCreditSchema,
  cancelSubscriptionSchema,
  createPlanSchema,
  updatePlanSchema,
  createSubscriptionSchema,
  listSubscriptionsQuery,
  planParams,
  subscriptionParams,
} from './routes/subscriptions.schema.ts';
import { createPaymentLinkSchema, listPaymentLinksQuery, paymentLinkParams } from './routes/paymentLinks.schema.ts';
import { keySetSchema } from '../presenters/keys.ts';
import { listSchema, pageSchema } from '../presenters/list.ts';
import { paymentMethodSchema } from '../presenters/method.ts';
import { createdInvoiceSchema, paymentSchemasByStatus, paymentStatusSchema } from '../presenters/payment.ts';
import { balanceSchema } from '../presenters/balance.ts';
import { refundSchema } from '../presenters/refund.ts';
import { transferSchema } from '../presenters/transfer.ts';
import { checkoutPrefix } from './routes/checkoutSteps.ts';
import { selectMethodSchema, telegramInitDataSchema, tonConnectQuery } from './routes/checkout.schema.ts';
import { cancelPaymentSchema, createInvoiceSchema, createPaymentSchema, listPaymentsQuery } from './routes/payments.schema.ts';
import { createRefundSchema } from './routes/refunds.schema.ts';
import { createEndpointSchema, endpointDeliveryParams, endpointParams } from './routes/webhookEndpoints.schema.ts';
import { paymentParams } from './routes/shared.schema.ts';
import { eventBodySchema, webhookBodySchema } from '../webhooks/sign.ts';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object) => ({ 'application/json': { schema } });

/** Response headers (docs/API.md): every response has X-Request-Id; limited endpoints RateLimit-*; 429/503 Retry-After. */
const requestIdHeader = {
  'X-Request-Id': { required: true, description: 'Echoed when the client sent a valid one, otherwise generated.', schema: { type: 'string' } },
};
const rateLimitHeaders = {
  'RateLimit-Limit': { description: 'The burst size of the bucket (when rate limiting is on).', schema: { type: 'string' } },
  'RateLimit-Remaining': { description: 'Requests left in the bucket.', schema: { type: 'string' } },
  'RateLimit-Reset': { description: 'Seconds until the bucket is full again.', schema: { type: 'string' } },
};
const retryAfterHeader = { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'string' } } };
const replayedHeader = {
  'Idempotent-Replayed': {
    description: '`true` when this is the replay of an earlier response to the same X-Idempotency-Key.',
    schema: { type: 'string', const: 'true' },
  },
};
const retrying = (status: string) => status === '429' || status === '503';
const authenticateHeader = {
  'WWW-Authenticate': { required: true, description: '`Bearer` (docs/API.md, Authentication).', schema: { type: 'string', const: 'Bearer' } },
};
const allowHeader = { Allow: { required: true, description: 'The methods the path accepts.', schema: { type: 'string', example: 'GET, POST' } } };

type Responses = Record<string, { description: string; content?: object; headers?: object }>;
interface OperationObject {
  parameters?: Array<{ name: string; [key: string]: unknown }>;
  requestBody?: object;
  responses: Responses;
  /** The error codes the operation can answer (src/errors.ts); each becomes the response of its status. */
  errors?: readonly ErrorCode[];
  [key: string]: unknown;
}

/** The envelope of an error answer whose `code` is one of `codes` (and `type` one of theirs). */
function errorBody(codes: readonly ErrorCode[]) {
  return {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['type', 'message', 'code'],
        properties: {
          type: { type: 'string', enum: [...new Set(codes.map(typeOf))] },
          message: { type: 'string', description: 'For people: may change at any time.' },
          code: { type: 'string', enum: [...codes], description: 'For programs (docs/API.md, Errors).' },
          param: { type: 'string', description: 'The offending parameter, with its path (`metadata.color`).' },
        },
      },
    },
  };
}

/** Answers every operation can give: the HTTP layer's refusals, an unexpected error, the database down. */
const GLOBAL_ERRORS: readonly ErrorCode[] = [
  'malformed_request',
  'route_not_found',
  'method_not_allowed',
  'request_timeout',
  'headers_too_large',
  'internal_error',
  'service_unavailable',
];
const MERCHANT_ERRORS: readonly ErrorCode[] = ['auth_invalid', 'rate_limit_exceeded'];
/** Operations a narrowed token may not call (docs/API.md, Token scopes): 403 insufficient_scope. */
const SCOPED_ERRORS: readonly ErrorCode[] = ['insufficient_scope'];
const CREATE_SCOPE = 'Token scope: full or create_payments (a read_only token is answered 403 insufficient_scope).';
const CHANGE_SCOPE = 'Token scope: full (a read_only or create_payments token is answered 403 insufficient_scope).';
const BODY_ERRORS: readonly ErrorCode[] = ['invalid_json', 'unknown_parameter', 'payload_too_large', 'unsupported_media_type'];
const IDEMPOTENT_ERRORS: readonly ErrorCode[] = ['invalid_idempotency_key', 'idempotency_key_reused'];
const BY_ID_ERRORS: readonly ErrorCode[] = ['invalid_payment_id', 'payment_not_found'];

/**
 * What every operation shares, added once: its error answers, one per status, from its `errors`
 * and the global ones (each with its own `code` enum); every response carries X-Request-Id,
 * rate-limited ones (those that can answer 429) RateLimit-*, 429 and 503 Retry-After, 401
 * WWW-Authenticate, 405 Allow, and a replayed idempotent success Idempotent-Replayed.
 */
function withCommonResponses(paths: Record<string, Record<string, OperationObject>>) {
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      const idempotent = operation.parameters?.some((parameter) => parameter.name === 'X-Idempotency-Key') ?? false;
      const codes = [...new Set([...(operation.errors ?? []), ...GLOBAL_ERRORS])];
      delete operation.errors;
      const byStatus = new Map<string, ErrorCode[]>();
      for (const code of codes) byStatus.set(String(statusOf(code)), [...(byStatus.get(String(statusOf(code))) ?? []), code]);
      const errorResponses = Object.fromEntries(
        [...byStatus.entries()]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([status, list]) => [status, { description: list.join(', '), content: json(errorBody(list)) }]),
      );
      // An operation's own answer for a status (GET /readyz's 503 body) stands over the envelope's.
      const responses: Responses = { ...errorResponses, ...operation.responses };
      const limited = '429' in responses;
      operation.responses = Object.fromEntries(
        Object.entries(responses).map(([status, response]) => [
          status,
          {
            ...response,
            headers: {
              ...requestIdHeader,
              ...(limited ? rateLimitHeaders : {}),
              ...(retrying(status) ? retryAfterHeader : {}),
              ...(status === '401' ? authenticateHeader : {}),
              ...(status === '405' ? allowHeader : {}),
              ...(idempotent && status.startsWith('2') ? replayedHeader : {}),
            },
          },
        ]),
      );
    }
  }
  return paths;
}

/** The payment id in a path, as the routes validate it (src/http/routes/shared.schema.ts). */
const paymentIdParameter = {
  name: 'paymentID',
  in: 'path',
  required: true,
  description: 'The payment id (a UUID).',
  schema: requestSchema(paymentParams.schema.properties.id),
  example: '5f0c6c1e-8a4e-4d7a-9a51-0c1f2f3e4d5c',
};
const endpointIdParameter = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'The webhook endpoint id (a UUID).',
  schema: requestSchema(endpointParams.schema.properties.id),
  example: '8d2f6a3e-1c4b-4f7e-9a51-2e1f3c4d5b6a',
};
const paymentLinkIdParameter = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'The payment link id (a UUID).',
  schema: requestSchema(paymentLinkParams.schema.properties.id),
  example: '2a7c4e1f-6b3d-4f8a-9c51-1e2f3a4b5c6d',
};
const unmatchedIdParameter = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'The unmatched transfer id (a UUID).',
  schema: requestSchema(unmatchedParams.schema.properties.id),
  example: '3c9e2d1f-7a4b-4e8c-9d51-4f2e1a3b5c6d',
};
const PARAMS_OF_UNMATCHED = [unmatchedIdParameter];
const planIdParameter = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'The plan id (a UUID).',
  schema: requestSchema(planParams.schema.properties.id),
  example: '3b8d5f2a-7c4e-4a9b-8d61-2f3a4b5c6d7e',
};
const subscriptionIdParameter = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'The subscription id (a UUID).',
  schema: requestSchema(subscriptionParams.schema.properties.id),
  example: '4c9e6a3b-8d5f-4b0c-9e72-3a4b5c6d7e8f',
};
const PLAN_ERRORS: readonly ErrorCode[] = ['invalid_plan_id', 'plan_not_found'];
const SUBSCRIPTION_ERRORS: readonly ErrorCode[] = ['invalid_subscription_id', 'subscription_not_found'];
const LINK_ERRORS: readonly ErrorCode[] = ['invalid_payment_link_id', 'payment_link_not_found'];
const ENDPOINT_ERRORS: readonly ErrorCode[] = ['invalid_webhook_endpoint_id', 'webhook_endpoint_not_found'];
const idempotencyHeader = {
  name: 'X-Idempotency-Key',
  in: 'header',
  required: false,
  schema: { type: 'string', format: 'uuid' },
  description: 'Replays the first successful response for 24 hours.',
  example: '0b6f3c1e-3f5a-4f1e-9a51-7c1f2f3e4d5c',
};
/** An example for each of the list's query parameters. */
const QUERY_EXAMPLES: Record<string, string | number> = {
  status: 'completed',
  order_id: 'order-1042',
  payment_link: '2a7c4e1f-6b3d-4f8a-9c51-1e2f3a4b5c6d',
  created_after: '2026-01-31T00:00:00Z',
  limit: 20,
  starting_after: '5f0c6c1e-8a4e-4d7a-9a51-0c1f2f3e4d5c',
  state: 'open',
  customer_reference: 'user-1042',
};

/** A list's query parameters as published: the same schema validates the query (src/http/routes/*.schema.ts). */
function queryParameters(query: { schema: { properties: Record<string, object> }; published: object }) {
  return Object.entries(query.schema.properties).map(([name, checked]) => {
    const { description, ...schema } = ((query.published as Record<string, object>)[name] ?? checked) as { description: string };
    // A name shared by lists (status, state) takes its example from the list's own values when they differ.
    const values = (schema as { enum?: readonly (string | number)[] }).enum;
    const example = values && !values.includes(QUERY_EXAMPLES[name] as string) ? values[0] : QUERY_EXAMPLES[name];
    return { name, in: 'query', description, schema: requestSchema(schema), example };
  });
}

/** GET /readyz's body (src/http/routes/health.ts), ready or not. */
const readinessSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['ready', 'reasons', 'database', 'chain'],
  properties: {
    ready: { type: 'boolean' },
    reasons: { type: 'array', items: { type: 'string' }, description: 'Why not ready; empty when ready.' },
    database: { enum: ['ok', 'unreachable'] },
    chain: {
      type: ['object', 'null'],
      description: 'null when the database does not answer.',
      additionalProperties: false,
      required: ['network', 'lastBlock', 'latestBlock', 'behindBlocks', 'secondsSinceUpdate', 'maxBehindBlocks'],
      properties: {
        network: { enum: ['mainnet', 'testnet', 'sandbox'] },
        lastBlock: { type: ['integer', 'null'], description: 'The last masterchain block booked (null before the first).' },
        latestBlock: { type: ['integer', 'null'], description: 'The newest block the chain API had published when the reader last wrote.' },
        behindBlocks: { type: ['integer', 'null'], description: 'Estimated blocks behind the tip.' },
        secondsSinceUpdate: { type: ['number', 'null'], description: 'Seconds since the reader last wrote its cursor.' },
        maxBehindBlocks: { type: 'integer', description: 'READY_MAX_BLOCKS_BEHIND.' },
      },
    },
  },
} as const;
/**
 * A request's schema (a body's, a query or path parameter's) as published: a `default` is said in
 * the description instead (a generated client types a property with a default as always present,
 * which in a request it is not); Kassa's own annotations (`errorCode`, `errorParam`, `coinSymbol`: validate.ts)
 * are left out (docs/API.md says each field's code).
 */
function requestSchema(schema: object): Record<string, unknown> {
  const { $id: _id, ...rest } = schema as Record<string, unknown>;
  const published = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(published);
    if (node === null || typeof node !== 'object') return node;
    const { default: fallback, errorCode: _code, errorParam: _param, coinSymbol: _coin, ...others } = node as Record<string, unknown>;
    const copy = Object.fromEntries(Object.entries(others).map(([key, value]) => [key, published(value)]));
    if (fallback !== undefined) copy.description = `${copy.description ?? ''} Default ${JSON.stringify(fallback)} when omitted.`.trim();
    return copy;
  };
  return published(rest) as Record<string, unknown>;
}
const TAGS = [
  { name: 'Payments', description: 'Create, read, list and cancel payments (the seed interface and its extensions).' },
  { name: 'Refunds', description: 'Money not counted toward a payment, sent back from its deposit wallet (extension).' },
  { name: 'Webhooks', description: 'Webhook deliveries and the key set receivers verify signatures with.' },
  { name: 'Unmatched money', description: "Money that reached a treasury-settlement store's treasury naming no payment (extension, CONTRACT §12)." },
  { name: 'Payment links', description: 'Reusable URLs whose page makes one payment at the link’s price each time a customer asks for it (extension).' },
  {
    name: 'Subscriptions',
    description:
      'Plans and subscriptions: each period is an ordinary payment whose money counts as credit, and a period is charged from credit (extension, CONTRACT §12). No crypto wallet on TON can be charged without its owner’s signature each period.',
  },
  { name: 'Payment methods', description: "The store's enabled coin/chain pairs." },
  { name: 'Checkout', description: 'Public endpoints of the hosted checkout page (no token: the payment id is the capability).' },
  { name: 'Service', description: 'Liveness and readiness.' },
];

export function openApiDocument(baseUrl: string, checkoutBaseUrl: string) {
  const checkoutPath = checkoutPrefix(checkoutBaseUrl);
  const paymentByStatus = paymentSchemasByStatus();
  return {
    openapi: '3.1.0',
    info: {
      title: 'Kassa',
      version: '1',
      description: 'Self-hosted crypto payments on TON. See docs/API.md for every decision and error code.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: baseUrl }],
    security: [{ bearer: [] }],
    tags: TAGS,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT (EdDSA)',
          description:
            'A token of `kassa token issue` or the dashboard. Its scope (full, read_only, create_payments) limits what it may call: reads need any scope; creating a payment full or create_payments; cancel, refunds and webhook redelivery full (docs/API.md, Token scopes).',
        },
      },
      schemas: {
        CreatePaymentRequest: requestSchema(createPaymentSchema),
        CreateInvoiceRequest: requestSchema(createInvoiceSchema),
        CancelPaymentRequest: requestSchema(cancelPaymentSchema),
        CreateRefundRequest: requestSchema(createRefundSchema),
        SelectMethodRequest: requestSchema(selectMethodSchema),
        TelegramInitDataRequest: requestSchema(telegramInitDataSchema),
        Refund: refundSchema,
        Balance: balanceSchema,
        Payment: {
          description: "The payment object: its shape follows its status (the seed's presence table).",
          oneOf: Object.keys(paymentByStatus).map(ref),
          discriminator: {
            propertyName: 'status',
            mapping: Object.fromEntries(Object.keys(paymentByStatus).map((name) => [name.replace(/^Payment/, '').toLowerCase(), ref(name).$ref])),
          },
        },
        ...paymentByStatus,
        PaymentMethod: paymentMethodSchema,
        CheckoutView: checkoutViewSchema,
        Transfer: transferSchema,
        WebhookDelivery: webhookDeliverySchema,
        CreateWebhookEndpointRequest: requestSchema(createEndpointSchema),
        AssignUnmatchedTransferRequest: requestSchema(assignUnmatchedSchema),
        KeepUnmatchedTransferRequest: requestSchema(keepUnmatchedSchema),
        RefundUnmatchedTransferRequest: requestSchema(refundUnmatchedSchema),
        WebhookEndpoint: webhookEndpointSchema,
        UnmatchedTransfer: unmatchedTransferSchema,
        WebhookEndpointDelivery: endpointDeliverySchema,
        CreatePaymentLinkRequest: requestSchema(createPaymentLinkSchema),
        PaymentLink: paymentLinkSchema,
        CreatePlanRequest: requestSchema(createPlanSchema),
        UpdatePlanRequest: requestSchema(updatePlanSchema),
        CreateSubscriptionRequest: requestSchema(createSubscriptionSchema),
        CancelSubscriptionRequest: requestSchema(cancelSubscriptionSchema),
        AddCreditRequest: requestSchema(addCreditSchema),
        Plan: planSchema,
        Subscription: subscriptionSchema,
        LedgerEntry: ledgerEntrySchema,
        WebhookBody: webhookBodySchema,
        WebhookEventBody: eventBodySchema,
      },
    },
    webhooks: webhookOperations(),
    paths: withCommonResponses({
      '/v1/payments': {
        post: {
          operationId: 'createPayment',
          tags: ['Payments'],
          summary: 'Create a payment (Customer Choice or Preselected)',
          description: CREATE_SCOPE,
          parameters: [idempotencyHeader],
          requestBody: { required: true, content: json(ref('CreatePaymentRequest')) },
          responses: { '201': { description: 'The payment', content: json(ref('Payment')) } },
          errors: [
            ...MERCHANT_ERRORS,
            ...SCOPED_ERRORS,
            ...BODY_ERRORS,
            ...IDEMPOTENT_ERRORS,
            'missing_parameter',
            'invalid_request',
            'invalid_amount',
            'currency_not_found',
            'invalid_payment_options',
            'payment_method_not_found',
            'unsupported_payment_method',
            'invalid_ttl',
            'invalid_order_id',
            'invalid_description',
            'invalid_metadata',
            'invalid_webhook_url',
            'invalid_return_url',
            'rate_unavailable',
          ],
        },
        get: {
          operationId: 'listPayments',
          tags: ['Payments'],
          summary: "The store's payments, newest first (extension)",
          // The same schema validates the query (src/http/routes/payments.schema.ts).
          parameters: queryParameters(listPaymentsQuery),
          responses: { '200': { description: 'A page', content: json(pageSchema(ref('Payment'))) } },
          errors: [
            ...MERCHANT_ERRORS,
            'unknown_parameter',
            'invalid_status',
            'invalid_order_id',
            'invalid_payment_link_id',
            'invalid_created_after',
            'invalid_limit',
            'invalid_starting_after',
          ],
        },
      },
      '/v1/payments/create': {
        post: {
          operationId: 'createInvoice',
          tags: ['Payments'],
          summary: 'Create a payment, invoice-type variant',
          description: CREATE_SCOPE,
          parameters: [idempotencyHeader],
          requestBody: { required: true, content: json(ref('CreateInvoiceRequest')) },
          responses: { '201': { description: 'Created', content: json(createdInvoiceSchema) } },
          errors: [
            ...MERCHANT_ERRORS,
            ...SCOPED_ERRORS,
            ...BODY_ERRORS,
            ...IDEMPOTENT_ERRORS,
            'missing_parameter',
            'invalid_request',
            'invalid_invoice_type',
            'invalid_amount',
            'conflicting_amounts',
            'currency_not_found',
            'invalid_payment_method_id',
            'payment_method_not_found',
            'unsupported_payment_method',
            'invalid_ttl',
            'invalid_order_id',
            'invalid_description',
            'invalid_metadata',
            'invalid_webhook_url',
            'invalid_return_url',
            'rate_unavailable',
          ],
        },
      },
      '/v1/payments/{paymentID}': {
        get: {
          operationId: 'getPayment',
          tags: ['Payments'],
          summary: 'Read a payment',
          parameters: [paymentIdParameter],
          responses: { '200': { description: 'The payment', content: json(ref('Payment')) } },
          errors: [...MERCHANT_ERRORS, ...BY_ID_ERRORS],
        },
      },
      '/v1/payments/{paymentID}/status': {
        get: {
          operationId: 'getPaymentStatus',
          tags: ['Payments'],
          summary: "Read a payment's status only (for polling)",
          parameters: [paymentIdParameter],
          responses: { '200': { description: 'Status only', content: json(paymentStatusSchema) } },
          errors: [...MERCHANT_ERRORS, ...BY_ID_ERRORS],
        },
      },
      '/v1/payments/{paymentID}/cancel': {
        post: {
          operationId: 'cancelPayment',
          tags: ['Payments'],
          summary: 'Cancel a created or pending payment',
          description:
            'chain_behind (503, Retry-After): the chain reader could not book the chain up to the cancel within 10 s. A payment already paid on chain is completed, and the cancel answers 409 payment_not_cancellable. ' +
            CHANGE_SCOPE,
          parameters: [paymentIdParameter, idempotencyHeader],
          requestBody: { required: false, content: json(ref('CancelPaymentRequest')) },
          responses: { '200': { description: 'The cancelled payment', content: json(ref('Payment')) } },
          errors: [...MERCHANT_ERRORS, ...SCOPED_ERRORS, ...BY_ID_ERRORS, ...BODY_ERRORS, ...IDEMPOTENT_ERRORS, 'payment_not_cancellable', 'chain_behind'],
        },
      },
      '/v1/payments/{paymentID}/transfers': {
        get: {
          operationId: 'listPaymentTransfers',
          tags: ['Payments'],
          summary: 'Every transfer recorded for the payment, with its effect (extension)',
          parameters: [paymentIdParameter],
          responses: { '200': { description: 'The books of this payment', content: json(listSchema(ref('Transfer'))) } },
          errors: [...MERCHANT_ERRORS, ...BY_ID_ERRORS],
        },
      },
      '/v1/payments/{paymentID}/refunds': {
        post: {
          operationId: 'createRefund',
          tags: ['Refunds'],
          summary:
            'Refund money not counted toward a completed payment (or a sale inside its window) from its deposit wallet, or a swept sale from the treasury (extension)',
          description: `invalid_coin: a coin that is not a string of 1 to 16 characters, or one Kassa does not know. With \`"from": "treasury"\` the refund answers \`awaiting_signature\` with a TON Connect request (\`tonconnect\`) and a \`ton://\` link for the merchant's wallet to sign (Kassa holds no key of the treasury); invalid_request (param \`from\`): the store has no treasury, or the sale is not swept yet. ${CHANGE_SCOPE}`,
          parameters: [paymentIdParameter, idempotencyHeader],
          requestBody: { required: true, content: json(ref('CreateRefundRequest')) },
          responses: {
            '201': {
              description: "The refund: planned (the signer sends it), or from the treasury awaiting the merchant's signature",
              content: json(ref('Refund')),
            },
          },
          errors: [
            ...MERCHANT_ERRORS,
            ...SCOPED_ERRORS,
            ...BY_ID_ERRORS,
            ...BODY_ERRORS,
            ...IDEMPOTENT_ERRORS,
            'missing_parameter',
            'invalid_request',
            'refund_exceeds_balance',
            'refund_below_minimum',
            'refund_gas_unpaid',
            'rate_unavailable',
            'chain_unavailable',
            'invalid_address',
            'invalid_amount',
            'invalid_coin',
          ],
        },
        get: {
          operationId: 'listRefunds',
          tags: ['Refunds'],
          summary: "The payment's refunds, oldest first (extension)",
          parameters: [paymentIdParameter],
          responses: { '200': { description: 'Refunds', content: json(listSchema(ref('Refund'))) } },
          errors: [...MERCHANT_ERRORS, ...BY_ID_ERRORS],
        },
      },
      '/v1/payments/{paymentID}/balance': {
        get: {
          operationId: 'getPaymentBalance',
          tags: ['Refunds'],
          summary: "The payment's money per coin — received, held, counted, refunded, swept, fees, refundable — and its sweeps to the treasury (extension)",
          parameters: [paymentIdParameter],
          responses: {
            '200': { description: 'The balance', content: json(ref('Balance')) },
          },
          errors: [...MERCHANT_ERRORS, ...BY_ID_ERRORS],
        },
      },
      '/v1/payments/{paymentID}/webhook-deliveries': {
        get: {
          operationId: 'listWebhookDeliveries',
          tags: ['Webhooks'],
          summary: "The payment's webhook deliveries with every attempt (extension)",
          parameters: [paymentIdParameter],
          responses: { '200': { description: 'Deliveries, oldest first', content: json(listSchema(ref('WebhookDelivery'))) } },
          errors: [...MERCHANT_ERRORS, ...BY_ID_ERRORS],
        },
      },
      '/v1/payments/{paymentID}/webhook/redeliver': {
        post: {
          operationId: 'redeliverWebhook',
          tags: ['Webhooks'],
          summary: 'Deliver the completed event again, signed afresh (extension)',
          description: CHANGE_SCOPE,
          parameters: [paymentIdParameter, idempotencyHeader],
          requestBody: { required: false, content: json(ref('CancelPaymentRequest')) },
          responses: { '202': { description: 'The new delivery, queued', content: json(ref('WebhookDelivery')) } },
          errors: [...MERCHANT_ERRORS, ...SCOPED_ERRORS, ...BY_ID_ERRORS, ...BODY_ERRORS, ...IDEMPOTENT_ERRORS, 'payment_not_completed', 'no_webhook_url'],
        },
      },
      '/v1/payment-links': {
        post: {
          operationId: 'createPaymentLink',
          tags: ['Payment links'],
          summary: 'Create a payment link: a fixed price or an open amount, fiat or a coin (extension)',
          description: CHANGE_SCOPE,
          requestBody: { required: true, content: json(ref('CreatePaymentLinkRequest')) },
          responses: { '201': { description: 'The link', content: json(ref('PaymentLink')) } },
          errors: [
            ...MERCHANT_ERRORS,
            ...SCOPED_ERRORS,
            ...BODY_ERRORS,
            'missing_parameter',
            'invalid_request',
            'invalid_amount',
            'currency_not_found',
            'invalid_payment_options',
            'payment_method_not_found',
            'invalid_description',
            'invalid_return_url',
            'invalid_link_amount',
            'invalid_max_payments',
            'invalid_expires_at',
          ],
        },
        get: {
          operationId: 'listPaymentLinks',
          tags: ['Payment links'],
          summary: "The store's payment links, newest first (extension)",
          parameters: queryParameters(listPaymentLinksQuery),
          responses: { '200': { description: 'A page', content: json(pageSchema(ref('PaymentLink'))) } },
          errors: [...MERCHANT_ERRORS, 'unknown_parameter', 'invalid_limit', 'invalid_starting_after'],
        },
      },
      '/v1/payment-links/{id}': {
        get: {
          operationId: 'getPaymentLink',
          tags: ['Payment links'],
          summary: 'The link, with how many of its payments completed and what they came to (extension)',
          parameters: [paymentLinkIdParameter],
          responses: { '200': { description: 'The link', content: json(ref('PaymentLink')) } },
          errors: [...MERCHANT_ERRORS, ...LINK_ERRORS],
        },
      },
      '/v1/payment-links/{id}/deactivate': {
        post: {
          operationId: 'deactivatePaymentLink',
          tags: ['Payment links'],
          summary: 'Switch the link off: it then takes no payment, and its open payments expire now (extension)',
          description: `${CHANGE_SCOPE} Each created or pending payment of the link gets expiresAt = the deactivation (if later): money sent before it still completes the payment, money sent after is after_expiry.`,
          parameters: [paymentLinkIdParameter],
          requestBody: { required: false, content: json(ref('CancelPaymentRequest')) },
          responses: { '200': { description: 'The link', content: json(ref('PaymentLink')) } },
          errors: [...MERCHANT_ERRORS, ...SCOPED_ERRORS, ...BODY_ERRORS, ...LINK_ERRORS],
        },
      },
      '/v1/plans': {
        post: {
          operationId: 'createPlan',
          tags: ['Subscriptions'],
          summary: 'Create a plan: a price in fiat or a coin per period of the calendar (extension)',
          description: CHANGE_SCOPE,
          parameters: [idempotencyHeader],
          requestBody: { required: true, content: json(ref('CreatePlanRequest')) },
          responses: { '201': { description: 'The plan', content: json(ref('Plan')) } },
          errors: [
            ...MERCHANT_ERRORS,
            ...SCOPED_ERRORS,
            ...BODY_ERRORS,
            ...IDEMPOTENT_ERRORS,
            'missing_parameter',
            'invalid_request',
            'invalid_amount',
            'currency_not_found',
            'invalid_plan_name',
            'invalid_interval',
            'invalid_days',
          ],
        },
        get: {
          operationId: 'listPlans',
          tags: ['Subscriptions'],
          summary: "The store's plans, newest first (extension)",
          responses: { '200': { description: 'The plans', content: json(listSchema(ref('Plan'))) } },
          errors: [...MERCHANT_ERRORS, 'unknown_parameter'],
        },
      },
      '/v1/plans/{id}': {
        get: {
          operationId: 'getPlan',
          tags: ['Subscriptions'],
          summary: 'The plan (extension)',
          parameters: [planIdParameter],
          responses: { '200': { description: 'The plan', content: json(ref('Plan')) } },
          errors: [...MERCHANT_ERRORS, ...PLAN_ERRORS],
        },
        post: {
          operationId: 'updatePlan',
          tags: ['Subscriptions'],
          summary: 'A new price for the plan, charged from the next period on; the period running keeps its price (extension)',
          description: `${CHANGE_SCOPE} Each period is charged once, at its start, at the price then; a renewal payment already open keeps its amount. Audited (plan.update).`,
          parameters: [planIdParameter],
          requestBody: { required: true, content: json(ref('UpdatePlanRequest')) },
          responses: { '200': { description: 'The plan', content: json(ref('Plan')) } },
          errors: [...MERCHANT_ERRORS, ...SCOPED_ERRORS, ...BODY_ERRORS, ...PLAN_ERRORS, 'missing_parameter', 'invalid_request', 'invalid_amount'],
        },
      },
      '/v1/plans/{id}/archive': {
        post: {
          operationId: 'archivePlan',
          tags: ['Subscriptions'],
          summary: 'Archive the plan: no new subscriptions; its subscribers go on (extension)',
          description: CHANGE_SCOPE,
          parameters: [planIdParameter],
          requestBody: { required: false, content: json(ref('CancelPaymentRequest')) },
          responses: { '200': { description: 'The plan', content: json(ref('Plan')) } },
          errors: [...MERCHANT_ERRORS, ...SCOPED_ERRORS, ...BODY_ERRORS, ...PLAN_ERRORS],
        },
      },
      '/v1/subscriptions': {
        post: {
          operationId: 'createSubscription',
          tags: ['Subscriptions'],
          summary: 'Subscribe a customer to a plan: trialing, or its first period due at once (checkoutURL) (extension)',
          description: `${CHANGE_SCOPE} Without a trial the subscription starts past_due with its first payment open (checkoutURL, telegramURL) and expires unpaid after the plan's grace days. The answer carries the customer's portalURL, this once: Kassa keeps only its hash (a replay of the request answers without it).`,
          parameters: [idempotencyHeader],
          requestBody: { required: true, content: json(ref('CreateSubscriptionRequest')) },
          responses: { '201': { description: 'The subscription, with its portalURL (shown this once)', content: json(ref('Subscription')) } },
          errors: [
            ...MERCHANT_ERRORS,
            ...SCOPED_ERRORS,
            ...BODY_ERRORS,
            ...IDEMPOTENT_ERRORS,
            'missing_parameter',
            'invalid_request',
            'invalid_plan_id',
            'plan_not_found',
            'plan_archived',
            'invalid_customer',
            'invalid_days',
          ],
        },
        get: {
          operationId: 'listSubscriptions',
          tags: ['Subscriptions'],
          summary: "The store's subscriptions, newest first, by status or customer (extension)",
          parameters: queryParameters(listSubscriptionsQuery),
          responses: { '200': { description: 'The subscriptions', content: json(listSchema(ref('Subscription'))) } },
          errors: [...MERCHANT_ERRORS, 'unknown_parameter', 'invalid_subscription_status', 'invalid_customer'],
        },
      },
      '/v1/subscriptions/{id}': {
        get: {
          operationId: 'getSubscription',
          tags: ['Subscriptions'],
          summary: 'The subscription (extension)',
          parameters: [subscriptionIdParameter],
          responses: { '200': { description: 'The subscription', content: json(ref('Subscription')) } },
          errors: [...MERCHANT_ERRORS, ...SUBSCRIPTION_ERRORS],
        },
      },
      '/v1/subscriptions/{id}/ledger': {
        get: {
          operationId: 'getSubscriptionLedger',
          tags: ['Subscriptions'],
          summary: 'Every change of the subscription’s credit, oldest first: enough to rebuild every period (extension)',
          parameters: [subscriptionIdParameter],
          responses: { '200': { description: 'The ledger', content: json(listSchema(ref('LedgerEntry'))) } },
          errors: [...MERCHANT_ERRORS, ...SUBSCRIPTION_ERRORS],
        },
      },
      '/v1/subscriptions/{id}/cancel': {
        post: {
          operationId: 'cancelSubscription',
          tags: ['Subscriptions'],
          summary: 'Cancel now, or at the end of the current period (extension)',
          description: CHANGE_SCOPE,
          parameters: [subscriptionIdParameter, idempotencyHeader],
          requestBody: { required: false, content: json(ref('CancelSubscriptionRequest')) },
          responses: { '200': { description: 'The subscription', content: json(ref('Subscription')) } },
          errors: [...MERCHANT_ERRORS, ...SCOPED_ERRORS, ...BODY_ERRORS, ...IDEMPOTENT_ERRORS, ...SUBSCRIPTION_ERRORS, 'invalid_request', 'subscription_ended'],
        },
      },
      '/v1/subscriptions/{id}/portal': {
        post: {
          operationId: 'reissueSubscriptionPortal',
          tags: ['Subscriptions'],
          summary: 'A new secret address for the customer’s portal: the old portalURL stops working at once (extension)',
          description: `${CHANGE_SCOPE} In the audit log (subscription.portal_reissue). Send the customer the new portalURL: it is in this answer only (Kassa keeps only its hash).`,
          parameters: [subscriptionIdParameter],
          requestBody: { required: false, content: json(ref('CancelPaymentRequest')) },
          responses: { '200': { description: 'The subscription, with its new portalURL (shown this once)', content: json(ref('Subscription')) } },
          errors: [...MERCHANT_ERRORS, ...SCOPED_ERRORS, ...BODY_ERRORS, ...SUBSCRIPTION_ERRORS],
        },
      },
      '/v1/subscriptions/{id}/credits': {
        post: {
          operationId: 'addSubscriptionCredit',
          tags: ['Subscriptions'],
          summary: 'Add credit by hand, with a note: a ledger adjustment, in the audit log (extension)',
          description: `${CHANGE_SCOPE} The engine runs at once: credit that covers a due period charges it.`,
          parameters: [subscriptionIdParameter, idempotencyHeader],
          requestBody: { required: true, content: json(ref('AddCreditRequest')) },
          responses: { '200': { description: 'The subscription', content: json(ref('Subscription')) } },
          errors: [
            ...MERCHANT_ERRORS,
            ...SCOPED_ERRORS,
            ...BODY_ERRORS,
            ...IDEMPOTENT_ERRORS,
            ...SUBSCRIPTION_ERRORS,
            'missing_parameter',
            'invalid_request',
            'invalid_amount',
            'invalid_note',
          ],
        },
      },
      '/v1/unmatched-transfers': {
        get: {
          operationId: 'listUnmatchedTransfers',
          tags: ['Unmatched money'],
          summary: "Money that reached the store's treasury naming no payment, newest first, the last 100 (extension, treasury settlement)",
          parameters: queryParameters(listUnmatchedQuery),
          responses: { '200': { description: 'Unmatched transfers', content: json(listSchema(ref('UnmatchedTransfer'))) } },
          errors: [...MERCHANT_ERRORS, 'unknown_parameter', 'invalid_unmatched_state'],
        },
      },
      '/v1/unmatched-transfers/{id}/assign': {
        post: {
          operationId: 'assignUnmatchedTransfer',
          tags: ['Unmatched money'],
          summary: 'Book an unmatched transfer on a payment settled to the treasury it reached, as if it had carried its reference (extension)',
          description: CHANGE_SCOPE,
          parameters: PARAMS_OF_UNMATCHED,
          requestBody: { required: true, content: json(ref('AssignUnmatchedTransferRequest')) },
          responses: { '200': { description: 'The unmatched transfer, assigned (paymentID)', content: json(ref('UnmatchedTransfer')) } },
          errors: [
            ...MERCHANT_ERRORS,
            ...SCOPED_ERRORS,
            ...BODY_ERRORS,
            'missing_parameter',
            'invalid_unmatched_transfer_id',
            'invalid_payment_id',
            'unmatched_transfer_not_found',
            'unmatched_transfer_not_open',
            'payment_not_found',
            'payment_not_paid_to_treasury',
          ],
        },
      },
      '/v1/unmatched-transfers/{id}/keep': {
        post: {
          operationId: 'keepUnmatchedTransfer',
          tags: ['Unmatched money'],
          summary: 'Keep an unmatched transfer in the treasury as it is, with a note (extension)',
          description: CHANGE_SCOPE,
          parameters: PARAMS_OF_UNMATCHED,
          requestBody: { required: true, content: json(ref('KeepUnmatchedTransferRequest')) },
          responses: { '200': { description: 'The unmatched transfer, kept (note)', content: json(ref('UnmatchedTransfer')) } },
          errors: [
            ...MERCHANT_ERRORS,
            ...SCOPED_ERRORS,
            ...BODY_ERRORS,
            'missing_parameter',
            'invalid_unmatched_transfer_id',
            'invalid_note',
            'unmatched_transfer_not_found',
            'unmatched_transfer_not_open',
          ],
        },
      },
      '/v1/unmatched-transfers/{id}/refund': {
        post: {
          operationId: 'refundUnmatchedTransfer',
          tags: ['Unmatched money'],
          summary: "Send an unmatched transfer back, whole, from the treasury: a treasury refund for the merchant's wallet to sign (extension)",
          description: `The refund answers \`awaiting_signature\` with a TON Connect request (\`tonconnect\`) and a \`ton://\` link, exactly as a sale's refund from the treasury: the transfer's whole amount and coin, to its sender or \`address\`. The transfer is \`refunding\` until the chain reader sees the refund leave the treasury (the refund \`confirmed\`, the transfer \`refunded\`), or \`open\` again once the refund expired unseen (after its \`heldUntil\`). Refused: unmatched_transfer_not_open (409) while a refund of it awaits its signature, or once assigned, refunded or kept; invalid_address: an address Kassa cannot send to, or none given when the chain names no sender. ${CHANGE_SCOPE}`,
          parameters: PARAMS_OF_UNMATCHED,
          requestBody: { required: false, content: json(ref('RefundUnmatchedTransferRequest')) },
          responses: { '201': { description: "The refund, awaiting the merchant's signature (unmatchedTransferID)", content: json(ref('Refund')) } },
          errors: [
            ...MERCHANT_ERRORS,
            ...SCOPED_ERRORS,
            ...BODY_ERRORS,
            'invalid_unmatched_transfer_id',
            'unmatched_transfer_not_found',
            'unmatched_transfer_not_open',
            'invalid_address',
            'invalid_coin',
            'invalid_request',
            'chain_unavailable',
          ],
        },
      },
      '/v1/unmatched-transfers/{id}/refunds': {
        get: {
          operationId: 'listUnmatchedTransferRefunds',
          tags: ['Unmatched money'],
          summary: "An unmatched transfer's refunds from the treasury, oldest first (extension)",
          parameters: PARAMS_OF_UNMATCHED,
          responses: { '200': { description: 'Refunds', content: json(listSchema(ref('Refund'))) } },
          errors: [...MERCHANT_ERRORS, 'invalid_unmatched_transfer_id', 'unmatched_transfer_not_found'],
        },
      },
      '/v1/webhook-endpoints': {
        post: {
          operationId: 'createWebhookEndpoint',
          tags: ['Webhook endpoints'],
          summary: 'Add a store webhook endpoint: a URL and the event types it hears (extension)',
          description: CHANGE_SCOPE,
          requestBody: { required: true, content: json(ref('CreateWebhookEndpointRequest')) },
          responses: { '201': { description: 'The endpoint', content: json(ref('WebhookEndpoint')) } },
          errors: [
            ...MERCHANT_ERRORS,
            ...SCOPED_ERRORS,
            ...BODY_ERRORS,
            'missing_parameter',
            'invalid_endpoint_url',
            'invalid_event_types',
            'too_many_webhook_endpoints',
          ],
        },
        get: {
          operationId: 'listWebhookEndpoints',
          tags: ['Webhook endpoints'],
          summary: "The store's webhook endpoints, oldest first (extension)",
          responses: { '200': { description: 'Endpoints', content: json(listSchema(ref('WebhookEndpoint'))) } },
          errors: MERCHANT_ERRORS,
        },
      },
      '/v1/webhook-endpoints/{id}': {
        delete: {
          operationId: 'deleteWebhookEndpoint',
          tags: ['Webhook endpoints'],
          summary: 'Delete the endpoint with its delivery log (extension)',
          description: CHANGE_SCOPE,
          parameters: [endpointIdParameter],
          responses: {
            '200': {
              description: 'Deleted',
              content: json({ type: 'object', required: ['id', 'deleted'], properties: { id: { type: 'string', format: 'uuid' }, deleted: { const: true } } }),
            },
          },
          errors: [...MERCHANT_ERRORS, ...SCOPED_ERRORS, ...ENDPOINT_ERRORS],
        },
      },
      '/v1/webhook-endpoints/{id}/test': {
        post: {
          operationId: 'testWebhookEndpoint',
          tags: ['Webhook endpoints'],
          summary: 'Send the endpoint a signed ping (extension)',
          description: CHANGE_SCOPE,
          parameters: [endpointIdParameter],
          requestBody: { required: false, content: json(ref('CancelPaymentRequest')) },
          responses: { '202': { description: 'The ping, queued', content: json(ref('WebhookEndpointDelivery')) } },
          errors: [...MERCHANT_ERRORS, ...SCOPED_ERRORS, ...BODY_ERRORS, ...ENDPOINT_ERRORS],
        },
      },
      '/v1/webhook-endpoints/{id}/deliveries': {
        get: {
          operationId: 'listWebhookEndpointDeliveries',
          tags: ['Webhook endpoints'],
          summary: "The endpoint's last 100 deliveries, newest first, with every attempt (extension)",
          parameters: [endpointIdParameter],
          responses: { '200': { description: 'Deliveries', content: json(listSchema(ref('WebhookEndpointDelivery'))) } },
          errors: [...MERCHANT_ERRORS, ...ENDPOINT_ERRORS],
        },
      },
      '/v1/webhook-endpoints/{id}/deliveries/{deliveryID}/redeliver': {
        post: {
          operationId: 'redeliverToWebhookEndpoint',
          tags: ['Webhook endpoints'],
          summary: 'Deliver the same event (type, eventID, payload) again, signed afresh (extension)',
          description: CHANGE_SCOPE,
          parameters: [
            endpointIdParameter,
            {
              name: 'deliveryID',
              in: 'path',
              required: true,
              description: 'One of the endpoint’s deliveries (a UUID).',
              schema: requestSchema(endpointDeliveryParams.schema.properties.deliveryId),
              example: '3c9e1f7a-5b2d-4e8f-8a61-7d2e4f1c3b5a',
            },
          ],
          requestBody: { required: false, content: json(ref('CancelPaymentRequest')) },
          responses: { '202': { description: 'The new delivery, queued', content: json(ref('WebhookEndpointDelivery')) } },
          errors: [...MERCHANT_ERRORS, ...SCOPED_ERRORS, ...BODY_ERRORS, ...ENDPOINT_ERRORS, 'invalid_delivery_id', 'webhook_delivery_not_found'],
        },
      },
      '/v1/payment-methods': {
        get: {
          operationId: 'listPaymentMethods',
          tags: ['Payment methods'],
          summary: "The store's enabled payment methods",
          responses: { '200': { description: "The store's methods", content: json(listSchema(ref('PaymentMethod'))) } },
          errors: MERCHANT_ERRORS,
        },
      },
      '/v1/payments/methods': {
        get: {
          operationId: 'listPaymentMethodsForInvoices',
          tags: ['Payment methods'],
          summary: "The store's enabled payment methods (the same list, under the invoice API's path)",
          responses: { '200': { description: "The store's methods (same list)", content: json(listSchema(ref('PaymentMethod'))) } },
          errors: MERCHANT_ERRORS,
        },
      },
      [`${checkoutPath}/v1/webhook/keys`]: {
        get: {
          operationId: 'getWebhookKeys',
          tags: ['Webhooks'],
          security: [],
          summary: 'The webhook key set (under the checkout base URL)',
          responses: { '200': { description: 'Key set', content: json(keySetSchema) } },
          errors: ['rate_limit_exceeded'],
        },
      },
      [`${checkoutPath}/v1/checkout/payments/{paymentID}`]: {
        get: {
          operationId: 'getCheckoutPayment',
          tags: ['Checkout'],
          security: [],
          summary: "The checkout page's public view of a payment (nothing private)",
          parameters: [paymentIdParameter],
          responses: { '200': { description: 'Public view', content: json(ref('CheckoutView')) } },
          errors: ['rate_limit_exceeded', ...BY_ID_ERRORS],
        },
      },
      [`${checkoutPath}/v1/checkout/payments/{paymentID}/method`]: {
        post: {
          operationId: 'chooseCheckoutMethod',
          tags: ['Checkout'],
          security: [],
          summary: 'The customer chooses the payment method (created → pending)',
          parameters: [paymentIdParameter],
          requestBody: { required: true, content: json(ref('SelectMethodRequest')) },
          responses: { '200': { description: 'Public view, now pending', content: json(ref('CheckoutView')) } },
          errors: [
            'rate_limit_exceeded',
            ...BY_ID_ERRORS,
            ...BODY_ERRORS,
            'missing_parameter',
            'invalid_request',
            'invalid_payment_method_id',
            'payment_method_not_found',
            'unsupported_payment_method',
            'method_already_selected',
            'payment_expired',
            'payment_not_open',
            'rate_unavailable',
          ],
        },
      },
      [`${checkoutPath}/v1/checkout/payments/{paymentID}/ton-connect`]: {
        get: {
          operationId: 'checkoutTonConnectRequest',
          tags: ['Checkout'],
          security: [],
          summary: 'The TON Connect sendTransaction request paying what is still due, from the connected wallet `account`',
          parameters: [
            paymentIdParameter,
            // The same schema validates the query (src/http/routes/checkout.schema.ts).
            {
              name: 'account',
              in: 'query',
              required: true,
              description: tonConnectQuery.schema.properties.account.description,
              schema: { type: 'string' },
              example: '0:b5ee9c72410101010044000084ff0020dd2082014c97ba9730ed44d0d70b1fe0',
            },
          ],
          responses: {
            '200': {
              description:
                "Pass it to tonConnectUI.sendTransaction as is: TON to the deposit address, or a TEP-74 jetton transfer to the customer's own jetton wallet",
              content: json({
                type: 'object',
                required: ['validUntil', 'from', 'messages'],
                properties: {
                  validUntil: { type: 'integer', description: "The payment's expiry (unix seconds)" },
                  network: { type: 'string', enum: ['-239', '-3'], description: 'Absent in the sandbox' },
                  from: { type: 'string' },
                  messages: {
                    type: 'array',
                    items: {
                      type: 'object',
                      required: ['address', 'amount'],
                      properties: {
                        address: { type: 'string' },
                        amount: { type: 'string', description: 'nanoTON' },
                        payload: { type: 'string', description: 'base64 BOC' },
                      },
                    },
                  },
                },
              }),
            },
          },
          errors: [
            'rate_limit_exceeded',
            ...BY_ID_ERRORS,
            'missing_parameter',
            'invalid_address',
            'method_not_selected',
            'payment_expired',
            'payment_not_open',
            'chain_unavailable',
          ],
        },
      },
      [`${checkoutPath}/tonconnect-manifest.json`]: {
        get: {
          operationId: 'tonConnectManifest',
          tags: ['Checkout'],
          security: [],
          summary: 'The TON Connect manifest wallets read when the checkout asks to connect',
          responses: {
            '200': {
              description: 'Manifest',
              content: json({
                type: 'object',
                required: ['url', 'name', 'iconUrl'],
                properties: { url: { type: 'string' }, name: { type: 'string' }, iconUrl: { type: 'string' } },
              }),
            },
          },
        },
      },
      [`${checkoutPath}/v1/checkout/payments/{paymentID}/telegram`]: {
        post: {
          operationId: 'checkoutTelegramLaunch',
          tags: ['Checkout'],
          security: [],
          summary:
            "The checkout running as the store's Telegram Mini App sends Telegram's init data: checked (Telegram's Ed25519 signature for the store's bot, at most an hour old, launched for this payment), its user is recorded on the payment",
          parameters: [paymentIdParameter],
          requestBody: { required: true, content: json(ref('TelegramInitDataRequest')) },
          responses: {
            '200': {
              description: 'The Telegram user recorded on the payment',
              content: json({
                type: 'object',
                required: ['telegramUser'],
                properties: {
                  telegramUser: { type: 'object', required: ['id'], properties: { id: { type: 'integer' }, username: { type: 'string' } } },
                },
              }),
            },
          },
          errors: [
            'rate_limit_exceeded',
            ...BY_ID_ERRORS,
            ...BODY_ERRORS,
            'missing_parameter',
            'invalid_request',
            'telegram_init_data_invalid',
            'telegram_init_data_expired',
            'telegram_not_configured',
            'payment_not_open',
          ],
        },
      },
      [`${checkoutPath}/v1/checkout/payments/{paymentID}/methods`]: {
        get: {
          operationId: 'getCheckoutPaymentMethods',
          tags: ['Checkout'],
          security: [],
          summary: 'The methods a created payment may be paid with now, each with what it would cost (read by <kassa-pay>)',
          description:
            "Empty once a method is chosen or the payment has ended (the view's paymentDetails says which). Answered to another origin (CORS) only when the payment's store lists it in embedOrigins.",
          parameters: [paymentIdParameter],
          responses: {
            '200': {
              description: 'The methods',
              content: json({
                type: 'object',
                required: ['data'],
                properties: {
                  data: {
                    type: 'array',
                    items: {
                      type: 'object',
                      required: ['coin', 'chain'],
                      properties: {
                        coin: { type: 'string' },
                        chain: { type: 'string' },
                        coinAmount: { type: 'string', description: 'Absent while no fresh rate prices it.' },
                      },
                    },
                  },
                },
              }),
            },
          },
          errors: ['rate_limit_exceeded', ...BY_ID_ERRORS],
        },
      },
      [`${checkoutPath}/v1/checkout/links/{id}`]: {
        get: {
          operationId: 'getCheckoutPaymentLink',
          tags: ['Checkout'],
          security: [],
          summary: "A payment link's public view: its state and price (read by <kassa-pay link>)",
          description: "Answered to another origin (CORS) only when the link's store lists it in embedOrigins.",
          parameters: [paymentLinkIdParameter],
          responses: {
            '200': {
              description: 'The public view',
              content: json({
                type: 'object',
                required: ['id', 'state', 'currency'],
                properties: {
                  id: { type: 'string', format: 'uuid' },
                  state: { type: 'string', enum: ['open', 'deactivated', 'expired', 'used_up'] },
                  currency: { type: 'string' },
                  amount: { type: 'string' },
                  minAmount: { type: 'string' },
                  maxAmount: { type: 'string' },
                  description: { type: 'string' },
                },
              }),
            },
          },
          errors: ['rate_limit_exceeded', ...LINK_ERRORS],
        },
      },
      [`${checkoutPath}/v1/kassa-pay.js`]: {
        get: {
          operationId: 'kassaPayElement',
          tags: ['Checkout'],
          security: [],
          summary: 'The <kassa-pay> drop-in element: one ES module, no dependencies (docs/API.md, The drop-in element)',
          responses: { '200': { description: 'JavaScript module', content: { 'text/javascript': { schema: { type: 'string' } } } } },
        },
      },
      [`${checkoutPath}/v1/checkout/payments/{paymentID}/events`]: {
        get: {
          operationId: 'checkoutPaymentEvents',
          tags: ['Checkout'],
          security: [],
          summary: 'Server-sent events: the public view each time it changes',
          description: 'rate_limit_exceeded also when the client address holds 50 streams; too_many_streams: CHECKOUT_STREAMS_MAX per process.',
          parameters: [paymentIdParameter],
          responses: { '200': { description: 'text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } } },
          errors: ['rate_limit_exceeded', ...BY_ID_ERRORS, 'too_many_streams'],
        },
      },
      '/healthz': {
        get: {
          operationId: 'health',
          tags: ['Service'],
          security: [],
          summary: 'Liveness: 200 once the database answers, 503 otherwise',
          responses: { '200': { description: 'Database answers', content: json({ type: 'object', required: ['ok'], properties: { ok: { const: true } } }) } },
        },
      },
      '/readyz': {
        get: {
          operationId: 'readiness',
          tags: ['Service'],
          security: [],
          summary: 'Readiness for load balancers: the database answers and the chain reader keeps up',
          description:
            '200 when the database answers and the chain reader is at most READY_MAX_BLOCKS_BEHIND masterchain blocks behind the tip (estimated: the blocks it recorded as behind, plus those the chain made since it last wrote its cursor); 503 otherwise. The same body either way says why. /healthz stays liveness.',
          responses: {
            '200': { description: 'Ready', content: json(readinessSchema) },
            '503': { description: 'Not ready: `reasons` says why', content: json(readinessSchema) },
          },
        },
      },
    }),
  };
}

/** The two bodies Kassa POSTs to a merchant (docs/API.md, Webhooks and Store webhook endpoints): OpenAPI 3.1's `webhooks`. */
function webhookOperations() {
  const signatureHeaders = [
    {
      name: 'X-Signature',
      in: 'header',
      required: true,
      description: 'Standard base64 Ed25519 signature of the exact body bytes.',
      schema: { type: 'string' },
    },
    {
      name: 'X-Signature-Kid',
      in: 'header',
      required: true,
      description: 'The kid of the key in `GET {checkout_base_url}/v1/webhook/keys` that signed it.',
      schema: { type: 'string' },
    },
  ];
  const answers = {
    '200': { description: 'Verified and processed (any 2xx within 30 s ends the delivery).' },
    '403': {
      description:
        "Not this receiver's store: `payload.storeID` names another store (the receiver kit's answer, given `storeID`). Retried like any non-2xx within the 12 hours, then failed.",
    },
  };
  const check =
    'Every store of a Kassa is signed with the same keys: check `payload.storeID` against your store’s id (the receiver kit does, given `storeID`) before acting on it.';
  return {
    paymentCompleted: {
      post: {
        operationId: 'paymentCompletedWebhook',
        tags: ['Webhooks'],
        summary: "A payment completed: sent to the payment's webhookURL",
        description: `Signed afresh at each attempt (new signAt); retried on any non-2xx for up to 12 hours. ${check}`,
        parameters: signatureHeaders,
        requestBody: { required: true, content: json(ref('WebhookBody')) },
        responses: answers,
      },
    },
    storeEvent: {
      post: {
        operationId: 'storeEventWebhook',
        tags: ['Webhooks'],
        summary: "An event of the store: sent to each of its webhook endpoints that lists the event's type",
        description: `Signed and retried as the payment webhook; \`eventID\` tells duplicates. ${check}`,
        parameters: signatureHeaders,
        requestBody: { required: true, content: json(ref('WebhookEventBody')) },
        responses: answers,
      },
    },
  };
}

export function openApiRoutes(router: Router<KassaState>, deps: AppDeps, _guards: Guards): void {
  // Made on the first request (most processes are never asked for it), then kept.
  let document: string | undefined;
  router.get('/openapi.json', (ctx) => {
    document ??= JSON.stringify(openApiDocument(deps.config.baseUrl, deps.config.checkoutBaseUrl));
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = document;
  });
}
