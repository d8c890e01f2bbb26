// The subscriptions benchmark (issue 45): prints numbers, asserts nothing, exits 0.
//
//   node bench/subscriptions.ts [--subscriptions 100000] [--renewals 1000] [--payments 1000]
//                               [--beside on|off] [--cost on|off] [--seconds 20] [--concurrency 8] [--beside-max 600]
//                               [--deliveries on|off]
//   (npm run bench:subscriptions -- …)
//
// A fresh database `kassa_bench_subscriptions` on DATABASE_URL's server (its role must be allowed
// to create databases), or on the embedded PostgreSQL, migrated (afresh for each part). One store
// (TON), a plan of 1 TON a month, a webhook endpoint that hears subscription.renewed. Two parts:
//
// 1. `--beside` ("the shop with many subscribers must not slow payments"): a real Kassa (`kassa
//    start`, API and worker in one process, as a shop runs it) on the bench database; payments are
//    created through POST /v1/payments (TON, Preselected: a deposit address each) by a closed loop of
//    `--concurrency` clients (bench/lib/load.ts): `--seconds` alone; then while the worker's
//    subscriptions__bill bills `--subscriptions` due subscriptions (each with credit for its period:
//    renewed from credit), from the moment they fall due until none is (at most `--beside-max`
//    seconds); then `--seconds` alone again. The endpoint is a real receiver in this process
//    answering 204, so the renewals' webhook deliveries are made beside the payments too (those
//    still queued when the window closes are taken off the queue, and what is still due is moved 10
//    years ahead, so that the payments are alone again afterwards). `--deliveries off`: the endpoint
//    hears none of the renewals, so the engine's own cost is measured without the deliveries.
//    Printed: p50/p99 latency and creates per second each way, and the ratio.
// 2. `--cost`: the engine in this process as the worker's subscriptions__bill runs it
//    (`runDueSubscriptions`, until none is due); every statement it sends is counted (a slonik
//    interceptor; the endpoint's deliveries are written, not sent):
//    - `--subscriptions` subscriptions whose period ended a minute ago, all due at once, each with
//      credit for the next period: renewed from credit (a ledger charge, the period moved, the event);
//    - `--renewals` due ones without credit: past_due, each with its renewal payment opened (the API's
//      create command) and subscription.past_due and .payment_due;
//    - the baseline, in the same run: `--payments` payments made one after the other by the same
//      create command the API's POST /v1/payments uses (TON, a deposit address each);
//    - time and statements per subscription and per payment, and the ratio of each to the baseline.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { pino } from 'pino';
import type { Interceptor } from 'slonik';
import { issueToken } from '../src/auth/tokens.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabaseServer } from '../src/db/embedded.ts';
import { migrate } from '../src/db/migrate.ts';
import { type DatabasePool, openPool, sql, z } from '../src/db/pool.ts';
import { createPayment } from '../src/payments/commands.ts';
import { draftFromPayment } from '../src/payments/drafts.ts';
import { presentSubscription } from '../src/presenters/subscription.ts';
import { createStore, parseMethodList } from '../src/stores/stores.ts';
import { runDueSubscriptions } from '../src/subscriptions/engine.ts';
import type { SubscriptionRow } from '../src/subscriptions/records.ts';
import { benchFlags } from './lib/flags.ts';
import { type LoadResult, runClosedLoop } from './lib/load.ts';
import { formatNumber, percentile, sortedCopy, textTable } from './lib/stats.ts';
import { freePort } from '../test/helpers/servers.ts';

const root = path.resolve(import.meta.dirname, '..');
const USAGE = `usage: node bench/subscriptions.ts [--subscriptions 100000] [--renewals 1000] [--payments 1000]
                                   [--beside on|off] [--cost on|off] [--seconds 20] [--concurrency 8] [--beside-max 600] [--deliveries on|off]`;
