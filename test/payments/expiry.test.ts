// Expiry: one statement for every due payment (payments/commands.ts, expireDuePayments) — created payments on the wall
// clock, pending ones on the chain's clock (chain_reader.settled_until) — no job per payment.
import crypto from 'node:crypto';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runJobsOnce } from '../helpers/jobs.ts';
import { pino } from 'pino';
import { openPool, sql, z } from '../../src/db/pool.ts';
import { expireDuePayments, expirePayment } from '../../src/payments/commands.ts';
import { taskList } from '../../src/worker/tasks.ts';
import { TASKS } from '../../tasks/index.ts';
import type { TestApp } from '../helpers/app.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;
let store: Awaited<ReturnType<TestApp['store']>>;
const log = pino({ level: 'silent' });

before(async () => {
  app = await startPaymentsApp();
  store = await app.store();
});
after(() => app.close());

const status = async (id: string) => (await app.request('GET', `/v1/payments/${id}`, { token: store.token })).json;
const PENDING = { payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } };

describe('expiry', () => {
  it('a create adds no job and sends no NOTIFY of Graphile Worker', async () => {
    const before = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from graphile_worker.jobs`);
    // ttl 3600: never due in the next test, whose clocks stop short of 900 s from now.
    const payment = (await app.request('POST', '/v1/payments', { token: store.token, body: { amount: '1', currency: 'USD', ttl: 3600, ...PENDING } })).json;
    assert.equal(payment.status, 'pending');
    const after = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from graphile_worker.jobs`);
    assert.equal(after, before);
  });

  it("the rule: created by the wall clock, pending by the chain's clock; ended payments never", async () => {
    const make = async (body: Record<string, unknown>) => {
      const created = await app.request('POST', '/v1/payments', { token: store.token, body: { amount: '1', currency: 'USD', ttl: 900, ...body } });
      assert.equal(created.status, 201, created.text);
      return created.json.id as string;
    };
    const ids = [await make({}), await make(PENDING), await make(PENDING), await make({})];
    const [open, pendingA, pendingB, cancelled] = ids as [string, string, string, string];
    assert.equal((await app.request('POST', `/v1/payments/${cancelled}/cancel`, { token: store.token })).status, 200);
    // One expiresAt E for all (the first's), but E + 10 s for pendingB.
    const E = await app.pool.oneFirst(sql.type(z.object({ expires_at: z.date() }))`select expires_at from payments where id = ${open}`);
    const E2 = new Date(E.getTime() + 10_000);
    await app.pool.query(sql.unsafe`update payments set expires_at = ${sql.timestamp(E)} where id = any(${sql.array([pendingA, cancelled], 'uuid')})`);
    await app.pool.query(sql.unsafe`update payments set expires_at = ${sql.timestamp(E2)} where id = ${pendingB}`);
    const at = (date: Date, ms: number) => new Date(date.getTime() + ms);
    const statuses = async () => Promise.all(ids.map(async (id) => (await status(id)).status));

    // The chain read past E, the wall clock not yet: the created payment is not due, pendingA is.
    await expireDuePayments(app.pool, { now: at(E, -1000), chainSettledAt: at(E, 1000) });
    assert.deepEqual(await statuses(), ['created', 'expired', 'pending', 'cancelled']);
    // The wall clock past E2, the chain not read that far (or not at all): pendingB waits.
    await expireDuePayments(app.pool, { now: at(E2, 1000), chainSettledAt: at(E2, -1000) });
    await expireDuePayments(app.pool, { now: at(E2, 1000), chainSettledAt: null });
    assert.deepEqual(await statuses(), ['expired', 'expired', 'pending', 'cancelled']);
    // The chain read up to E2 exactly: pendingB is due, whatever the wall clock says.
    await expireDuePayments(app.pool, { now: at(E, -1000), chainSettledAt: E2 });
    assert.deepEqual(await statuses(), ['expired', 'expired', 'expired', 'cancelled']);
  });

  it('expires every due payment in one statement, 10,000 due at the same second included', async () => {
    const created = (await app.request('POST', '/v1/payments', { token: store.token, body: { amount: '1', currency: 'USD', ttl: 900 } })).json;
    const pending = (await app.request('POST', '/v1/payments', { token: store.token, body: { amount: '1', currency: 'USD', ttl: 900, ...PENDING } })).json;
    const expiresAt = new Date(Date.parse(pending.timer.expiresAt));
    // 10,000 more pending payments due at that very second (copies of the pending one).
    await app.pool.query(sql.unsafe`
      insert into payments (id, store_id, status, amount, currency, metadata, created_via, created_at, expires_at, payment_method_id, coin_symbol, coin_amount, coin_amount_base_units, method_selected_at)
      select gen_random_uuid(), store_id, 'pending', amount, currency, metadata, created_via, created_at, ${sql.timestamp(expiresAt)}, payment_method_id, coin_symbol, coin_amount, coin_amount_base_units, method_selected_at
      from payments p, generate_series(1, 10000) where p.id = ${pending.id}
    `);
    // The wall clock past expiresAt expires the created one only; the chain still behind expires no pending one.
    const wall = new Date(expiresAt.getTime() + 1000);
    assert.equal(await expireDuePayments(app.pool, { now: wall, chainSettledAt: new Date(expiresAt.getTime() - 1000) }), 1);
    assert.equal((await status(created.id)).status, 'expired');
    assert.equal((await status(pending.id)).status, 'pending');
    // Through a pool that counts the statements sent: the 10,001 expire in one.
    let statements = 0;
    const counted = await openPool(app.db.url, {
      maxPoolSize: 1,
      interceptors: [
        {
          name: 'count-statements',
          beforeQueryExecution: () => {
            statements += 1;
            return null;
          },
        },
      ],
    });
    try {
      assert.ok((await expireDuePayments(counted, { now: wall, chainSettledAt: expiresAt })) >= 10_001);
    } finally {
      await counted.end();
    }
    assert.equal(statements, 1);
    const after = await status(pending.id);
    assert.equal(after.status, 'expired');
    assert.deepEqual(after.paymentDetails, pending.paymentDetails, 'paymentDetails remain');
    assert.equal(await expireDuePayments(app.pool, { now: wall, chainSettledAt: expiresAt }), 0, 'safe to run again');
  });

  it('expirePayment (the sandbox control) leaves completed and cancelled payments alone, and is safe to run twice', async () => {
    const payment = (await app.request('POST', '/v1/payments', { token: store.token, body: { amount: '1', currency: 'USD' } })).json;
    await app.request('POST', `/v1/payments/${payment.id}/cancel`, { token: store.token });
    const late = new Date(Date.parse(payment.timer.expiresAt) + 1);
    assert.equal((await expirePayment(app.pool, payment.id, late)).outcome, 'not_open');
    const other = (await app.request('POST', '/v1/payments', { token: store.token, body: { amount: '1', currency: 'USD' } })).json;
    const otherLate = new Date(Date.parse(other.timer.expiresAt) + 1);
    assert.equal((await expirePayment(app.pool, other.id, new Date())).outcome, 'not_due');
    assert.equal((await expirePayment(app.pool, other.id, otherLate)).outcome, 'expired');
    assert.equal((await expirePayment(app.pool, other.id, otherLate)).outcome, 'not_open');
    const expiredAt = await app.pool.oneFirst(sql.type(z.object({ expired_at: z.date() }))`select expired_at from payments where id = ${other.id}`);
    assert.equal(expiredAt.getTime(), otherLate.getTime());
  });
});

describe('idempotency__purge', () => {
  it('deletes keys older than 24 hours', async () => {
    const key = crypto.randomUUID();
    await app.request('POST', '/v1/payments', { token: store.token, headers: { 'x-idempotency-key': key }, body: { amount: '1', currency: 'USD' } });
    await app.pool.query(sql.unsafe`update idempotency_keys set created_at = now() - interval '25 hours' where idempotency_key = ${key}`);
    await app.pool.query(sql.unsafe`select graphile_worker.add_job('idempotency__purge')`);
    const deps = { config: app.config, pool: app.pool, log, now: app.clock.now };
    await runJobsOnce({ connectionString: app.db.url, taskList: taskList(deps, TASKS), noHandleSignals: true });
    const left = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from idempotency_keys where idempotency_key = ${key}`);
    assert.equal(left, 0);
  });
});
