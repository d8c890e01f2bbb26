// Subscriptions through the API and the billing engine in the database (issue 45; docs/API.md,
// Subscriptions), driven by the sandbox's billing clock (POST /sandbox/v1/clock/advance), never by
// sleeping: plans (create, list, get, archive, errors); a trial, a manual credit (ledger and audit
// log), periods charged from credit by the calendar, past_due with ONE renewal payment reused across
// runs, credit that covers it → active, the grace's end → expired, cancel; the engine run again and
// again doubling nothing; the events written with each change.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql, z } from '../../src/db/pool.ts';
import { presentSubscription } from '../../src/presenters/subscription.ts';
import { runDueSubscriptions } from '../../src/subscriptions/engine.ts';
import type { SubscriptionRow } from '../../src/subscriptions/records.ts';
import type { TestApp } from '../helpers/app.ts';
import { assertError, startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;
let token: string;
let storeId: string;
const DAY = 86_400;

before(async () => {
  app = await startPaymentsApp();
  const store = await app.store({ methods: 'TON/TON' });
  token = store.token;
  storeId = store.id;
  // The store hears every subscription event (recorded as deliveries in the change's transaction).
  await app.pool.query(sql.unsafe`
    insert into webhook_endpoints (id, store_id, url, events, created_at)
    values (gen_random_uuid(), ${storeId}, 'https://shop.example/events',
            array['subscription.created','subscription.renewed','subscription.renewal_upcoming','subscription.payment_due','subscription.past_due','subscription.expired','subscription.cancelled'],
            now())
  `);
});
after(() => app?.close());

const post = (path: string, body: unknown, headers: Record<string, string> = {}) => app.request('POST', path, { token, body, headers });
const get = (path: string) => app.request('GET', path, { token });
/** The billing clock where the last advance left it. */
let clock = new Date();
const advance = async (seconds: number) => {
  const moved = await post('/sandbox/v1/clock/advance', { seconds });
  assert.equal(moved.status, 200, moved.text);
  clock = new Date(moved.json.now);
  return moved.json;
};
/** Moves the billing clock to `seconds` after `at` (a period's end, by the calendar of the month the test runs in). */
const advanceTo = (at: Date | string, seconds = 60) => advance(Math.max(1, Math.ceil((new Date(at).getTime() + seconds * 1000 - clock.getTime()) / 1000)));
const engine = () =>
  runDueSubscriptions({ pool: app.pool, config: app.config, now: app.clock.now, present: (row: SubscriptionRow) => presentSubscription(row, app.config) });
const ledger = async (id: string) => {
  const answer = await get(`/v1/subscriptions/${id}/ledger`);
  assert.equal(answer.status, 200, answer.text);
  return answer.json.data as Array<{
    kind: string;
    amount: string;
    balanceAfter: string;
    periodStart?: string;
    periodEnd?: string;
    actor: string;
    note?: string;
  }>;
};
/** The subscription's events, in the order the endpoint gets them (its deliveries' jobs). */
const events = async (id: string) =>
  app.pool.anyFirst(sql.type(z.object({ event: z.string() }))`
    select d.event from webhook_deliveries d
    join graphile_worker._private_jobs j on j.key = 'webhook__deliver:' || d.id::text
    where d.payload->'subscription'->>'id' = ${id} order by j.id
  `);
const renewals = async (id: string) =>
  app.pool.anyFirst(sql.type(z.object({ id: z.string() }))`select id from payments where subscription_id = ${id} order by created_at`);

async function plan(body: Record<string, unknown> = {}) {
  const created = await post('/v1/plans', { name: 'VPN monthly', currency: 'TON', amount: '2', interval: 'month', ...body });
  assert.equal(created.status, 201, created.text);
  return created.json;
}

describe('plans', () => {
  it('creates, lists, gets and archives a plan; an archived plan takes no new subscriber', async () => {
    const made = await plan({ intervalCount: 3, trialDays: 7, graceDays: 2, reminderDays: 5 });
    assert.deepEqual(
      { ...made, id: undefined, createdAt: undefined },
      {
        id: undefined,
        createdAt: undefined,
        name: 'VPN monthly',
        currency: 'TON',
        amount: '2',
        interval: 'month',
        intervalCount: 3,
        trialDays: 7,
        graceDays: 2,
        reminderDays: 5,
        customerMayCancel: true,
        active: true,
      },
    );
    assert.equal((await get(`/v1/plans/${made.id}`)).json.id, made.id);
    assert.ok((await get('/v1/plans')).json.data.some((p: { id: string }) => p.id === made.id));
    const archived = await post(`/v1/plans/${made.id}/archive`, {});
    assert.equal(archived.status, 200, archived.text);
    assert.equal(archived.json.active, false);
    assertError(await post('/v1/subscriptions', { planID: made.id, customer: { reference: 'u1' } }), 409, 'invalid_request_error', 'plan_archived', 'planID');
  });

  it('refuses what is not a plan, with its param', async () => {
    assertError(
      await post('/v1/plans', { name: 'x', currency: 'TON', amount: '2', interval: 'fortnight' }),
      400,
      'invalid_request_error',
      'invalid_interval',
      'interval',
    );
    assertError(
      await post('/v1/plans', { name: 'x', currency: 'TON', amount: '2', interval: 'day', graceDays: 91 }),
      400,
      'invalid_request_error',
      'invalid_days',
      'graceDays',
    );
    assertError(
      await post('/v1/plans', { name: 'x', currency: 'XYZ', amount: '2', interval: 'day' }),
      404,
      'not_found_error',
      'currency_not_found',
      'currency',
    );
    assertError(
      await post('/v1/plans', { name: '  ', currency: 'TON', amount: '2', interval: 'day' }),
      400,
      'invalid_request_error',
      'invalid_plan_name',
      'name',
    );
    assertError(await get('/v1/plans/00000000-0000-4000-8000-000000000000'), 404, 'not_found_error', 'plan_not_found', 'id');
    assertError(await get('/v1/plans/nope'), 400, 'invalid_request_error', 'invalid_plan_id', 'id');
    assertError(
      await post('/v1/subscriptions', { planID: (await plan()).id, customer: {} }),
      400,
      'invalid_request_error',
      'invalid_customer',
      'customer.reference',
    );
  });
});

describe('a subscription through its periods, by the billing clock', () => {
  it('trial → credit covers → renewed by the calendar → past_due with one renewal reused → paid by credit → active → grace → expired', async () => {
    const { id: planID } = await plan({ graceDays: 3, reminderDays: 3 });
    const key = crypto.randomUUID();
    const created = await post(
      '/v1/subscriptions',
      { planID, customer: { reference: 'user-1', email: 'a@shop.example' }, trialDays: 7 },
      { 'X-Idempotency-Key': key },
    );
    assert.equal(created.status, 201, created.text);
    const sub = created.json;
    assert.equal(sub.status, 'trialing');
    assert.equal(sub.credit, '0');
    assert.equal(sub.checkoutURL, undefined);
    assert.match(sub.portalURL, /\/s\/[A-Za-z0-9_-]{32}$/);
    const replay = await post(
      '/v1/subscriptions',
      { planID, customer: { reference: 'user-1', email: 'a@shop.example' }, trialDays: 7 },
      { 'X-Idempotency-Key': key },
    );
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.json.id, sub.id);
    const anchor = new Date(sub.currentPeriodEnd);
    assert.ok(Math.abs(anchor.getTime() - Date.now() - 7 * DAY * 1000) < 60_000);

    // Enough for two periods, by hand: a ledger adjustment with who and why, and an audit row.
    const credited = await post(`/v1/subscriptions/${sub.id}/credits`, { amount: '4', note: 'moved from the old billing' });
    assert.equal(credited.status, 200, credited.text);
    assert.equal(credited.json.credit, '4');
    const audit = await app.pool.one(sql.type(z.object({ action: z.string(), actor: z.string(), note: z.string() }))`
      select action, actor, detail->>'note' as note from audit_log where subject = ${sub.id}
    `);
    assert.deepEqual({ action: audit.action, note: audit.note }, { action: 'subscription.credit', note: 'moved from the old billing' });
    assert.equal((await ledger(sub.id))[0]!.actor, audit.actor, 'the ledger names the token, as the audit log does');

    await advanceTo(anchor);
    let now = (await get(`/v1/subscriptions/${sub.id}`)).json;
    assert.equal(now.status, 'active');
    assert.equal(now.credit, '2');
    const month = (n: number) => {
      const d = new Date(anchor);
      d.setUTCMonth(d.getUTCMonth() + n);
      return d;
    };
    assert.equal(now.currentPeriodEnd, month(1).toISOString());

    await advanceTo(month(1));
    now = (await get(`/v1/subscriptions/${sub.id}`)).json;
    assert.equal(now.status, 'active');
    assert.equal(now.credit, '0');
    assert.equal(now.currentPeriodEnd, month(2).toISOString());

    // 3 days before the end, with no credit for it: the reminder, once whatever reruns happen.
    await advanceTo(month(2), -2 * DAY);
    await engine();
    await engine();
    await advanceTo(month(2), -1 * DAY);
    await engine();

    await advanceTo(month(2));
    now = (await get(`/v1/subscriptions/${sub.id}`)).json;
    assert.equal(now.status, 'past_due');
    assert.ok(now.checkoutURL, 'past_due carries its renewal payment');
    const [renewal] = await renewals(sub.id);
    assert.equal(now.renewalPaymentID, renewal);
    const payment = (await get(`/v1/payments/${renewal}`)).json;
    assert.equal(payment.subscriptionID, sub.id);
    assert.equal(payment.amount, '2');
    assert.equal(payment.currency, 'TON');

    // Runs again and again (a restart, the next tick, a clock moved within the grace): the same one renewal.
    await engine();
    await engine();
    await advanceTo(month(2), 2 * DAY);
    await engine();
    assert.equal((await get(`/v1/subscriptions/${sub.id}`)).json.status, 'past_due');
    assert.deepEqual(await renewals(sub.id), [renewal]);

    // Credit that covers it (a manual credit here; paid-on-chain.test.ts pays it on the chain): active at once, the period by the calendar.
    const paid = await post(`/v1/subscriptions/${sub.id}/credits`, { amount: '2', note: 'paid by bank transfer' });
    assert.equal(paid.json.status, 'active');
    assert.equal(paid.json.currentPeriodEnd, month(3).toISOString());

    // Unpaid again, and the grace (3 days) ends: expired, final.
    await advanceTo(month(3));
    assert.equal((await get(`/v1/subscriptions/${sub.id}`)).json.status, 'past_due');
    await advanceTo(month(3), 3 * DAY);
    now = (await get(`/v1/subscriptions/${sub.id}`)).json;
    assert.equal(now.status, 'expired');
    assert.ok(now.expiredAt);
    await advance(60 * DAY);
    assert.equal((await get(`/v1/subscriptions/${sub.id}`)).json.status, 'expired');

    const entries = await ledger(sub.id);
    assert.deepEqual(
      entries.map((e) => [e.kind, e.amount, e.balanceAfter]),
      [
        ['adjustment', '4', '4'],
        ['charge', '-2', '2'],
        ['charge', '-2', '0'],
        ['adjustment', '2', '2'],
        ['charge', '-2', '0'],
      ],
    );
    // Each charge names its period, counted from the anchor.
    assert.deepEqual(
      entries.filter((e) => e.kind === 'charge').map((e) => [e.periodStart, e.periodEnd]),
      [0, 1, 2].map((n) => [month(n).toISOString(), month(n + 1).toISOString()]),
    );
    assert.equal(entries[0]!.note, 'moved from the old billing');
    assert.deepEqual(await events(sub.id), [
      'subscription.created',
      'subscription.renewed',
      'subscription.renewed',
      'subscription.renewal_upcoming',
      'subscription.past_due',
      'subscription.payment_due',
      'subscription.renewed',
      'subscription.past_due',
      'subscription.payment_due',
      'subscription.expired',
    ]);
  });

  it('without a trial: past_due at once with its first payment; an overpaid credit renews several periods as they come', async () => {
    const { id: planID } = await plan({ interval: 'day', reminderDays: 0 });
    const created = await post('/v1/subscriptions', { planID, customer: { reference: 'user-2', telegramUserID: 777 } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.status, 'past_due');
    assert.ok(created.json.checkoutURL);
    assert.equal(created.json.customer.telegramUserID, 777);
    const id = created.json.id;
    const paid = await post(`/v1/subscriptions/${id}/credits`, { amount: '6', note: 'three periods at once' });
    assert.equal(paid.json.status, 'active');
    assert.equal(paid.json.credit, '4');
    await advanceTo(paid.json.currentPeriodEnd);
    await advanceTo((await get(`/v1/subscriptions/${id}`)).json.currentPeriodEnd);
    const now = (await get(`/v1/subscriptions/${id}`)).json;
    assert.equal(now.status, 'active');
    assert.equal(now.credit, '0');
    assert.equal((await ledger(id)).filter((e) => e.kind === 'charge').length, 3);
    assert.deepEqual(
      (await get(`/v1/subscriptions?customer_reference=user-2`)).json.data.map((s: { id: string }) => s.id),
      [id],
    );
    assert.ok((await get('/v1/subscriptions?status=active')).json.data.some((s: { id: string }) => s.id === id));
  });

  it('cancel at the period’s end keeps it until then; cancel now ends it; an ended one is refused', async () => {
    const { id: planID } = await plan({ trialDays: 2 });
    const a = (await post('/v1/subscriptions', { planID, customer: { reference: 'user-3' } })).json;
    const later = await post(`/v1/subscriptions/${a.id}/cancel`, { atPeriodEnd: true });
    assert.equal(later.status, 200, later.text);
    assert.equal(later.json.status, 'trialing');
    assert.equal(later.json.cancelAtPeriodEnd, true);
    await advanceTo(a.currentPeriodEnd);
    assert.equal((await get(`/v1/subscriptions/${a.id}`)).json.status, 'cancelled');
    assert.equal((await renewals(a.id)).length, 0, 'no renewal for a subscription cancelled at its period’s end');
    const b = (await post('/v1/subscriptions', { planID, customer: { reference: 'user-3' } })).json;
    const now = await post(`/v1/subscriptions/${b.id}/cancel`, {});
    assert.equal(now.json.status, 'cancelled');
    assert.equal((await post(`/v1/subscriptions/${b.id}/cancel`, {})).json.status, 'cancelled');
    // Its trial (2 days) is shorter than the plan's reminder (3 days): told at once that the renewal is coming.
    assert.deepEqual(await events(b.id), ['subscription.created', 'subscription.renewal_upcoming', 'subscription.cancelled']);
    assertError(await get('/v1/subscriptions/00000000-0000-4000-8000-000000000000'), 404, 'not_found_error', 'subscription_not_found', 'id');
  });

  it('the ledger is append-only: the database refuses an update or a delete', async () => {
    await assert.rejects(app.pool.query(sql.unsafe`update subscription_ledger set amount = 0`), /append-only/);
    await assert.rejects(app.pool.query(sql.unsafe`delete from subscription_ledger`), /append-only/);
  });
});