const { flags, usage } = benchFlags(USAGE, {
  subscriptions: { type: 'string', default: '100000' },
  renewals: { type: 'string', default: '1000' },
  payments: { type: 'string', default: '1000' },
  beside: { type: 'string', default: 'on' },
  cost: { type: 'string', default: 'on' },
  seconds: { type: 'string', default: '20' },
  concurrency: { type: 'string', default: '8' },
  'beside-max': { type: 'string', default: '600' },
  deliveries: { type: 'string', default: 'on' },
});
const N = Number(flags.subscriptions);
const R = Number(flags.renewals);
const P = Number(flags.payments);
const SECONDS = Number(flags.seconds);
const CONCURRENCY = Number(flags.concurrency);
const BESIDE_MAX = Number(flags['beside-max']);
for (const [name, n, most] of [
  ['--subscriptions', N, 1_000_000],
  ['--renewals', R, 1_000_000],
  ['--payments', P, 1_000_000],
  ['--seconds', SECONDS, 3600],
  ['--concurrency', CONCURRENCY, 256],
  ['--beside-max', BESIDE_MAX, 86_400],
] as const) {
  if (!Number.isInteger(n) || n < 1 || n > most) usage(`${name} must be an integer from 1 to ${most}`);
}
for (const name of ['beside', 'cost', 'deliveries'] as const) if (!['on', 'off'].includes(flags[name])) usage(`--${name} must be on or off`);

const BENCH_DATABASE = 'kassa_bench_subscriptions';
const log = pino({ level: 'warn' }, pino.destination(2));
const say = (line: string) => process.stderr.write(`bench: ${line}\n`);
const out = (line = '') => process.stdout.write(`${line}\n`);

const base = loadConfig({ ...process.env, PORT: '0', LOG_LEVEL: 'warn' });
const dbServer = await openDatabaseServer(base, log);
const benchUrlObject = new URL(dbServer.url);
benchUrlObject.pathname = `/${BENCH_DATABASE}`;
const benchUrl = benchUrlObject.toString();
const admin = new pg.Client({ connectionString: dbServer.url });
await admin.connect();
const config = loadConfig({ DATABASE_URL: benchUrl, PORT: '0', LOG_LEVEL: 'warn' });

let statements = 0;
const counter: Interceptor = {
  name: 'bench-statement-counter',
  beforeQueryExecution: () => {
    statements += 1;
    return null;
  },
};

interface Setup {
  pool: DatabasePool;
  storeId: string;
  planId: string;
}

/** A fresh bench database, migrated: one store (TON), a plan of 1 TON a month, an endpoint at `endpointUrl` hearing `events`. */
async function freshDatabase(endpointUrl: string, events: string[]): Promise<Setup> {
  await admin.query(`drop database if exists ${pg.escapeIdentifier(BENCH_DATABASE)} with (force)`);
  await admin.query(`create database ${pg.escapeIdentifier(BENCH_DATABASE)}`);
  await migrate(benchUrl, log);
  const pool = await openPool(benchUrl, { maxPoolSize: 4, interceptors: [counter], statementTimeoutMs: 600_000 });
  const store = await createStore(pool, 'Bench subscriptions', parseMethodList('TON/TON'), {});
  const planId = crypto.randomUUID();
  await pool.query(sql.unsafe`
    insert into plans (id, store_id, name, currency, amount, interval_unit, interval_count, trial_days, grace_days, reminder_days, created_at)
    values (${planId}, ${store.id}, 'Bench monthly', 'TON', 1, 'month', 1, 0, 3, 3, now())
  `);
  await pool.query(sql.unsafe`
    insert into webhook_endpoints (id, store_id, url, events, created_at)
    values (gen_random_uuid(), ${store.id}, ${endpointUrl}, ${sql.array(events, 'text')}, now())
  `);
  return { pool, storeId: store.id, planId };
}

/**
 * `count` subscriptions whose first period ended a minute ago (anchored a month and a minute ago),
 * with `credit` each; due now, or (`dueAt` 'later') only once makeDue moves them.
 */
