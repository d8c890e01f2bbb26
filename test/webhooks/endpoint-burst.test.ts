// A burst of events to ONE store webhook endpoint drains one delivery after another, not one per
// poll (docs/PERFORMANCE.md, Webhook endpoints): a real Graphile Worker runner set up as `kassa
// start`'s webhook runner (20 slots, a local queue of 20) but with a poll interval of a minute, so
// that only the NOTIFY sent when the endpoint's queue is freed (src/db/migrate.ts) can start its next
// delivery; a real receiver on 127.0.0.1 verifies each with the kit and records the arrival order.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { run } from 'graphile-worker';
import { pino } from 'pino';
import { graphileLogger } from '../../src/db/migrate.ts';
import { sql, z } from '../../src/db/pool.ts';
import { emitEvents } from '../../src/webhooks/events.ts';
import { taskList } from '../../src/worker/tasks.ts';
import webhookDeliver from '../../tasks/webhook__deliver.ts';
import type { TestApp } from '../helpers/app.ts';
import { startEventReceiver, verifiedEvents } from '../helpers/eventReceiver.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;

before(async () => {
  app = await startPaymentsApp({ env: { WEBHOOK_ALLOW_INSECURE: 'true' } });
});
after(() => app.close());

const BURST = 30;
/** Far longer than the test may wait: a delivery started by a poll would not come in time. */
const POLL_INTERVAL_MS = 60_000;

describe('a burst of events to one webhook endpoint', () => {
  it(`delivers ${BURST} events recorded by one statement one after another, each once, in the recorded order, without waiting for a poll`, async () => {
    const store = await app.store();
    const receiver = await startEventReceiver(app, undefined, undefined, store.id);
    const created = await app.request('POST', '/v1/webhook-endpoints', { token: store.token, body: { url: receiver.url, events: ['payment.pending'] } });
    assert.equal(created.status, 201, created.text);
    const endpointId = created.json.id as string;

    // One statement records the burst (as a subscription tick or a chain reader's batch does).
    await emitEvents(
      app.pool,
      sql.fragment`select ${store.id}::uuid as store_id, null::uuid as payment_id, 'payment.pending' as type, jsonb_build_object('seq', g) as payload
                   from generate_series(1, ${BURST}) g order by g`,
      new Date(),
    );

    // The jobs' rows are not kept in the order they were added: a row updated since (a runner's local
    // queue hands back the jobs it held when it stops; a job key's replace) is stored anew. Here the
    // first half of the burst is touched, so the table reads back the second half first.
    await app.pool.query(sql.unsafe`
      update graphile_worker._private_jobs set payload = payload
      where id in (select id from graphile_worker._private_jobs order by id limit ${BURST / 2})
    `);

    const log = pino({ level: 'silent' });
    const deps = { config: { ...app.config, webhookAllowInsecure: true }, pool: app.pool, log, now: () => new Date(), webhookTimeoutMs: 5_000 };
    const runner = await run({
      connectionString: app.db.url,
      concurrency: 20,
      pollInterval: POLL_INTERVAL_MS,
      preset: { worker: { localQueue: { size: 20 } } },
      noHandleSignals: true,
      logger: graphileLogger(log, true),
      taskList: taskList(deps, { webhook__deliver: webhookDeliver }),
    });
    let fetches = 0;
    runner.events.on('localQueue:getJobs:complete', () => {
      fetches += 1;
    });
    try {
      // Bounded by half the poll interval: the old runner delivered the first event and then waited for the poll.
      for (let i = 0; i < 300 && receiver.received.length < BURST; i += 1) await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await runner.stop();
      await receiver.close();
    }

    const seqs = verifiedEvents(receiver).map((event) => (event.payload as { seq: number }).seq);
    assert.deepEqual(
      seqs,
      Array.from({ length: BURST }, (_, i) => i + 1),
      `every event once, in the recorded order, before any poll (got ${seqs.length}; the runner fetched ${fetches} times)`,
    );
    // Each delivery was one attempt of its own job; none is left.
    const rows = await app.pool.any(
      sql.type(z.object({ status: z.string(), attempts: z.number() }))`select status, attempts from webhook_deliveries where endpoint_id = ${endpointId}`,
    );
    assert.equal(rows.length, BURST);
    assert.ok(
      rows.every((row) => row.status === 'delivered' && row.attempts === 1),
      JSON.stringify(rows.filter((row) => row.status !== 'delivered' || row.attempts !== 1)),
    );
    assert.equal(
      await app.pool.oneFirst(
        sql.type(z.object({ n: z.number() }))`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'webhook__deliver'`,
      ),
      0,
    );
    assert.ok(fetches >= BURST, `a fetch per freed queue at least (fetches: ${fetches})`);
  });
});
