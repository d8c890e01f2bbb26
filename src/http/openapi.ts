// The OpenAPI 3.1 document of the HTTP API, built from the same JSON Schemas that validate
// requests (src/http/routes/*.schema.ts) and that type the presenters' answers (src/presenters/).
// Served at GET /openapi.json.
import type Router from '@koa/router';
import type { AppDeps, KassaState } from './context.ts';
import type { Guards } from './middleware.ts';
import { checkoutViewSchema } from '../presenters/checkout.ts';
import { webhookDeliverySchema } from '../presenters/delivery.ts';
import { keySetSchema } from '../presenters/keys.ts';
import { listSchema, pageSchema } from '../presenters/list.ts';
import { paymentMethodSchema } from '../presenters/method.ts';
import { createdInvoiceSchema, paymentSchema, paymentStatusSchema } from '../presenters/payment.ts';
import { balanceSchema } from '../presenters/balance.ts';
import { refundSchema } from '../presenters/refund.ts';
import { transferSchema } from '../presenters/transfer.ts';
import { checkoutPrefix } from './routes/checkout.ts';
import { selectMethodSchema, tonConnectQuery } from './routes/checkout.schema.ts';
import { cancelPaymentSchema, createInvoiceSchema, createPaymentSchema, listPaymentsQuery } from './routes/payments.schema.ts';
import { createRefundSchema } from './routes/refunds.schema.ts';
import { paymentParams } from './routes/shared.schema.ts';

const strip = ({ $id: _id, ...schema }: { $id?: string } & Record<string, unknown>) => schema;
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

const errorResponse = (description: string) => ({ description, content: json(ref('Error')) });

type Responses = Record<string, { description: string; content?: object }>;
interface OperationObject {
  parameters?: Array<{ name: string; [key: string]: unknown }>;
  requestBody?: object;
  responses: Responses;
  [key: string]: unknown;
}

/**
 * What every operation shares, added once: an operation with a body can answer 413 and 415; every
 * response carries X-Request-Id, rate-limited ones (those that can answer 429) RateLimit-*, 429 and
 * 503 Retry-After, 401 WWW-Authenticate, and a replayed idempotent success Idempotent-Replayed.
 */
function withCommonResponses(paths: Record<string, Record<string, OperationObject>>) {
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      const idempotent = operation.parameters?.some((parameter) => parameter.name === 'X-Idempotency-Key') ?? false;
      const responses: Responses = {
        ...operation.responses,
        ...(operation.requestBody ? { '413': errorResponse('payload_too_large'), '415': errorResponse('unsupported_media_type') } : {}),
        // Every route that takes the key runs through the same idempotent step (src/http/idempotent.ts).
        ...(idempotent ? { '422': errorResponse('idempotency_key_reused') } : {}),
      };
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
              ...(idempotent && status.startsWith('2') ? replayedHeader : {}),
            },
          },
        ]),
      );
    }
  }
  return paths;
}

const errorSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['type', 'message', 'code'],
      properties: {
        type: { type: 'string', enum: ['invalid_request_error', 'authentication_error', 'not_found_error', 'rate_limit_error', 'api_error'] },
        message: { type: 'string' },
        code: { type: 'string' },
        param: { type: 'string' },
      },
    },
  },
};

/** The payment id in a path, as the routes validate it (src/http/routes/shared.schema.ts). */
const paymentIdParameter = { name: 'paymentID', in: 'path', required: true, schema: paymentParams.schema.properties.id };
const idempotencyHeader = {
  name: 'X-Idempotency-Key',
  in: 'header',
  required: false,
  schema: { type: 'string', format: 'uuid' },
  description: 'Replays the first successful response for 24 hours.',
};
const common = {
  '400': errorResponse('Invalid request (see docs/API.md for every code)'),
  '401': errorResponse('auth_invalid'),
  '429': errorResponse('rate_limit_exceeded'),
  '500': errorResponse('internal_error'),
  '503': errorResponse('service_unavailable or rate_unavailable'),
};
/** The public checkout endpoints: the client address's rate limit, and the database's failures. */
const publicCommon = {
  '429': errorResponse('rate_limit_exceeded'),
  '500': errorResponse('internal_error'),
  '503': errorResponse('service_unavailable'),
};

