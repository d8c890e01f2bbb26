// Subscriptions' periods across what a shop lives through (issue 45, "Done when"; docs/API.md,
// Subscriptions), by the sandbox's billing clock: a plan's price change applies from the next period
// (the period running keeps its price); the month-end rule end to end (a period anchored on the 31st
// ends on the 28th of February, then the 31st again); the reminder sent once per period across a
// worker restart (each run a fresh Graphile Worker); a webhook outage (the store's receiver answers
// 503 throughout) after which GET …/ledger alone rebuilds every period: every charge with its period,
// contiguous from the anchor, every credit, the balances adding up.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { graphileLogger } from '../../src/db/migrate.ts';
import { sql, z } from '../../src/db/pool.ts';
import { taskList } from '../../src/worker/tasks.ts';
import subscriptionsBill from '../../tasks/subscriptions__bill.ts';
import type { TestApp } from '../helpers/app.ts';
import { type EventReceiver, runDeliveries, startEventReceiver } from '../helpers/eventReceiver.ts';
import { runJobsOnce } from '../helpers/jobs.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;
let token: string;
let receiver: EventReceiver;
const DAY = 86_400;

before(async () => {
  app = await startPaymentsApp({ env: { WEBHOOK_ALLOW_INSECURE: 'true' } });
  token = (await app.store({ methods: 'TON/TON' })).token;
  // The store's receiver is down the whole file: every event fails to arrive.
  receiver = await startEventReceiver(app, () => 503);
  const endpoint = await app.request('POST', '/v1/webhook-endpoints', {
    token,
    body: { url: receiver.url, events: ['subscription.renewed', 'subscription.renewal_upcoming', 'subscription.past_due', 'subscription.payment_due'] },
  });
  assert.equal(endpoint.status, 201, endpoint.text);
});
after(async () => {
  await receiver?.close();
  await app?.close();
});

