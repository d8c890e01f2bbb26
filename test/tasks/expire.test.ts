// The payment__expire job: added with the payment, at run_at = expiresAt, and run by Graphile
import crypto from 'node:crypto';
// Worker with the real task list.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runOnce } from 'graphile-worker';
import { pino } from 'pino';
import { sql, z } from '../../src/db/pool.ts';
import { expirePayment } from '../../src/payments/commands.ts';
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

const job = z.object({ task_identifier: z.string(), run_at: z.date(), key: z.string().nullable(), payload: z.unknown() });

/** Makes the payment's expiry job due now and runs every due job once, with the app's clock. */
async function runExpiryJob(paymentId: string): Promise<void> {
  await app.pool.query(sql.unsafe`update graphile_worker._private_jobs set run_at = now() where key = ${`payment__expire:${paymentId}`}`);
  const deps = { config: app.config, pool: app.pool, log, now: app.clock.now };
  await runOnce({ connectionString: app.db.url, taskList: taskList(deps, TASKS), noHandleSignals: true });
}

describe('payment__expire', () => {
  it('is added in the creating transaction with run_at = expiresAt and a job_key per payment', async () => {
    const payment = (await app.request('POST', '/v1/payments', { token: store.token, body: { amount: '1', currency: 'USD', ttl: 900 } })).json;
    const row = await app.pool.one(sql.type(job)`select t.identifier as task_identifier, j.run_at, j.key, j.payload from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where j.key = ${`payment__expire:${payment.id}`}`);
    assert.equal(row.task_identifier, 'payment__expire');
    assert.equal(row.run_at.toISOString(), payment.timer.expiresAt);
    assert.deepEqual(row.payload, { paymentId: payment.id });
  });

  it('expires a created payment when run after expiresAt (through Graphile Worker)', async () => {
    const payment = (await app.request('POST', '/v1/payments', { token: store.token, body: { amount: '1', currency: 'USD', ttl: 900 } })).json;
    app.clock.set(new Date(Date.parse(payment.timer.expiresAt) + 1000));
    try {
      await runExpiryJob(payment.id);
    } finally {
      app.clock.set(new Date());
    }
    const after = (await app.request('GET', `/v1/payments/${payment.id}`, { token: store.token })).json;
    assert.equal(after.status, 'expired');
    assert.equal(after.paymentDetails, undefined);
    const left = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from graphile_worker.jobs where key = ${`payment__expire:${payment.id}`}`);
    assert.equal(left, 0, 'the job is done');
  });

  it('expires a pending payment (paymentDetails remain) after asking the chain once more', async () => {
    const payment = (await app.request('POST', '/v1/payments', { token: store.token, body: { amount: '1', currency: 'USD', payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } } })).json;
    const asked: string[] = [];
    const result = await expirePayment(app.pool, payment.id, new Date(Date.parse(payment.timer.expiresAt)), {
      beforeExpiringPending: async (id) => {
        asked.push(id);
      },
    });
    assert.deepEqual(asked, [payment.id]);
    assert.equal(result.outcome, 'expired');
    const after = (await app.request('GET', `/v1/payments/${payment.id}`, { token: store.token })).json;
    assert.equal(after.status, 'expired');
    assert.deepEqual(after.paymentDetails, payment.paymentDetails);
  });

  it('leaves completed and cancelled payments alone, and is safe to run twice', async () => {
    const payment = (await app.request('POST', '/v1/payments', { token: store.token, body: { amount: '1', currency: 'USD' } })).json;
    await app.request('POST', `/v1/payments/${payment.id}/cancel`, { token: store.token });
    const late = new Date(Date.parse(payment.timer.expiresAt) + 1);
    assert.equal((await expirePayment(app.pool, payment.id, late)).outcome, 'not_open');
    const other = (await app.request('POST', '/v1/payments', { token: store.token, body: { amount: '1', currency: 'USD' } })).json;
    assert.equal((await expirePayment(app.pool, other.id, late)).outcome, 'expired');
    assert.equal((await expirePayment(app.pool, other.id, late)).outcome, 'not_open');
    const expiredAt = await app.pool.oneFirst(sql.type(z.object({ expired_at: z.date() }))`select expired_at from payments where id = ${other.id}`);
    assert.equal(expiredAt.getTime(), late.getTime());
  });

  it('reschedules itself when run before expiresAt', async () => {
    const payment = (await app.request('POST', '/v1/payments', { token: store.token, body: { amount: '1', currency: 'USD' } })).json;
    assert.equal((await expirePayment(app.pool, payment.id, new Date())).outcome, 'not_due');
    const row = await app.pool.one(sql.type(job)`select t.identifier as task_identifier, j.run_at, j.key, j.payload from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where j.key = ${`payment__expire:${payment.id}`}`);
    assert.equal(row.run_at.toISOString(), payment.timer.expiresAt);
    assert.equal((await app.request('GET', `/v1/payments/${payment.id}/status`, { token: store.token })).json.status, 'created');
  });

  it('drops a payload without a payment id instead of failing forever', async () => {
    await app.pool.query(sql.unsafe`select graphile_worker.add_job('payment__expire', '{"nope": 1}'::json)`);
    const deps = { config: app.config, pool: app.pool, log, now: app.clock.now };
    await runOnce({ connectionString: app.db.url, taskList: taskList(deps, TASKS), noHandleSignals: true });
    const failed = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'payment__expire' and last_error is not null`);
    assert.equal(failed, 0);
  });
});

describe('idempotency__purge', () => {
  it('deletes keys older than 24 hours', async () => {
    const key = crypto.randomUUID();
    await app.request('POST', '/v1/payments', { token: store.token, headers: { 'x-idempotency-key': key }, body: { amount: '1', currency: 'USD' } });
    await app.pool.query(sql.unsafe`update idempotency_keys set created_at = now() - interval '25 hours' where idempotency_key = ${key}`);
    await app.pool.query(sql.unsafe`select graphile_worker.add_job('idempotency__purge')`);
    const deps = { config: app.config, pool: app.pool, log, now: app.clock.now };
    await runOnce({ connectionString: app.db.url, taskList: taskList(deps, TASKS), noHandleSignals: true });
    const left = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from idempotency_keys where idempotency_key = ${key}`);
    assert.equal(left, 0);
  });
});
