// The served OpenAPI document and the server agree where they used to differ: RFC 3339 times
// (calendar dates, hour 24, lower-case t/z), the amount pattern (zero), the trailing slash; and the
// document gives generated clients what they need on every operation (summary, tag, examples for
// path and query parameters, the global 404/405/431 answers, a code enum per error answer).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { openApiDocument } from '../../src/http/openapi.ts';
import { buildEventBody, buildWebhookBody } from '../../src/webhooks/sign.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

type Operation = {
  summary?: string;
  tags?: string[];
  parameters?: Array<{ name: string; in: string; example?: unknown }>;
  responses: Record<string, { content?: { 'application/json'?: { schema: any } } }>;
};
const document = openApiDocument('http://127.0.0.1:3000', 'http://127.0.0.1:3000/pay') as unknown as {
  info: { license?: { name: string } };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, any> };
  webhooks: Record<string, { post: { requestBody: { content: { 'application/json': { schema: { $ref: string } } } }; responses: Record<string, unknown> } }>;
};
const operations = Object.entries(document.paths).flatMap(([path, byMethod]) =>
  Object.entries(byMethod).map(([method, op]) => ({ where: `${method} ${path}`, op })),
);

describe('the OpenAPI document, for generated clients', () => {
  it('has a licence, and a summary and a tag on every operation', () => {
    assert.equal(document.info.license?.name, 'MIT');
    for (const { where, op } of operations) {
      assert.ok(op.summary, `${where} has a summary`);
      assert.ok(op.tags?.length, `${where} has a tag`);
    }
  });

  it('gives an example for every path and query parameter', () => {
    for (const { where, op } of operations) {
      for (const parameter of op.parameters ?? []) {
        if (parameter.in === 'path' || parameter.in === 'query') assert.notEqual(parameter.example, undefined, `${where}: ${parameter.name}`);
      }
    }
  });

  it('documents 404, 405 and 431 on every operation, and each error answer with its codes as an enum', () => {
    for (const { where, op } of operations) {
      for (const status of ['404', '405', '431']) assert.ok(op.responses[status], `${where} answers ${status}`);
      for (const [status, response] of Object.entries(op.responses)) {
        if (!/^[45]/.test(status)) continue;
        // GET /readyz's 503 is its readiness body, not the envelope.
        if (where === 'get /readyz' && status === '503') continue;
        const code = response.content?.['application/json']?.schema.properties.error.properties.code;
        assert.ok(Array.isArray(code?.enum) && code.enum.length > 0, `${where} ${status}: code is an enum`);
      }
    }
    const notFound = document.paths['/v1/payments/{paymentID}']!.get!.responses['404']!.content!['application/json']!.schema;
    assert.deepEqual(notFound.properties.error.properties.code.enum, ['payment_not_found', 'route_not_found']);
  });

  it('publishes the amount pattern the server applies: zero is not an amount', () => {
    const ajv = new Ajv2020({ strict: false });
    const amount = ajv.compile(document.components.schemas.CreatePaymentRequest.properties.amount);
    for (const good of ['10.50', '1', '0.5', '0.000001', '100']) assert.ok(amount(good), good);
    for (const bad of ['0', '0.0', '0.00', '00.5', '01', '-1', '1.', '.5', '1e3']) assert.ok(!amount(bad), bad);
  });

  it('gives every payment status its own shape, told apart by status', () => {
    const { Payment, PaymentPending, PaymentCreated, PaymentCompleted } = document.components.schemas;
    assert.equal(Payment.discriminator.propertyName, 'status');
    assert.equal(Payment.oneOf.length, 5);
    assert.ok(PaymentPending.required.includes('paymentDetails'));
    assert.ok(PaymentPending.properties.paymentDetails.required.includes('address'));
    assert.equal(PaymentCreated.properties.paymentDetails, undefined);
    assert.ok(PaymentCompleted.properties.paymentDetails.required.includes('transactionSignatures'));
    assert.ok(PaymentCompleted.properties.timer.required.includes('paidAt'));
  });
});

