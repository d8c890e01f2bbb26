// POST /v1/payments and the invoice-type variant, reads, cancel and list, against the real app and
// real Postgres.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { issueToken, revokeToken } from '../../src/auth/tokens.ts';
import { sql, z } from '../../src/db/pool.ts';
import type { TestApp } from '../helpers/app.ts';
import { setTestPaymentStatus } from '../helpers/factories.ts';
import { assertError, startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;
let store: Awaited<ReturnType<TestApp['store']>>;
let other: Awaited<ReturnType<TestApp['store']>>;

before(async () => {
  app = await startPaymentsApp({ env: { CHECKOUT_BASE_URL: 'https://pay.example.com/c' } });
  store = await app.store({ name: 'Main', methods: 'TON/TON,USDT/TON' });
  other = await app.store({ name: 'Other', methods: 'TON/TON,USDT/TON,NOT/TON' });
});
after(() => app.close());

const create = (body: unknown, headers: Record<string, string> = {}, token = store.token) => app.request('POST', '/v1/payments', { token, body, headers });
const USDT_TON = { methods: [{ coin: 'USDT', chain: 'TON' }] };
const TON_TON = { methods: [{ coin: 'TON', chain: 'TON' }] };

describe('POST /v1/payments: currency and method combinations (seed table)', () => {
  it('USD, Customer Choice → 201 created without paymentDetails', async () => {
    const before = Date.now();
    const response = await create({ amount: '10.50', currency: 'USD' });
    assert.equal(response.status, 201, response.text);
    const payment = response.json;
    assert.match(payment.id, /^[0-9a-f-]{36}$/);
    assert.equal(payment.status, 'created');
    assert.equal(payment.amount, '10.50');
    assert.equal(payment.currency, 'USD');
    assert.equal(payment.checkoutURL, `https://pay.example.com/c/${payment.id}`);
    assert.equal(payment.paymentDetails, undefined);
    assert.deepEqual(payment.metadata, {});
    assert.deepEqual(Object.keys(payment.timer), ['createdAt', 'expiresAt']);
    const created = Date.parse(payment.timer.createdAt);
    assert.ok(created >= before - 1000 && created <= Date.now() + 1000);
    assert.equal(Date.parse(payment.timer.expiresAt) - created, 3600_000);
    assert.match(payment.timer.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
  });

  it('TON, Customer Choice → created', async () => {
    const response = await create({ amount: '2', currency: 'TON' });
    assert.equal(response.status, 201, response.text);
    assert.equal(response.json.status, 'created');
    assert.equal(response.json.paymentDetails, undefined);
  });

  it('USD with USDT/TON → pending with paymentDetails at once', async () => {
    const response = await create({ amount: '10.50', currency: 'USD', payment_options: USDT_TON });
    assert.equal(response.status, 201, response.text);
    const payment = response.json;
    assert.equal(payment.status, 'pending');
    assert.equal(payment.amount, '10.50');
    const details = payment.paymentDetails;
    assert.deepEqual(Object.keys(details), ['address', 'coinAmount', 'coin', 'chain', 'receivedAmount']);
    assert.equal(details.receivedAmount, '0');
    assert.match(details.address, /^UQ[A-Za-z0-9_-]{46}$/, 'non-bounceable mainnet-form address');
    assert.equal(details.coinAmount, '10.5');
    assert.deepEqual(details.coin, { name: 'Tether USD', symbol: 'USDT', imgUrl: 'https://pay.example.com/c/assets/coins/USDT.svg' });
    assert.deepEqual(details.chain, { name: 'TON', symbol: 'TON', imgUrl: 'https://pay.example.com/c/assets/chains/TON.svg' });
    assert.equal(details.transactionSignatures, undefined);
  });

  it('TON with USDT/TON → pending, priced at the TON/USDT rate', async () => {
    const response = await create({ amount: '3', currency: 'TON', payment_options: USDT_TON });
    assert.equal(response.status, 201, response.text);
    assert.equal(response.json.status, 'pending');
    assert.equal(response.json.paymentDetails.coinAmount, '15');
  });

  it('TON with TON/TON → pending, coinAmount is the amount itself', async () => {
    const response = await create({ amount: '1.25', currency: 'TON', payment_options: TON_TON });
    assert.equal(response.status, 201, response.text);
    assert.equal(response.json.status, 'pending');
    assert.equal(response.json.paymentDetails.coinAmount, '1.25');
    assert.equal(response.json.paymentDetails.coin.symbol, 'TON');
  });

  it('other pairs work when a rate exists (EUR → TON)', async () => {
    const response = await create({ amount: '10', currency: 'EUR', payment_options: TON_TON });
    assert.equal(response.status, 201, response.text);
    assert.equal(response.json.paymentDetails.coinAmount, '2.16');
  });

  it('gives every pending payment its own deposit address, stored with its derivation index', async () => {
    const a = await create({ amount: '1', currency: 'TON', payment_options: TON_TON });
    const b = await create({ amount: '1', currency: 'TON', payment_options: TON_TON });
    assert.notEqual(a.json.paymentDetails.address, b.json.paymentDetails.address);
    const rows = await app.pool.any(sql.type(z.object({ payment_id: z.string(), derivation_index: z.string(), address: z.string(), network: z.string() }))`
      select payment_id, derivation_index::text, address, network from deposit_addresses where payment_id in (${a.json.id}, ${b.json.id})
    `);
    assert.equal(rows.length, 2);
    assert.notEqual(rows[0]!.derivation_index, rows[1]!.derivation_index);
    for (const row of rows) {
      assert.match(row.address, /^0:[0-9a-f]{64}$/);
      assert.equal(row.network, 'sandbox');
    }
  });

  it('keeps optional fields and echoes them', async () => {
    const response = await create({
      amount: '5',
      currency: 'USD',
      order_id: 'A-1',
      description: 'Two coffees',
      metadata: { table: '7', note: '' },
      ttl: 900,
      webhookURL: 'https://hooks.example.com/kassa',
      returnURL: 'https://shop.example.com/thanks',
    });
    assert.equal(response.status, 201, response.text);
    assert.equal(response.json.order_id, 'A-1');
    assert.equal(response.json.description, 'Two coffees');
    assert.deepEqual(response.json.metadata, { table: '7', note: '' });
    assert.equal(response.json.returnURL, 'https://shop.example.com/thanks');
    assert.equal(Date.parse(response.json.timer.expiresAt) - Date.parse(response.json.timer.createdAt), 900_000);
    const stored = await app.pool.one(
      sql.type(z.object({ webhook_url: z.string(), created_via: z.string() }))`select webhook_url, created_via from payments where id = ${response.json.id}`,
    );
    assert.deepEqual(stored, { webhook_url: 'https://hooks.example.com/kassa', created_via: 'payments' });
  });
});

describe('POST /v1/payments: validation (every rule its own code and param)', () => {
  const rows: Array<[string, unknown, number, string, string, string | undefined]> = [
    ['missing amount', { currency: 'USD' }, 400, 'invalid_request_error', 'missing_parameter', 'amount'],
    ['missing currency', { amount: '1' }, 400, 'invalid_request_error', 'missing_parameter', 'currency'],
    ['amount as a number', { amount: 10, currency: 'USD' }, 400, 'invalid_request_error', 'invalid_amount', 'amount'],
    ['amount with a leading zero', { amount: '010', currency: 'USD' }, 400, 'invalid_request_error', 'invalid_amount', 'amount'],
    ['amount zero', { amount: '0', currency: 'USD' }, 400, 'invalid_request_error', 'invalid_amount', 'amount'],
    ['amount 0.00', { amount: '0.00', currency: 'USD' }, 400, 'invalid_request_error', 'invalid_amount', 'amount'],
    ['negative amount', { amount: '-1', currency: 'USD' }, 400, 'invalid_request_error', 'invalid_amount', 'amount'],
    ['amount with exponent', { amount: '1e3', currency: 'USD' }, 400, 'invalid_request_error', 'invalid_amount', 'amount'],
    ['amount ending in a point', { amount: '1.', currency: 'USD' }, 400, 'invalid_request_error', 'invalid_amount', 'amount'],
    ['USDT amount beyond 6 decimals', { amount: '1.1234567', currency: 'USDT' }, 400, 'invalid_request_error', 'invalid_amount', 'amount'],
    ['TON amount beyond 9 decimals', { amount: '1.0000000001', currency: 'TON' }, 400, 'invalid_request_error', 'invalid_amount', 'amount'],
    ['unknown currency', { amount: '1', currency: 'GBP' }, 404, 'not_found_error', 'currency_not_found', 'currency'],
    ['lower-case currency', { amount: '1', currency: 'usd' }, 404, 'not_found_error', 'currency_not_found', 'currency'],
    [
      'two methods',
      {
        amount: '1',
        currency: 'USD',
        payment_options: {
          methods: [
            { coin: 'USDT', chain: 'TON' },
            { coin: 'TON', chain: 'TON' },
          ],
        },
      },
      400,
      'invalid_request_error',
      'invalid_payment_options',
      'payment_options.methods',
    ],
    [
      'no methods',
      { amount: '1', currency: 'USD', payment_options: { methods: [] } },
      400,
      'invalid_request_error',
      'invalid_payment_options',
      'payment_options.methods',
    ],
    [
      'method without chain',
      { amount: '1', currency: 'USD', payment_options: { methods: [{ coin: 'USDT' }] } },
      400,
      'invalid_request_error',
      'invalid_payment_options',
      'payment_options.methods[0].chain',
    ],
    [
      'methods not an array',
      { amount: '1', currency: 'USD', payment_options: { methods: 'USDT' } },
      400,
      'invalid_request_error',
      'invalid_payment_options',
      'payment_options.methods',
    ],
    [
      'lower-case coin symbol',
      { amount: '1', currency: 'USD', payment_options: { methods: [{ coin: 'usdt', chain: 'TON' }] } },
      404,
      'not_found_error',
      'payment_method_not_found',
      'payment_options.methods',
    ],
    [
      'method not enabled for the store',
      { amount: '1', currency: 'USD', payment_options: { methods: [{ coin: 'NOT', chain: 'TON' }] } },
      404,
      'not_found_error',
      'payment_method_not_found',
      'payment_options.methods',
    ],
    ['ttl below 900', { amount: '1', currency: 'USD', ttl: 899 }, 400, 'invalid_request_error', 'invalid_ttl', 'ttl'],
    ['ttl above 43200', { amount: '1', currency: 'USD', ttl: 43201 }, 400, 'invalid_request_error', 'invalid_ttl', 'ttl'],
    ['ttl not an integer', { amount: '1', currency: 'USD', ttl: 1000.5 }, 400, 'invalid_request_error', 'invalid_ttl', 'ttl'],
    ['ttl as a string', { amount: '1', currency: 'USD', ttl: '1000' }, 400, 'invalid_request_error', 'invalid_ttl', 'ttl'],
    ['order_id over 128', { amount: '1', currency: 'USD', order_id: 'x'.repeat(129) }, 400, 'invalid_request_error', 'invalid_order_id', 'order_id'],
    ['order_id not a string', { amount: '1', currency: 'USD', order_id: 5 }, 400, 'invalid_request_error', 'invalid_order_id', 'order_id'],
    [
      'description over 512',
      { amount: '1', currency: 'USD', description: 'x'.repeat(513) },
      400,
      'invalid_request_error',
      'invalid_description',
      'description',
    ],
    [
      'metadata with 11 keys',
      { amount: '1', currency: 'USD', metadata: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'v'])) },
      400,
      'invalid_request_error',
      'invalid_metadata',
      'metadata',
    ],
    [
      'metadata key over 64',
      { amount: '1', currency: 'USD', metadata: { ['k'.repeat(65)]: 'v' } },
      400,
      'invalid_request_error',
      'invalid_metadata',
      'metadata',
    ],
    [
      'metadata value over 512',
      { amount: '1', currency: 'USD', metadata: { color: 'x'.repeat(513) } },
      400,
      'invalid_request_error',
      'invalid_metadata',
      'metadata.color',
    ],
    [
      'metadata value not a string',
      { amount: '1', currency: 'USD', metadata: { color: 1 } },
      400,
      'invalid_request_error',
      'invalid_metadata',
      'metadata.color',
    ],
    ['metadata not an object', { amount: '1', currency: 'USD', metadata: ['a'] }, 400, 'invalid_request_error', 'invalid_metadata', 'metadata'],
    [
      'webhookURL over http',
      { amount: '1', currency: 'USD', webhookURL: 'http://hooks.example.com/x' },
      400,
      'invalid_request_error',
      'invalid_webhook_url',
      'webhookURL',
    ],
    [
      'webhookURL to localhost',
      { amount: '1', currency: 'USD', webhookURL: 'https://localhost/x' },
      400,
      'invalid_request_error',
      'invalid_webhook_url',
      'webhookURL',
    ],
    [
      'webhookURL to 127.',
      { amount: '1', currency: 'USD', webhookURL: 'https://127.0.0.1/x' },
      400,
      'invalid_request_error',
      'invalid_webhook_url',
      'webhookURL',
    ],
    [
      'webhookURL to 0.0.0.0',
      { amount: '1', currency: 'USD', webhookURL: 'https://0.0.0.0/x' },
      400,
      'invalid_request_error',
      'invalid_webhook_url',
      'webhookURL',
    ],
    [
      'webhookURL to 10.',
      { amount: '1', currency: 'USD', webhookURL: 'https://10.1.2.3/x' },
      400,
      'invalid_request_error',
      'invalid_webhook_url',
      'webhookURL',
    ],
    [
      'webhookURL to 192.168.',
      { amount: '1', currency: 'USD', webhookURL: 'https://192.168.0.10/x' },
      400,
      'invalid_request_error',
      'invalid_webhook_url',
      'webhookURL',
    ],
    [
      'webhookURL to 172.16',
      { amount: '1', currency: 'USD', webhookURL: 'https://172.16.0.1/x' },
      400,
      'invalid_request_error',
      'invalid_webhook_url',
      'webhookURL',
    ],
    [
      'webhookURL to 172.31',
      { amount: '1', currency: 'USD', webhookURL: 'https://172.31.255.254/x' },
      400,
      'invalid_request_error',
      'invalid_webhook_url',
      'webhookURL',
    ],
    [
      'webhookURL to IPv6 loopback',
      { amount: '1', currency: 'USD', webhookURL: 'https://[::1]/x' },
      400,
      'invalid_request_error',
      'invalid_webhook_url',
      'webhookURL',
    ],
    [
      'webhookURL to IPv6 link-local',
      { amount: '1', currency: 'USD', webhookURL: 'https://[fe80::1]/x' },
      400,
      'invalid_request_error',
      'invalid_webhook_url',
      'webhookURL',
    ],
    [
      'webhookURL to IPv6 unique-local',
      { amount: '1', currency: 'USD', webhookURL: 'https://[fd12:3456::1]/x' },
      400,
      'invalid_request_error',
      'invalid_webhook_url',
      'webhookURL',
    ],
    [
      'webhookURL with credentials',
      { amount: '1', currency: 'USD', webhookURL: 'https://user:pass@hooks.example.com/x' },
      400,
      'invalid_request_error',
      'invalid_webhook_url',
      'webhookURL',
    ],
    [
      'webhookURL over 512',
      { amount: '1', currency: 'USD', webhookURL: `https://hooks.example.com/${'x'.repeat(490)}` },
      400,
      'invalid_request_error',
      'invalid_webhook_url',
      'webhookURL',
    ],
    ['webhookURL not a URL', { amount: '1', currency: 'USD', webhookURL: 'hooks' }, 400, 'invalid_request_error', 'invalid_webhook_url', 'webhookURL'],
    [
      'returnURL to a private address',
      { amount: '1', currency: 'USD', returnURL: 'https://10.0.0.1/' },
      400,
      'invalid_request_error',
      'invalid_return_url',
      'returnURL',
    ],
    [
      'unknown field (a typo of webhookURL)',
      { amount: '1', currency: 'USD', webhookUrl: 'https://hooks.example.com/x' },
      400,
      'invalid_request_error',
      'unknown_parameter',
      'webhookUrl',
    ],
    [
      'unknown field in payment_options',
      { amount: '1', currency: 'USD', payment_options: { method: [] } },
      400,
      'invalid_request_error',
      'unknown_parameter',
      'payment_options.method',
    ],
  ];
  for (const [name, body, status, type, code, param] of rows) {
    it(`${name} → ${status} ${code}`, async () => {
      assertError(await create(body), status, type, code, param);
    });
  }

  it('webhookURL of exactly 512 characters is accepted', async () => {
    const url = `https://hooks.example.com/${'x'.repeat(512 - 'https://hooks.example.com/'.length)}`;
    assert.equal(url.length, 512);
    assert.equal((await create({ amount: '1', currency: 'USD', webhookURL: url })).status, 201);
  });

  it('refuses a body that is not an object', async () => {
    assertError(
      await app.request('POST', '/v1/payments', { token: store.token, rawBody: '[1]', headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_request_error',
      'invalid_json',
    );
  });

  it('needs a token', async () => {
    assertError(await app.request('POST', '/v1/payments', { body: { amount: '1', currency: 'USD' } }), 401, 'authentication_error', 'auth_invalid');
  });
});

describe('money: coinAmount rounding and rates', () => {
  it('rounds amount × rate up to the coin decimals and stores the rate, its source and time', async () => {
    await app.pool.query(sql.unsafe`update exchange_rates set rate = '0.333333333333' where currency = 'USD' and coin_symbol = 'USDT'`);
    try {
      const response = await create({ amount: '10', currency: 'USD', payment_options: USDT_TON });
      assert.equal(response.status, 201, response.text);
      assert.equal(response.json.paymentDetails.coinAmount, '3.333334');
      const stored = await app.pool.one(sql.type(
        z.object({ exchange_rate: z.string(), exchange_rate_source: z.string(), exchange_rate_at: z.date(), coin_amount: z.string() }),
      )`
        select exchange_rate::text, exchange_rate_source, exchange_rate_at, coin_amount::text from payments where id = ${response.json.id}
      `);
      assert.equal(stored.exchange_rate, '0.333333333333');
      assert.equal(stored.exchange_rate_source, 'fixed');
      assert.equal(stored.coin_amount, '3.333334');
    } finally {
      await app.pool.query(sql.unsafe`update exchange_rates set rate = '1' where currency = 'USD' and coin_symbol = 'USDT'`);
    }
  });

  it('answers rate_unavailable (503) for a stale rate, never a wrong price', async () => {
    await app.pool.query(
      sql.unsafe`update exchange_rates set source = 'tonapi', fetched_at = now() - interval '1 hour' where currency = 'USD' and coin_symbol = 'TON'`,
    );
    try {
      const response = await create({ amount: '10', currency: 'USD', payment_options: TON_TON });
      assertError(response, 503, 'api_error', 'rate_unavailable');
      assert.ok(response.headers.get('retry-after'));
      assert.equal(
        await app.pool.oneFirst(
          sql.type(z.object({ n: z.number() }))`select count(*)::int as n from payments where amount = 10 and currency = 'USD' and coin_symbol = 'TON'`,
        ),
        0,
      );
    } finally {
      await app.pool.query(sql.unsafe`update exchange_rates set source = 'fixed', fetched_at = now() where currency = 'USD' and coin_symbol = 'TON'`);
    }
  });

  it('answers unsupported_payment_method for a coin pair without any rate', async () => {
    await app.pool.query(sql.unsafe`delete from exchange_rates where currency = 'NOT' and coin_symbol = 'TON'`);
    assertError(
      await create({ amount: '100', currency: 'NOT', payment_options: TON_TON }),
      400,
      'invalid_request_error',
      'unsupported_payment_method',
      'payment_options.methods',
    );
  });
});

describe('idempotency (X-Idempotency-Key)', () => {
  const body = { amount: '7', currency: 'USD', payment_options: USDT_TON };
  const countByOrder = (orderId: string) =>
    app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from payments where order_id = ${orderId}`);

  it('replays the first response for the same key and body, creating one payment', async () => {
    const key = crypto.randomUUID();
    const first = await create({ ...body, order_id: 'idem-1' }, { 'x-idempotency-key': key });
    const second = await create({ ...body, order_id: 'idem-1' }, { 'x-idempotency-key': key });
    assert.equal(first.status, 201);
    assert.equal(second.status, 201);
    assert.equal(second.text, first.text);
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.equal(first.headers.get('idempotent-replayed'), null);
    assert.equal(await countByOrder('idem-1'), 1);
  });

  it('treats the same members in another order as the same body', async () => {
    const key = crypto.randomUUID();
    const first = await create({ amount: '1', currency: 'USD', order_id: 'idem-order' }, { 'x-idempotency-key': key });
    const second = await create({ order_id: 'idem-order', currency: 'USD', amount: '1' }, { 'x-idempotency-key': key });
    assert.equal(second.text, first.text);
  });

  it('refuses the same key with another body (422)', async () => {
    const key = crypto.randomUUID();
    await create({ ...body, order_id: 'idem-2' }, { 'x-idempotency-key': key });
    assertError(
      await create({ ...body, order_id: 'idem-2', amount: '8' }, { 'x-idempotency-key': key }),
      422,
      'invalid_request_error',
      'idempotency_key_reused',
      'X-Idempotency-Key',
    );
  });

  it('refuses a key that is not a UUID', async () => {
    assertError(await create(body, { 'x-idempotency-key': 'not-a-uuid' }), 400, 'invalid_request_error', 'invalid_idempotency_key', 'X-Idempotency-Key');
  });

  it('keeps only successful responses: a failed request may be retried with the same key', async () => {
    const key = crypto.randomUUID();
    assertError(
      await create(
        { amount: '1', currency: 'USD', payment_options: { methods: [{ coin: 'NOT', chain: 'TON' }] }, order_id: 'idem-3' },
        { 'x-idempotency-key': key },
      ),
      404,
      'not_found_error',
      'payment_method_not_found',
      'payment_options.methods',
    );
    const retried = await create({ amount: '1', currency: 'USD', order_id: 'idem-3' }, { 'x-idempotency-key': key });
    assert.equal(retried.status, 201, retried.text);
    assert.equal(retried.headers.get('idempotent-replayed'), null);
  });

  it('scopes keys to the store and the endpoint', async () => {
    const key = crypto.randomUUID();
    const mine = await create({ ...body, order_id: 'idem-4' }, { 'x-idempotency-key': key });
    const theirs = await create({ ...body, order_id: 'idem-4' }, { 'x-idempotency-key': key }, other.token);
    assert.equal(theirs.status, 201);
    assert.notEqual(theirs.json.id, mine.json.id);
    const invoice = await app.request('POST', '/v1/payments/create', {
      token: store.token,
      headers: { 'x-idempotency-key': key },
      body: { invoiceType: 'FIAT', fiatAmount: '1', fiatCurrency: 'USD' },
    });
    assert.equal(invoice.status, 201, invoice.text);
  });

  it('a burst of 20 identical concurrent requests creates one payment and all get its response', async () => {
    const key = crypto.randomUUID();
    const responses = await Promise.all(Array.from({ length: 20 }, () => create({ ...body, order_id: 'idem-burst' }, { 'x-idempotency-key': key })));
    for (const response of responses) {
      assert.equal(response.status, 201, response.text);
      assert.equal(response.text, responses[0]!.text);
    }
    assert.equal(responses.filter((r) => r.headers.get('idempotent-replayed') === 'true').length, 19);
    assert.equal(await countByOrder('idem-burst'), 1);
  });

  it('expires keys after 24 hours', async () => {
    const key = crypto.randomUUID();
    const first = await create({ ...body, order_id: 'idem-5' }, { 'x-idempotency-key': key });
    await app.pool.query(sql.unsafe`update idempotency_keys set created_at = now() - interval '25 hours' where idempotency_key = ${key}`);
    const second = await create({ ...body, order_id: 'idem-5' }, { 'x-idempotency-key': key });
    assert.equal(second.status, 201);
    assert.notEqual(second.json.id, first.json.id);
  });
});

describe('reads', () => {
  let payment: any;
  before(async () => {
    payment = (await create({ amount: '3', currency: 'USD', payment_options: USDT_TON, order_id: 'read-1' })).json;
  });

  it('GET /v1/payments/{id} returns the full payment', async () => {
    const response = await app.request('GET', `/v1/payments/${payment.id}`, { token: store.token });
    assert.equal(response.status, 200);
    assert.deepEqual(response.json, payment);
  });

  it('GET /v1/payments/{id}/status returns id and status', async () => {
    const response = await app.request('GET', `/v1/payments/${payment.id}/status`, { token: store.token });
    assert.equal(response.status, 200);
    assert.deepEqual(response.json, { id: payment.id, status: 'pending' });
  });

  it('refuses an id that is not a UUID', async () => {
    assertError(await app.request('GET', '/v1/payments/123', { token: store.token }), 400, 'invalid_request_error', 'invalid_payment_id', 'paymentID');
    assertError(await app.request('GET', '/v1/payments/123/status', { token: store.token }), 400, 'invalid_request_error', 'invalid_payment_id', 'paymentID');
  });

  it("an unknown id and another store's payment are both 404 payment_not_found", async () => {
    assertError(await app.request('GET', `/v1/payments/${crypto.randomUUID()}`, { token: store.token }), 404, 'not_found_error', 'payment_not_found');
    assertError(await app.request('GET', `/v1/payments/${payment.id}`, { token: other.token }), 404, 'not_found_error', 'payment_not_found');
    assertError(await app.request('GET', `/v1/payments/${payment.id}/status`, { token: other.token }), 404, 'not_found_error', 'payment_not_found');
    assertError(await app.request('POST', `/v1/payments/${payment.id}/cancel`, { token: other.token }), 404, 'not_found_error', 'payment_not_found');
  });

  it("lists the store's payment methods at both paths", async () => {
    const a = await app.request('GET', '/v1/payment-methods', { token: store.token });
    const b = await app.request('GET', '/v1/payments/methods', { token: store.token });
    assert.equal(a.status, 200);
    assert.deepEqual(a.json, b.json);
    assert.deepEqual(
      a.json.data.map((m: any) => m.coin.symbol),
      ['TON', 'USDT'],
    );
    const usdt = a.json.data.find((m: any) => m.coin.symbol === 'USDT');
    assert.deepEqual(Object.keys(usdt), ['id', 'coin', 'chain']);
    assert.equal(usdt.coin.decimals, 6);
    assert.equal(usdt.chain.symbol, 'TON');
  });
});

describe('cancel', () => {
  const setStatus = (id: string, status: 'completed' | 'expired') => setTestPaymentStatus(app, id, status);

  it('created → cancelled, without paymentDetails', async () => {
    const payment = (await create({ amount: '1', currency: 'USD' })).json;
    const response = await app.request('POST', `/v1/payments/${payment.id}/cancel`, { token: store.token });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.json.status, 'cancelled');
    assert.equal(response.json.paymentDetails, undefined);
  });

  it('pending → cancelled, paymentDetails remain; no job is left behind', async () => {
    const payment = (await create({ amount: '1', currency: 'USD', payment_options: USDT_TON })).json;
    const response = await app.request('POST', `/v1/payments/${payment.id}/cancel`, { token: store.token, body: {} });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.json.status, 'cancelled');
    assert.deepEqual(response.json.paymentDetails, payment.paymentDetails);
    const jobs = await app.pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`select count(*)::int as n from graphile_worker._private_jobs where payload::text like ${`%${payment.id}%`}`,
    );
    assert.equal(jobs, 0);
  });

  it('cancelled → 200 with the payment again', async () => {
    const payment = (await create({ amount: '1', currency: 'USD' })).json;
    const first = await app.request('POST', `/v1/payments/${payment.id}/cancel`, { token: store.token });
    const second = await app.request('POST', `/v1/payments/${payment.id}/cancel`, { token: store.token });
    assert.equal(second.status, 200);
    assert.deepEqual(second.json, first.json);
  });

  it('completed and expired → 409 payment_not_cancellable', async () => {
    for (const status of ['completed', 'expired'] as const) {
      const payment = (await create({ amount: '1', currency: 'USD', payment_options: USDT_TON })).json;
      await setStatus(payment.id, status);
      assertError(
        await app.request('POST', `/v1/payments/${payment.id}/cancel`, { token: store.token }),
        409,
        'invalid_request_error',
        'payment_not_cancellable',
      );
      const still = await app.request('GET', `/v1/payments/${payment.id}/status`, { token: store.token });
      assert.equal(still.json.status, status);
    }
  });

  it('refuses a body with unknown fields and honours idempotency keys', async () => {
    const payment = (await create({ amount: '1', currency: 'USD' })).json;
    assertError(
      await app.request('POST', `/v1/payments/${payment.id}/cancel`, { token: store.token, body: { reason: 'x' } }),
      400,
      'invalid_request_error',
      'unknown_parameter',
      'reason',
    );
    const key = crypto.randomUUID();
    const first = await app.request('POST', `/v1/payments/${payment.id}/cancel`, { token: store.token, headers: { 'x-idempotency-key': key } });
    const second = await app.request('POST', `/v1/payments/${payment.id}/cancel`, { token: store.token, headers: { 'x-idempotency-key': key } });
    assert.equal(second.text, first.text);
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
  });
});

describe('POST /v1/payments/create (invoice-type variant)', () => {
  const invoice = (body: unknown, token = store.token) => app.request('POST', '/v1/payments/create', { token, body });
  let methods: Record<string, string>;
  before(async () => {
    const list = await app.request('GET', '/v1/payments/methods', { token: store.token });
    methods = Object.fromEntries(list.json.data.map((m: any) => [m.coin.symbol, m.id]));
  });

  it('FIAT without a method (rule 1): created, the customer chooses', async () => {
    const response = await invoice({ invoiceType: 'FIAT', fiatAmount: '12.00', fiatCurrency: 'EUR' });
    assert.equal(response.status, 201, response.text);
    assert.deepEqual(Object.keys(response.json), ['paymentID', 'checkoutURL']);
    assert.equal(response.json.checkoutURL, `https://pay.example.com/c/${response.json.paymentID}`);
    const payment = (await app.request('GET', `/v1/payments/${response.json.paymentID}`, { token: store.token })).json;
    assert.equal(payment.status, 'created');
    assert.equal(payment.amount, '12.00');
    assert.equal(payment.currency, 'EUR');
  });

  it('FIAT with a method (rule 2): priced at the current rate and locked to it', async () => {
    const response = await invoice({ invoiceType: 'FIAT', fiatAmount: '10', fiatCurrency: 'USD', paymentMethodID: methods.TON });
    assert.equal(response.status, 201, response.text);
    const payment = (await app.request('GET', `/v1/payments/${response.json.paymentID}`, { token: store.token })).json;
    assert.equal(payment.status, 'pending');
    assert.equal(payment.paymentDetails.coinAmount, '2');
    assert.equal(payment.paymentDetails.coin.symbol, 'TON');
  });

  it('CRYPTO (rule 3): the exact cryptoAmount with the given method', async () => {
    const response = await invoice({
      invoiceType: 'CRYPTO',
      cryptoAmount: '25.5',
      paymentMethodID: methods.USDT,
      fiatCurrency: 'USD',
      order_id: 'inv-1',
      metadata: { a: 'b' },
    });
    assert.equal(response.status, 201, response.text);
    const payment = (await app.request('GET', `/v1/payments/${response.json.paymentID}`, { token: store.token })).json;
    assert.equal(payment.status, 'pending');
    assert.equal(payment.amount, '25.5');
    assert.equal(payment.currency, 'USDT');
    assert.equal(payment.paymentDetails.coinAmount, '25.5');
    assert.equal(payment.order_id, 'inv-1');
    assert.deepEqual(payment.metadata, { a: 'b' });
  });

  const rows: Array<[string, unknown, number, string, string, string | undefined]> = [
    [
      'fiatAmount with cryptoAmount (rule 4)',
      { invoiceType: 'FIAT', fiatAmount: '1', fiatCurrency: 'USD', cryptoAmount: '1' },
      400,
      'invalid_request_error',
      'conflicting_amounts',
      'cryptoAmount',
    ],
    ['missing invoiceType', { fiatAmount: '1', fiatCurrency: 'USD' }, 400, 'invalid_request_error', 'missing_parameter', 'invoiceType'],
    ['unknown invoiceType', { invoiceType: 'BARTER' }, 400, 'invalid_request_error', 'invalid_invoice_type', 'invoiceType'],
    ['FIAT without fiatAmount', { invoiceType: 'FIAT', fiatCurrency: 'USD' }, 400, 'invalid_request_error', 'missing_parameter', 'fiatAmount'],
    ['FIAT without fiatCurrency', { invoiceType: 'FIAT', fiatAmount: '1' }, 400, 'invalid_request_error', 'missing_parameter', 'fiatCurrency'],
    [
      'FIAT with a coin as fiatCurrency',
      { invoiceType: 'FIAT', fiatAmount: '1', fiatCurrency: 'TON' },
      404,
      'not_found_error',
      'currency_not_found',
      'fiatCurrency',
    ],
    ['FIAT with a zero amount', { invoiceType: 'FIAT', fiatAmount: '0', fiatCurrency: 'USD' }, 400, 'invalid_request_error', 'invalid_amount', 'fiatAmount'],
    [
      'CRYPTO without cryptoAmount',
      { invoiceType: 'CRYPTO', paymentMethodID: '00000000-0000-4000-8000-000000000000' },
      400,
      'invalid_request_error',
      'missing_parameter',
      'cryptoAmount',
    ],
    [
      'an unknown paymentMethodID',
      { invoiceType: 'CRYPTO', cryptoAmount: '1', paymentMethodID: '00000000-0000-4000-8000-000000000000' },
      404,
      'not_found_error',
      'payment_method_not_found',
      'paymentMethodID',
    ],
    ['CRYPTO without a method', { invoiceType: 'CRYPTO', cryptoAmount: '1' }, 400, 'invalid_request_error', 'missing_parameter', 'paymentMethodID'],
    [
      'a paymentMethodID that is not a UUID',
      { invoiceType: 'CRYPTO', cryptoAmount: '1', paymentMethodID: 'TON' },
      400,
      'invalid_request_error',
      'invalid_payment_method_id',
      'paymentMethodID',
    ],
    [
      'an unknown field',
      { invoiceType: 'FIAT', fiatAmount: '1', fiatCurrency: 'USD', amount: '1' },
      400,
      'invalid_request_error',
      'unknown_parameter',
      'amount',
    ],
    ['a bad ttl', { invoiceType: 'FIAT', fiatAmount: '1', fiatCurrency: 'USD', ttl: 5 }, 400, 'invalid_request_error', 'invalid_ttl', 'ttl'],
    [
      'a bad webhookURL',
      { invoiceType: 'FIAT', fiatAmount: '1', fiatCurrency: 'USD', webhookURL: 'https://192.168.1.1/' },
      400,
      'invalid_request_error',
      'invalid_webhook_url',
      'webhookURL',
    ],
  ];
  for (const [name, body, status, type, code, param] of rows) {
    it(`${name} → ${status} ${code}`, async () => {
      assertError(await invoice(body), status, type, code, param);
    });
  }

  it('CRYPTO amounts beyond the coin precision and methods of other stores are refused', async () => {
    assertError(
      await invoice({ invoiceType: 'CRYPTO', cryptoAmount: '1.0000001', paymentMethodID: methods.USDT }),
      400,
      'invalid_request_error',
      'invalid_amount',
      'cryptoAmount',
    );
    const list = await app.request('GET', '/v1/payments/methods', { token: other.token });
    const notId = list.json.data.find((m: any) => m.coin.symbol === 'NOT').id;
    assertError(
      await invoice({ invoiceType: 'CRYPTO', cryptoAmount: '1', paymentMethodID: notId }),
      404,
      'not_found_error',
      'payment_method_not_found',
      'paymentMethodID',
    );
  });
});

