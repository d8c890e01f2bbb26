// GET /v1/payments/{id}/webhook-deliveries and POST /v1/payments/{id}/webhook/redeliver against the
// real app, real Postgres, real Graphile Worker runs and a real receiver on 127.0.0.1.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { runJobsOnce } from '../helpers/jobs.ts';
import { pino } from 'pino';
import { graphileLogger } from '../../src/db/migrate.ts';
import { sql, z } from '../../src/db/pool.ts';
import { taskList } from '../../src/worker/tasks.ts';
import { deliverJobKey } from '../../src/worker/jobs.ts';
import { createWebhookVerifier } from '../../src/webhooks/receiver.ts';
import webhookDeliver from '../../tasks/webhook__deliver.ts';
import type { TestApp } from '../helpers/app.ts';
import { setTestPaymentStatus } from '../helpers/factories.ts';
import { assertError, startPaymentsApp } from '../helpers/payments.ts';
import { close, listen } from '../helpers/servers.ts';

const log = pino({ level: 'silent' });
let app: TestApp;
let store: Awaited<ReturnType<TestApp['store']>>;
let other: Awaited<ReturnType<TestApp['store']>>;
let server: http.Server;
let hookUrl: string;
const received: Array<{ paymentID: string; signAt: string; ok: boolean; duplicate: boolean }> = [];

before(async () => {
  app = await startPaymentsApp({ env: { WEBHOOK_ALLOW_INSECURE: 'true' } });
  store = await app.store();
  other = await app.store({ name: 'Other store' });
  // A merchant's receiver, built with the kit exactly as the example does.
  const verifier = createWebhookVerifier({ keysUrl: `${app.url}/pay/v1/webhook/keys`, storeID: store.id });
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const raw = Buffer.concat(chunks);
        const result = await verifier.handle(raw, req.headers, () => undefined);
        const body = JSON.parse(raw.toString('utf8'));
        received.push({ paymentID: body.payload.paymentID, signAt: body.signAt, ok: result.status === 200, duplicate: result.duplicate === true });
        res.writeHead(result.status).end();
      })();
    });
  });
  hookUrl = `http://127.0.0.1:${(await listen(server)).port}/kassa/webhook`;
});
after(async () => {
  await close(server);
  await app.close();
});

async function runJobs(): Promise<void> {
  const deps = { config: app.config, pool: app.pool, log, now: () => new Date() };
  await runJobsOnce({
    connectionString: app.db.url,
    taskList: taskList(deps, { webhook__deliver: webhookDeliver }),
    noHandleSignals: true,
    logger: graphileLogger(log, true),
  });
}

async function createPayment(token: string, extra: Record<string, unknown> = {}): Promise<string> {
  const response = await app.request('POST', '/v1/payments', {
    token,
    body: { amount: '3', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] }, ...extra },
  });
  assert.equal(response.status, 201, response.text);
  return response.json.id;
}

const complete = (paymentId: string): Promise<string | null> => setTestPaymentStatus(app, paymentId, 'completed', { webhook: true });

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('GET /v1/payments/{id}/webhook-deliveries', () => {
  it('lists deliveries with their attempts, in the documented shape', async () => {
    const paymentId = await createPayment(store.token, { webhookURL: hookUrl });
    let response = await app.request('GET', `/v1/payments/${paymentId}/webhook-deliveries`, { token: store.token });
    assert.equal(response.status, 200);
    assert.deepEqual(response.json, { data: [] }, 'nothing before completion');

    const deliveryId = await complete(paymentId);
    response = await app.request('GET', `/v1/payments/${paymentId}/webhook-deliveries`, { token: store.token });
    assert.deepEqual(response.json.data[0].attempts, []);
    assert.equal(response.json.data[0].status, 'pending');

    await runJobs();
    response = await app.request('GET', `/v1/payments/${paymentId.toUpperCase()}/webhook-deliveries`, { token: store.token });
    assert.equal(response.status, 200);
    assert.deepEqual(Object.keys(response.json), ['data']);
    const [delivery] = response.json.data;
    assert.deepEqual(Object.keys(delivery), ['id', 'event', 'url', 'status', 'reason', 'attempts', 'createdAt', 'deliveredAt', 'failedAt']);
    assert.equal(delivery.id, deliveryId);
    assert.equal(delivery.event, 'payment.completed');
    assert.equal(delivery.url, hookUrl);
    assert.equal(delivery.status, 'delivered');
    assert.equal(delivery.reason, 'completed');
    assert.match(delivery.createdAt, ISO);
    assert.match(delivery.deliveredAt, ISO);
    assert.equal(delivery.failedAt, null);
    assert.equal(delivery.attempts.length, 1);
    const [attempt] = delivery.attempts;
    assert.deepEqual(Object.keys(attempt), ['attempt', 'startedAt', 'finishedAt', 'durationMs', 'httpStatus', 'error', 'nextRetryAt']);
    assert.equal(attempt.attempt, 1);
    assert.match(attempt.startedAt, ISO);
    assert.match(attempt.finishedAt, ISO);
    assert.equal(typeof attempt.durationMs, 'number');
    assert.equal(attempt.httpStatus, 200);
    assert.equal(attempt.error, null);
    assert.equal(attempt.nextRetryAt, null);
    assert.equal(received.filter((r) => r.paymentID === paymentId && r.ok).length, 1);
  });

  it('a payment without webhookURL has no deliveries', async () => {
    const paymentId = await createPayment(store.token);
    assert.equal(await complete(paymentId), null);
    const response = await app.request('GET', `/v1/payments/${paymentId}/webhook-deliveries`, { token: store.token });
    assert.deepEqual(response.json, { data: [] });
  });

  it("another store's payment is 404 payment_not_found; a bad id 400 invalid_payment_id; no token 401", async () => {
    const paymentId = await createPayment(store.token, { webhookURL: hookUrl });
    assertError(await app.request('GET', `/v1/payments/${paymentId}/webhook-deliveries`, { token: other.token }), 404, 'not_found_error', 'payment_not_found');
    assertError(
      await app.request('GET', `/v1/payments/${crypto.randomUUID()}/webhook-deliveries`, { token: store.token }),
      404,
      'not_found_error',
      'payment_not_found',
    );
    assertError(
      await app.request('GET', '/v1/payments/nope/webhook-deliveries', { token: store.token }),
      400,
      'invalid_request_error',
      'invalid_payment_id',
      'paymentID',
    );
    assertError(await app.request('GET', `/v1/payments/${paymentId}/webhook-deliveries`), 401, 'authentication_error', 'auth_invalid');
  });
});