describe("the document's webhooks: the bodies Kassa signs, each naming its store", () => {
  const ajv = new Ajv2020({ strict: false });
  ajv.addSchema({ components: document.components }, 'doc');
  const bodyOf = (name: string) => ajv.compile({ $ref: `doc${document.webhooks[name]!.post.requestBody.content['application/json'].schema.$ref}` });
  const storeId = '0b5e2c9a-1d2e-4f60-8a7b-9c0d1e2f3a4b';
  const paymentId = '7d9f1c9e-2f3b-4c59-9a44-0c1e2f3a4b5c';
  const signAt = new Date('2026-11-22T07:00:00.123Z');

  it('paymentCompleted is the body buildWebhookBody makes, storeID required; its 403 is the answer to another store', () => {
    const valid = bodyOf('paymentCompleted');
    const body = JSON.parse(buildWebhookBody({ paymentId, storeId, metadata: { cart: '7' }, orderId: 'A-1' }, signAt)) as { payload: Record<string, unknown> };
    assert.ok(valid(body), JSON.stringify(valid.errors));
    delete body.payload.storeID;
    assert.equal(valid(body), false, 'a body without storeID is not a webhook of this Kassa');
    assert.ok(document.webhooks.paymentCompleted!.post.responses['403']);
  });

  it('storeEvent is the body buildEventBody makes, its payload naming the store', () => {
    const valid = bodyOf('storeEvent');
    const body = JSON.parse(
      buildEventBody({ type: 'payment.completed', eventId: paymentId, storeId, payload: { paymentID: paymentId, status: 'completed' } }, signAt),
    ) as { payload: Record<string, unknown> };
    assert.equal(body.payload.storeID, storeId);
    assert.ok(valid(body), JSON.stringify(valid.errors));
    delete body.payload.storeID;
    assert.equal(valid(body), false);
  });
});

describe('the server answers as the document says', () => {
  let app: TestApp;
  let token: string;
  before(async () => {
    app = await startTestApp();
    ({ token } = await app.store());
  });
  after(() => app.close());

  it('created_after: an impossible calendar date and hour 24 are refused; lower-case t and z are RFC 3339', async () => {
    for (const bad of ['2026-02-30T00:00:00Z', '2026-01-01T24:00:00Z', '2025-02-29T00:00:00Z', '2026-01-01T00:00:00', '2026-13-01T00:00:00Z']) {
      const answer = await app.request('GET', `/v1/payments?created_after=${encodeURIComponent(bad)}`, { token });
      assert.equal(answer.status, 400, bad);
      assert.equal(answer.json.error.code, 'invalid_created_after', bad);
    }
    for (const good of ['2026-01-01t00:00:00z', '2024-02-29T12:00:00+02:00', '2026-01-01T00:00:00.5Z']) {
      const answer = await app.request('GET', `/v1/payments?created_after=${encodeURIComponent(good)}`, { token });
      assert.equal(answer.status, 200, `${good}: ${answer.text}`);
    }
  });

  it('amount "0" is refused as invalid_amount; "0.5" is an amount', async () => {
    for (const zero of ['0', '0.00']) {
      const answer = await app.request('POST', '/v1/payments', { token, body: { amount: zero, currency: 'TON' } });
      assert.equal(answer.status, 400);
      assert.equal(answer.json.error.code, 'invalid_amount');
      assert.equal(answer.json.error.param, 'amount');
    }
    assert.equal((await app.request('POST', '/v1/payments', { token, body: { amount: '0.5', currency: 'TON' } })).status, 201);
  });

  it('a trailing slash is another path: 404 route_not_found, as the document lists no such path', async () => {
    for (const path of ['/v1/payments/', '/v1/payment-methods/', '/healthz/']) {
      const answer = await app.request('GET', path, { token });
      assert.equal(answer.status, 404, path);
      assert.equal(answer.json.error.code, 'route_not_found', path);
    }
    assert.equal((await app.request('GET', '/v1/payments', { token })).status, 200);
  });
});