describe('GET /v1/payments (list)', () => {
  let lister: Awaited<ReturnType<TestApp['store']>>;
  const ids: string[] = [];
  before(async () => {
    lister = await app.store({ name: 'Lister' });
    for (let i = 0; i < 5; i += 1) {
      ids.push((await create({ amount: `${i + 1}`, currency: 'USD', ...(i % 2 ? { payment_options: USDT_TON } : {}) }, {}, lister.token)).json.id);
    }
  });
  const list = (query: string) => app.request('GET', `/v1/payments${query}`, { token: lister.token });

  it('lists newest first with cursor pagination', async () => {
    const first = await list('?limit=2');
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(
      first.json.data.map((p: any) => p.id),
      [ids[4], ids[3]],
    );
    assert.equal(first.json.has_more, true);
    const second = await list(`?limit=2&starting_after=${ids[3]}`);
    assert.deepEqual(
      second.json.data.map((p: any) => p.id),
      [ids[2], ids[1]],
    );
    const third = await list(`?limit=2&starting_after=${ids[1]}`);
    assert.deepEqual(
      third.json.data.map((p: any) => p.id),
      [ids[0]],
    );
    assert.equal(third.json.has_more, false);
  });

  it("filters by status and created_after, and shows only the store's payments", async () => {
    const pending = await list('?status=pending');
    assert.deepEqual(
      pending.json.data.map((p: any) => p.id),
      [ids[3], ids[1]],
    );
    const all = await list('');
    assert.equal(all.json.data.length, 5);
    const recent = await list(`?created_after=${encodeURIComponent(all.json.data[2].timer.createdAt)}`);
    assert.deepEqual(
      recent.json.data.map((p: any) => p.id),
      [ids[4], ids[3]],
    );
  });

  it("finds the store's payments by order_id (exactly, newest first, paginated), never another store's", async () => {
    const other = await app.store({ name: 'Other lister' });
    const order = `order-${crypto.randomUUID()}`;
    const first = (await create({ amount: '1', currency: 'USD', order_id: order }, {}, lister.token)).json.id;
    const second = (await create({ amount: '2', currency: 'USD', order_id: order }, {}, lister.token)).json.id;
    await create({ amount: '3', currency: 'USD', order_id: `${order}-2` }, {}, lister.token);
    await create({ amount: '4', currency: 'USD', order_id: order }, {}, other.token);
    const found = await list(`?order_id=${encodeURIComponent(order)}`);
    assert.equal(found.status, 200, found.text);
    assert.deepEqual(
      found.json.data.map((p: any) => [p.id, p.order_id]),
      [
        [second, order],
        [first, order],
      ],
    );
    const page = await list(`?order_id=${encodeURIComponent(order)}&limit=1&starting_after=${second}`);
    assert.deepEqual(
      page.json.data.map((p: any) => p.id),
      [first],
    );
    assert.equal(page.json.has_more, false);
    assert.deepEqual((await list(`?order_id=${encodeURIComponent(order.toUpperCase())}`)).json.data, []);
    assert.deepEqual((await list(`?order_id=${encodeURIComponent(order)}&status=completed`)).json.data, []);
    assertError(await list('?order_id='), 400, 'invalid_request_error', 'invalid_order_id', 'order_id');
    assertError(await list(`?order_id=${'x'.repeat(129)}`), 400, 'invalid_request_error', 'invalid_order_id', 'order_id');
    // Found through its own index, not by reading the store's whole list.
    const plan = await app.pool.transaction(async (tx) => {
      await tx.query(sql.unsafe`set local enable_seqscan = off`);
      return tx.anyFirst(sql.type(z.object({ 'QUERY PLAN': z.unknown() }))`
        explain (format json) select id from payments where store_id = ${lister.id} and order_id = ${order} order by created_at desc, id desc limit 21
      `);
    });
    assert.match(JSON.stringify(plan), /payments_by_store_order_id/);
  });

  it('refuses bad query parameters', async () => {
    assertError(await list('?status=paid'), 400, 'invalid_request_error', 'invalid_status', 'status');
    assertError(await list('?limit=0'), 400, 'invalid_request_error', 'invalid_limit', 'limit');
    assertError(await list('?limit=101'), 400, 'invalid_request_error', 'invalid_limit', 'limit');
    assertError(await list('?created_after=yesterday'), 400, 'invalid_request_error', 'invalid_created_after', 'created_after');
    assertError(await list('?starting_after=x'), 400, 'invalid_request_error', 'invalid_starting_after', 'starting_after');
    assertError(await list(`?starting_after=${crypto.randomUUID()}`), 400, 'invalid_request_error', 'invalid_starting_after', 'starting_after');
    assertError(await list('?sort=asc'), 400, 'invalid_request_error', 'unknown_parameter', 'sort');
    // A parameter given twice is refused with its own code.
    assertError(await list('?status=pending&status=created'), 400, 'invalid_request_error', 'invalid_status', 'status');
    assertError(await list('?limit=1&limit=2'), 400, 'invalid_request_error', 'invalid_limit', 'limit');
    // limit 1 to 100, leading zeros allowed as before; created_after parses and starts like RFC 3339.
    assert.equal((await list('?limit=007')).status, 200);
    assert.equal((await list('?limit=100')).status, 200);
    assertError(await list('?limit=1000'), 400, 'invalid_request_error', 'invalid_limit', 'limit');
    assertError(await list('?created_after=2026-13-45T00:00:00Z'), 400, 'invalid_request_error', 'invalid_created_after', 'created_after');
  });
});

