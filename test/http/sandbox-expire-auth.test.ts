// POST /sandbox/v1/payments/{id}/expire answers the merchant's view of a payment: it takes the
// payment's store token, as /v1 does. The customer's POST /sandbox/v1/transfers stays open.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { issueToken } from '../../src/auth/tokens.ts';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { assertError } from '../helpers/payments.ts';

describe('POST /sandbox/v1/payments/{id}/expire', () => {
  let app: ChainTestApp;
  let owner: Awaited<ReturnType<ChainTestApp['store']>>;
  let other: Awaited<ReturnType<ChainTestApp['store']>>;
  before(async () => {
    app = await startChainApp();
    owner = await app.store({ name: 'Owner' });
    other = await app.store({ name: 'Other' });
  });
  after(() => app.close());

  const pendingPayment = async () => {
    const created = await app.request('POST', '/v1/payments', {
      token: owner.token,
      body: {
        amount: '1',
        currency: 'TON',
        order_id: 'ORDER-7',
        metadata: { customer: 'alice' },
        payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] },
      },
    });
    assert.equal(created.status, 201, created.text);
    return created.json;
  };
  const status = async (id: string) => (await app.request('GET', `/v1/payments/${id}`, { token: owner.token })).json.status;

  it('without a token, or with a bad one: 401 auth_invalid, and the payment is left as it was', async () => {
    const payment = await pendingPayment();
    const bare = await app.request('POST', `/sandbox/v1/payments/${payment.id}/expire`);
    assertError(bare, 401, 'authentication_error', 'auth_invalid');
    assert.equal(bare.headers.get('www-authenticate'), 'Bearer');
    assert.ok(!bare.text.includes('ORDER-7') && !bare.text.includes('alice'));
    assertError(
      await app.request('POST', `/sandbox/v1/payments/${payment.id}/expire`, { token: `${owner.token}x` }),
      401,
      'authentication_error',
      'auth_invalid',
    );
    assert.equal(await status(payment.id), 'pending');
  });

  it("another store's token: 404 payment_not_found, and the payment is left as it was", async () => {
    const payment = await pendingPayment();
    const response = await app.request('POST', `/sandbox/v1/payments/${payment.id}/expire`, { token: other.token });
    assertError(response, 404, 'not_found_error', 'payment_not_found');
    assert.equal(await status(payment.id), 'pending');
  });

  it('a read_only or create_payments token of the store: 403 insufficient_scope (the control needs full), and the payment is left as it was', async () => {
    const payment = await pendingPayment();
    for (const scope of ['read_only', 'create_payments'] as const) {
      const { token } = await issueToken(app.pool, owner.id, null, new Date(), scope);
      const response = await app.request('POST', `/sandbox/v1/payments/${payment.id}/expire`, { token });
      assertError(response, 403, 'authentication_error', 'insufficient_scope');
      assert.match(response.json.error.message, new RegExp(`scope \\(${scope}\\)`));
    }
    assert.equal(await status(payment.id), 'pending');
  });

  it("the payment's store token: expires it and answers the merchant view", async () => {
    const payment = await pendingPayment();
    const response = await app.request('POST', `/sandbox/v1/payments/${payment.id}/expire`, { token: owner.token });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.json.status, 'expired');
    assert.equal(response.json.order_id, 'ORDER-7');
    assert.deepEqual(response.json.metadata, { customer: 'alice' });
  });

  it('POST /sandbox/v1/transfers stays open (the customer side)', async () => {
    const payment = await pendingPayment();
    const sent = await app.request('POST', '/sandbox/v1/transfers', { body: { to: payment.paymentDetails.address, coin: 'TON', amount: '0.5' } });
    assert.equal(sent.status, 201, sent.text);
  });
});
