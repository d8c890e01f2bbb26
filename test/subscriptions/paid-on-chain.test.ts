// A subscription's renewal paid on the sandbox chain (issue 45; docs/API.md, Subscriptions): the
// chain reader books the transfer and completes the payment; in that booking transaction its
// counted money — overpayment included — becomes ledger credit in the plan's currency and the
// subscription's own engine run is enqueued (subscriptions__bill, run here through Graphile
// Worker): the period is charged and the subscription is active. Two completions' credits at once,
// and the engine run again, charge once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { graphileLogger } from '../../src/db/migrate.ts';
import { sql, z } from '../../src/db/pool.ts';
import { presentSubscription } from '../../src/presenters/subscription.ts';
import { creditFromPayment, runDueSubscriptions } from '../../src/subscriptions/engine.ts';
import type { SubscriptionRow } from '../../src/subscriptions/records.ts';
import { taskList } from '../../src/worker/tasks.ts';
import subscriptionsBill from '../../tasks/subscriptions__bill.ts';
import { type ChainTestApp, startChainApp } from '../helpers/chain.ts';
import { runJobsOnce } from '../helpers/jobs.ts';

let app: ChainTestApp;
let token: string;
let tonMethod: string;

before(async () => {
  app = await startChainApp();
  const store = await app.store({ methods: 'TON/TON' });
  token = store.token;
  const listed = await app.request('GET', '/v1/payment-methods', { token });
  tonMethod = listed.json.data.find((m: { coin: { symbol: string } }) => m.coin.symbol === 'TON').id;
});
after(() => app?.close());

const post = (path: string, body: unknown) => app.request('POST', path, { token, body });
const get = (path: string) => app.request('GET', path, { token });
const log = pino({ level: 'silent' });

/** The worker's subscriptions__bill jobs, as a running worker would take them. */
async function runBillJobs(): Promise<void> {
  await runJobsOnce({
    connectionString: app.db.url,
    taskList: taskList({ config: app.config, pool: app.pool, log, now: app.clock.now }, { subscriptions__bill: subscriptionsBill }),
    noHandleSignals: true,
    logger: graphileLogger(log, true),
  });
}

describe('a renewal paid on the chain', () => {
  it('past_due → paid (overpaid) on the sandbox chain → credit at the payment’s rate → the job charges the period → active', async () => {
    const plan = await post('/v1/plans', { name: 'API quota', currency: 'TON', amount: '1', interval: 'month' });
    assert.equal(plan.status, 201, plan.text);
    const created = await post('/v1/subscriptions', { planID: plan.json.id, customer: { reference: 'bot-user-9' } });
    assert.equal(created.status, 201, created.text);
    const sub = created.json;
    assert.equal(sub.status, 'past_due');
    const paymentId = sub.renewalPaymentID;
    assert.equal(sub.checkoutURL, `${app.config.checkoutBaseUrl}/${paymentId}`);

    // The customer picks the coin on the checkout and pays half as much again.
    const chosen = await app.request('POST', `/pay/v1/checkout/payments/${paymentId}/method`, { body: { paymentMethodID: tonMethod } });
    assert.equal(chosen.status, 200, chosen.text);
    const payment = (await get(`/v1/payments/${paymentId}`)).json;
    assert.equal(payment.paymentDetails.coinAmount, '1');
    await app.pay(payment.paymentDetails.address, 'TON', '1.5');
    await app.settle();
    assert.equal((await get(`/v1/payments/${paymentId}`)).json.status, 'completed');

    // Credited in the booking transaction, the overpayment included; the charge waits for its job.
    const ledger = async () => (await get(`/v1/subscriptions/${sub.id}/ledger`)).json.data;
    assert.deepEqual(
      (await ledger()).map((e: { kind: string; amount: string; paymentID?: string }) => [e.kind, e.amount, e.paymentID]),
      [['credit', '1.5', paymentId]],
    );
    await runBillJobs();
    const now = (await get(`/v1/subscriptions/${sub.id}`)).json;
    assert.equal(now.status, 'active');
    assert.equal(now.credit, '0.5');
    assert.equal(now.checkoutURL, undefined);

    // The same completion told twice at once (a rerun, a second reader): credited once, charged once.
    const again = await Promise.all([0, 1].map(() => app.pool.transaction((tx) => creditFromPayment(tx, 'sandbox', paymentId))));
    assert.deepEqual(again, [false, false]);
    await runBillJobs();
    await runDueSubscriptions({
      pool: app.pool,
      config: app.config,
      now: app.clock.now,
      present: (row: SubscriptionRow) => presentSubscription(row, app.config),
    });
    assert.deepEqual(
      (await ledger()).map((e: { kind: string; amount: string }) => [e.kind, e.amount]),
      [
        ['credit', '1.5'],
        ['charge', '-1'],
      ],
    );
    const credits = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from subscription_ledger where payment_id = ${paymentId}
    `);
    assert.equal(credits, 1);
  });
});
