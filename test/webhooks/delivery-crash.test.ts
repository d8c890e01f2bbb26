// At least once: a worker killed in the middle of a webhook request leaves its attempt visible
// (finished_at null), and the job — still locked by the dead worker — is run again once the lock is
// released, which makes the next attempt. The worker is a real child process running Graphile
// Worker with the real task list and heartbeats, as `kassa start --worker` does; it is SIGKILLed
// while the receiver holds the request. The lock is released either by worker__unlock_dead (run
// with its clock 2 minutes ahead) or by Graphile Worker's own 4-hour lock timeout (locked_at aged
// in the database).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { run } from 'graphile-worker';
import { runJobsOnce } from '../helpers/jobs.ts';
import { pino } from 'pino';
import { graphileLogger } from '../../src/db/migrate.ts';
import { sql, z } from '../../src/db/pool.ts';
import { taskList } from '../../src/worker/tasks.ts';
import { deliverJobKey } from '../../src/worker/jobs.ts';
import { INTERRUPTED_ERROR } from '../../src/webhooks/deliver.ts';
import { DEAD_AFTER_MS } from '../../src/worker/liveness.ts';
import { createWebhookVerifier } from '../../src/webhooks/receiver.ts';
import { TASKS } from '../../tasks/index.ts';
import webhookDeliver from '../../tasks/webhook__deliver.ts';
import type { TestApp } from '../helpers/app.ts';
import { buildPayment } from '../helpers/factories.ts';
import { startPaymentsApp } from '../helpers/payments.ts';
import { close, listen } from '../helpers/servers.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const log = pino({ level: 'silent' });
let app: TestApp;
let store: Awaited<ReturnType<TestApp['store']>>;

before(async () => {
  app = await startPaymentsApp({ env: { WEBHOOK_ALLOW_INSECURE: 'true' } });
  store = await app.store();
});
after(() => app.close());

/** The worker process: Graphile Worker's `run` with the real task list, as `kassa start --worker` runs it. */
const CHILD = `
import { pathToFileURL } from 'node:url';
import { run } from 'graphile-worker';
import { pino } from 'pino';
const src = (p) => import(pathToFileURL(process.env.KASSA_ROOT + p).href);
const { loadConfig } = await src('/src/config.ts');
const { openPool } = await src('/src/db/pool.ts');
const { graphileLogger } = await src('/src/db/migrate.ts');
const { taskList } = await src('/src/worker/tasks.ts');
const { TASKS } = await src('/tasks/index.ts');
const { default: webhookDeliver } = await src('/tasks/webhook__deliver.ts');
const { startHeartbeat } = await src('/src/worker/liveness.ts');
const url = process.env.DATABASE_URL;
const config = loadConfig({ DATABASE_URL: url, WEBHOOK_ALLOW_INSECURE: 'true' });
const log = pino({ level: 'silent' });
const deps = { config, pool: await openPool(url), log, now: () => new Date() };
const heartbeat = startHeartbeat(deps.pool, log, deps.now);
await run({ events: heartbeat.events, connectionString: url, taskList: taskList(deps, { ...TASKS, webhook__deliver: webhookDeliver }), noHandleSignals: true, pollInterval: 100, logger: graphileLogger(log, true) });
process.stdout.write('worker started\\n');
`;

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms).unref())]);
}

interface Crashed {
  paymentId: string;
  deliveryId: string;
  /** Raw bodies received, in order. */
  bodies: string[];
  /** The dead worker's Graphile worker id (the job's locked_by). */
  deadWorker: string;
  deliveries(): Promise<Array<{ status: string; attempts: Array<Record<string, any>> }>>;
  cleanup(): Promise<void>;
}

const deps = () => ({ config: app.config, pool: app.pool, log, now: () => new Date() });
const deliverTasks = () => taskList(deps(), { webhook__deliver: webhookDeliver });

