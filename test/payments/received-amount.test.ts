// receivedAmount is written as every amount of the API: "2", never "2.0" (a SQL sum of numeric
// amounts keeps their scale: 1.5 + 0.5 = 2.0).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { receivedAmount } from '../../src/payments/view.ts';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';

describe('receivedAmount', () => {
  it("is made from base units with the coin's decimals (pure)", () => {
    assert.equal(receivedAmount({ coin_decimals: 9, received_base_units: '2000000000' }), '2');
    assert.equal(receivedAmount({ coin_decimals: 6, received_base_units: '2500000' }), '2.5');
    assert.equal(receivedAmount({ coin_decimals: 9, received_base_units: '1' }), '0.000000001');
    assert.equal(receivedAmount({ coin_decimals: null, received_base_units: '0' }), '0');
  });

  describe('after two transfers of 1.5 and 0.5 TON on the sandbox chain', () => {
    let app: ChainTestApp;
    let store: Awaited<ReturnType<ChainTestApp['store']>>;
    let payment: any;
    before(async () => {
      app = await startChainApp();
      store = await app.store();
      const created = await app.request('POST', '/v1/payments', {
        token: store.token,
        body: { amount: '3', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
      });
      assert.equal(created.status, 201, created.text);
      payment = created.json;
      await app.pay(payment.paymentDetails.address, 'TON', '1.5');
      await app.pay(payment.paymentDetails.address, 'TON', '0.5');
      await app.settle();
    });
    after(() => app.close());

    it('is "2" in the merchant view, the list and the checkout view', async () => {
      const one = await app.request('GET', `/v1/payments/${payment.id}`, { token: store.token });
      assert.equal(one.json.status, 'pending');
      assert.equal(one.json.paymentDetails.receivedAmount, '2');
      const list = await app.request('GET', '/v1/payments', { token: store.token });
      assert.equal(list.json.data.find((p: any) => p.id === payment.id).paymentDetails.receivedAmount, '2');
      const checkout = await app.request('GET', `/pay/v1/checkout/payments/${payment.id}`);
      assert.equal(checkout.json.paymentDetails.receivedAmount, '2');
    });
  });
});