async function dueSubscriptions(
  { pool, storeId, planId }: Setup,
  count: number,
  credit: string,
  prefix: string,
  dueAt: 'now' | 'later' = 'now',
): Promise<void> {
  await pool.query(sql.unsafe`
    insert into subscriptions (id, store_id, plan_id, customer_reference, status, anchor_at, periods_charged, current_period_end, credit,
                               next_run_at, portal_token_hash, created_at)
    select gen_random_uuid(), ${storeId}, ${planId}, ${prefix} || i, 'active', now() - interval '1 month 1 minute', 1,
           now() - interval '1 month 1 minute' + interval '1 month', ${credit}::numeric,
           ${dueAt === 'now' ? sql.fragment`now() - interval '1 minute'` : sql.fragment`now() + interval '10 years'`},
           sha256(convert_to(${prefix} || i || random()::text, 'UTF8')), now() - interval '1 month 1 minute'
    from generate_series(1, ${count}) as i
  `);
}

// ---------------------------------------------------------------- 1. payments beside the engine

/** A closed loop's figures (several slices of it merged). */
interface Window {
  label: string;
  completed: number;
  succeeded: number;
  errors: number;
  errorKinds: Map<string, number>;
  elapsedMs: number;
  latencies: number[];
}

function merged(label: string, slices: LoadResult[]): Window {
  const errorKinds = new Map<string, number>();
  for (const slice of slices) for (const [kind, n] of slice.errorKinds) errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + n);
  return {
    label,
    completed: slices.reduce((sum, slice) => sum + slice.completed, 0),
    succeeded: slices.reduce((sum, slice) => sum + slice.succeeded, 0),
    errors: slices.reduce((sum, slice) => sum + slice.errors, 0),
    errorKinds,
    elapsedMs: slices.reduce((sum, slice) => sum + slice.elapsedMs, 0),
    latencies: slices.flatMap((slice) => [...slice.latenciesMs]),
  };
}

