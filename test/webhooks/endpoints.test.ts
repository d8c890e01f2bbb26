// Store webhook endpoints over HTTP (docs/API.md, Store webhook endpoints): the real app and Postgres,
// Graphile Worker's webhook__deliver runs and real receivers on 127.0.0.1 verifying with the kit.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { issueToken } from '../../src/auth/tokens.ts';
import { sql, z } from '../../src/db/pool.ts';
import { deliverJobKey } from '../../src/worker/jobs.ts';
import type { TestApp } from '../helpers/app.ts';
import { runDeliveries, startEventReceiver, verifiedEvents } from '../helpers/eventReceiver.ts';
import { assertError, startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;

before(async () => {
  app = await startPaymentsApp({ env: { WEBHOOK_ALLOW_INSECURE: 'true' } });
});
after(() => app.close());
afterEach(async () => {
  await app.pool.query(sql.unsafe`delete from graphile_worker._private_jobs`);
});

const ALL = ['payment.pending', 'payment.completed', 'payment.expired', 'payment.cancelled', 'payment.money_received'];

async function addEndpoint(token: string, url: string, events: string[] = ALL) {
  const created = await app.request('POST', '/v1/webhook-endpoints', { token, body: { url, events } });
  assert.equal(created.status, 201, created.text);
  return created.json as { id: string; url: string; events: string[]; createdAt: string };
}

async function pendingPayment(token: string): Promise<string> {
  const created = await app.request('POST', '/v1/payments', {
    token,
    body: { amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
  });
  assert.equal(created.status, 201, created.text);
  return created.json.id;
}

describe('POST/GET/DELETE /v1/webhook-endpoints', () => {
  it('adds, lists, tests (a signed ping the kit verifies), shows deliveries, redelivers and deletes an endpoint; scoped to the store', async () => {
    const store = await app.store();
    const other = await app.store();
    const receiver = await startEventReceiver(app);
    try {
      const endpoint = await addEndpoint(store.token, receiver.url, [
        'payment.cancelled',
        'payment.pending',
        'payment.cancelled'.replace('cancelled', 'expired'),
      ]);
      assert.deepEqual(Object.keys(endpoint), ['id', 'url', 'events', 'createdAt']);
      assert.deepEqual(endpoint.events, ['payment.pending', 'payment.expired', 'payment.cancelled'], 'kept in the documented order');
      const listed = await app.request('GET', '/v1/webhook-endpoints', { token: store.token });
      assert.deepEqual(listed.json, { data: [endpoint] });
      assert.deepEqual((await app.request('GET', '/v1/webhook-endpoints', { token: other.token })).json, { data: [] });

      const ping = await app.request('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { token: store.token });
      assert.equal(ping.status, 202, ping.text);
      assert.equal(ping.json.event, 'ping');
      assert.equal(ping.json.reason, 'test');
      assert.equal(ping.json.paymentID, null);
      await runDeliveries(app);
      const [event] = verifiedEvents(receiver);
      assert.deepEqual(event, { type: 'ping', eventID: ping.json.eventID, payload: { endpointID: endpoint.id, storeID: store.id } });
      assert.deepEqual(Object.keys(JSON.parse(receiver.received[0]!.text)), ['type', 'eventID', 'payload', 'signAt']);

      const deliveries = await app.request('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries`, { token: store.token });
      assert.equal(deliveries.status, 200);
      assert.equal(deliveries.json.data.length, 1);
      assert.equal(deliveries.json.data[0].status, 'delivered');
      assert.equal(deliveries.json.data[0].attempts[0].httpStatus, 200);

      const again = await app.request('POST', `/v1/webhook-endpoints/${endpoint.id}/deliveries/${ping.json.id}/redeliver`, { token: store.token });
      assert.equal(again.status, 202, again.text);
      assert.equal(again.json.eventID, ping.json.eventID, 'the same event, its id kept');
      await runDeliveries(app);
      assert.equal(verifiedEvents(receiver)[1]!.eventID, ping.json.eventID);

      // Another store's endpoint is not found, whatever the request.
      assertError(
        await app.request('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { token: other.token }),
        404,
        'not_found_error',
        'webhook_endpoint_not_found',
        'id',
      );
      assertError(
        await app.request('DELETE', `/v1/webhook-endpoints/${endpoint.id}`, { token: other.token }),
        404,
        'not_found_error',
        'webhook_endpoint_not_found',
        'id',
      );
      assertError(
        await app.request('POST', `/v1/webhook-endpoints/${endpoint.id}/deliveries/${crypto.randomUUID()}/redeliver`, { token: store.token }),
        404,
        'not_found_error',
        'webhook_delivery_not_found',
        'deliveryID',
      );

      const deleted = await app.request('DELETE', `/v1/webhook-endpoints/${endpoint.id}`, { token: store.token });
      assert.deepEqual([deleted.status, deleted.json], [200, { id: endpoint.id, deleted: true }]);
      assert.deepEqual((await app.request('GET', '/v1/webhook-endpoints', { token: store.token })).json, { data: [] });
      assertError(
        await app.request('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries`, { token: store.token }),
        404,
        'not_found_error',
        'webhook_endpoint_not_found',
        'id',
      );
    } finally {
      await receiver.close();
    }
  });

  it('refuses bad input with the envelope, its code and param; a read-only token reads but does not change', async () => {
    const store = await app.store();
    const post = (body: unknown) => app.request('POST', '/v1/webhook-endpoints', { token: store.token, body });
    assertError(await post({ events: ['ping'] }), 400, 'invalid_request_error', 'missing_parameter', 'url');
    assertError(await post({ url: 'https://shop.example/hook', events: [] }), 400, 'invalid_request_error', 'invalid_event_types', 'events');
    assertError(await post({ url: 'https://shop.example/hook', events: ['payment.paid'] }), 400, 'invalid_request_error', 'invalid_event_types', 'events[0]');
    assertError(await post({ url: 'https://shop.example/hook', events: ['ping'] }), 400, 'invalid_request_error', 'invalid_event_types', 'events[0]');
    assertError(
      await post({ url: 'https://shop.example/hook', events: ['refund.failed', 'refund.failed'] }),
      400,
      'invalid_request_error',
      'invalid_event_types',
      'events',
    );
    assertError(await post({ url: 'not a url', events: ['refund.failed'] }), 400, 'invalid_request_error', 'invalid_endpoint_url', 'url');
    assertError(
      await post({ url: 'https://shop.example/hook', events: ['refund.failed'], secret: 'x' }),
      400,
      'invalid_request_error',
      'unknown_parameter',
      'secret',
    );
    assertError(
      await app.request('DELETE', '/v1/webhook-endpoints/nope', { token: store.token }),
      400,
      'invalid_request_error',
      'invalid_webhook_endpoint_id',
      'id',
    );
    assertError(await app.request('GET', '/v1/webhook-endpoints', {}), 401, 'authentication_error', 'auth_invalid');

    const { token: readOnly } = await issueToken(app.pool, store.id, null, new Date(), 'read_only');
    assert.equal((await app.request('GET', '/v1/webhook-endpoints', { token: readOnly })).status, 200);
    const refused = await app.request('POST', '/v1/webhook-endpoints', {
      token: readOnly,
      body: { url: 'https://shop.example/hook', events: ['refund.failed'] },
    });
    assert.equal(refused.status, 403);
    assert.equal(refused.json.error.code, 'insufficient_scope');
  });

  it('a URL that is not http(s) is refused (the webhookURL rules); at most 16 endpoints per store', async () => {
    const store = await app.store();
    const post = (url: string) => app.request('POST', '/v1/webhook-endpoints', { token: store.token, body: { url, events: ['refund.failed'] } });
    assertError(await post('ftp://shop.example/hook'), 400, 'invalid_request_error', 'invalid_endpoint_url', 'url');
    assertError(await post('https://user:secret@shop.example/hook'), 400, 'invalid_request_error', 'invalid_endpoint_url', 'url');
    for (let i = 0; i < 16; i += 1) assert.equal((await post(`https://shop.example/hook/${i}`)).status, 201);
    assertError(await post('https://shop.example/more'), 409, 'invalid_request_error', 'too_many_webhook_endpoints');
  });
});

describe('events to endpoints', () => {
  it('a payment created pending, then cancelled: each endpoint hearing the type gets it once, in order, signed; another store hears nothing', async () => {
    const store = await app.store();
    const other = await app.store();
    const hearsAll = await startEventReceiver(app, undefined, undefined, store.id);
    const hearsCancel = await startEventReceiver(app, undefined, undefined, store.id);
    const otherStore = await startEventReceiver(app, undefined, undefined, other.id);
    try {
      await addEndpoint(store.token, hearsAll.url);
      await addEndpoint(store.token, hearsCancel.url, ['payment.cancelled']);
      await addEndpoint(other.token, otherStore.url);
      const paymentId = await pendingPayment(store.token);
      const cancelled = await app.request('POST', `/v1/payments/${paymentId}/cancel`, { token: store.token });
      assert.equal(cancelled.status, 200, cancelled.text);
      await runDeliveries(app);
      const all = verifiedEvents(hearsAll);
      assert.deepEqual(
        all.map((e) => [e.type, e.payload.paymentID, e.payload.status]),
        [
          ['payment.pending', paymentId, 'pending'],
          ['payment.cancelled', paymentId, 'cancelled'],
        ],
      );
      assert.deepEqual(all[0]!.payload, { paymentID: paymentId, status: 'pending', amount: '1', currency: 'TON', metadata: {}, storeID: store.id });
      const [cancel] = verifiedEvents(hearsCancel);
      assert.equal(verifiedEvents(hearsCancel).length, 1);
      assert.equal(cancel!.eventID, all[1]!.eventID, 'one event, one id, for every endpoint that hears it');
      assert.equal(otherStore.received.length, 0);
    } finally {
      await Promise.all([hearsAll.close(), hearsCancel.close(), otherStore.close()]);
    }
  });

  it('an endpoint answering 500 for 12 hours delays no other endpoint nor store; then its deliveries fail, logged attempt by attempt', async () => {
    const store = await app.store();
    const other = await app.store();
    const t0 = Date.now();
    let now = new Date(t0);
    // The receivers' clock is the worker's: hours pass for both.
    const failing = await startEventReceiver(
      app,
      () => 500,
      () => now,
    );
    const healthy = await startEventReceiver(
      app,
      () => 200,
      () => now,
    );
    const otherStore = await startEventReceiver(
      app,
      () => 200,
      () => now,
    );
    try {
      const broken = await addEndpoint(store.token, failing.url);
      await addEndpoint(store.token, healthy.url);
      await addEndpoint(other.token, otherStore.url);
      const first = await Promise.all([pendingPayment(store.token), pendingPayment(store.token), pendingPayment(other.token)]);
      await runDeliveries(app, () => now);
      assert.equal(healthy.received.length, 2, 'the healthy endpoint got both at once');
      assert.equal(otherStore.received.length, 1, 'the other store got its own at once');
      assert.equal(failing.received.length, 2);
      // Its queue is its own: retries wait there, with Graphile's backoff.
      const queues = await app.pool.anyFirst(sql.type(z.object({ queue: z.string() }))`
        select distinct job_queue_id::text as queue from graphile_worker._private_jobs where key like ${`${deliverJobKey('')}%`}
      `);
      assert.equal(queues.length, 1, 'only the failing endpoint has jobs left');
      // Hours pass with the endpoint still failing; every new event reaches the others at once.
      for (const hours of [1, 6, 11]) {
        now = new Date(t0 + hours * 3_600_000);
        await app.pool.query(sql.unsafe`update graphile_worker._private_jobs set run_at = now() where key like ${`${deliverJobKey('')}%`}`);
        await pendingPayment(store.token);
        await pendingPayment(other.token);
        await runDeliveries(app, () => now);
      }
      assert.equal(healthy.received.length, 5);
      assert.equal(otherStore.received.length, 4);
      assert.ok(
        [...healthy.received, ...otherStore.received].every((r) => r.verified.ok),
        'every delivery to the others verified',
      );
      // Past 12 h after their first attempt, the failing endpoint's first two deliveries fail without another attempt.
      now = new Date(t0 + 12 * 3_600_000 + 60_000);
      await app.pool.query(sql.unsafe`update graphile_worker._private_jobs set run_at = now() where key like ${`${deliverJobKey('')}%`}`);
      await runDeliveries(app, () => now);
      const log = (await app.request('GET', `/v1/webhook-endpoints/${broken.id}/deliveries`, { token: store.token })).json.data;
      const firstTwo = log.filter((d: { paymentID: string }) => first.includes(d.paymentID));
      assert.equal(firstTwo.length, 2);
      for (const delivery of firstTwo) {
        assert.equal(delivery.status, 'failed', JSON.stringify(delivery));
        assert.equal(delivery.attempts.length, 4, `at 0, 1, 6 and 11 hours: ${JSON.stringify(delivery.attempts)}`);
        assert.ok(delivery.attempts.every((a: { httpStatus: number }) => a.httpStatus === 500));
      }
    } finally {
      await Promise.all([failing.close(), healthy.close(), otherStore.close()]);
    }
  });
});
