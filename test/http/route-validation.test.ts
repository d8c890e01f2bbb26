// The validation step on the route lines (src/http/validate.ts): path parameters are checked by
// JSON Schema with the same errors as before (400 invalid_payment_id, param paymentID), before the
// body; a UUID in upper case is the same payment (ids are kept lower-case, also in the scope of an
// idempotency key); the steps run in the order the route line names them.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createPaymentSchema } from '../../src/http/routes/payments.schema.ts';
import { createRefundSchema } from '../../src/http/routes/refunds.schema.ts';
import { transferSchema } from '../../src/http/routes/sandbox.schema.ts';
import { codeAt, compileEveryValidator, validate } from '../../src/http/validate.ts';
import type { TestApp } from '../helpers/app.ts';
import { buildPayment } from '../helpers/factories.ts';
import { assertError, startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;
let store: Awaited<ReturnType<TestApp['store']>>;
let other: Awaited<ReturnType<TestApp['store']>>;

before(async () => {
  app = await startPaymentsApp();
  store = await app.store();
  other = await app.store({ name: 'Other store' });
});
after(() => app.close());

describe('path parameters are validated by JSON Schema', () => {
  const routes: Array<[string, string, unknown?]> = [
    ['GET', '/v1/payments/%'],
    ['GET', '/v1/payments/%/status'],
    ['GET', '/v1/payments/%/transfers'],
    ['POST', '/v1/payments/%/cancel', {}],
    ['GET', '/v1/payments/%/refunds'],
    ['POST', '/v1/payments/%/refunds', { coin: 'TON', amount: '1', address: 'x' }],
    ['GET', '/v1/payments/%/webhook-deliveries'],
    ['POST', '/v1/payments/%/webhook/redeliver', {}],
    ['GET', '/pay/v1/checkout/payments/%'],
    ['POST', '/pay/v1/checkout/payments/%/method', { paymentMethodID: crypto.randomUUID() }],
    ['GET', '/pay/v1/checkout/payments/%/ton-connect?account=x'],
    ['GET', '/pay/v1/checkout/payments/%/events'],
  ];

  for (const [method, template, body] of routes) {
    it(`${method} ${template.replace('%', '{paymentID}')}: a malformed id is 400 invalid_payment_id, param paymentID`, async () => {
      for (const bad of ['123', 'not-a-uuid', `${crypto.randomUUID()}0`]) {
        const response = await app.request(method, template.replace('%', bad), { token: store.token, ...(body === undefined ? {} : { body }) });
        assertError(response, 400, 'invalid_request_error', 'invalid_payment_id', 'paymentID');
        assert.equal(response.json.error.message, 'paymentID must be a UUID.');
      }
    });
  }

  it('checks the path before the body: a malformed id with a malformed body is invalid_payment_id', async () => {
    const response = await app.request('POST', '/v1/payments/123/cancel', { token: store.token, body: { unexpected: true } });
    assertError(response, 400, 'invalid_request_error', 'invalid_payment_id', 'paymentID');
    const choose = await app.request('POST', '/pay/v1/checkout/payments/123/method', { body: { paymentMethodID: 'nope' } });
    assertError(choose, 400, 'invalid_request_error', 'invalid_payment_id', 'paymentID');
  });

  it('a valid id with a malformed body answers the body’s own error', async () => {
    const { id } = await buildPayment(app, store);
    assertError(
      await app.request('POST', `/v1/payments/${id}/cancel`, { token: store.token, body: { unexpected: true } }),
      400,
      'invalid_request_error',
      'unknown_parameter',
      'unexpected',
    );
  });

  it('refunds: another store’s payment is 404 whatever the body says (the payment is checked before the body)', async () => {
    const { id } = await buildPayment(app, store);
    const response = await app.request('POST', `/v1/payments/${id}/refunds`, { token: other.token, body: { nonsense: 1 } });
    assertError(response, 404, 'not_found_error', 'payment_not_found');
  });

  it('authentication comes first: a malformed id without a token is 401', async () => {
    assertError(await app.request('GET', '/v1/payments/123'), 401, 'authentication_error', 'auth_invalid');
    assertError(await app.request('POST', '/v1/payments/123/cancel', { body: {} }), 401, 'authentication_error', 'auth_invalid');
  });
});

describe('a payment id in upper case is the same payment', () => {
  it('is answered with the lower-case id, by the merchant routes and the checkout', async () => {
    const { id } = await buildPayment(app, store);
    const upper = id.toUpperCase();
    const merchant = await app.request('GET', `/v1/payments/${upper}`, { token: store.token });
    assert.equal(merchant.status, 200, merchant.text);
    assert.equal(merchant.json.id, id);
    const status = await app.request('GET', `/v1/payments/${upper}/status`, { token: store.token });
    assert.deepEqual(status.json, { id, status: 'pending' });
    const checkout = await app.request('GET', `/pay/v1/checkout/payments/${upper}`);
    assert.equal(checkout.status, 200, checkout.text);
    assert.equal(checkout.json.id, id);
  });

  it('scopes an idempotency key to the lower-case id: a cancel by the upper-case id replays the one by the lower-case id', async () => {
    const { id } = await buildPayment(app, store);
    const key = crypto.randomUUID();
    const first = await app.request('POST', `/v1/payments/${id}/cancel`, { token: store.token, headers: { 'X-Idempotency-Key': key } });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const again = await app.request('POST', `/v1/payments/${id.toUpperCase()}/cancel`, { token: store.token, headers: { 'X-Idempotency-Key': key } });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.text, first.text);
  });

  it('an X-Idempotency-Key that is not a UUID is refused after the body was validated', async () => {
    const { id } = await buildPayment(app, store);
    const headers = { 'X-Idempotency-Key': 'not-a-uuid' };
    assertError(
      await app.request('POST', `/v1/payments/${id}/cancel`, { token: store.token, headers, body: { unexpected: true } }),
      400,
      'invalid_request_error',
      'unknown_parameter',
      'unexpected',
    );
    assertError(
      await app.request('POST', `/v1/payments/${id}/cancel`, { token: store.token, headers }),
      400,
      'invalid_request_error',
      'invalid_idempotency_key',
      'X-Idempotency-Key',
    );
  });
});

