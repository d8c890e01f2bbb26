// Webhook delivery benchmark: a real Graphile Worker runner set up as `kassa start`'s webhook
// runner (only webhook__deliver, concurrency 20, each store's deliveries in
// DELIVERY_QUEUES_PER_STORE queues) delivers to a local receiver on 127.0.0.1, on a fresh migrated database of the
// embedded PostgreSQL (or of DATABASE_URL's server). Prints numbers; asserts nothing. The runner
// fetches for its workers through Graphile's local queue (size = concurrency), as src/server.ts does.
//
//   node bench/webhooks.ts [--payments 1000] [--rate 100] [--concurrency 20]
//   node bench/webhooks.ts --endpoint [--events 200]
//
// Two runs of `--payments` completed payments each (created through the API, then completed the
// way the chain's completion command does it: status update + enqueueWebhookDelivery in one
// transaction):
//   paced — completions arrive at `--rate` per second: the delay from the completion's commit to
//           the start of the first attempt (webhook_attempts.started_at), p50/p99/max. Target: p99 ≤ 1 s.
//   burst — all completions committed as fast as 16 connections allow: deliveries per second
//           (first commit → last delivery) and the same delays, which here include queueing.
//   drain — the completions are committed while no worker runs, then the worker starts: deliveries
//           per second of the worker alone.
//
// `--endpoint` runs two bursts instead, each of `--events`: the per-payment webhooks' burst above
// (the baseline), then a burst of events to ONE webhook endpoint of one store (one statement records
// them all, as a subscription tick does; they run one at a time in the endpoint's queue, in order):
// deliveries per second, commit → first attempt p50/p99, and whether they arrived in order.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { run } from 'graphile-worker';
import { pino } from 'pino';
import { issueToken } from '../src/auth/tokens.ts';
import { loadConfig } from '../src/config.ts';
import { graphileLogger } from '../src/db/migrate.ts';
import { openPool, sql, z, type DatabasePool } from '../src/db/pool.ts';
import { createApp } from '../src/http/app.ts';
import { createStore, parseMethodList } from '../src/stores/stores.ts';
import { enqueueWebhookDelivery } from '../src/webhooks/deliveries.ts';
import { emitEvents } from '../src/webhooks/events.ts';
import { DELIVERY_QUEUES_PER_STORE } from '../src/worker/jobs.ts';
import { taskList } from '../src/worker/tasks.ts';
import webhookDeliver from '../tasks/webhook__deliver.ts';
import { openBenchDatabase } from './lib/database.ts';
import { benchFlags } from './lib/flags.ts';
import { percentile } from './lib/stats.ts';

const { flags: values } = benchFlags('usage: node bench/webhooks.ts [--payments 1000] [--rate 100] [--concurrency 20] | --endpoint [--events 200]', {
  payments: { type: 'string', default: '1000' },
  endpoint: { type: 'boolean', default: false },
  events: { type: 'string', default: '200' },
  rate: { type: 'string', default: '100' },
  concurrency: { type: 'string', default: '20' },
});
const PAYMENTS = Number(values.payments);
const RATE = Number(values.rate);
const CONCURRENCY = Number(values.concurrency);
const EVENTS = Number(values.events);

const log = pino({ level: process.env.LOG_LEVEL ?? 'warn' }, pino.destination(2));
const out = (line: string): void => void process.stdout.write(`${line}\n`);

const ms = (value: number): string => `${value.toFixed(1)} ms`;

async function withDatabase<T>(work: (url: string) => Promise<T>): Promise<T> {
  const database = await openBenchDatabase(`kassa_bench_webhooks_${process.pid}`, process.cwd(), log);
  try {
    await database.fresh();
    return await work(database.url);
  } finally {
    await database.close(false);
  }
}

async function pool<T>(items: T[], size: number, each: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, items.length) }, async () => {
      while (next < items.length) await each(items[next++]!);
    }),
  );
}

interface RunResult {
  delays: number[];
  firstCommit: number;
  lastCommit: number;
  lastDelivered: number;
}

