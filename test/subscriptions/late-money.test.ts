// Money of a subscription's payment that expired (issue 45; docs/API.md, Subscriptions), on the
// sandbox chain with the real chain reader and Graphile Worker's jobs: a renewal paid in part before
// its expiry credits that part when it expires (the expiring statement's subscriptions__credit job;
// by the reader, or the sandbox's expire control),
// so the next renewal asks only for the rest; money sent after the expiry is credited in its booking
// transaction with the subscription's run enqueued, once (booking the same transfer again adds
// nothing); a top-up that expired likewise; a subscription expired by its grace keeps the money as
// credit on its ledger and stays expired (status only moves forward). A renewal cancelled with part of
// it paid — the payment through the API, or its subscription cancelled now — credits that part at
// once, through the same job.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { LATE_COMMIT_MARGIN_MS } from '../../src/chain/clock.ts';
import { graphileLogger } from '../../src/db/migrate.ts';
import { sql, z } from '../../src/db/pool.ts';
import { recordTransfer } from '../../src/payments/transfers.ts';
import { creditFromPayment, subscriptionMoneyHooks } from '../../src/subscriptions/engine.ts';
import { taskList } from '../../src/worker/tasks.ts';
import { TASKS } from '../../tasks/index.ts';
import { type ChainTestApp, startChainApp } from '../helpers/chain.ts';
import { runJobsOnce } from '../helpers/jobs.ts';

let app: ChainTestApp;
let token: string;
let tonMethod: string;

before(async () => {
  app = await startChainApp();
  const store = await app.store({ methods: 'TON/TON', refundWindowDays: 0 });
  token = store.token;
  const listed = await app.request('GET', '/v1/payment-methods', { token });
  tonMethod = listed.json.data.find((m: { coin: { symbol: string } }) => m.coin.symbol === 'TON').id;
});
after(() => app?.close());

const post = (path: string, body: unknown = {}) => app.request('POST', path, { token, body });
const get = (path: string) => app.request('GET', path, { token });
const log = pino({ level: 'silent' });

/** The worker's jobs (subscriptions__credit, subscriptions__bill, …), as a running worker would take them. */
async function runJobs(): Promise<void> {
  await runJobsOnce({
    connectionString: app.db.url,
    taskList: taskList({ config: app.config, pool: app.pool, log, now: app.clock.now }, TASKS),
    noHandleSignals: true,
    logger: graphileLogger(log, true),
  });
}

const jobKeys = async (prefix: string) =>
  app.pool.anyFirst(sql.type(z.object({ key: z.string() }))`
    select key from graphile_worker._private_jobs where key like ${`${prefix}%`} order by key
  `);

/** A subscription to a TON plan of 1 a month (graceDays), and its payment `paymentId` with the method TON chosen. */
async function subscribed(options: { graceDays?: number; trialDays?: number } = {}) {
  const plan = await post('/v1/plans', { name: 'VPN', currency: 'TON', amount: '1', interval: 'month', graceDays: options.graceDays ?? 3 });
  assert.equal(plan.status, 201, plan.text);
  const sub = await post('/v1/subscriptions', {
    planID: plan.json.id,
    customer: { reference: `u-${Math.random()}` },
    ...(options.trialDays !== undefined ? { trialDays: options.trialDays } : {}),
  });
  assert.equal(sub.status, 201, sub.text);
  const ledger = async () =>
    ((await get(`/v1/subscriptions/${sub.json.id}/ledger`)).json.data as Array<{ kind: string; amount: string; paymentID?: string }>).map((e) => [
      e.kind,
      e.amount,
      e.paymentID,
    ]);
  return { id: sub.json.id as string, renewalId: sub.json.renewalPaymentID as string | undefined, portalURL: sub.json.portalURL as string, ledger };
}

async function chooseTon(paymentId: string) {
  const chosen = await app.request('POST', `/pay/v1/checkout/payments/${paymentId}/method`, { body: { paymentMethodID: tonMethod } });
  assert.equal(chosen.status, 200, chosen.text);
  return (await get(`/v1/payments/${paymentId}`)).json;
}