export function openApiDocument(baseUrl: string, checkoutBaseUrl: string) {
  const checkoutPath = checkoutPrefix(checkoutBaseUrl);
  return {
    openapi: '3.1.0',
    info: { title: 'Kassa', version: '1', description: 'Self-hosted crypto payments on TON. See docs/API.md for every decision and error code.' },
    servers: [{ url: baseUrl }],
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT (EdDSA)' } },
      schemas: {
        CreatePaymentRequest: strip(createPaymentSchema as never),
        CreateInvoiceRequest: strip(createInvoiceSchema as never),
        CancelPaymentRequest: strip(cancelPaymentSchema as never),
        CreateRefundRequest: strip(createRefundSchema as never),
        Refund: refundSchema,
        Balance: balanceSchema,
        Payment: paymentSchema,
        PaymentMethod: paymentMethodSchema,
        Error: errorSchema,
        CheckoutView: checkoutViewSchema,
        Transfer: transferSchema,
        WebhookDelivery: webhookDeliverySchema,
      },
    },
    paths: withCommonResponses({
      '/v1/payments': {
        post: {
          operationId: 'createPayment',
          summary: 'Create a payment (Customer Choice or Preselected)',
          parameters: [idempotencyHeader],
          requestBody: { required: true, content: json(ref('CreatePaymentRequest')) },
          responses: {
            '201': { description: 'The payment', content: json(ref('Payment')) },
            '404': errorResponse('currency_not_found, payment_method_not_found'),
            ...common,
          },
        },
        get: {
          operationId: 'listPayments',
          summary: "The store's payments, newest first (extension)",
          // The same schema validates the query (src/http/routes/payments.schema.ts).
          parameters: Object.entries(listPaymentsQuery.schema.properties).map(([name, checked]) => {
            const { description, ...schema } = ((listPaymentsQuery.published as Record<string, object>)[name] ?? checked) as { description: string };
            return { name, in: 'query', description, schema };
          }),
          responses: {
            '200': {
              description: 'A page',
              content: json(pageSchema(ref('Payment'))),
            },
            ...common,
          },
        },
      },
      '/v1/payments/create': {
        post: {
          operationId: 'createInvoice',
          summary: 'Create a payment, invoice-type variant',
          parameters: [idempotencyHeader],
          requestBody: { required: true, content: json(ref('CreateInvoiceRequest')) },
          responses: {
            '201': {
              description: 'Created',
              content: json(createdInvoiceSchema),
            },
            '404': errorResponse('currency_not_found, payment_method_not_found'),
            ...common,
          },
        },
      },
      '/v1/payments/{paymentID}': {
        get: {
          operationId: 'getPayment',
          parameters: [paymentIdParameter],
          responses: { '200': { description: 'The payment', content: json(ref('Payment')) }, '404': errorResponse('payment_not_found'), ...common },
        },
      },
      '/v1/payments/{paymentID}/status': {
        get: {
          operationId: 'getPaymentStatus',
          parameters: [paymentIdParameter],
          responses: {
            '200': {
              description: 'Status only',
              content: json(paymentStatusSchema),
            },
            '404': errorResponse('payment_not_found'),
            ...common,
          },
        },
      },
      '/v1/payments/{paymentID}/cancel': {
        post: {
          operationId: 'cancelPayment',
          parameters: [paymentIdParameter, idempotencyHeader],
          requestBody: { required: false, content: json(ref('CancelPaymentRequest')) },
          responses: {
            '200': { description: 'The cancelled payment', content: json(ref('Payment')) },
            '404': errorResponse('payment_not_found'),
            '409': errorResponse('payment_not_cancellable'),
            ...common,
            '503': errorResponse('chain_behind (the chain reader could not book the chain up to the cancel within 10 s; Retry-After), service_unavailable'),
          },
        },
      },
      '/v1/payments/{paymentID}/transfers': {
        get: {
          operationId: 'listPaymentTransfers',
          summary: 'Every transfer recorded for the payment, with its effect (extension)',
          parameters: [paymentIdParameter],
          responses: {
            '200': {
              description: 'The books of this payment',
              content: json(listSchema(ref('Transfer'))),
            },
            '404': errorResponse('payment_not_found'),
            ...common,
          },
        },
      },
      '/v1/payments/{paymentID}/refunds': {
        post: {
          operationId: 'createRefund',
          summary: 'Refund money not counted toward a completed payment, from its deposit wallet (extension)',
          parameters: [paymentIdParameter, idempotencyHeader],
          requestBody: { required: true, content: json(ref('CreateRefundRequest')) },
          responses: {
            '201': { description: 'The refund, planned (the signer sends it)', content: json(ref('Refund')) },
            ...common,
            '400': errorResponse(
              'refund_exceeds_balance (param amount), refund_below_minimum (param amount), invalid_address (param address: not a basechain address of the network, or one of Kassa’s own wallets), invalid_amount, invalid_coin, invalid_request (coin not 1 to 16 characters), missing_parameter, unknown_parameter',
            ),
            '404': errorResponse('payment_not_found'),
          },
        },
        get: {
          operationId: 'listRefunds',
          summary: "The payment's refunds, oldest first (extension)",
          parameters: [paymentIdParameter],
          responses: {
            '200': {
              description: 'Refunds',
              content: json(listSchema(ref('Refund'))),
            },
            '404': errorResponse('payment_not_found'),
            ...common,
          },
        },
      },
      '/v1/payments/{paymentID}/balance': {
        get: {
          operationId: 'getPaymentBalance',
          summary: "The payment's money per coin — received, held, counted, refunded, swept, fees, refundable — and its sweeps to the treasury (extension)",
          parameters: [paymentIdParameter],
          responses: {
            '200': { description: 'The balance', content: json(ref('Balance')) },
            '404': errorResponse('payment_not_found'),
            ...common,
          },
        },
      },
      '/v1/payments/{paymentID}/webhook-deliveries': {
        get: {
          operationId: 'listWebhookDeliveries',
          summary: "The payment's webhook deliveries with every attempt (extension)",
          parameters: [paymentIdParameter],
          responses: {
            '200': {
              description: 'Deliveries, oldest first',
              content: json(listSchema(ref('WebhookDelivery'))),
            },
            '404': errorResponse('payment_not_found'),
            ...common,
          },
        },
      },
      '/v1/payments/{paymentID}/webhook/redeliver': {
        post: {
          operationId: 'redeliverWebhook',
          summary: 'Deliver the completed event again, signed afresh (extension)',
          parameters: [paymentIdParameter, idempotencyHeader],
          requestBody: { required: false, content: json(ref('CancelPaymentRequest')) },
          responses: {
            '202': { description: 'The new delivery, queued', content: json(ref('WebhookDelivery')) },
            '404': errorResponse('payment_not_found'),
            '409': errorResponse('payment_not_completed, no_webhook_url'),
            ...common,
          },
        },
      },
      '/v1/payment-methods': {
        get: {
          operationId: 'listPaymentMethods',
          responses: {
            '200': {
              description: "The store's methods",
              content: json(listSchema(ref('PaymentMethod'))),
            },
            ...common,
          },
        },
      },
      '/v1/payments/methods': {
        get: {
          operationId: 'listPaymentMethodsForInvoices',
          responses: {
            '200': {
              description: "The store's methods (same list)",
              content: json(listSchema(ref('PaymentMethod'))),
            },
            ...common,
          },
        },
      },
      [`${checkoutPath}/v1/webhook/keys`]: {
        get: {
          operationId: 'getWebhookKeys',
          security: [],
          summary: 'The webhook key set (under the checkout base URL)',
          responses: {
            '200': {
              description: 'Key set',
              content: json(keySetSchema),
            },
            ...publicCommon,
          },
        },
      },
      [`${checkoutPath}/v1/checkout/payments/{paymentID}`]: {
        get: {
          operationId: 'getCheckoutPayment',
          security: [],
          summary: "The checkout page's public view of a payment (nothing private)",
          parameters: [paymentIdParameter],
          responses: {
            '200': { description: 'Public view', content: json(ref('CheckoutView')) },
            '400': errorResponse('invalid_payment_id'),
            '404': errorResponse('payment_not_found'),
            ...publicCommon,
          },
        },
      },
      [`${checkoutPath}/v1/checkout/payments/{paymentID}/method`]: {
        post: {
          operationId: 'chooseCheckoutMethod',
          security: [],
          summary: 'The customer chooses the payment method (created → pending)',
          parameters: [paymentIdParameter],
          requestBody: { required: true, content: json(strip(selectMethodSchema)) },
          responses: {
            '200': { description: 'Public view, now pending', content: json(ref('CheckoutView')) },
            '400': errorResponse('invalid request'),
            '404': errorResponse('payment_not_found, payment_method_not_found'),
            '409': errorResponse('method_already_selected, payment_expired, payment_not_open'),
            ...publicCommon,
          },
        },
      },
      [`${checkoutPath}/v1/checkout/payments/{paymentID}/ton-connect`]: {
        get: {
          operationId: 'checkoutTonConnectRequest',
          security: [],
          summary: 'The TON Connect sendTransaction request paying what is still due, from the connected wallet `account`',
          parameters: [
            paymentIdParameter,
            // The same schema validates the query (src/http/routes/checkout.schema.ts).
            { name: 'account', in: 'query', required: true, description: tonConnectQuery.schema.properties.account.description, schema: { type: 'string' } },
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
            '400': errorResponse('invalid_payment_id, invalid_address'),
            '404': errorResponse('payment_not_found'),
            '409': errorResponse('method_not_selected, payment_expired, payment_not_open'),
            ...publicCommon,
            '503': errorResponse('chain_unavailable, service_unavailable'),
          },
        },
      },
      [`${checkoutPath}/tonconnect-manifest.json`]: {
        get: {
          operationId: 'tonConnectManifest',
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
      [`${checkoutPath}/v1/checkout/payments/{paymentID}/events`]: {
        get: {
          operationId: 'checkoutPaymentEvents',
          security: [],
          summary: 'Server-sent events: the public view each time it changes',
          parameters: [paymentIdParameter],
          responses: {
            '200': { description: 'text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
            '400': errorResponse('invalid_payment_id'),
            '404': errorResponse('payment_not_found'),
            ...publicCommon,
            '429': errorResponse('rate_limit_exceeded (also: 50 streams per client address)'),
            '503': errorResponse('too_many_streams (CHECKOUT_STREAMS_MAX per process), service_unavailable'),
          },
        },
      },
      '/healthz': {
        get: {
          operationId: 'health',
          security: [],
          responses: {
            '200': { description: 'Database answers', content: json({ type: 'object', properties: { ok: { const: true } } }) },
            '503': errorResponse('service_unavailable'),
          },
        },
      },
    }),
  };
}

export function openApiRoutes(router: Router<KassaState>, deps: AppDeps, _guards: Guards): void {
  const document = JSON.stringify(openApiDocument(deps.config.baseUrl, deps.config.checkoutBaseUrl));
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = document;
  });
}
