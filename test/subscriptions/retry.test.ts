// The engine's hour of patience (issue 45; src/subscriptions/engine.ts, runDueSubscriptions): a
// subscription that cannot be billed never holds up the others. Its renewal payment cannot be
// written: a trigger on payments refuses its store's (a store with no method left or no rate does
// not fail a renewal: it is a Customer Choice payment, which needs neither to be created; the
// trigger stands for whatever makes the create throw). Beside it a healthy one is renewed from credit
// in the same run; the failing one is logged, left as it was (its transaction rolled back) and due
// again an hour later by the billing clock: a run before then leaves it alone, and once the cause is
// gone and the sandbox clock has moved an hour it is billed (past_due, with its one renewal payment).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { sql, z } from '../../src/db/pool.ts';
import { presentSubscription } from '../../src/presenters/subscription.ts';
import { advanceBillingClock, billingNow, runDueSubscriptions } from '../../src/subscriptions/engine.ts';
import type { SubscriptionRow } from '../../src/subscriptions/records.ts';
import type { TestApp } from '../helpers/app.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;
const HOUR_MS = 3_600_000;

/** What the app logged at error (its requests' child loggers included), one JSON object a line. */
const appLogged: Array<Record<string, unknown>> = [];

before(async () => {
  app = await startPaymentsApp({ log: pino({ level: 'error' }, { write: (line: string) => void appLogged.push(JSON.parse(line)) }) });
});
after(() => app?.close());

/** What the engine told its logger. */
const logged: Array<{ fields: Record<string, unknown>; message: string }> = [];
const log = {
  error: (fields: Record<string, unknown>, message: string) => {
    logged.push({ fields, message });
  },
} as never;
const engine = () =>
  runDueSubscriptions({ pool: app.pool, config: app.config, now: app.clock.now, log, present: (row: SubscriptionRow) => presentSubscription(row, app.config) });

async function subscriber(token: string, reference: string) {
  const plan = await app.request('POST', '/v1/plans', { token, body: { name: 'VPN', currency: 'TON', amount: '2', interval: 'month', reminderDays: 0 } });
  assert.equal(plan.status, 201, plan.text);
  const sub = await app.request('POST', '/v1/subscriptions', { token, body: { planID: plan.json.id, customer: { reference }, trialDays: 1 } });
  assert.equal(sub.status, 201, sub.text);
  return sub.json as { id: string; currentPeriodEnd: string };
}

/** A trigger that refuses the store's payments: the renewal payment its subscriber needs cannot be made. */
async function refusePayments(storeId: string) {
  const name = sql.identifier([`refuse_${storeId.replaceAll('-', '_')}`]);
  await app.pool.query(sql.unsafe`
    create function ${name}() returns trigger language plpgsql as $$
    begin
      if new.store_id = ${sql.literalValue(storeId)}::uuid then raise exception 'this store''s payments are refused (test)'; end if;
      return new;
    end $$
  `);
  await app.pool.query(sql.unsafe`create trigger ${name} before insert on payments for each row execute function ${name}()`);
  return async () => {
    await app.pool.query(sql.unsafe`drop trigger ${name} on payments`);
  };
}

const state = (id: string) =>
  app.pool.one(sql.type(z.object({ status: z.string(), next_run_at: z.date().nullable(), periods_charged: z.number(), payments: z.number() }))`
    select s.status, s.next_run_at, s.periods_charged, (select count(*)::int from payments p where p.subscription_id = s.id) as payments
    from subscriptions s where s.id = ${id}
  `);