describe('POST /v1/payments/{id}/webhook/redeliver', () => {
  it('queues a new delivery (202), delivered with a fresh signature; both show in the log', async () => {
    const paymentId = await createPayment(store.token, { webhookURL: hookUrl, metadata: { order: '77' } });
    await complete(paymentId);
    await runJobs();

    const response = await app.request('POST', `/v1/payments/${paymentId}/webhook/redeliver`, { token: store.token });
    assert.equal(response.status, 202, response.text);
    const delivery = response.json;
    assert.deepEqual(Object.keys(delivery), ['id', 'event', 'url', 'status', 'reason', 'attempts', 'createdAt', 'deliveredAt', 'failedAt']);
    assert.equal(delivery.status, 'pending');
    assert.equal(delivery.reason, 'redelivery');
    assert.equal(delivery.url, hookUrl);
    assert.deepEqual(delivery.attempts, []);
    const job = await app.pool.maybeOne(
      sql.type(z.object({ task_identifier: z.string() }))`select task_identifier from graphile_worker.jobs where key = ${deliverJobKey(delivery.id)}`,
    );
    assert.equal(job?.task_identifier, 'webhook__deliver');

    await runJobs();
    const list = (await app.request('GET', `/v1/payments/${paymentId}/webhook-deliveries`, { token: store.token })).json.data;
    assert.deepEqual(
      list.map((d: { reason: string; status: string }) => [d.reason, d.status]),
      [
        ['completed', 'delivered'],
        ['redelivery', 'delivered'],
      ],
    );
    assert.equal(list[1].id, delivery.id);
    const seen = received.filter((r) => r.paymentID === paymentId);
    assert.equal(seen.length, 2);
    assert.notEqual(seen[0]!.signAt, seen[1]!.signAt);
    assert.deepEqual(
      seen.map((r) => r.duplicate),
      [false, true],
      'the kit tells the receiver it is a duplicate',
    );
  });

  it('X-Idempotency-Key replays the first response and queues nothing more', async () => {
    const paymentId = await createPayment(store.token, { webhookURL: hookUrl });
    await complete(paymentId);
    const key = crypto.randomUUID();
    const first = await app.request('POST', `/v1/payments/${paymentId}/webhook/redeliver`, { token: store.token, headers: { 'x-idempotency-key': key } });
    const second = await app.request('POST', `/v1/payments/${paymentId}/webhook/redeliver`, { token: store.token, headers: { 'x-idempotency-key': key } });
    assert.equal(first.status, 202);
    assert.equal(second.status, 202);
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.equal(second.text, first.text);
    const count = await app.pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`select count(*)::int as n from webhook_deliveries where payment_id = ${paymentId}`,
    );
    assert.equal(count, 2, 'the completed delivery and one redelivery');
    await runJobs();
  });

  it('refuses what cannot be redelivered', async () => {
    const open = await createPayment(store.token, { webhookURL: hookUrl });
    assertError(
      await app.request('POST', `/v1/payments/${open}/webhook/redeliver`, { token: store.token }),
      409,
      'invalid_request_error',
      'payment_not_completed',
    );

    const noUrl = await createPayment(store.token);
    await complete(noUrl);
    assertError(await app.request('POST', `/v1/payments/${noUrl}/webhook/redeliver`, { token: store.token }), 409, 'invalid_request_error', 'no_webhook_url');

    const theirs = await createPayment(other.token, { webhookURL: hookUrl });
    await complete(theirs);
    assertError(await app.request('POST', `/v1/payments/${theirs}/webhook/redeliver`, { token: store.token }), 404, 'not_found_error', 'payment_not_found');
    assertError(
      await app.request('POST', '/v1/payments/123/webhook/redeliver', { token: store.token }),
      400,
      'invalid_request_error',
      'invalid_payment_id',
      'paymentID',
    );
    assertError(
      await app.request('POST', `/v1/payments/${theirs}/webhook/redeliver`, { token: store.token, body: { url: 'http://evil.example' } }),
      400,
      'invalid_request_error',
      'unknown_parameter',
      'url',
    );
    assertError(await app.request('POST', `/v1/payments/${theirs}/webhook/redeliver`), 401, 'authentication_error', 'auth_invalid');
    const count = await app.pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`select count(*)::int as n from webhook_deliveries where payment_id = any(${sql.array([open, noUrl], 'uuid')})`,
    );
    assert.equal(count, 0);
    await runJobs();
  });
});
