// The native coin's new name (issue 47 item 8; CONTRACT §12): Toncoin is Gram (GRAM) since June 2026,
// the network still TON. `GRAM` is taken wherever a coin symbol is — a payment's currency and its
// payment_options, a payment link's currency, a refund's coin and currency, the dashboard's and the
// sandbox's coin fields, the CLI's method list — and means TON; every answer keeps `TON`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseMethodList } from '../../src/stores/stores.ts';
import { coinSymbol } from '../../src/money.ts';
import { freshAddress, startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { assertError } from '../helpers/payments.ts';

let app: ChainTestApp;
let token: string;

before(async () => {
  app = await startChainApp();
  token = (await app.store({ methods: 'GRAM/TON' })).token;
});
after(() => app.close());

describe('GRAM, the coin TON’s new name', () => {
  it('is TON in the one place symbols are read (money.ts), and in the CLI’s method list', () => {
    assert.equal(coinSymbol('GRAM'), 'TON');
    assert.equal(coinSymbol('TON'), 'TON');
    assert.equal(coinSymbol('USDT'), 'USDT');
    assert.equal(coinSymbol('gram'), 'gram', 'symbols stay case-sensitive');
    assert.deepEqual(parseMethodList('GRAM/TON,USDT/TON'), [
      { coin: 'TON', chain: 'TON' },
      { coin: 'USDT', chain: 'TON' },
    ]);
  });

  it('a payment priced in GRAM with GRAM in its options is a TON payment, answered as TON', async () => {
    const created = await app.request('POST', '/v1/payments', {
      token,
      body: { amount: '1.5', currency: 'GRAM', payment_options: { methods: [{ coin: 'GRAM', chain: 'TON' }] } },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.currency, 'TON');
    assert.equal(created.json.paymentDetails.coin.symbol, 'TON');
    assert.equal(created.json.paymentDetails.coinAmount, '1.5');
    assert.doesNotMatch(created.text, /GRAM/);
    const read = await app.request('GET', `/v1/payments/${created.json.id}`, { token });
    assert.equal(read.json.currency, 'TON');

    // A fiat price paid in GRAM: TON's rate.
    const fiat = await app.request('POST', '/v1/payments', {
      token,
      body: { amount: '3', currency: 'USD', payment_options: { methods: [{ coin: 'GRAM', chain: 'TON' }] } },
    });
    assert.equal(fiat.status, 201, fiat.text);
    assert.equal(fiat.json.paymentDetails.coin.symbol, 'TON');

    // Anything else unknown is still refused with its param.
    assertError(
      await app.request('POST', '/v1/payments', { token, body: { amount: '1', currency: 'GRAMS' } }),
      404,
      'not_found_error',
      'currency_not_found',
      'currency',
    );
  });

  it('a payment link in GRAM, and a refund of GRAM: TON', async () => {
    const link = await app.request('POST', '/v1/payment-links', {
      token,
      body: { currency: 'GRAM', amount: '2', payment_options: { methods: [{ coin: 'GRAM', chain: 'TON' }] } },
    });
    assert.equal(link.status, 201, link.text);
    assert.equal(link.json.currency, 'TON');
    assert.deepEqual(link.json.payment_options, { methods: [{ coin: 'TON', chain: 'TON' }] });

    const created = await app.request('POST', '/v1/payments', {
      token,
      body: { amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
    });
    await app.pay(created.json.paymentDetails.address, 'TON', '1.5');
    await app.settle();
    const refund = await app.request('POST', `/v1/payments/${created.json.id}/refunds`, {
      token,
      body: { coin: 'GRAM', amount: '0.2', currency: 'GRAM', address: freshAddress() },
    });
    assert.equal(refund.status, 201, refund.text);
    assert.equal(refund.json.coin, 'TON');
    assert.equal(refund.json.amount, '0.2');
  });
});