describe('query parameters are validated by JSON Schema', () => {
  it('the checkout’s TON Connect request: account missing, repeated or not an address is 400 invalid_address; other parameters are left alone', async () => {
    const { id } = await buildPayment(app, store);
    const base = `/pay/v1/checkout/payments/${id}/ton-connect`;
    for (const query of ['', '?account=', '?account=x&account=y', '?account=not-an-address', '?account=x&unrelated=1']) {
      const response = await app.request('GET', `${base}${query}`);
      assertError(response, 400, 'invalid_request_error', 'invalid_address', 'account');
      assert.equal(response.json.error.message, 'account must be a basechain (workchain 0) TON address, raw (0:<64 hex>) or user-friendly.');
      assert.equal(response.headers.get('cache-control'), 'no-store');
    }
  });

  it('the payment list: an unknown parameter is unknown_parameter, a repeated one its own code', async () => {
    assertError(await app.request('GET', '/v1/payments?colour=blue', { token: store.token }), 400, 'invalid_request_error', 'unknown_parameter', 'colour');
    assertError(await app.request('GET', '/v1/payments?limit=1&limit=2', { token: store.token }), 400, 'invalid_request_error', 'invalid_limit', 'limit');
  });
});

describe("a body field's error code is its route schema's (errorCode), not its name's", () => {
  it('a `coin` is invalid_coin in a refund, invalid_payment_options inside a payment, invalid_request in a sandbox transfer', () => {
    assert.equal(codeAt(createRefundSchema, ['coin']), 'invalid_coin');
    assert.equal(codeAt(createPaymentSchema, ['payment_options', 'methods', '0', 'coin']), 'invalid_payment_options');
    assert.equal(codeAt(transferSchema, ['coin']), undefined, 'no code of its own: invalid_request');
    assert.equal(codeAt(createPaymentSchema, ['metadata', 'color']), 'invalid_metadata', 'a field inside another takes the outer code');
    assert.equal(codeAt(createPaymentSchema, ['constructor']), undefined, "Object.prototype's names are no fields");
    // A code that is not the catalogue's is refused when the route is installed.
    assert.throws(() => validate({ body: { type: 'object', properties: { coin: { type: 'string', errorCode: 'no_such_code' } } } }), /errorCode/);
    assert.throws(
      () => validate({ query: { schema: { type: 'object', additionalProperties: false, properties: { n: { errorCode: 'nope' } } } } }),
      /errorCode/,
    );
  });

  it("every route's schemas compile (validators compile on first use; this compiles the app's all)", () => {
    // The app of this file installed every route: each of its schemas compiles under ajv's strict mode.
    const count = compileEveryValidator();
    assert.ok(count >= 30, `the installed routes declared their schemas (${count})`);
  });

  it('a malformed coin, by its schema or by the unsafe-text rule before the route, answers the code of the route it was sent to', async () => {
    const { id } = await buildPayment(app, store);
    const refund = (coin: unknown) => app.request('POST', `/v1/payments/${id}/refunds`, { token: store.token, body: { coin, amount: '1', address: 'payer' } });
    for (const coin of [5, '', 'C'.repeat(17), 'TON\u0000']) assertError(await refund(coin), 400, 'invalid_request_error', 'invalid_coin', 'coin');
    const unknown = await refund('XYZ');
    assertError(unknown, 400, 'invalid_request_error', 'invalid_coin', 'coin');
    assert.equal(unknown.json.error.message, (await refund(5)).json.error.message, 'one code, one text: malformed or unknown');
    const payment = (coin: unknown) =>
      app.request('POST', '/v1/payments', {
        token: store.token,
        body: { amount: '1', currency: 'TON', payment_options: { methods: [{ coin, chain: 'TON' }] } },
      });
    for (const coin of [5, 'C'.repeat(33), 'TON\u0000']) {
      assertError(await payment(coin), 400, 'invalid_request_error', 'invalid_payment_options', 'payment_options.methods[0].coin');
    }
  });

  it("every text a code says is the catalogue's: the same failure in two routes reads the same", async () => {
    const { id } = await buildPayment(app, store);
    const refund = await app.request('POST', `/v1/payments/${id}/refunds`, { token: store.token, body: { coin: 'TON', amount: '01', address: 'payer' } });
    const payment = await app.request('POST', '/v1/payments', { token: store.token, body: { amount: '01', currency: 'TON' } });
    assertError(refund, 400, 'invalid_request_error', 'invalid_amount', 'amount');
    assertError(payment, 400, 'invalid_request_error', 'invalid_amount', 'amount');
    assert.equal(refund.json.error.message, payment.json.error.message);
    assert.match(payment.json.error.message, /^amount must be a positive decimal string/);
  });
});
