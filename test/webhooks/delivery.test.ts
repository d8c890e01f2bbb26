// webhook__deliver end to end: the real app (key set), real Postgres, real Graphile Worker runs
// (runOnce with the webhook__deliver task) and real HTTP receivers on 127.0.0.1. Receivers verify with the
// receiver kit against the app's own GET /pay/v1/webhook/keys.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { runJobsOnce } from '../helpers/jobs.ts';
import { pino } from 'pino';
import { graphileLogger } from '../../src/db/migrate.ts';
import { webhookAttempts } from '../../src/metrics.ts';
import { sql, z } from '../../src/db/pool.ts';
import { taskList } from '../../src/worker/tasks.ts';
import { enqueueWebhookDelivery, listWebhookDeliveries } from '../../src/webhooks/deliveries.ts';
import { DELIVER_MAX_ATTEMPTS, deliverJobKey } from '../../src/worker/jobs.ts';
import { DELIVERY_WINDOW_MS } from '../../src/webhooks/deliver.ts';
import { ROTATION_MIN_INTERVAL_MS, rotateSigningKey } from '../../src/webhooks/keys.ts';
import { createWebhookVerifier, type VerifyResult, type WebhookVerifier } from '../../src/webhooks/receiver.ts';
import { buildWebhookBody, verifyBody } from '../../src/webhooks/sign.ts';
import webhookDeliver from '../../tasks/webhook__deliver.ts';
import type { TestApp } from '../helpers/app.ts';
import { buildPayment } from '../helpers/factories.ts';
import { startPaymentsApp } from '../helpers/payments.ts';
import { close, freePort, listen } from '../helpers/servers.ts';

const log = pino({ level: 'silent' });
let app: TestApp;
let store: Awaited<ReturnType<TestApp['store']>>;

before(async () => {
  app = await startPaymentsApp({ env: { WEBHOOK_ALLOW_INSECURE: 'true' } });
  store = await app.store();
});
after(() => app.close());
// Every test starts with no job: a delivery one test leaves pending (its retry due seconds later)
// must not run inside the next test's runJobs (an extra request to a closed receiver, an extra
// attempt counted in kassa_webhook_attempts_total).
afterEach(async () => {
  await app.pool.query(sql.unsafe`delete from graphile_worker._private_jobs`);
  fixedNow = null;
});

// ---------------------------------------------------------------------------------------------
// Helpers: the worker's clock, running jobs, completing payments, receivers.

/** The worker's clock: real time unless fixed (the 12 h deadline tests). */
let fixedNow: Date | null = null;
const workerNow = (): Date => (fixedNow ? new Date(fixedNow) : new Date());

interface WorkerOptions {
  allowInsecure?: boolean;
  timeoutMs?: number;
}

