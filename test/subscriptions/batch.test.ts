// The engine's batch (issue 45; src/subscriptions/engine.ts, chargeFromCredit): the common case
// "the credit covers every period due" is written for a whole batch at once, by calendar.ts's steps
// (no second copy of the calendar in SQL). Proven here against the one-by-one path on twins: for each
// case two subscriptions alike in all but their ids, one run by `runSubscription` (one by one), the
// other by the batch; their ledgers, their rows and their subscription.renewed events must be the
// same. Cases: the month-end rule over many months (anchored Jan 31), a year anchored on Feb 29,
// weeks and days of several counts, a trial's first charge, past_due paid by credit, a fiat price
// with cents. A subscription the batch must not charge (its credit runs out: a shortfall; a
// reminder after the charge; cancel at the period's end) is left to the one-by-one path untouched.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql, z } from '../../src/db/pool.ts';
import { presentSubscription } from '../../src/presenters/subscription.ts';
import { BATCH_SIZE, billingNow, chargeFromCredit, runDueSubscriptionsFor, runSubscription } from '../../src/subscriptions/engine.ts';
import type { SubscriptionRow } from '../../src/subscriptions/records.ts';
import type { TestApp } from '../helpers/app.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;
let storeId: string;

before(async () => {
  app = await startPaymentsApp();
  storeId = (await app.store({ methods: 'TON/TON' })).id;
  await app.pool.query(sql.unsafe`
    insert into webhook_endpoints (id, store_id, url, events, created_at)
    values (gen_random_uuid(), ${storeId}, 'https://shop.example/events', array['subscription.renewed'], now())
  `);
});
after(() => app?.close());

const deps = () => ({ pool: app.pool, config: app.config, now: app.clock.now, present: (row: SubscriptionRow) => presentSubscription(row, app.config) });

async function plan(unit: string, count: number, amount: string, currency = 'TON', reminderDays = 3): Promise<string> {
  const id = crypto.randomUUID();
  await app.pool.query(sql.unsafe`
    insert into plans (id, store_id, name, currency, amount, interval_unit, interval_count, trial_days, grace_days, reminder_days, created_at)
    values (${id}, ${storeId}, ${`Plan ${unit} ${count}`}, ${currency}, ${amount}, ${unit}, ${count}, 0, 3, ${reminderDays}, now())
  `);
  return id;
}

interface Case {
  name: string;
  planId: string;
  status: 'trialing' | 'active' | 'past_due';
  anchor: Date;
  periodsCharged: number;
  periodEnd: Date;
  credit: string;
  cancelAtPeriodEnd?: boolean;
}

/** A subscription as the case says, due now. */
async function insert(c: Case, reference: string): Promise<string> {
  const id = crypto.randomUUID();
  await app.pool.query(sql.unsafe`
    insert into subscriptions (id, store_id, plan_id, customer_reference, status, anchor_at, periods_charged, current_period_end, credit,
                               cancel_at_period_end, next_run_at, portal_token_hash, created_at)
    values (${id}, ${storeId}, ${c.planId}, ${reference}, ${c.status}, ${sql.timestamp(c.anchor)}, ${c.periodsCharged},
            ${sql.timestamp(c.periodEnd)}, ${c.credit}, ${c.cancelAtPeriodEnd ?? false}, now() - interval '1 minute',
            sha256(convert_to(${crypto.randomUUID()}, 'UTF8')), ${sql.timestamp(c.anchor)})
  `);
  return id;
}

/** What a subscription's run wrote, without what differs between twins (ids, the run's own time, the reference). */
async function written(id: string) {
  const row = await app.pool.one(
    sql.type(z.object({ status: z.string(), periods_charged: z.number(), current_period_end: z.date(), credit: z.string(), next_run_at: z.date().nullable() }))`
      select status, periods_charged, current_period_end, trim_scale(credit)::text as credit, next_run_at from subscriptions where id = ${id}
    `,
  );
  const ledger = await app.pool.any(
    sql.type(
      z.object({
        kind: z.string(),
        amount: z.string(),
        currency: z.string(),
        balance_after: z.string(),
        period_start: z.date(),
        period_end: z.date(),
        actor: z.string(),
        note: z.string(),
      }),
    )`
      select kind, trim_scale(amount)::text as amount, currency, trim_scale(balance_after)::text as balance_after, period_start, period_end, actor, note
      from subscription_ledger where subscription_id = ${id} order by position
    `,
  );
  const events = await app.pool.any(sql.type(z.object({ event: z.string(), payload: z.record(z.string(), z.unknown()) }))`
    select d.event, d.payload from webhook_deliveries d
    join graphile_worker._private_jobs j on j.key = 'webhook__deliver:' || d.id::text
    where d.payload->'subscription'->>'id' = ${id} order by j.id
  `);
  const sameForTwins = (payload: Record<string, unknown>) => {
    const { id: _id, portalURL: _portal, customer: _customer, createdAt: _created, ...subscription } = payload.subscription as Record<string, unknown>;
    return { ...payload, subscription };
  };
  return { row, ledger, events: events.map((e) => ({ event: e.event, payload: sameForTwins(e.payload) })) };
}

const utc = (y: number, m: number, d: number, h = 10) => new Date(Date.UTC(y, m, d, h));