describe('a subscription that cannot be billed', () => {
  it('is logged and looked at again an hour later by the billing clock; the healthy one beside it is billed', async () => {
    const healthy = await app.store({ methods: 'TON/TON' });
    const failing = await app.store({ methods: 'TON/TON' });
    const good = await subscriber(healthy.token, 'healthy');
    const bad = await subscriber(failing.token, 'failing');
    const credited = await app.request('POST', `/v1/subscriptions/${good.id}/credits`, { token: healthy.token, body: { amount: '2', note: 'prepaid' } });
    assert.equal(credited.status, 200, credited.text);
    // The failing store's payments are refused: the renewal payment its subscriber needs cannot be made.
    const allow = await refusePayments(failing.id);

    // Both trials end (the clock moved directly, so that this file's engine runs with its logger).
    const trialEnd = new Date(bad.currentPeriodEnd).getTime();
    await advanceBillingClock(app.pool, Math.ceil((trialEnd + 60_000 - (await billingNow(app.pool, 'sandbox')).getTime()) / 1000));
    const from = await billingNow(app.pool, 'sandbox');
    assert.equal(await engine(), 1);
    const to = await billingNow(app.pool, 'sandbox');

    const renewed = await state(good.id);
    assert.equal(renewed.status, 'active');
    assert.equal(renewed.periods_charged, 1);
    const stuck = await state(bad.id);
    assert.deepEqual({ status: stuck.status, periods: stuck.periods_charged, payments: stuck.payments }, { status: 'trialing', periods: 0, payments: 0 });
    // Due again an hour after the run's billing clock.
    const retryAt = stuck.next_run_at!.getTime();
    assert.ok(retryAt >= from.getTime() + HOUR_MS && retryAt <= to.getTime() + HOUR_MS, `next_run_at ${stuck.next_run_at?.toISOString()}`);
    assert.equal(logged.length, 1);
    assert.equal(logged[0]!.fields.subscriptionId, bad.id);
    assert.ok(logged[0]!.fields.err instanceof Error);
    assert.match(logged[0]!.message, /could not be billed; tried again in an hour/);

    assert.match(String((logged[0]!.fields.err as Error).message), /payments are refused/);

    // Before the hour is up nothing runs it, however often the engine runs; the cause is taken away meanwhile.
    await allow();
    await advanceBillingClock(app.pool, 30 * 60);
    assert.equal(await engine(), 0);
    assert.equal((await state(bad.id)).status, 'trialing');
    assert.equal(logged.length, 1);

    // An hour after the failed run: billed. No credit, so past_due with its renewal payment.
    await advanceBillingClock(app.pool, Math.ceil((retryAt - (await billingNow(app.pool, 'sandbox')).getTime()) / 1000) + 1);
    assert.equal(await engine(), 1);
    const billed = await state(bad.id);
    assert.deepEqual({ status: billed.status, payments: billed.payments }, { status: 'past_due', payments: 1 });
    assert.equal(logged.length, 1);
    const view = await app.request('GET', `/v1/subscriptions/${bad.id}`, { token: failing.token });
    assert.equal(view.status, 200, view.text);
    assert.ok(view.json.renewalPaymentID);
    // The healthy one was not touched again.
    assert.equal((await state(good.id)).periods_charged, 1);
  });

  it("through the sandbox clock route too: logged with the request's id", async () => {
    const failing = await app.store({ methods: 'TON/TON' });
    const bad = await subscriber(failing.token, 'failing by the clock route');
    const allow = await refusePayments(failing.id);
    try {
      const trialEnd = new Date(bad.currentPeriodEnd).getTime();
      const seconds = Math.ceil((trialEnd + 60_000 - (await billingNow(app.pool, 'sandbox')).getTime()) / 1000);
      const moved = await app.request('POST', '/sandbox/v1/clock/advance', {
        token: failing.token,
        body: { seconds },
        headers: { 'X-Request-Id': 'clock-route-1' },
      });
      assert.equal(moved.status, 200, moved.text);
      assert.equal((await state(bad.id)).status, 'trialing');
      const lines = appLogged.filter((line) => line.subscriptionId === bad.id);
      assert.equal(lines.length, 1, JSON.stringify(appLogged));
      assert.match(String(lines[0]!.msg), /could not be billed; tried again in an hour/);
      assert.equal(lines[0]!.requestId, 'clock-route-1');
      assert.match(String((lines[0]!.err as { message?: string }).message), /payments are refused/);
    } finally {
      await allow();
    }
  });
});
