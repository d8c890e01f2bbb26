// The subscriptions benchmark (issue 45): prints numbers, asserts nothing, exits 0.
//
//   node bench/subscriptions.ts [--subscriptions 100000] [--renewals 1000] [--payments 1000]   (npm run bench:subscriptions -- …)
//
// A fresh database `kassa_bench_subscriptions` on DATABASE_URL's server (its role must be allowed
// to create databases), or on the embedded PostgreSQL, migrated. The engine runs in this process
// as the worker's subscriptions__bill runs it (`runDueSubscriptions`, 500 at a time, until none is
// due); every statement it sends is counted (a slonik interceptor). One store (TON), a plan of 1
// TON a month, a webhook endpoint that hears subscription.renewed (its deliveries are written, not
// sent). Printed:
// - `--subscriptions` subscriptions whose period ended a minute ago, all due at once, each with
//   credit for the next period: renewed from credit (a ledger charge, the period moved, the event);
// - `--renewals` due ones without credit: past_due, each with its renewal payment opened (the API's
//   create command) and subscription.past_due and .payment_due;
// - the baseline, in the same run: `--payments` payments made one after the other by the same
//   create command the API's POST /v1/payments uses (TON, a deposit address each);
// - time and statements per subscription and per payment, and the ratio of each to the baseline.
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { pino } from 'pino';
import type { Interceptor } from 'slonik';
import { loadConfig } from '../src/config.ts';
import { openDatabaseServer } from '../src/db/embedded.ts';
import { migrate } from '../src/db/migrate.ts';
import { openPool, sql, z } from '../src/db/pool.ts';
import { createPayment } from '../src/payments/commands.ts';
import { draftFromPayment } from '../src/payments/drafts.ts';
import { presentSubscription } from '../src/presenters/subscription.ts';
import { createStore, parseMethodList } from '../src/stores/stores.ts';
import { runDueSubscriptions } from '../src/subscriptions/engine.ts';
import type { SubscriptionRow } from '../src/subscriptions/records.ts';
import { benchFlags } from './lib/flags.ts';
import { formatNumber, textTable } from './lib/stats.ts';

const USAGE = 'usage: node bench/subscriptions.ts [--subscriptions 100000] [--renewals 1000] [--payments 1000]';
const { flags, usage } = benchFlags(USAGE, {
  subscriptions: { type: 'string', default: '100000' },
  renewals: { type: 'string', default: '1000' },
  payments: { type: 'string', default: '1000' },
});
const N = Number(flags.subscriptions);
const R = Number(flags.renewals);
const P = Number(flags.payments);
for (const [name, n] of [
  ['--subscriptions', N],
  ['--renewals', R],
  ['--payments', P],
] as const) {
  if (!Number.isInteger(n) || n < 1 || n > 1_000_000) usage(`${name} must be an integer from 1 to 1000000`);
}

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
await admin.query(`drop database if exists ${pg.escapeIdentifier(BENCH_DATABASE)} with (force)`);
await admin.query(`create database ${pg.escapeIdentifier(BENCH_DATABASE)}`);
await migrate(benchUrl, log);

const config = loadConfig({ DATABASE_URL: benchUrl, PORT: '0', LOG_LEVEL: 'warn' });
let statements = 0;
const counter: Interceptor = {
  name: 'bench-statement-counter',
  beforeQueryExecution: () => {
    statements += 1;
    return null;
  },
};
const pool = await openPool(benchUrl, { maxPoolSize: 4, interceptors: [counter], statementTimeoutMs: 600_000 });
const store = await createStore(pool, 'Bench subscriptions', parseMethodList('TON/TON'), {});
const planId = crypto.randomUUID();
await pool.query(sql.unsafe`
  insert into plans (id, store_id, name, currency, amount, interval_unit, interval_count, trial_days, grace_days, reminder_days, created_at)
  values (${planId}, ${store.id}, 'Bench monthly', 'TON', 1, 'month', 1, 0, 3, 3, now())
`);
await pool.query(sql.unsafe`
  insert into webhook_endpoints (id, store_id, url, events, created_at)
  values (gen_random_uuid(), ${store.id}, 'https://shop.example/events',
          array['subscription.renewed','subscription.past_due','subscription.payment_due'], now())
`);

/** `count` subscriptions whose first period ended a minute ago (anchored a month and a minute ago), due now, with `credit` each. */
async function dueSubscriptions(count: number, credit: string, prefix: string): Promise<void> {
  await pool.query(sql.unsafe`
    insert into subscriptions (id, store_id, plan_id, customer_reference, status, anchor_at, periods_charged, current_period_end, credit,
                               next_run_at, portal_token_hash, created_at)
    select gen_random_uuid(), ${store.id}, ${planId}, ${prefix} || i, 'active', now() - interval '1 month 1 minute', 1,
           now() - interval '1 month 1 minute' + interval '1 month', ${credit}::numeric, now() - interval '1 minute',
           sha256(convert_to(${prefix} || i || random()::text, 'UTF8')), now() - interval '1 month 1 minute'
    from generate_series(1, ${count}) as i
  `);
}

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
await dueSubscriptions(N, '1', 'credit-');
const renewed = await drain();
say(`${R} subscriptions due without credit (a renewal payment each)`);
await dueSubscriptions(R, '0', 'unpaid-');
const opened = await drain();

say(`baseline: ${P} payments by the API's create command`);
const baseBefore = statements;
const baseStarted = performance.now();
for (let i = 0; i < P; i += 1) {
  await pool.transaction(async (tx) => {
    const draft = await draftFromPayment(
      tx,
      store.id,
      { amount: '1', currency: 'TON', description: 'baseline', ttl: 3600, metadata: {} },
      { network: config.tonNetwork },
    );
    await createPayment(tx, config, store.id, { ...draft, createdVia: 'payments' }, new Date());
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
await admin.query(`drop database if exists ${pg.escapeIdentifier(BENCH_DATABASE)} with (force)`);
await admin.end();
await dbServer.stop();