async function main(): Promise<void> {
  await withDatabase(async (databaseUrl) => {
    const config = loadConfig({
      DATABASE_URL: databaseUrl,
      WEBHOOK_ALLOW_INSECURE: 'true',
      PORT: '0',
      RATE_LIMIT_PER_STORE: '0',
      RATE_LIMIT_PER_CLIENT: '0',
      LOG_LEVEL: 'silent',
    });
    const db: DatabasePool = await openPool(databaseUrl, { maxPoolSize: 30 });
    const silent = pino({ level: 'silent' });
    const deps = { config, pool: db, log: silent, now: () => new Date() };

    // The API, to create payments the way a merchant does.
    const api = http.createServer(createApp(deps).callback());
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    const apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;

    // The receiver: answers 200 at once and records when each payment's (or event's) first request arrived.
    const arrivals = new Map<string, number>();
    const eventOrder: number[] = [];
    let requests = 0;
    let allDelivered: (() => void) | null = null;
    let expected = 0;
    const receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        requests += 1;
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { eventID?: string; payload: { paymentID?: string; seq?: number } };
        const id = body.eventID ?? body.payload.paymentID!;
        if (!arrivals.has(id)) arrivals.set(id, Date.now());
        if (body.payload.seq !== undefined) eventOrder.push(body.payload.seq);
        res.writeHead(200).end();
        if (arrivals.size >= expected) allDelivered?.();
      });
    });
    receiver.keepAliveTimeout = 1;
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

    const store = await createStore(db, 'Bench store', parseMethodList('TON/TON'));
    const { token } = await issueToken(db, store.id, null, new Date());
    const createPayments = async (n: number): Promise<string[]> => {
      const ids: string[] = [];
      await pool(
        Array.from({ length: n }, (_, i) => i),
        16,
        async (i) => {
          const response = await fetch(`${apiUrl}/v1/payments`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              amount: '1',
              currency: 'TON',
              payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] },
              webhookURL: hookUrl,
              order_id: `bench-${i}`,
            }),
          });
          if (response.status !== 201) throw new Error(`create: HTTP ${response.status} ${await response.text()}`);
          ids.push(((await response.json()) as { id: string }).id);
        },
      );
      return ids;
    };

    const commits = new Map<string, number>();
    const complete = async (paymentId: string): Promise<void> => {
      await db.transaction(async (tx) => {
        const now = new Date();
        await tx.query(sql.typeAlias('void')`update payments set status = 'completed', paid_at = ${sql.timestamp(now)} where id = ${paymentId}`);
        await enqueueWebhookDelivery(tx, paymentId, 'completed', now);
      });
      commits.set(paymentId, Date.now());
    };

    const startRunner = () =>
      run({
        connectionString: databaseUrl,
        concurrency: CONCURRENCY,
        pollInterval: 1000,
        noHandleSignals: true,
        logger: graphileLogger(silent, true),
        preset: { worker: { localQueue: { size: CONCURRENCY } } },
        taskList: taskList(deps, { webhook__deliver: webhookDeliver }),
      });
    let runner = await startRunner();

    const measure = async (ids: string[], completeAll: () => Promise<void>): Promise<RunResult> => {
      expected = arrivals.size + ids.length;
      const done = new Promise<void>((resolve) => {
        allDelivered = resolve;
      });
      await completeAll();
      await Promise.race([done, new Promise((resolve) => setTimeout(resolve, 120_000))]);
      // Wait for the last attempts to be recorded.
      for (let i = 0; i < 200; i += 1) {
        const pending = await db.oneFirst(sql.type(z.object({ n: z.number() }))`
          select count(*)::int as n from webhook_deliveries where payment_id = any(${sql.array(ids, 'uuid')}) and status <> 'delivered'
        `);
        if (pending === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const started = await db.any(sql.type(z.object({ payment_id: z.string(), started_at: z.date() }))`
        select d.payment_id, a.started_at from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
        where a.attempt = 1 and d.payment_id = any(${sql.array(ids, 'uuid')})
      `);
      const delays = started.map((row) => row.started_at.getTime() - commits.get(row.payment_id)!).sort((a, b) => a - b);
      const firstCommit = Math.min(...ids.map((id) => commits.get(id)!));
      const lastCommit = Math.max(...ids.map((id) => commits.get(id)!));
      const lastDelivered = Math.max(...ids.map((id) => arrivals.get(id) ?? Number.NaN));
      return { delays, firstCommit, lastCommit, lastDelivered };
    };

    const report = (name: string, ids: string[], result: RunResult, extra: string): void => {
      const { delays } = result;
      const delivered = ids.filter((id) => arrivals.has(id)).length;
      const seconds = (result.lastDelivered - result.firstCommit) / 1000;
      out(`${name}: ${delivered}/${ids.length} delivered ${extra}`);
      out(`  deliveries/s (first commit → last delivery): ${(delivered / seconds).toFixed(0)} (${seconds.toFixed(2)} s)`);
      out(
        `  completion commit → first attempt: p50 ${ms(percentile(delays, 50))}, p99 ${ms(percentile(delays, 99))}, max ${ms(delays.at(-1) ?? Number.NaN)} (target p99 ≤ 1000 ms)`,
      );
    };

    // --endpoint: a burst of EVENTS per-payment webhooks (baseline), then EVENTS events to one endpoint.
    const endpointRuns = async (): Promise<void> => {
      out(
        `webhook endpoint benchmark: ${EVENTS} events per burst, webhook runner concurrency ${CONCURRENCY} (local queue ${CONCURRENCY}), pollInterval 1000 ms`,
      );
      const warm = await createPayments(20);
      await measure(warm, () => pool(warm, 4, complete));
      const burst = await createPayments(EVENTS);
      report(
        'per-payment burst (baseline)',
        burst,
        await measure(burst, () => pool(burst, 16, complete)),
        `(${DELIVERY_QUEUES_PER_STORE} queues of one store)`,
      );

      const created = await fetch(`${apiUrl}/v1/webhook-endpoints`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: hookUrl, events: ['payment.completed'] }),
      });
      if (created.status !== 201) throw new Error(`endpoint: HTTP ${created.status} ${await created.text()}`);
      const endpointId = ((await created.json()) as { id: string }).id;
      expected = arrivals.size + EVENTS;
      const done = new Promise<void>((resolve) => {
        allDelivered = resolve;
      });
      const now = new Date();
      await emitEvents(
        db,
        sql.fragment`select ${store.id}::uuid as store_id, null::uuid as payment_id, 'payment.completed' as type, jsonb_build_object('seq', g) as payload
                     from generate_series(1, ${EVENTS}) g order by g`,
        now,
      );
      const committed = Date.now();
      await Promise.race([done, new Promise((resolve) => setTimeout(resolve, 120_000))]);
      for (let i = 0; i < 200; i += 1) {
        const pending = await db.oneFirst(sql.type(z.object({ n: z.number() }))`
          select count(*)::int as n from webhook_deliveries where endpoint_id = ${endpointId} and status <> 'delivered'
        `);
        if (pending === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const started = await db.anyFirst(sql.type(z.object({ started_at: z.date() }))`
        select a.started_at from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
        where a.attempt = 1 and d.endpoint_id = ${endpointId}
      `);
      const delays = started.map((at) => at.getTime() - committed).sort((a, b) => a - b);
      const seconds = ((eventOrder.length > 0 ? Math.max(...arrivals.values()) : Number.NaN) - committed) / 1000;
      const inOrder = eventOrder.every((seq, i) => seq === i + 1);
      if (!inOrder) out(`  arrival order: ${eventOrder.join(' ')}`);
      out(`endpoint burst: ${eventOrder.length}/${EVENTS} delivered (one endpoint, one queue), ${inOrder ? 'in order' : 'OUT OF ORDER'}`);
      out(`  deliveries/s (commit → last delivery): ${(eventOrder.length / seconds).toFixed(1)} (${seconds.toFixed(2)} s)`);
      out(`  commit → first attempt: p50 ${ms(percentile(delays, 50))}, p99 ${ms(percentile(delays, 99))}, max ${ms(delays.at(-1) ?? Number.NaN)}`);
      out(`receiver requests: ${requests} (one per delivery expected)`);
    };

    try {
      if (values.endpoint) {
        await endpointRuns();
        return;
      }
      out(
        `webhook delivery benchmark: ${PAYMENTS} payments per run (one store: ${DELIVERY_QUEUES_PER_STORE} delivery queues), webhook runner concurrency ${CONCURRENCY}, pollInterval 1000 ms (jobs arrive by LISTEN/NOTIFY)`,
      );
      // Warm-up: the first key, prepared statements, connections.
      const warm = await createPayments(20);
      await measure(warm, () => pool(warm, 4, complete));

      const paced = await createPayments(PAYMENTS);
      const pacedResult = await measure(paced, async () => {
        const start = performance.now();
        for (let i = 0; i < paced.length; i += 1) {
          const due = start + (i * 1000) / RATE;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          complete(paced[i]!).catch((error: unknown) => {
            log.error({ err: error }, 'completion failed');
            process.exitCode = 1;
          });
        }
        while (commits.size < warm.length + paced.length) await new Promise((resolve) => setTimeout(resolve, 5));
      });
      report('paced', paced, pacedResult, `(completions at ${RATE}/s)`);

      const burst = await createPayments(PAYMENTS);
      const burstResult = await measure(burst, () => pool(burst, 16, complete));
      const committing = burstResult.lastCommit - burstResult.firstCommit;
      report(
        'burst',
        burst,
        burstResult,
        `(all completions at once, 16 connections; committed in ${(committing / 1000).toFixed(2)} s, ${(burst.length / (committing / 1000)).toFixed(0)}/s)`,
      );

      // drain: the deliveries are queued while no worker runs; then one starts. Delivery throughput alone.
      await runner.stop();
      const drain = await createPayments(PAYMENTS);
      let runnerStarted = 0;
      let cpuAtStart = process.cpuUsage();
      const drainResult = await measure(drain, async () => {
        await pool(drain, 16, complete);
        runnerStarted = Date.now();
        cpuAtStart = process.cpuUsage();
        runner = await startRunner();
      });
      const cpu = process.cpuUsage(cpuAtStart);
      const seconds = (drainResult.lastDelivered - runnerStarted) / 1000;
      out(`drain: ${drain.filter((id) => arrivals.has(id)).length}/${drain.length} queued deliveries, worker started afterwards`);
      out(`  deliveries/s (worker start → last delivery): ${(drain.length / seconds).toFixed(0)} (${seconds.toFixed(2)} s)`);
      out(`  CPU of this process (worker + receiver) per delivery: ${((cpu.user + cpu.system) / 1000 / drain.length).toFixed(2)} ms`);
      out(`receiver requests: ${requests} (one per delivery expected)`);
    } finally {
      await runner.stop();
      await new Promise((resolve) => api.close(resolve));
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
      await db.end();
    }
  });
}

await main();