describe('a create is all or nothing', () => {
  const counts = () =>
    app.pool.one(sql.type(z.object({ payments: z.number(), addresses: z.number(), watches: z.number(), jobs: z.number(), keys: z.number() }))`
      select (select count(*) from payments)::int as payments, (select count(*) from deposit_addresses)::int as addresses,
             (select count(*) from chain_watches)::int as watches, (select count(*) from graphile_worker.jobs)::int as jobs,
             (select count(*) from idempotency_keys)::int as keys
    `);

  it('when its one write (payment, address, accounts) fails, nothing of the request stays, and its key can be used again', async () => {
    const first = await create({ amount: '1', currency: 'USD', payment_options: USDT_TON });
    assert.equal(first.status, 201, first.text);
    const taken = await app.pool.oneFirst(
      sql.type(z.object({ i: z.string() }))`select derivation_index::text as i from deposit_addresses where payment_id = ${first.json.id}`,
    );
    const before = await counts();
    // The next derivation index is one already taken: the deposit address insert collides, after
    // the payment insert beside it in the same statement.
    await app.pool.query(sql.unsafe`select setval('deposit_address_index_seq', ${Number(taken)}, false)`);
    const key = crypto.randomUUID();
    const failed = await create({ amount: '2', currency: 'USD', payment_options: USDT_TON }, { 'X-Idempotency-Key': key });
    assertError(failed, 500, 'api_error', 'internal_error');
    assert.deepEqual(await counts(), before);
    await app.pool.query(sql.unsafe`select setval('deposit_address_index_seq', (select max(derivation_index) from deposit_addresses))`);
    const retried = await create({ amount: '2', currency: 'USD', payment_options: USDT_TON }, { 'X-Idempotency-Key': key });
    assert.equal(retried.status, 201, retried.text);
    assert.equal(retried.headers.get('idempotent-replayed'), null);
    const after = await counts();
    assert.deepEqual(after, {
      payments: before.payments + 1,
      addresses: before.addresses + 1,
      watches: before.watches + 2,
      jobs: before.jobs,
      keys: before.keys + 1,
    });
  });
});