const post = (path: string, body: unknown) => app.request('POST', path, { token, body });
const get = async (path: string) => {
  const answer = await app.request('GET', path, { token });
  assert.equal(answer.status, 200, answer.text);
  return answer.json;
};
let clock = new Date();
const advance = async (seconds: number) => {
  const moved = await post('/sandbox/v1/clock/advance', { seconds });
  assert.equal(moved.status, 200, moved.text);
  clock = new Date(moved.json.now);
};
const advanceTo = (at: Date | string, seconds = 60) => advance(Math.max(1, Math.ceil((new Date(at).getTime() + seconds * 1000 - clock.getTime()) / 1000)));
type Entry = { kind: string; amount: string; balanceAfter: string; periodStart?: string; periodEnd?: string; paymentID?: string };
const ledger = async (id: string) => (await get(`/v1/subscriptions/${id}/ledger`)).data as Entry[];
const eventsOf = async (id: string, type: string) =>
  app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
    select count(*)::int as n from webhook_deliveries d where d.event = ${type} and d.payload->'subscription'->>'id' = ${id}
  `);

async function subscribe(plan: Record<string, unknown>, trialDays: number) {
  const made = await post('/v1/plans', { name: 'Course', currency: 'TON', interval: 'month', reminderDays: 0, ...plan });
  assert.equal(made.status, 201, made.text);
  const sub = await post('/v1/subscriptions', { planID: made.json.id, customer: { reference: `c-${Math.random()}` }, trialDays });
  assert.equal(sub.status, 201, sub.text);
  return { planID: made.json.id as string, sub: sub.json };
}

/**
 * A worker started again: the subscription due again (as if its last run's outcome were unknown),
 * the crontab's tick (subscriptions__bill, no payload) queued, and a fresh Graphile Worker runs it.
 */
async function freshWorker(id: string): Promise<void> {
  await app.pool.query(sql.unsafe`update subscriptions set next_run_at = now() - interval '1 day' where id = ${id} and next_run_at is not null`);
  await app.pool.query(sql.unsafe`select graphile_worker.add_job('subscriptions__bill', '{}'::json)`);
  const log = pino({ level: 'silent' });
  await runJobsOnce({
    connectionString: app.db.url,
    taskList: taskList({ config: app.config, pool: app.pool, log, now: app.clock.now }, { subscriptions__bill: subscriptionsBill }),
    noHandleSignals: true,
    logger: graphileLogger(log, true),
  });
}

describe('periods', () => {
  it('a price change applies from the next period: the period running keeps its price', async () => {
    const { planID, sub } = await subscribe({ amount: '2' }, 1);
    assert.equal((await post(`/v1/subscriptions/${sub.id}/credits`, { amount: '10', note: 'prepaid' })).status, 200);
    await advanceTo(sub.currentPeriodEnd);
    const running = await get(`/v1/subscriptions/${sub.id}`);
    assert.equal(running.status, 'active');
    const changed = await post(`/v1/plans/${planID}`, { amount: '3' });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.json.amount, '3');
    assert.equal((await get(`/v1/plans/${planID}`)).amount, '3');
    const audit = await app.pool.oneFirst(sql.type(z.object({ detail: z.unknown() }))`
      select detail from audit_log where action = 'plan.update' and subject = ${planID}
    `);
    assert.deepEqual(audit, { amountBefore: '2', amount: '3', via: 'api' });
    // Nothing of the running period changes: no charge, no refund, the same end.
    assert.deepEqual(
      (await ledger(sub.id)).map((e) => [e.kind, e.amount]),
      [
        ['adjustment', '10'],
        ['charge', '-2'],
      ],
    );
    assert.equal((await get(`/v1/subscriptions/${sub.id}`)).currentPeriodEnd, running.currentPeriodEnd);
    await advanceTo(running.currentPeriodEnd);
    assert.deepEqual(
      (await ledger(sub.id)).map((e) => [e.kind, e.amount, e.balanceAfter]),
      [
        ['adjustment', '10', '10'],
        ['charge', '-2', '8'],
        ['charge', '-3', '5'],
      ],
    );
    const refused = await post(`/v1/plans/${planID}`, { amount: '-1' });
    assert.equal(refused.status, 400, refused.text);
    assert.equal((await post('/v1/plans/00000000-0000-4000-8000-000000000000', { amount: '1' })).status, 404);
  });

  it('the month-end rule end to end: anchored on the 31st, then the 28th of February, then the 31st again', async () => {
    // The next 31st of January (the trial ends then, at this time of day).
    const start = new Date(clock);
    let target = new Date(Date.UTC(start.getUTCFullYear(), 0, 31, start.getUTCHours(), start.getUTCMinutes(), start.getUTCSeconds()));
    if (target.getTime() - start.getTime() < 2 * DAY * 1000)
      target = new Date(Date.UTC(start.getUTCFullYear() + 1, 0, 31, start.getUTCHours(), start.getUTCMinutes(), start.getUTCSeconds()));
    const trialDays = Math.round((target.getTime() - start.getTime()) / (DAY * 1000));
    const { sub } = await subscribe({ amount: '1' }, trialDays);
    assert.equal(new Date(sub.currentPeriodEnd).getUTCDate(), 31);
    assert.equal(new Date(sub.currentPeriodEnd).getUTCMonth(), 0);
    assert.equal((await post(`/v1/subscriptions/${sub.id}/credits`, { amount: '4', note: 'four months' })).status, 200);
    let end = sub.currentPeriodEnd;
    for (let n = 0; n < 4; n += 1) {
      await advanceTo(end);
      end = (await get(`/v1/subscriptions/${sub.id}`)).currentPeriodEnd;
    }
    const periods = (await ledger(sub.id)).filter((e) => e.kind === 'charge').map((e) => [e.periodStart!.slice(5, 10), e.periodEnd!.slice(5, 10)]);
    const feb = target.getUTCFullYear() % 4 === 0 ? '02-29' : '02-28';
    assert.deepEqual(periods, [
      ['01-31', feb],
      [feb, '03-31'],
      ['03-31', '04-30'],
      ['04-30', '05-31'],
    ]);
  });

  it('the reminder is sent once per period, across worker restarts', async () => {
    const { sub } = await subscribe({ amount: '1', reminderDays: 3, interval: 'week' }, 5);
    assert.equal((await post(`/v1/subscriptions/${sub.id}/credits`, { amount: '1', note: 'first week' })).status, 200);
    await advanceTo(sub.currentPeriodEnd);
    const week = await get(`/v1/subscriptions/${sub.id}`);
    assert.equal(week.status, 'active');
    // Within 3 days of the week's end, no credit for the next: the reminder; workers started again and again send no second.
    await advanceTo(week.currentPeriodEnd, -2 * DAY);
    await freshWorker(sub.id);
    await advanceTo(week.currentPeriodEnd, -2 * DAY + 600);
    await freshWorker(sub.id);
    await freshWorker(sub.id);
    await advanceTo(week.currentPeriodEnd, -1 * DAY);
    await freshWorker(sub.id);
    assert.equal(await eventsOf(sub.id, 'subscription.renewal_upcoming'), 1);
    // Paid for the next week: its own reminder before its end, once.
    assert.equal((await post(`/v1/subscriptions/${sub.id}/credits`, { amount: '1', note: 'second week' })).status, 200);
    await advanceTo(week.currentPeriodEnd);
    const next = await get(`/v1/subscriptions/${sub.id}`);
    assert.equal(next.status, 'active');
    assert.notEqual(next.currentPeriodEnd, week.currentPeriodEnd);
    await advanceTo(next.currentPeriodEnd, -2 * DAY);
    await freshWorker(sub.id);
    await freshWorker(sub.id);
    assert.equal(await eventsOf(sub.id, 'subscription.renewal_upcoming'), 2);
  });

  it('after a webhook outage the ledger alone rebuilds every period', async () => {
    const { sub } = await subscribe({ amount: '1.5', interval: 'day' }, 1);
    assert.equal((await post(`/v1/subscriptions/${sub.id}/credits`, { amount: '4', note: 'prepaid' })).status, 200);
    let end = sub.currentPeriodEnd;
    for (let n = 0; n < 4; n += 1) {
      await advanceTo(end);
      await runDeliveries(app);
      end = (await get(`/v1/subscriptions/${sub.id}`)).currentPeriodEnd;
    }
    const now = await get(`/v1/subscriptions/${sub.id}`);
    assert.equal(now.status, 'past_due');
    // The receiver got every attempt and took none.
    assert.ok(receiver.received.length > 0);
    assert.equal(await eventsOf(sub.id, 'subscription.renewed'), 2);

    // The shop rebuilds from the ledger: every charge with its period, contiguous from the anchor; balances add up to the credit.
    const entries = await ledger(sub.id);
    const charges = entries.filter((e) => e.kind === 'charge');
    assert.equal(charges.length, 2);
    assert.equal(charges[0]!.periodStart, sub.currentPeriodEnd);
    assert.equal(charges[1]!.periodStart, charges[0]!.periodEnd);
    let balance = 0;
    for (const e of entries) {
      balance = Math.round((balance + Number(e.amount)) * 1e9) / 1e9;
      assert.equal(Number(e.balanceAfter), balance);
    }
    assert.equal(Number(now.credit), balance);
    assert.equal(balance, 1);
    assert.deepEqual(
      entries.map((e) => e.kind),
      ['adjustment', 'charge', 'charge'],
    );
  });
});