describe('the batch charges from credit as the one-by-one path does', () => {
  it('writes the same ledger, rows and events for each case, by the calendar', async () => {
    const now = await billingNow(app.pool, 'sandbox');
    const year = now.getUTCFullYear();
    const monthly = await plan('month', 1, '2');
    const quarterly = await plan('month', 3, '1.5');
    const yearly = await plan('year', 1, '20');
    const fortnightly = await plan('week', 2, '0.7');
    const everyThreeDays = await plan('day', 3, '0.1');
    const fiat = await plan('month', 1, '4.99', 'USD', 0);
    const cases: Case[] = [
      // Jan 31 of last year, its first period charged: every month end since, by the calendar.
      {
        name: 'month end',
        planId: monthly,
        status: 'active',
        anchor: utc(year - 1, 0, 31),
        periodsCharged: 1,
        periodEnd: utc(year - 1, 1, 28),
        credit: '1000',
      },
      {
        name: 'quarters',
        planId: quarterly,
        status: 'active',
        anchor: utc(year - 2, 7, 31),
        periodsCharged: 1,
        periodEnd: utc(year - 2, 10, 30),
        credit: '100',
      },
      { name: 'Feb 29', planId: yearly, status: 'active', anchor: utc(2024, 1, 29), periodsCharged: 1, periodEnd: utc(2025, 1, 28), credit: '100' },
      {
        name: 'fortnights',
        planId: fortnightly,
        status: 'active',
        anchor: new Date(now.getTime() - 100 * 86_400_000),
        periodsCharged: 1,
        periodEnd: new Date(now.getTime() - 86 * 86_400_000),
        credit: '10',
      },
      {
        name: 'days, a trial',
        planId: everyThreeDays,
        status: 'trialing',
        anchor: new Date(now.getTime() - 10 * 86_400_000),
        periodsCharged: 0,
        periodEnd: new Date(now.getTime() - 10 * 86_400_000),
        credit: '1',
      },
      {
        name: 'past_due, credit came',
        planId: monthly,
        status: 'past_due',
        anchor: new Date(now.getTime() - 40 * 86_400_000),
        periodsCharged: 1,
        periodEnd: new Date(now.getTime() - 86_400_000),
        credit: '4.5',
      },
      { name: 'fiat cents', planId: fiat, status: 'active', anchor: utc(year - 1, 2, 31), periodsCharged: 1, periodEnd: utc(year - 1, 3, 30), credit: '99.99' },
    ];
    const twins = [];
    for (const c of cases) {
      const one = await insert(c, `${c.name} one by one`);
      assert.equal(await runSubscription(deps(), one), true, c.name);
      const batched = await insert(c, `${c.name} batch`);
      twins.push({ c, one, batched });
    }
    const batch = await app.pool.transaction((tx) => chargeFromCredit(tx, deps(), now, 500));
    assert.deepEqual(batch, { due: cases.length, charged: cases.length, others: [] });
    for (const { c, one, batched } of twins) {
      const expected = await written(one);
      assert.ok(expected.ledger.length >= 1, c.name);
      assert.equal(expected.events.length, expected.ledger.length, c.name);
      assert.deepEqual(await written(batched), expected, c.name);
    }
  });

  it('leaves to the one-by-one path what is not only charges: a shortfall, a reminder after the charge, a cancel', async () => {
    const now = await billingNow(app.pool, 'sandbox');
    const monthly = await plan('month', 1, '2');
    const daily = await plan('day', 1, '2', 'TON', 1);
    const ago = (days: number) => new Date(now.getTime() - days * 86_400_000);
    const short = await insert(
      { name: 'short', planId: monthly, status: 'active', anchor: ago(100), periodsCharged: 1, periodEnd: ago(70), credit: '4' },
      'short',
    );
    const remind = await insert(
      { name: 'remind', planId: daily, status: 'active', anchor: ago(1.5), periodsCharged: 1, periodEnd: ago(0.5), credit: '2' },
      'remind',
    );
    const cancel = await insert(
      { name: 'cancel', planId: monthly, status: 'active', anchor: ago(40), periodsCharged: 1, periodEnd: ago(10), credit: '10', cancelAtPeriodEnd: true },
      'cancel',
    );
    const batch = await app.pool.transaction((tx) => chargeFromCredit(tx, deps(), now, 500));
    assert.deepEqual({ ...batch, others: [...batch.others].sort() }, { due: 3, charged: 0, others: [short, remind, cancel].sort() });
    for (const id of [short, remind, cancel]) {
      const untouched = await written(id);
      assert.deepEqual([untouched.ledger, untouched.events, untouched.row.periods_charged], [[], [], 1]);
    }
  });

  it('the worker’s tick takes batch after batch until none is due', async () => {
    const now = await billingNow(app.pool, 'sandbox');
    const monthly = await plan('month', 1, '2');
    const count = 2 * BATCH_SIZE + 50;
    await app.pool.query(sql.unsafe`
      insert into subscriptions (id, store_id, plan_id, customer_reference, status, anchor_at, periods_charged, current_period_end, credit,
                                 next_run_at, portal_token_hash, created_at)
      select gen_random_uuid(), ${storeId}, ${monthly}, 'many-' || i, 'active', ${sql.timestamp(now)}::timestamptz - interval '1 month 1 minute', 1,
             ${sql.timestamp(now)}::timestamptz - interval '1 minute', 2, now() - interval '1 minute', sha256(convert_to('many' || i, 'UTF8')), now()
      from generate_series(1, ${count}) as i
    `);
    // (The three the test before left due are billed too, one by one.)
    assert.equal(await runDueSubscriptionsFor(deps(), 50_000), count + 3);
    const left = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from subscriptions where customer_reference like 'many-%' and (next_run_at <= now() or periods_charged <> 2)
    `);
    assert.equal(left, 0);
  });
});