/** Runs every due webhook__deliver job once through Graphile Worker (other tasks are left alone). */
async function runJobs(options: WorkerOptions = {}): Promise<void> {
  const deps = {
    config: { ...app.config, webhookAllowInsecure: options.allowInsecure ?? true },
    pool: app.pool,
    log,
    now: workerNow,
    webhookTimeoutMs: options.timeoutMs ?? 5_000,
  };
  await runJobsOnce({
    connectionString: app.db.url,
    taskList: taskList(deps, { webhook__deliver: webhookDeliver }),
    noHandleSignals: true,
    logger: graphileLogger(log, true),
  });
  // runOnce can resolve before Graphile's fail_job (not awaited by its worker) has handed a failed job
  // back with its new run_at: wait until no delivery job is locked.
  for (let i = 0; i < 500; i += 1) {
    const locked = await app.pool.oneFirst(
      sql.type(
        z.object({ n: z.number() }),
      )`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'webhook__deliver' and locked_at is not null`,
    );
    if (locked === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const jobRow = z.object({ attempts: z.number(), max_attempts: z.number(), run_at: z.date(), last_error: z.string().nullable(), payload: z.unknown() });

async function deliveryJob(deliveryId: string) {
  return app.pool.maybeOne(sql.type(jobRow)`
    select j.attempts, j.max_attempts, j.run_at, j.last_error, j.payload
    from graphile_worker._private_jobs j where j.key = ${deliverJobKey(deliveryId)}
  `);
}

/** Makes the delivery's retry due now (instead of waiting for Graphile Worker's backoff). */
async function makeDue(deliveryId: string): Promise<void> {
  await app.pool.query(sql.unsafe`update graphile_worker._private_jobs set run_at = now() where key = ${deliverJobKey(deliveryId)}`);
}

interface PaymentOptions {
  webhookURL?: string;
  order_id?: string;
  metadata?: Record<string, string>;
}

/** A payment created through the API, then completed directly, with its delivery enqueued in that transaction. */
async function completedPayment(options: PaymentOptions = {}): Promise<{ paymentId: string; deliveryId: string | null }> {
  const { id: paymentId, deliveryId } = await buildPayment(app, store, {
    status: 'completed',
    webhook: true,
    body: { amount: '1.5', currency: 'TON', ...options },
  });
  return { paymentId, deliveryId };
}

interface Received {
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  text: string;
  verified: VerifyResult | null;
}

type Respond = (request: Received, res: http.ServerResponse, index: number) => void;

interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  /** Resolves when the n-th request (1-based) has arrived. */
  arrived(n: number): Promise<Received>;
  close(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1 that records every request, verifies it with the kit, and answers as told. */
async function startReceiver(respond: Respond, options: { verifier?: WebhookVerifier; port?: number } = {}): Promise<Receiver> {
  const requests: Received[] = [];
  const waiting: Array<{ n: number; resolve: (r: Received) => void }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const raw = Buffer.concat(chunks);
        const verified = options.verifier ? await options.verifier.verify(raw, req.headers) : null;
        const received: Received = { headers: req.headers, raw, text: raw.toString('utf8'), verified };
        requests.push(received);
        for (const waiter of waiting.filter((w) => w.n <= requests.length)) {
          waiter.resolve(requests[waiter.n - 1]!);
          waiting.splice(waiting.indexOf(waiter), 1);
        }
        respond(received, res, requests.length);
      })();
    });
  });
  let port: number;
  if (options.port === undefined) {
    port = (await listen(server)).port;
  } else {
    port = options.port;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
  }
  return {
    url: `http://127.0.0.1:${port}/kassa/webhook`,
    port,
    requests,
    arrived: (n) => (requests.length >= n ? Promise.resolve(requests[n - 1]!) : new Promise((resolve) => waiting.push({ n, resolve }))),
    close: () => close(server),
  };
}

const keysUrl = (): string => `${app.url}/pay/v1/webhook/keys`;

/** A verifier against the app's key set, counting its key-set fetches. */
function appVerifier(): { verifier: WebhookVerifier; fetches: () => number } {
  let fetches = 0;
  const verifier = createWebhookVerifier({
    keysUrl: keysUrl(),
    storeID: store.id,
    fetch: (input, init) => {
      fetches += 1;
      return fetch(input, init);
    },
  });
  return { verifier, fetches: () => fetches };
}

const attemptRow = z.object({
  attempt: z.number(),
  kid: z.string().nullable(),
  signed_at: z.date().nullable(),
  started_at: z.date(),
  finished_at: z.date().nullable(),
});

async function attemptRows(deliveryId: string) {
  return app.pool.any(sql.type(attemptRow)`
    select attempt, kid, signed_at, started_at, finished_at from webhook_attempts where delivery_id = ${deliveryId} order by attempt
  `);
}

async function deliveriesOf(paymentId: string) {
  const response = await app.request('GET', `/v1/payments/${paymentId}/webhook-deliveries`, { token: store.token });
  assert.equal(response.status, 200, response.text);
  return response.json.data as Array<{ id: string; status: string; failedAt: string | null; deliveredAt: string | null; attempts: Array<Record<string, any>> }>;
}

// ---------------------------------------------------------------------------------------------