describe('money of a subscription’s payment that expired or was cancelled', () => {
  it('a renewal cancelled with part of it paid credits that part at once, once: the payment cancelled through the API, or its subscription cancelled now', async () => {
    // F: the merchant cancels the renewal payment itself (POST /v1/payments/{id}/cancel).
    const byPayment = await subscribed();
    const paymentF = await chooseTon(byPayment.renewalId!);
    await app.pay(paymentF.paymentDetails.address, 'TON', '0.4');
    // G: the merchant cancels the subscription now, its renewal paid in part.
    const bySubscription = await subscribed();
    const paymentG = await chooseTon(bySubscription.renewalId!);
    await app.pay(paymentG.paymentDetails.address, 'TON', '0.3');
    await app.settle();
    assert.deepEqual(await byPayment.ledger(), [], 'money of an open payment is not credit yet');

    const cancelled = await post(`/v1/payments/${byPayment.renewalId}/cancel`);
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.json.status, 'cancelled');
    const ended = await post(`/v1/subscriptions/${bySubscription.id}/cancel`, {});
    assert.equal(ended.status, 200, ended.text);
    assert.equal(ended.json.status, 'cancelled');
    assert.equal(ended.json.renewalPaymentID, undefined);
    assert.equal((await get(`/v1/payments/${bySubscription.renewalId}`)).json.status, 'cancelled', 'its renewal is no longer owed');
    // Each cancel enqueued the credit of its payment, as expiry does; no more money had to arrive.
    for (const id of [byPayment.renewalId, bySubscription.renewalId]) assert.ok((await jobKeys(`subscriptions__credit:${id}`)).length === 1, id);
    await runJobs();
    assert.deepEqual(await byPayment.ledger(), [['credit', '0.4', byPayment.renewalId]]);
    assert.deepEqual(await bySubscription.ledger(), [['credit', '0.3', bySubscription.renewalId]]);
    // F's run (enqueued with its credit) opened the next renewal for what is missing only.
    const afterF = (await get(`/v1/subscriptions/${byPayment.id}`)).json;
    assert.equal(afterF.status, 'past_due');
    assert.equal(afterF.credit, '0.4');
    assert.notEqual(afterF.renewalPaymentID, byPayment.renewalId);
    assert.equal((await get(`/v1/payments/${afterF.renewalPaymentID}`)).json.amount, '0.6');
    // G stays cancelled and keeps its money as credit.
    const afterG = (await get(`/v1/subscriptions/${bySubscription.id}`)).json;
    assert.deepEqual([afterG.status, afterG.credit], ['cancelled', '0.3']);

    // Once: a second cancel of each, and the jobs run again, credit nothing more.
    assert.equal((await post(`/v1/payments/${byPayment.renewalId}/cancel`)).json.status, 'cancelled');
    assert.equal((await post(`/v1/subscriptions/${bySubscription.id}/cancel`, {})).json.status, 'cancelled');
    await runJobs();
    assert.deepEqual(await byPayment.ledger(), [['credit', '0.4', byPayment.renewalId]]);
    assert.deepEqual(await bySubscription.ledger(), [['credit', '0.3', bySubscription.renewalId]]);
  });

  it('is credited at once, once: paid in part before the expiry, sent after it, on a top-up, on a subscription expired by its grace', async () => {
    // A: a renewal paid in part (0.4 of 1) before its expiry.
    const partial = await subscribed();
    const partialPayment = await chooseTon(partial.renewalId!);
    await app.pay(partialPayment.paymentDetails.address, 'TON', '0.4');
    // B: a renewal paid in full after its expiry.
    const late = await subscribed();
    const latePayment = await chooseTon(late.renewalId!);
    // C: a top-up (credit enough for a period, from the customer's portal) paid in part before its expiry.
    const topped = await subscribed({ trialDays: 30 });
    assert.equal((await post(`/v1/subscriptions/${topped.id}/credits`, { amount: '1', note: 'paid in cash' })).status, 200);
    const pay = await fetch(`${app.url}${new URL(topped.portalURL).pathname}/pay`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    assert.equal(pay.status, 303);
    const topUpId = new URL(pay.headers.get('location')!, app.url).pathname.split('/').pop()!;
    const topUp = await chooseTon(topUpId);
    assert.equal(topUp.metadata.purpose, 'top_up');
    await app.pay(topUp.paymentDetails.address, 'TON', '0.25');
    // D: a subscription that will expire by its grace (1 day), its renewal paid after that.
    const ended = await subscribed({ graceDays: 1 });
    const endedPayment = await chooseTon(ended.renewalId!);
    // E: a renewal paid in part, then expired by the sandbox's control (POST /sandbox/v1/payments/{id}/expire).
    const control = await subscribed();
    const controlPayment = await chooseTon(control.renewalId!);
    await app.pay(controlPayment.paymentDetails.address, 'TON', '0.3');
    await app.settle();
    assert.deepEqual(await partial.ledger(), [], 'money of an open payment is not credit yet');
    // It waits for the chain reader a few seconds; on a busy machine it may answer 503 (chain behind): asked again.
    let expired = await post(`/sandbox/v1/payments/${control.renewalId}/expire`);
    for (let i = 0; i < 5 && expired.status === 503; i++) expired = await post(`/sandbox/v1/payments/${control.renewalId}/expire`);
    assert.equal(expired.json.status, 'expired', expired.text);
    assert.deepEqual(await jobKeys('subscriptions__credit:'), [`subscriptions__credit:${control.renewalId}`]);
    await runJobs();
    assert.deepEqual(await control.ledger(), [['credit', '0.3', control.renewalId]]);

    // The chain's clock passes the payments' expiry: the reader expires them.
    const expiries = [partialPayment, latePayment, topUp, endedPayment].map((p) => Date.parse(p.timer.expiresAt));
    app.sandbox.chain.setNow(Math.ceil(Math.max(...expiries) / 1000) + LATE_COMMIT_MARGIN_MS / 1000 + 5);
    await app.settle();
    for (const id of [partial.renewalId, late.renewalId, topUpId, ended.renewalId]) assert.equal((await get(`/v1/payments/${id}`)).json.status, 'expired');
    // The expiring statement enqueued a credit for each payment with money on it, and for no other.
    assert.deepEqual(await jobKeys('subscriptions__credit:'), [`subscriptions__credit:${partial.renewalId}`, `subscriptions__credit:${topUpId}`].sort());
    await runJobs();
    assert.deepEqual(await partial.ledger(), [['credit', '0.4', partial.renewalId]]);
    // Its run (enqueued with the credit) opened the next renewal for what is missing only.
    const afterPartial = (await get(`/v1/subscriptions/${partial.id}`)).json;
    assert.equal(afterPartial.status, 'past_due');
    assert.notEqual(afterPartial.renewalPaymentID, partial.renewalId);
    assert.equal((await get(`/v1/payments/${afterPartial.renewalPaymentID}`)).json.amount, '0.6');
    assert.deepEqual((await topped.ledger()).at(-1), ['credit', '0.25', topUpId]);
    assert.equal((await get(`/v1/subscriptions/${topped.id}`)).json.credit, '1.25');

    // B: money after the expiry, credited in its booking transaction, with the subscription's run enqueued.
    await app.pay(latePayment.paymentDetails.address, 'TON', '1');
    await app.settle();
    const books = (await get(`/v1/payments/${late.renewalId}/transfers`)).json.data;
    assert.deepEqual(
      books.map((t: { effect: string }) => t.effect),
      ['after_expiry'],
    );
    assert.deepEqual(await late.ledger(), [['credit', '1', late.renewalId]]);
    assert.deepEqual(await jobKeys(`subscriptions__bill:${late.id}`), [`subscriptions__bill:${late.id}`]);
    // The same transfer booked again (a reader re-reading its block): nothing recorded, nothing credited.
    const transfer = await app.pool.one(sql.type(z.object({ account: z.string(), lt: z.string(), hash: z.string(), chain_time: z.date() }))`
      select account, lt::text as lt, hash, chain_time from transfers where payment_id = ${late.renewalId!}
    `);
    const again = await recordTransfer(
      app.pool,
      {
        account: transfer.account,
        lt: transfer.lt,
        hash: transfer.hash,
        chainTime: transfer.chain_time,
        paymentId: late.renewalId!,
        depositAddress: transfer.account,
        coinSymbol: 'TON',
        jettonMaster: null,
        amountBaseUnits: 1_000_000_000n,
        sender: null,
        comment: null,
        credited: true,
        payment: true,
        detail: null,
      },
      app.clock.now(),
      subscriptionMoneyHooks('sandbox'),
    );
    assert.deepEqual(again, { recorded: false });
    assert.equal(await app.pool.transaction((tx) => creditFromPayment(tx, 'sandbox', late.renewalId!)), false);
    await runJobs();
    await runJobs();
    assert.deepEqual(await late.ledger(), [
      ['credit', '1', late.renewalId],
      ['charge', '-1', undefined],
    ]);
    assert.equal((await get(`/v1/subscriptions/${late.id}`)).json.status, 'active');
    assert.deepEqual(await partial.ledger(), [['credit', '0.4', partial.renewalId]], 'the credit job run again adds nothing');

    // D: the billing clock passes its grace: expired. Money then sent to its expired renewal is its
    // credit, on its ledger; it stays expired.
    const advanced = await post('/sandbox/v1/clock/advance', { seconds: 86_400 + 60 });
    assert.equal(advanced.status, 200, advanced.text);
    assert.equal((await get(`/v1/subscriptions/${ended.id}`)).json.status, 'expired');
    await app.pay(endedPayment.paymentDetails.address, 'TON', '1');
    await app.settle();
    await runJobs();
    assert.deepEqual(await ended.ledger(), [['credit', '1', ended.renewalId]]);
    const afterEnd = (await get(`/v1/subscriptions/${ended.id}`)).json;
    assert.equal(afterEnd.status, 'expired');
    assert.equal(afterEnd.credit, '1');
    assert.equal(afterEnd.renewalPaymentID, undefined);
  });
});