async function besideTheEngine(): Promise<void> {
  // The store's receiver: answers every delivery 204.
  let delivered = 0;
  const receiver = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      delivered += 1;
      response.writeHead(204).end();
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`;
  // `--deliveries off`: the endpoint hears none of the renewals (the engine's own cost, without the webhook deliveries it queues).
  const setup = await freshDatabase(receiverUrl, flags.deliveries === 'on' ? ['subscription.renewed'] : ['subscription.expired']);
  const { token } = await issueToken(setup.pool, setup.storeId, null, new Date());
  say(`${N} subscriptions, due only once moved (10 years ahead for now)`);
  await dueSubscriptions(setup, N, '1', 'beside-', 'later');
  await setup.pool.query(sql.unsafe`vacuum analyze subscriptions`);

  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: benchUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    RATE_LIMIT_PER_STORE: '0',
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_INSECURE: 'true',
    KASSA_MASTER_KEY: process.env.KASSA_MASTER_KEY ?? crypto.randomBytes(32).toString('hex'),
  };
  delete env.BASE_URL;
  delete env.CHECKOUT_BASE_URL;
  say(`starting kassa (API and worker) on port ${port}`);
  const kassa: ChildProcess = spawn(process.execPath, [path.join(root, 'src/cli.ts'), 'start'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let kassaLines = 0;
  const forward = (stream: NodeJS.ReadableStream | null) =>
    stream?.on('data', (chunk: Buffer) => {
      kassaLines += chunk
        .toString()
        .split('\n')
        .filter((line) => line.trim() !== '').length;
      if (kassaLines <= 20) process.stderr.write(`kassa| ${chunk.toString()}`);
    });
  forward(kassa.stdout);
  forward(kassa.stderr);
  const exited = once(kassa, 'exit');
  try {
    const deadline = Date.now() + 90_000;
    for (;;) {
      if (kassa.exitCode !== null) throw new Error(`kassa exited during start (code ${kassa.exitCode})`);
      if (Date.now() > deadline) throw new Error('kassa did not answer /healthz within 90 s');
      const ok = await fetch(`${baseUrl}/healthz`).then(
        (response) => response.text().then(() => response.ok),
        () => false,
      );
      if (ok) break;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    const body = JSON.stringify({ amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } });
    const creates = (seconds: number) =>
      runClosedLoop({
        baseUrl,
        concurrency: CONCURRENCY,
        durationMs: seconds * 1000,
        next: () => ({
          method: 'POST',
          path: '/v1/payments',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-idempotency-key': crypto.randomUUID() },
          body,
        }),
      });
    const due = () => setup.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from subscriptions where next_run_at <= now()`);
    const queued = () =>
      setup.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
        select count(*)::int as n from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
        where t.identifier = 'webhook__deliver'
      `);

    say('warm-up: 3 s of creates');
    await creates(3);
    say(`payments alone: ${SECONDS} s`);
    const before = merged('payments alone (before)', [await creates(SECONDS)]);

    say(`${N} subscriptions fall due; the worker's subscriptions__bill is queued at once (the crontab's tick, without waiting for the minute)`);
    await setup.pool.query(sql.unsafe`update subscriptions set next_run_at = now() - interval '1 minute' where customer_reference like 'beside-%'`);
    await setup.pool.query(sql.unsafe`select graphile_worker.add_job('subscriptions__bill', '{}'::json)`);
    const started = performance.now();
    const slices: LoadResult[] = [];
    let left = N;
    while (left > 0 && performance.now() - started < BESIDE_MAX * 1000) {
      slices.push(await creates(5));
      left = await due();
      say(
        `  ${Math.round((performance.now() - started) / 1000)} s: ${N - left} billed, ${left} due, ${await queued()} deliveries queued, ${delivered} delivered`,
      );
    }
    const billingMs = performance.now() - started;
    const during = merged('payments while the engine bills', slices);
    const charges = await setup.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from subscription_ledger where kind = 'charge'
    `);
    const deliveriesLeft = await queued();
    // What is still due (the window reached --beside-max) is put out of the engine's way, so that the payments are alone afterwards.
    if (left > 0) await setup.pool.query(sql.unsafe`update subscriptions set next_run_at = now() + interval '10 years' where next_run_at <= now()`);
    // The deliveries still queued (an endpoint's are sent one at a time) are taken off the queue, so that the payments are alone afterwards.
    await setup.pool.query(sql.unsafe`
      select graphile_worker.complete_jobs(array_agg(j.id))
      from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier = 'webhook__deliver' and j.locked_at is null
    `);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    say(`payments alone again: ${SECONDS} s`);
    const afterwards = merged('payments alone (after)', [await creates(SECONDS)]);

    const figures = (window: Window) => {
      const sorted = sortedCopy(window.latencies);
      return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), rps: (window.succeeded / window.elapsedMs) * 1000 };
    };
    const alone = [figures(before), figures(afterwards)];
    const mean = { p50: (alone[0]!.p50 + alone[1]!.p50) / 2, p99: (alone[0]!.p99 + alone[1]!.p99) / 2, rps: (alone[0]!.rps + alone[1]!.rps) / 2 };
    const beside = figures(during);
    const row = (window: Window, f: { p50: number; p99: number; rps: number }) => [
      window.label,
      formatNumber(window.elapsedMs / 1000),
      String(window.succeeded),
      String(window.errors),
      formatNumber(f.p50),
      formatNumber(f.p99),
      formatNumber(f.rps),
    ];
    out(
      `payments beside the billing engine (${new Date().toISOString()}; POST /v1/payments, ${CONCURRENCY} clients, closed loop; Kassa: API and worker in one process)`,
    );
    out(
      textTable(
        ['window', 's', 'created', 'errors', 'p50 ms', 'p99 ms', 'creates/s'],
        [row(before, alone[0]!), row(during, beside), row(afterwards, alone[1]!)],
      ),
    );
    for (const window of [before, during, afterwards]) {
      if (window.errors > 0) out(`errors (${window.label}): ${[...window.errorKinds].map(([kind, n]) => `${kind} ×${n}`).join(', ')}`);
    }
    out(
      `while billing ÷ alone (mean of before and after): p50 ×${formatNumber(beside.p50 / mean.p50)}, p99 ×${formatNumber(beside.p99 / mean.p99)}, creates/s ×${formatNumber(beside.rps / mean.rps)}`,
    );
    out(
      `the engine: ${charges} of ${N} renewed in ${formatNumber(billingMs / 1000)} s (${left} still due when the window closed; ${formatNumber(charges / (billingMs / 1000), 0)} renewals/s beside the payments); ` +
        `${delivered} webhook deliveries received by then, ${deliveriesLeft} still queued (taken off the queue before the payments ran alone again); kassa log lines: ${kassaLines}`,
    );
  } finally {
    if (kassa.exitCode === null) {
      kassa.kill('SIGTERM');
      const timer = setTimeout(() => kassa.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
    receiver.close();
    await setup.pool.end();
  }
}

// ---------------------------------------------------------------- 2. the engine's cost, in this process

async function engineCost(): Promise<void> {
  const setup = await freshDatabase('https://shop.example/events', ['subscription.renewed', 'subscription.past_due', 'subscription.payment_due']);
  const { pool, storeId } = setup;
  const engine = { pool, config, now: () => new Date(), log, present: (row: SubscriptionRow) => presentSubscription(row, config) };

  async function drain(): Promise<{ ms: number; statements: number; changed: number }> {
    const before = statements;
    const started = performance.now();
    let changed = 0;
    for (;;) {
      const n = await runDueSubscriptions(engine);
      changed += n;
      if (n === 0) break;
    }
    return { ms: performance.now() - started, statements: statements - before, changed };
  }

  say(`${N} subscriptions due at once, each with credit for its period`);
  await dueSubscriptions(setup, N, '1', 'credit-');
  const renewed = await drain();
  say(`${R} subscriptions due without credit (a renewal payment each)`);
  await dueSubscriptions(setup, R, '0', 'unpaid-');
  const opened = await drain();

  say(`baseline: ${P} payments by the API's create command`);
  const baseBefore = statements;
  const baseStarted = performance.now();
  for (let i = 0; i < P; i += 1) {
    await pool.transaction(async (tx) => {
      const draft = await draftFromPayment(
        tx,
        storeId,
        { amount: '1', currency: 'TON', description: 'baseline', ttl: 3600, metadata: {} },
        { network: config.tonNetwork },
      );
      await createPayment(tx, config, storeId, { ...draft, createdVia: 'payments' }, new Date());
    });
  }
  const baseline = { ms: performance.now() - baseStarted, statements: statements - baseBefore };

  const checks = await pool.one(sql.type(z.object({ charges: z.number(), renewals: z.number(), deliveries: z.number() }))`
    select (select count(*) from subscription_ledger where kind = 'charge')::int as charges,
           (select count(*) from payments where subscription_id is not null)::int as renewals,
           (select count(*) from webhook_deliveries)::int as deliveries
  `);

  const per = (total: number, n: number) => total / n;
  const basePerMs = per(baseline.ms, P);
  const row = (what: string, n: number, run: { ms: number; statements: number }) => [
    what,
    String(n),
    formatNumber(run.ms / 1000),
    formatNumber(per(run.ms, n) * 1000, 0),
    formatNumber(per(run.statements, n), 1),
    formatNumber(per(run.ms, n) / basePerMs),
  ];
  out(`subscriptions benchmark (${new Date().toISOString()}; the engine's statements counted by a slonik interceptor)`);
  out(
    textTable(
      ['what', 'n', 'total s', 'µs each', 'statements each', '× one payment made'],
      [
        row('renewed from credit (due at once)', N, renewed),
        row('past_due, renewal payment opened', R, opened),
        row('baseline: a payment made (API create command)', P, baseline),
      ],
    ),
  );
  out(`checks: ${checks.charges} charges (expected ${N}), ${checks.renewals} renewal payments (expected ${R}), ${checks.deliveries} event deliveries written`);
  out(
    `throughput: ${formatNumber(N / (renewed.ms / 1000), 0)} subscriptions renewed per second; ${formatNumber(P / (baseline.ms / 1000), 0)} payments made per second`,
  );
  await pool.end();
}

try {
  if (flags.beside === 'on') await besideTheEngine();
  if (flags.cost === 'on') await engineCost();
} finally {
  await admin.query(`drop database if exists ${pg.escapeIdentifier(BENCH_DATABASE)} with (force)`);
  await admin.end();
  await dbServer.stop();
}