describe('enqueueWebhookDelivery', () => {
  it('records the delivery and adds webhook__deliver with job_key and max_attempts, in the same transaction', async () => {
    const { paymentId, deliveryId } = await completedPayment({ webhookURL: 'http://127.0.0.1:9/never-run' });
    assert.ok(deliveryId);
    const job = await deliveryJob(deliveryId);
    assert.ok(job, 'the job exists');
    assert.deepEqual(job.payload, { deliveryId });
    assert.equal(job.max_attempts, DELIVER_MAX_ATTEMPTS);
    const [delivery] = await listWebhookDeliveries(app.pool, paymentId);
    assert.equal(delivery?.url, 'http://127.0.0.1:9/never-run');
    assert.equal(delivery?.status, 'pending');
    assert.equal(delivery?.reason, 'completed');
    // Safe to call twice: the completed event is recorded once.
    const again = await app.pool.transaction((tx) => enqueueWebhookDelivery(tx, paymentId, 'completed', new Date()));
    assert.equal(again, deliveryId);
    assert.equal((await listWebhookDeliveries(app.pool, paymentId)).length, 1);
    await app.pool.query(sql.unsafe`delete from webhook_deliveries where id = ${deliveryId}`);
    await app.pool.query(sql.unsafe`select graphile_worker.remove_job(${deliverJobKey(deliveryId)})`);
  });

  it('a rolled-back transaction leaves neither the delivery nor the job', async () => {
    const created = await app.request('POST', '/v1/payments', {
      token: store.token,
      body: { amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] }, webhookURL: 'http://127.0.0.1:9/x' },
    });
    let id: string | null = null;
    await assert.rejects(
      app.pool.transaction(async (tx) => {
        id = await enqueueWebhookDelivery(tx, created.json.id, 'completed', new Date());
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.ok(id);
    assert.equal(await deliveryJob(id), null);
    assert.deepEqual(await listWebhookDeliveries(app.pool, created.json.id), []);
  });

  it('a payment without webhookURL enqueues nothing', async () => {
    const countJobs = () =>
      app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from graphile_worker.jobs where task_identifier = 'webhook__deliver'
    `);
    const before = await countJobs();
    const { paymentId, deliveryId } = await completedPayment();
    assert.equal(deliveryId, null);
    assert.deepEqual(await listWebhookDeliveries(app.pool, paymentId), []);
    assert.equal(await countJobs(), before);
    assert.equal(await app.pool.transaction((tx) => enqueueWebhookDelivery(tx, paymentId, 'redelivery', new Date())), null);
    assert.equal(await countJobs(), before);
    assert.deepEqual(await deliveriesOf(paymentId), []);
  });
});

describe('webhook__deliver', () => {
  it("POSTs the seed's body and headers, signed with the key the app publishes", async () => {
    const { verifier } = appVerifier();
    const receiver = await startReceiver((r, res) => res.writeHead(r.verified?.ok ? 200 : 401).end(), { verifier });
    try {
      const { paymentId, deliveryId } = await completedPayment({ webhookURL: receiver.url, order_id: 'A-1001', metadata: { cart: '7', note: 'crème ☕' } });
      await runJobs();
      assert.equal(receiver.requests.length, 1);
      const [request] = receiver.requests;
      assert.ok(request);
      assert.equal(request.headers['content-type'], 'application/json');
      assert.match(String(request.headers['x-signature']), /^[A-Za-z0-9+/]{86}==$/, 'base64 of a 64-byte Ed25519 signature');
      const kid = String(request.headers['x-signature-kid']);
      const body = JSON.parse(request.text);
      assert.deepEqual(Object.keys(body), ['payload', 'signAt']);
      assert.deepEqual(body.payload, {
        paymentID: paymentId,
        status: 'completed',
        metadata: { cart: '7', note: 'crème ☕' },
        order_id: 'A-1001',
        storeID: store.id,
      });
      assert.equal(
        request.text,
        buildWebhookBody({ paymentId, storeId: store.id, metadata: { cart: '7', note: 'crème ☕' }, orderId: 'A-1001' }, new Date(body.signAt)),
        'the exact bytes',
      );
      assert.ok(Math.abs(Date.parse(body.signAt) - Date.now()) < 10_000);
      // The kit, against the app's GET /pay/v1/webhook/keys, verified it.
      assert.equal(request.verified?.ok, true, JSON.stringify(request.verified));
      const published = (await app.request('GET', '/pay/v1/webhook/keys')).json.keys as Array<{ kid: string; x: string }>;
      const key = published.find((k) => k.kid === kid);
      assert.ok(key, 'signed with a published key');
      assert.equal(verifyBody(request.raw, String(request.headers['x-signature']), Buffer.from(key.x, 'base64')), true);

      const [delivery] = await deliveriesOf(paymentId);
      assert.equal(delivery?.status, 'delivered');
      assert.equal(delivery?.attempts.length, 1);
      assert.equal(delivery?.attempts[0]?.httpStatus, 200);
      assert.equal(delivery?.attempts[0]?.error, null);
      assert.equal(delivery?.attempts[0]?.nextRetryAt, null);
      const [row] = await attemptRows(deliveryId!);
      assert.equal(row?.kid, kid);
      assert.equal(row?.signed_at?.toISOString(), body.signAt);
      assert.equal(await deliveryJob(deliveryId!), null, 'the job is done');
    } finally {
      await receiver.close();
    }
  });

  it('a receiver answering 500 then 200 gets a second, freshly signed attempt; both are logged and counted', async () => {
    const { verifier } = appVerifier();
    const receiver = await startReceiver((r, res, n) => res.writeHead(n === 1 ? 500 : r.verified?.ok ? 200 : 401).end(n === 1 ? 'busy' : 'ok'), { verifier });
    try {
      const attemptsCounted = async (outcome: string): Promise<number> =>
        (await webhookAttempts.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
      const before = { delivered: await attemptsCounted('delivered'), http_error: await attemptsCounted('http_error') };
      const { paymentId, deliveryId } = await completedPayment({ webhookURL: receiver.url, metadata: { n: '1' } });
      await runJobs();
      assert.equal(receiver.requests.length, 1);
      let [delivery] = await deliveriesOf(paymentId);
      assert.equal(delivery?.status, 'pending');
      const first = delivery!.attempts[0]!;
      assert.equal(first.httpStatus, 500);
      assert.equal(first.error, 'HTTP 500');
      assert.ok(first.finishedAt);
      // nextRetryAt is the job's run_at, as Graphile Worker's backoff set it: exactly, and after the failure.
      const job = await deliveryJob(deliveryId!);
      assert.equal(job?.attempts, 1);
      assert.match(job?.last_error ?? '', /attempt 1 failed: HTTP 500/);
      assert.equal(first.nextRetryAt, job!.run_at.toISOString());
      assert.ok(job!.run_at.getTime() > Date.parse(first.finishedAt));

      // The retry runs a second later on the worker's clock (so its signAt differs).
      fixedNow = new Date(Date.parse(first.finishedAt) + 1_000);
      await makeDue(deliveryId!);
      const due = (await deliveryJob(deliveryId!))!.run_at;
      await runJobs();
      fixedNow = null;
      assert.equal(receiver.requests.length, 2);
      [delivery] = await deliveriesOf(paymentId);
      assert.equal(delivery?.status, 'delivered');
      assert.deepEqual(
        delivery?.attempts.map((a) => [a.attempt, a.httpStatus, a.error]),
        [
          [1, 500, 'HTTP 500'],
          [2, 200, null],
        ],
      );
      // Once retried, attempt 1 keeps the time Graphile Worker ran the retry for (here: made due now).
      assert.deepEqual(
        delivery?.attempts.map((a) => a.nextRetryAt),
        [due.toISOString(), null],
      );
      const [one, two] = receiver.requests.map((r) => ({ ...r, body: JSON.parse(r.text) }));
      assert.notEqual(one!.body.signAt, two!.body.signAt, 'signed afresh');
      assert.notEqual(one!.headers['x-signature'], two!.headers['x-signature']);
      assert.deepEqual(one!.body.payload, two!.body.payload);
      assert.equal(one!.verified?.ok, true);
      assert.equal(two!.verified?.ok, true);
      const rows = await attemptRows(deliveryId!);
      assert.deepEqual(
        rows.map((r) => r.signed_at?.toISOString()),
        [one!.body.signAt, two!.body.signAt],
      );
      // kassa_webhook_attempts_total{outcome} counts each attempt of this process (docs/OPERATIONS.md).
      assert.equal(await attemptsCounted('http_error'), before.http_error + 1);
      assert.equal(await attemptsCounted('delivered'), before.delivered + 1);
    } finally {
      fixedNow = null;
      await receiver.close();
    }
  });

  it('a timeout is a failed attempt, and is retried', async () => {
    const receiver = await startReceiver((_r, res, n) => {
      if (n === 1) return; // never answers
      res.writeHead(204).end();
    });
    try {
      const { paymentId, deliveryId } = await completedPayment({ webhookURL: receiver.url });
      await runJobs({ timeoutMs: 300 });
      let [delivery] = await deliveriesOf(paymentId);
      assert.equal(delivery?.status, 'pending');
      assert.equal(delivery?.attempts[0]?.httpStatus, null);
      assert.equal(delivery?.attempts[0]?.error, 'timed out after 300 ms');
      assert.ok(delivery?.attempts[0]?.durationMs >= 300);
      assert.ok(delivery?.attempts[0]?.nextRetryAt);
      await makeDue(deliveryId!);
      // The retry must succeed: the default 5 s (a loaded machine may take more than 300 ms to answer).
      await runJobs();
      [delivery] = await deliveriesOf(paymentId);
      assert.equal(delivery?.status, 'delivered');
      assert.deepEqual(
        delivery?.attempts.map((a) => a.httpStatus),
        [null, 204],
      );
    } finally {
      await receiver.close();
    }
  });

  it('connection refused is a failed attempt, and is retried', async () => {
    const port = await freePort();
    const { paymentId, deliveryId } = await completedPayment({ webhookURL: `http://127.0.0.1:${port}/kassa/webhook` });
    await runJobs();
    let [delivery] = await deliveriesOf(paymentId);
    assert.equal(delivery?.status, 'pending');
    assert.equal(delivery?.attempts[0]?.error, 'connection refused');
    assert.equal(delivery?.attempts[0]?.httpStatus, null);
    assert.equal((await deliveryJob(deliveryId!))?.attempts, 1);
    // The receiver comes up on that port; the retry reaches it.
    const receiver = await startReceiver((_r, res) => res.writeHead(200).end(), { port });
    try {
      await makeDue(deliveryId!);
      await runJobs();
      [delivery] = await deliveriesOf(paymentId);
      assert.equal(delivery?.status, 'delivered');
      assert.deepEqual(
        delivery?.attempts.map((a) => [a.attempt, a.error]),
        [
          [1, 'connection refused'],
          [2, null],
        ],
      );
      assert.equal(receiver.requests.length, 1);
    } finally {
      await receiver.close();
    }
  });

  it('a 302 is not followed: a failed attempt, retried later', async () => {
    const elsewhere = await startReceiver((_r, res) => res.writeHead(200).end());
    const receiver = await startReceiver((_r, res) => res.writeHead(302, { location: elsewhere.url }).end());
    try {
      const { paymentId, deliveryId } = await completedPayment({ webhookURL: receiver.url });
      await runJobs();
      const [delivery] = await deliveriesOf(paymentId);
      assert.equal(delivery?.status, 'pending');
      assert.equal(delivery?.attempts[0]?.httpStatus, 302);
      assert.match(delivery?.attempts[0]?.error, /^redirect not followed \(HTTP 302 to http:\/\/127\.0\.0\.1:\d+\/kassa\/webhook\)$/);
      assert.ok(delivery?.attempts[0]?.nextRetryAt);
      assert.equal(receiver.requests.length, 1);
      assert.equal(elsewhere.requests.length, 0, 'the redirect target was never contacted');
      assert.equal((await deliveryJob(deliveryId!))?.attempts, 1);
    } finally {
      await receiver.close();
      await elsewhere.close();
    }
  });

  it('refuses, at connect time, a host name that resolves to loopback (allowInsecure=false); logged as an error attempt', async () => {
    // A TCP listener on the port: any connection at all would be counted.
    let connections = 0;
    const listener = net.createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    const { port } = await listen(listener);
    try {
      // Accepted at creation by the (insecure) test app; the delivery runs with WEBHOOK_ALLOW_INSECURE=false.
      const { paymentId, deliveryId } = await completedPayment({ webhookURL: `https://localhost:${port}/kassa/webhook` });
      await runJobs({ allowInsecure: false });
      const [delivery] = await deliveriesOf(paymentId);
      assert.equal(delivery?.status, 'pending');
      assert.equal(delivery?.attempts.length, 1);
      assert.equal(delivery?.attempts[0]?.httpStatus, null);
      assert.match(delivery?.attempts[0]?.error, /^localhost resolves to a loopback address \((127\.0\.0\.1|::1)\); refused$/);
      assert.ok(delivery?.attempts[0]?.nextRetryAt, 'DNS may change: retried like any failure');
      assert.equal(connections, 0, 'no connection was made');
      assert.equal((await deliveryJob(deliveryId!))?.attempts, 1);
    } finally {
      await close(listener);
    }
  });

  it('key rotation between attempts: the retry is signed with the new kid; the kit refetches on it and verifies', async () => {
    const { verifier, fetches } = appVerifier();
    const receiver = await startReceiver((r, res, n) => res.writeHead(n === 1 ? 503 : r.verified?.ok ? 200 : 401).end(), { verifier });
    try {
      const { paymentId, deliveryId } = await completedPayment({ webhookURL: receiver.url });
      await runJobs();
      const oldKid = String(receiver.requests[0]?.headers['x-signature-kid']);
      assert.equal(receiver.requests[0]?.verified?.ok, true);
      assert.equal(fetches(), 1);

      // Past the rotation's interval (the first key was made by the first attempt).
      const newKid = await rotateSigningKey(app.pool, new Date(Date.now() + ROTATION_MIN_INTERVAL_MS));
      assert.notEqual(newKid, oldKid);
      await makeDue(deliveryId!);
      await runJobs();
      assert.equal(receiver.requests.length, 2);
      const second = receiver.requests[1]!;
      assert.equal(second.headers['x-signature-kid'], newKid);
      assert.equal(second.verified?.ok, true, JSON.stringify(second.verified));
      assert.equal(fetches(), 2, 'exactly one refetch, on the unknown kid');
      assert.deepEqual(
        (await attemptRows(deliveryId!)).map((r) => r.kid),
        [oldKid, newKid],
      );
      assert.equal((await deliveriesOf(paymentId))[0]?.status, 'delivered');

      // The retired key stays published (24 h): the first attempt's signature still verifies.
      const published = (await app.request('GET', '/pay/v1/webhook/keys')).json.keys as Array<{ kid: string; x: string }>;
      assert.deepEqual(published.map((k) => k.kid).sort(), [oldKid, newKid].sort());
      const old = published.find((k) => k.kid === oldKid)!;
      const first = receiver.requests[0]!;
      assert.equal(verifyBody(first.raw, String(first.headers['x-signature']), Buffer.from(old.x, 'base64')), true);
    } finally {
      await receiver.close();
    }
  });
});

describe('the 12 h window (injected clock)', () => {
  after(() => {
    fixedNow = null;
  });

  it('the last attempt before the deadline is retried by Graphile Worker; the run past the deadline fails the delivery', async () => {
    const receiver = await startReceiver((_r, res) => res.writeHead(500).end());
    try {
      const { paymentId, deliveryId } = await completedPayment({ webhookURL: receiver.url });
      const t0 = new Date(Math.floor(Date.now() / 1000) * 1000);
      fixedNow = t0;
      await runJobs();
      let [delivery] = await deliveriesOf(paymentId);
      assert.equal(delivery?.attempts[0]?.startedAt, t0.toISOString());
      assert.equal(delivery?.attempts[0]?.nextRetryAt, (await deliveryJob(deliveryId!))!.run_at.toISOString());

      // 1 s before the deadline an attempt may still start; it fails, and Graphile Worker schedules a retry.
      fixedNow = new Date(t0.getTime() + DELIVERY_WINDOW_MS - 1_000);
      await makeDue(deliveryId!);
      const due = (await deliveryJob(deliveryId!))!.run_at;
      await runJobs();
      assert.equal(receiver.requests.length, 2);
      [delivery] = await deliveriesOf(paymentId);
      assert.equal(delivery?.status, 'pending');
      assert.equal(delivery?.attempts[1]?.startedAt, fixedNow.toISOString());
      assert.equal(delivery?.attempts[0]?.nextRetryAt, due.toISOString(), 'attempt 1 was retried when Graphile Worker ran it');

      // A retry due past the deadline is no next attempt: the log shows none.
      await app.pool.query(sql.unsafe`
        update graphile_worker._private_jobs set run_at = ${sql.timestamp(new Date(t0.getTime() + DELIVERY_WINDOW_MS + 1_000))}
        where key = ${deliverJobKey(deliveryId!)}
      `);
      [delivery] = await deliveriesOf(paymentId);
      assert.equal(delivery?.attempts[1]?.nextRetryAt, null);

      // The run that starts past the deadline fails the delivery without an attempt.
      fixedNow = new Date(t0.getTime() + DELIVERY_WINDOW_MS + 1_000);
      await makeDue(deliveryId!);
      await runJobs();
      assert.equal(receiver.requests.length, 2);
      [delivery] = await deliveriesOf(paymentId);
      assert.equal(delivery?.status, 'failed');
      assert.equal(delivery?.failedAt, fixedNow.toISOString());
      assert.deepEqual(
        delivery?.attempts.map((a) => [a.attempt, a.httpStatus, a.nextRetryAt]),
        [
          [1, 500, due.toISOString()],
          [2, 500, null],
        ],
      );
      assert.equal(await deliveryJob(deliveryId!), null, 'the job ended without a Graphile retry');
    } finally {
      fixedNow = null;
      await receiver.close();
    }
  });

  it('out of attempts (max_attempts): the delivery is marked failed, and the job ends', async () => {
    const receiver = await startReceiver((_r, res) => res.writeHead(500).end());
    try {
      const { paymentId, deliveryId } = await completedPayment({ webhookURL: receiver.url });
      await app.pool.query(sql.unsafe`update graphile_worker._private_jobs set max_attempts = 1 where key = ${deliverJobKey(deliveryId!)}`);
      await runJobs();
      const [delivery] = await deliveriesOf(paymentId);
      assert.equal(delivery?.status, 'failed');
      assert.deepEqual(
        delivery?.attempts.map((a) => [a.attempt, a.httpStatus, a.nextRetryAt]),
        [[1, 500, null]],
      );
      assert.equal(await deliveryJob(deliveryId!), null);
    } finally {
      await receiver.close();
    }
  });

  it('a run that starts past the deadline (worker down, late lock) fails the delivery without an attempt', async () => {
    const receiver = await startReceiver((_r, res) => res.writeHead(502).end());
    try {
      const { paymentId, deliveryId } = await completedPayment({ webhookURL: receiver.url });
      const t0 = new Date(Math.floor(Date.now() / 1000) * 1000);
      fixedNow = t0;
      await runJobs();
      fixedNow = new Date(t0.getTime() + DELIVERY_WINDOW_MS + 1);
      await makeDue(deliveryId!);
      await runJobs();
      assert.equal(receiver.requests.length, 1, 'no attempt after the deadline');
      const [delivery] = await deliveriesOf(paymentId);
      assert.equal(delivery?.status, 'failed');
      assert.equal(delivery?.failedAt, fixedNow.toISOString());
      assert.equal(delivery?.attempts.length, 1);
      assert.equal(await deliveryJob(deliveryId!), null);
      // Running the job again (a duplicate run) changes nothing.
      await app.pool.query(sql.unsafe`select graphile_worker.add_job('webhook__deliver', json_build_object('deliveryId', ${deliveryId!}::text))`);
      await runJobs();
      assert.equal(receiver.requests.length, 1);
    } finally {
      fixedNow = null;
      await receiver.close();
    }
  });
});

describe('webhook__deliver: the per-payment webhook tells of completion only', () => {
  it('a delivery recorded for a payment that is not completed (as a bug of its caller would) fails without a request', async () => {
    const receiver = await startReceiver((_r, res) => res.writeHead(200).end());
    try {
      const { id: paymentId } = await buildPayment(app, store, { status: 'pending', body: { amount: '1.5', currency: 'TON', webhookURL: receiver.url } });
      const deliveryId = await app.pool.transaction((tx) => enqueueWebhookDelivery(tx, paymentId, 'completed', new Date()));
      assert.ok(deliveryId, 'recorded, its job added');
      await runJobs();
      assert.equal(receiver.requests.length, 0, 'nothing sent for a pending payment');
      const [delivery] = await deliveriesOf(paymentId);
      assert.deepEqual([delivery?.status, delivery?.attempts.length], ['failed', 0]);
      assert.equal(await deliveryJob(deliveryId), null, 'the job ended');
    } finally {
      await receiver.close();
    }
  });
});

describe('webhook__deliver payloads', () => {
  it('drops a payload without a delivery id instead of failing forever', async () => {
    await app.pool.query(sql.unsafe`select graphile_worker.add_job('webhook__deliver', '{"paymentId": "nope"}'::json)`);
    await runJobs();
    const failed = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier = 'webhook__deliver' and j.payload->>'paymentId' = 'nope'
    `);
    assert.equal(failed, 0, 'the job was done, not failed');
  });

  it('an unknown delivery id is done at once', async () => {
    await app.pool.query(
      sql.unsafe`select graphile_worker.add_job('webhook__deliver', json_build_object('deliveryId', gen_random_uuid()::text), job_key => 'orphan')`,
    );
    await runJobs();
    const left = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from graphile_worker.jobs where key = 'orphan'`);
    assert.equal(left, 0);
  });
});
