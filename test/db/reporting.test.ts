// The reporting views answer the questions merchants ask, from real payments paid on the sandbox.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql, z } from '../../src/db/pool.ts';
import type { TestApp } from '../helpers/app.ts';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';

let app: ChainTestApp;
let store: Awaited<ReturnType<TestApp['store']>>;
const TON = { methods: [{ coin: 'TON', chain: 'TON' }] };

before(async () => {
  app = await startChainApp();
  store = await app.store();
});
after(() => app.close());

async function newPayment(body: Record<string, unknown>) {
  return (await app.request('POST', '/v1/payments', { token: store.token, body })).json;
}

describe('reporting views', () => {
  it('payments by day, received against expected, late and extra money', async () => {
    const exact = await newPayment({ amount: '1', currency: 'TON', payment_options: TON, order_id: 'r-exact' });
    const over = await newPayment({ amount: '1', currency: 'TON', payment_options: TON, order_id: 'r-over' });
    const under = await newPayment({ amount: '1', currency: 'TON', payment_options: TON, order_id: 'r-under' });
    await newPayment({ amount: '3', currency: 'USD' });
    await app.pay(exact.paymentDetails.address, 'TON', '1');
    await app.pay(over.paymentDetails.address, 'TON', '1.5');
    await app.pay(under.paymentDetails.address, 'TON', '0.25');
    await app.settle();

    const days = await app.pool.any(sql.type(z.object({ status: z.string(), currency: z.string(), payments: z.string(), total_amount: z.string() }))`
      select status, currency, payments::text, total_amount::text from reporting.payments_by_day where store_id = ${store.id} order by status, currency
    `);
    assert.deepEqual(days, [
      { status: 'completed', currency: 'TON', payments: '2', total_amount: '2' },
      { status: 'created', currency: 'USD', payments: '1', total_amount: '3' },
      { status: 'pending', currency: 'TON', payments: '1', total_amount: '1' },
    ]);

    const receipts = await app.pool.any(sql.type(
      z.object({ order_id: z.string(), status: z.string(), expected_coin_amount: z.string(), received_coin_amount: z.string(), difference: z.string() }),
    )`
      select order_id, status, expected_coin_amount::text, received_coin_amount::text, difference::text from reporting.payment_receipts where store_id = ${store.id} order by order_id
    `);
    assert.deepEqual(receipts, [
      { order_id: 'r-exact', status: 'completed', expected_coin_amount: '1', received_coin_amount: '1', difference: '0' },
      { order_id: 'r-over', status: 'completed', expected_coin_amount: '1', received_coin_amount: '1.5', difference: '0.5' },
      { order_id: 'r-under', status: 'pending', expected_coin_amount: '1', received_coin_amount: '0.25', difference: '-0.75' },
    ]);

    const extra = await app.pool.any(sql.type(z.object({ order_id: z.string(), effect: z.string(), amount: z.string() }))`
      select order_id, effect, amount::text from reporting.late_and_extra_money where store_id = ${store.id}
    `);
    assert.deepEqual(extra, [{ order_id: 'r-over', effect: 'overpaid', amount: '1.5' }]);
  });

  it('webhook outcomes list every delivery with its state', async () => {
    const payment = await newPayment({ amount: '1', currency: 'TON', payment_options: TON, order_id: 'r-hook', webhookURL: 'https://hooks.example.com/kassa' });
    await app.pay(payment.paymentDetails.address, 'TON', '1');
    await app.settle();
    const rows = await app.pool.any(sql.type(
      z.object({
        order_id: z.string(),
        reason: z.string(),
        status: z.string(),
        attempts: z.number(),
        url: z.string(),
        last_http_status: z.number().nullable(),
      }),
    )`
      select order_id, reason, status, attempts, url, last_http_status from reporting.webhook_outcomes where store_id = ${store.id}
    `);
    assert.deepEqual(rows, [
      { order_id: 'r-hook', reason: 'completed', status: 'pending', attempts: 0, url: 'https://hooks.example.com/kassa', last_http_status: null },
    ]);
  });
});