describe('a revoked token is refused at once where the route checks it in its own read (create, retrieve, status)', () => {
  const paymentCount = () => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from payments where store_id = ${store.id}`);

  it('retrieve and status answer 401 auth_invalid, before a 404 or a 400 of the path', async () => {
    const { token, jti } = await issueToken(app.pool, store.id, null, new Date());
    const payment = (await create({ amount: '1', currency: 'USD', payment_options: TON_TON })).json;
    assert.equal((await app.request('GET', `/v1/payments/${payment.id}`, { token })).status, 200);
    assert.equal((await app.request('GET', `/v1/payments/${payment.id}/status`, { token })).status, 200);
    assert.equal(await revokeToken(app.pool, jti, new Date()), true);
    for (const path of [`/v1/payments/${payment.id}`, `/v1/payments/${payment.id}/status`, `/v1/payments/${crypto.randomUUID()}`, '/v1/payments/not-a-uuid']) {
      assertError(await app.request('GET', path, { token }), 401, 'authentication_error', 'auth_invalid');
    }
    // Another store's token still reads nothing of this store.
    assertError(await app.request('GET', `/v1/payments/${payment.id}`, { token: other.token }), 404, 'not_found_error', 'payment_not_found');
  });

  it('create answers 401 and writes nothing, also for a bad body and for a replay of its key', async () => {
    const { token, jti } = await issueToken(app.pool, store.id, null, new Date());
    const key = crypto.randomUUID();
    const first = await create({ amount: '1', currency: 'USD', payment_options: USDT_TON }, { 'X-Idempotency-Key': key }, token);
    assert.equal(first.status, 201, first.text);
    const replay = await create({ amount: '1', currency: 'USD', payment_options: USDT_TON }, { 'X-Idempotency-Key': key }, token);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(await revokeToken(app.pool, jti, new Date()), true);
    const before = await paymentCount();
    for (const payment_options of [USDT_TON, undefined]) {
      assertError(
        await create({ amount: '1', currency: 'USD', ...(payment_options ? { payment_options } : {}) }, {}, token),
        401,
        'authentication_error',
        'auth_invalid',
      );
      assertError(
        await create({ amount: '1', currency: 'USD', ...(payment_options ? { payment_options } : {}) }, { 'X-Idempotency-Key': crypto.randomUUID() }, token),
        401,
        'authentication_error',
        'auth_invalid',
      );
    }
    assertError(await create({ amount: 'ten', currency: 'USD' }, {}, token), 401, 'authentication_error', 'auth_invalid');
    assertError(
      await create({ amount: '1', currency: 'USD', payment_options: { methods: [{ coin: 'NOT', chain: 'TON' }] } }, {}, token),
      401,
      'authentication_error',
      'auth_invalid',
    );
    const replayed = await create({ amount: '1', currency: 'USD', payment_options: USDT_TON }, { 'X-Idempotency-Key': key }, token);
    assertError(replayed, 401, 'authentication_error', 'auth_invalid');
    assert.equal(replayed.headers.get('idempotent-replayed'), null);
    assertError(await create({ amount: '2', currency: 'USD' }, { 'X-Idempotency-Key': key }, token), 401, 'authentication_error', 'auth_invalid');
    assert.equal(await paymentCount(), before);
    // The store's other token is not affected.
    assert.equal((await create({ amount: '1', currency: 'USD', payment_options: USDT_TON })).status, 201);
  });

  it('an expired token is refused by the same read', async () => {
    const issuedAt = app.clock.now();
    const { token } = await issueToken(app.pool, store.id, null, issuedAt);
    const payment = (await create({ amount: '1', currency: 'USD' }, {}, token)).json;
    // Its stored expiry (not its claims: the token has none) is 1 s after its issue; the app's clock moves past it.
    await app.pool.query(
      sql.unsafe`update api_tokens set expires_at = issued_at + interval '1 second' where store_id = ${store.id} and jti = ${JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).jti}`,
    );
    try {
      app.clock.set(new Date(issuedAt.getTime() + 1_100));
      assertError(await app.request('GET', `/v1/payments/${payment.id}`, { token }), 401, 'authentication_error', 'auth_invalid');
      assertError(await create({ amount: '1', currency: 'USD', payment_options: USDT_TON }, {}, token), 401, 'authentication_error', 'auth_invalid');
    } finally {
      app.clock.real();
    }
  });
});