/** A completed payment whose first delivery attempt is under way in a child worker that is then SIGKILLed. */
async function crashDuringFirstAttempt(orderId: string): Promise<Crashed> {
  const verifier = createWebhookVerifier({ keysUrl: `${app.url}/pay/v1/webhook/keys`, storeID: store.id });
  const bodies: string[] = [];
  let arrived: () => void = () => {};
  const firstArrived = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      bodies.push(raw.toString('utf8'));
      if (bodies.length === 1) {
        arrived(); // …and never answer: the worker is killed while it waits
        return;
      }
      void verifier.verify(raw, req.headers).then((result) => res.writeHead(result.ok ? 200 : result.status).end());
    });
  });
  const { port } = await listen(server);
  const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD], {
    cwd: ROOT,
    env: { ...process.env, KASSA_ROOT: ROOT, DATABASE_URL: app.db.url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let childOutput = '';
  child.stdout.on('data', (chunk: Buffer) => (childOutput += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (childOutput += chunk.toString()));
  const cleanup = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    await close(server);
  };
  try {
    const { id: paymentId, deliveryId } = await buildPayment(app, store, {
      status: 'completed',
      webhook: true,
      body: { amount: '2', currency: 'TON', webhookURL: `http://127.0.0.1:${port}/hook`, order_id: orderId },
    });
    assert.ok(deliveryId);
    await withTimeout(firstArrived, 20_000, `the first request (worker output: ${childOutput})`);
    child.kill('SIGKILL');
    await once(child, 'exit');

    const job = await app.pool.one(sql.type(z.object({ attempts: z.number(), locked_by: z.string().nullable() }))`
      select attempts, locked_by from graphile_worker.jobs where key = ${deliverJobKey(deliveryId)}
    `);
    assert.equal(job.attempts, 1);
    assert.ok(job.locked_by, 'the dead worker still holds the job');
    const deliveries = async () => {
      const response = await app.request('GET', `/v1/payments/${paymentId}/webhook-deliveries`, { token: store.token });
      assert.equal(response.status, 200, response.text);
      return response.json.data as Array<{ status: string; attempts: Array<Record<string, any>> }>;
    };
    return { paymentId, deliveryId, bodies, deadWorker: job.locked_by, deliveries, cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** What every crash leaves, and what the recovery must show. */
async function assertInterruptedThenDelivered(crashed: Crashed, orderId: string): Promise<void> {
  const [delivery] = await crashed.deliveries();
  assert.equal(delivery?.status, 'delivered');
  assert.deepEqual(
    delivery?.attempts.map((a) => [a.attempt, a.finishedAt === null, a.httpStatus, a.error]),
    [
      [1, true, null, INTERRUPTED_ERROR],
      [2, false, 200, null],
    ],
  );
  assert.equal(crashed.bodies.length, 2);
  const [one, two] = crashed.bodies.map((b) => JSON.parse(b));
  assert.deepEqual(one.payload, { paymentID: crashed.paymentId, status: 'completed', metadata: {}, order_id: orderId, storeID: store.id });
  assert.deepEqual(two.payload, one.payload);
  assert.notEqual(one.signAt, two.signAt, 'the second attempt is signed afresh');
  const left = await app.pool.oneFirst(
    sql.type(z.object({ n: z.number() }))`select count(*)::int as n from graphile_worker.jobs where key = ${deliverJobKey(crashed.deliveryId)}`,
  );
  assert.equal(left, 0);
}

describe('a worker killed mid-request', () => {
  it('leaves the attempt visible and unfinished; worker__unlock_dead frees the job and attempt 2 follows', async () => {
    const crashed = await crashDuringFirstAttempt('crash-1');
    try {
      // The attempt was recorded before the request was sent: it is visible, unfinished.
      let [delivery] = await crashed.deliveries();
      assert.equal(delivery?.status, 'pending');
      assert.equal(delivery?.attempts.length, 1);
      assert.equal(delivery?.attempts[0]?.attempt, 1);
      assert.ok(delivery?.attempts[0]?.startedAt);
      assert.equal(delivery?.attempts[0]?.finishedAt, null);
      assert.equal(delivery?.attempts[0]?.httpStatus, null);
      assert.equal(delivery?.attempts[0]?.error, null);

      // While the lock holds, another worker does not take the job.
      await runJobsOnce({ connectionString: app.db.url, taskList: deliverTasks(), noHandleSignals: true, logger: graphileLogger(log, true) });
      assert.equal(crashed.bodies.length, 1);

      // worker__unlock_dead, through Graphile Worker, with its clock past the 2-minute liveness limit.
      const later = () => new Date(Date.now() + DEAD_AFTER_MS + 5_000);
      await app.pool.query(sql.unsafe`select graphile_worker.add_job('worker__unlock_dead', '{}'::json)`);
      await runJobsOnce({
        connectionString: app.db.url,
        taskList: taskList({ ...deps(), now: later }, { worker__unlock_dead: TASKS.worker__unlock_dead! }),
        noHandleSignals: true,
        logger: graphileLogger(log, true),
      });
      // The freed job runs again (real clock): attempt 2.
      await runJobsOnce({ connectionString: app.db.url, taskList: deliverTasks(), noHandleSignals: true, logger: graphileLogger(log, true) });
      [delivery] = await crashed.deliveries();
      assert.equal(delivery?.status, 'delivered', JSON.stringify(delivery));
      await assertInterruptedThenDelivered(crashed, 'crash-1');
    } finally {
      await crashed.cleanup();
    }
  });

  it("without heartbeats' help, Graphile Worker's 4-hour lock timeout frees the job, and attempt 2 follows", async () => {
    const crashed = await crashDuringFirstAttempt('crash-2');
    try {
      await app.pool.query(
        sql.unsafe`update graphile_worker._private_jobs set locked_at = now() - interval '4 hours 1 minute' where key = ${deliverJobKey(crashed.deliveryId)}`,
      );
      // Deliveries run in per-store queues: the crashed worker's lock on the queue is as old.
      await app.pool.query(
        sql.unsafe`update graphile_worker._private_job_queues set locked_at = now() - interval '4 hours 1 minute' where locked_at is not null`,
      );
      const runner = await run({
        connectionString: app.db.url,
        taskList: deliverTasks(),
        noHandleSignals: true,
        pollInterval: 50,
        minResetLockedInterval: 1,
        maxResetLockedInterval: 20,
        logger: graphileLogger(log, true),
      });
      try {
        const deadline = Date.now() + 15_000;
        while ((await crashed.deliveries())[0]?.status !== 'delivered') {
          assert.ok(Date.now() < deadline, 'the delivery was retried and delivered');
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      } finally {
        await runner.stop();
      }
      await assertInterruptedThenDelivered(crashed, 'crash-2');
    } finally {
      await crashed.cleanup();
    }
  });
});
