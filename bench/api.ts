// The payments API benchmark (issue 3): prints numbers, asserts nothing.
//
// Starts a real Kassa (`kassa start`, a child process) on a fresh `kassa_bench` database — on the
// server of DATABASE_URL when set (its role must be allowed to create databases), otherwise on the
// embedded PostgreSQL — and drives, at each concurrency for a fixed duration:
//   create    POST /v1/payments, Preselected (USDT on TON, priced from USD), fresh X-Idempotency-Key
//   retrieve  GET /v1/payments/{id} over the ids the create cells made
// In the same run, on the same server and database, pgbench runs a raw single-row INSERT and a
// primary-key SELECT at the same client counts and duration (the issue's baseline), and replays
// the very statements one create and one retrieve send (the "same SQL" baseline,
// bench/lib/replay.ts). Issue 13's targets are measured against two more baselines: the payment
// floor (pgbench: one transaction inserting a payment-like row and its idempotency record, one
// commit; and the same with `graphile_worker.add_job`) for create, and for retrieve, beside the raw
// primary-key SELECT, a bare `node:http` + `pg` server doing the payment's read with a prepared
// statement (bench/lib/bare-server.ts); and for both, the floor of this stack for Kassa's work: the
// recorded statements sent by a bare node:http + pg server (bench/lib/lean-server.ts, "lean node, same
// SQL"). Kassa is paused (SIGSTOP) while a baseline runs, so each
// side has the machine to itself during its own cells. `--open N` keeps N open (pending, watched)
// payments during the cells.
//
//   node bench/api.ts [--duration 10] [--warmup 3] [--concurrency 8,32] [--api-only] [--open 1000]
//                     [--pgbench-mode simple|extended|prepared] [--transport wrk|http|fetch]
//                     [--cpu-prof DIR] [--keep] [--show-replay] [--scenarios create,retrieve]
//                     [--skip-baselines] [--json FILE] [--limits on|off] [--kassa-root DIR] [--database NAME]
//                     [--pooler none|pgbouncer] [--prepared-statements default|on|off]
// `--pooler pgbouncer` runs Kassa as behind a managed PostgreSQL's pooled URL (issue 46): its
// DATABASE_URL through a private PgBouncer (Debian's, 1.18) in transaction mode in front of the bench
// database (test/helpers/pgbouncer.ts), DATABASE_SESSION_URL direct (the worker, migrations).
// `--prepared-statements` sets DATABASE_PREPARED_STATEMENTS (default: Kassa's own default — on with
// one URL, off when the two URLs differ). bench/pooler.ts compares these in alternating pairs.
// `--limits on` runs Kassa with the store's rate limit at work (the default configuration's shared
// limiter, at a rate no cell reaches); `--kassa-root DIR` runs the Kassa of another tree (the code
// before a change: bench/pairs.ts); `--database NAME` names the scratch database (two benchmarks on
// one server at once). `--skip-baselines` measures Kassa's cells only (no pause, no pgbench, no bare server) and
// `--json FILE` writes the cells as JSON: bench/modes.ts runs this script that way, alternately in
// the default mode and with `--api-only`, for issue 11's "default within 10 % of --api-only".
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../src/config.ts';
import { openBenchDatabase, teardownOnSignals } from './lib/database.ts';
import { startPgBouncer, type PgBouncer } from '../test/helpers/pgbouncer.ts';
import { openPool, sql, z } from '../src/db/pool.ts';
import { issueToken, verifyToken } from '../src/auth/tokens.ts';
import { createOperations } from '../src/http/routes/payments.ts';
import { idempotent } from '../src/idempotency.ts';
import type { CreatePaymentBody } from '../src/http/routes/payments.schema.ts';
import { findStorePayment } from '../src/payments/view.ts';
import { createStore, parseMethodList } from '../src/stores/stores.ts';
import { cpuBetween, exitedChildrenCpuMs, machineBusyMs, parentPid, processCpuMs, sampleCpu, serverTreeCpuMs } from './lib/cpu.ts';
import { runClosedLoop, type RequestSpec, type Transport } from './lib/load.ts';
import { pgbenchVersion, runPgbench, type PgbenchMode, type PgbenchResult } from './lib/pgbench.ts';
import { runWrk, wrkScript, wrkVersion } from './lib/wrk.ts';
import { benchFlags } from './lib/flags.ts';
import { leanStatements, literal, replayScript, statementRecorder, type LeanStatement, type ReplayStatement } from './lib/replay.ts';
import { formatNumber, percentile, sortedCopy, textTable } from './lib/stats.ts';

const root = path.resolve(import.meta.dirname, '..');
process.chdir(root);

const USAGE = `usage: node bench/api.ts [--duration SECONDS] [--warmup SECONDS] [--concurrency 8,32] [--api-only] [--open N]
                         [--pgbench-mode simple|extended|prepared] [--transport wrk|http|fetch] [--cpu-prof DIR] [--keep] [--show-replay]
                         [--scenarios create,retrieve] [--skip-baselines] [--json FILE] [--limits on|off] [--kassa-root DIR]
                         [--database NAME] [--pooler none|pgbouncer] [--prepared-statements default|on|off]
needs: pgbench (Debian: apt-get install postgresql-client) and, for the default --transport wrk, wrk (apt-get install wrk)`;

const { flags, usage } = benchFlags(USAGE, {
  duration: { type: 'string', default: '10' },
  warmup: { type: 'string', default: '3' },
  concurrency: { type: 'string', default: '8,32' },
  'api-only': { type: 'boolean', default: false },
  open: { type: 'string', default: '1000' },
  'pgbench-mode': { type: 'string', default: 'simple' },
  transport: { type: 'string', default: 'wrk' },
  'cpu-prof': { type: 'string' },
  keep: { type: 'boolean', default: false },
  'show-replay': { type: 'boolean', default: false },
  scenarios: { type: 'string', default: 'create,retrieve' },
  'skip-baselines': { type: 'boolean', default: false },
  json: { type: 'string' },
  limits: { type: 'string', default: 'off' },
  'kassa-root': { type: 'string' },
  database: { type: 'string', default: 'kassa_bench' },
  pooler: { type: 'string', default: 'none' },
  'prepared-statements': { type: 'string', default: 'default' },
});
const durationSeconds = Number(flags.duration);
if (!Number.isInteger(durationSeconds) || durationSeconds < 1) usage('--duration must be a whole number of seconds ≥ 1 (pgbench -T takes seconds)');
const warmupSeconds = Number(flags.warmup);
if (!Number.isFinite(warmupSeconds) || warmupSeconds < 0) usage('--warmup must be a number of seconds ≥ 0');
const concurrencies = flags.concurrency.split(',').map((part) => Number(part.trim()));
if (concurrencies.some((n) => !Number.isInteger(n) || n < 1 || n > 256)) usage('--concurrency must be a list of integers from 1 to 256, e.g. 8,32');
const pgbenchMode = flags['pgbench-mode'] as PgbenchMode;
if (!['simple', 'extended', 'prepared'].includes(pgbenchMode)) usage('--pgbench-mode must be simple, extended or prepared');
const transport = flags.transport as Transport | 'wrk';
if (transport !== 'http' && transport !== 'fetch' && transport !== 'wrk') usage('--transport must be wrk, http or fetch');
const openPayments = Number(flags.open);
if (!Number.isInteger(openPayments) || openPayments < 0) usage('--open must be a whole number ≥ 0');
const apiOnly = flags['api-only'];
const scenarios = flags.scenarios.split(',').map((part) => part.trim());
if (scenarios.length === 0 || scenarios.some((name) => name !== 'create' && name !== 'retrieve'))
  usage('--scenarios must be create, retrieve or both (comma-separated)');
const cpuProfDir = flags['cpu-prof'] ? path.resolve(flags['cpu-prof']) : null;
const skipBaselines = flags['skip-baselines'];
const jsonFile = flags.json ? path.resolve(flags.json) : null;

const limitsOn = flags.limits === 'on';
if (!['on', 'off'].includes(flags.limits)) usage('--limits must be on or off');
/**
 * `--limits on`: the store's rate limit at work as in the default configuration (every request
 * counted by the shared limiter of `kassa start`), at a rate above any load here so that no request
 * is refused; `off`: RATE_LIMIT_PER_STORE=0.
 */
const ratePerStore = limitsOn ? '1000000' : '0';
/** The Kassa to run (`--kassa-root`, e.g. a checkout of the code before a change); this tree by default. */
const kassaRoot = flags['kassa-root'] ? path.resolve(flags['kassa-root']) : root;
const BENCH_DATABASE = flags.database;
if (!/^[a-z_][a-z0-9_]*$/.test(BENCH_DATABASE)) usage('--database must be a plain lower-case name');
const pooler = flags.pooler;
if (pooler !== 'none' && pooler !== 'pgbouncer') usage('--pooler must be none or pgbouncer');
const preparedStatements = flags['prepared-statements'];
if (!['default', 'on', 'off'].includes(preparedStatements)) usage('--prepared-statements must be default, on or off');
const SELECT_ROWS = 100_000;
const CREATE_BODY = JSON.stringify({ amount: '10', currency: 'USD', payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } });

const log = pino({ level: 'warn' }, pino.destination(2));
const say = (line: string) => process.stderr.write(`bench: ${line}\n`);

// ---------------------------------------------------------------- the database

const pgbenchVersionText = await pgbenchVersion();
if (!pgbenchVersionText) {
  process.stderr.write('bench: pgbench not found (set PGBENCH=/path/to/pgbench; Debian: apt-get install postgresql-client)\n');
  process.exit(1);
}
const wrkVersionText = transport === 'wrk' ? await wrkVersion() : null;
if (transport === 'wrk' && !wrkVersionText) {
  process.stderr.write('bench: wrk not found (set WRK=/path/to/wrk; Debian: apt-get install wrk), or drive with --transport http\n');
  process.exit(1);
}

const database = await openBenchDatabase(BENCH_DATABASE, root, log);
const { server, admin, url: benchUrl } = database;
const onDatabaseUrl = database.source === 'DATABASE_URL';

// The server's processes, to tell PostgreSQL's CPU apart (only when it runs on this machine).
const postmasterPid = await (async (): Promise<number | null> => {
  if (!['127.0.0.1', 'localhost', '[::1]', '::1'].includes(new URL(server.url).hostname)) return null;
  const backend = (await admin.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid;
  if (backend === undefined) return null;
  try {
    if (!fs.readFileSync(`/proc/${backend}/cmdline`, 'utf8').startsWith('postgres')) return null;
  } catch {
    return null;
  }
  return parentPid(backend);
})();
const postgresCpu = (): number | null => (postmasterPid === null ? null : serverTreeCpuMs(postmasterPid));

let kassa: ChildProcess | null = null;
/** `--pooler pgbouncer`: the private PgBouncer Kassa's DATABASE_URL goes through. */
let bouncer: PgBouncer | null = null;
let bare: ChildProcess | null = null;
let lean: ChildProcess | null = null;
let cleaningUp: Promise<void> | null = null;
async function cleanUp(): Promise<void> {
  cleaningUp ??= (async () => {
    for (const child of [bare, lean]) {
      if (child && child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }
    }
    if (kassa && kassa.exitCode === null && kassa.signalCode === null) {
      kassa.kill('SIGCONT');
      kassa.kill('SIGTERM');
      const exited = once(kassa, 'exit');
      const timer = setTimeout(() => kassa?.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
    await bouncer?.stop();
    await database.close(flags.keep);
  })();
  return cleaningUp;
}
teardownOnSignals(cleanUp);

say(`preparing database ${BENCH_DATABASE} on ${onDatabaseUrl ? 'DATABASE_URL' : 'the embedded PostgreSQL'}`);
await database.fresh();

const setupPool = await openPool(benchUrl, { maxPoolSize: 2 });
const store = await createStore(setupPool, 'Bench store', parseMethodList('TON/TON,USDT/TON'));
const { token } = await issueToken(setupPool, store.id, null, new Date());
await setupPool.end();

// Scratch tables for pgbench, about as wide as the payment row's core: uuid pk, a few columns.
const bench = new pg.Client({ connectionString: benchUrl });
bench.on('error', () => {});
await bench.connect();
await bench.query(`
  create table bench_raw_insert (
    id uuid primary key default gen_random_uuid(),
    store_id uuid not null,
    status text not null,
    amount numeric not null,
    currency text not null,
    coin_amount numeric,
    metadata jsonb not null default '{}'::jsonb,
    created_at timestamptz not null default now(),
    expires_at timestamptz not null
  )`);
await bench.query('create table bench_raw_select (like bench_raw_insert including all)');
await bench.query(
  `insert into bench_raw_select (id, store_id, status, amount, currency, coin_amount, expires_at)
   select md5(i::text)::uuid, $1, 'pending', 10, 'USD', 10.5, now() + interval '1 hour' from generate_series(1, ${SELECT_ROWS}) i`,
  [store.id],
);
await bench.query('vacuum analyze bench_raw_select');
// The payment floor (issue 13): a payment-like row (about 15 columns, a unique deposit address, an
// index on store and time) and its idempotency record (store, key, request hash, response as jsonb).
await bench.query(`
  create table bench_floor_payments (
    id uuid primary key default gen_random_uuid(),
    store_id uuid not null,
    status text not null check (status in ('created', 'pending', 'completed', 'expired', 'cancelled')),
    amount numeric not null check (amount > 0),
    currency text not null,
    order_id text,
    metadata jsonb not null default '{}'::jsonb,
    created_via text not null,
    coin_symbol text,
    coin_amount numeric,
    exchange_rate numeric,
    deposit_address text not null unique,
    created_at timestamptz not null default now(),
    expires_at timestamptz not null,
    method_selected_at timestamptz
  )`);
await bench.query('create index bench_floor_payments_by_store on bench_floor_payments (store_id, created_at)');
await bench.query(`
  create table bench_floor_idempotency (
    store_id uuid not null,
    idempotency_key uuid not null,
    request_hash text not null,
    response jsonb,
    created_at timestamptz not null default now(),
    primary key (store_id, idempotency_key)
  )`);
const serverVersion = (await bench.query<{ server_version: string }>('show server_version')).rows[0]?.server_version ?? '?';
const settings = (
  await bench.query<{ name: string; setting: string }>(
    `select name, setting from pg_settings where name in ('synchronous_commit', 'fsync', 'shared_buffers', 'max_connections') order by name`,
  )
).rows
  .map((row) => `${row.name}=${row.setting}`)
  .join(' ');
await bench.end();

const INSERT_SCRIPT = `insert into bench_raw_insert (store_id, status, amount, currency, coin_amount, expires_at)
values ('${store.id}', 'pending', 10, 'USD', 10.5, now() + interval '1 hour');
`;
const SELECT_SCRIPT = `\\set n random(1, ${SELECT_ROWS})
select * from bench_raw_select where id = md5(cast(:n as text))::uuid;
`;
/** The payment floor's transaction; `withJob` adds Graphile Worker's add_job (a job per payment). */
const floorScript = (response: string, withJob: boolean): string => `\\set k random(1, 9223372036854775806)
begin;
insert into bench_floor_payments (store_id, status, amount, currency, metadata, created_via, coin_symbol, coin_amount, exchange_rate, deposit_address, expires_at, method_selected_at)
values ('${store.id}', 'pending', 10, 'USD', '{}', 'payments', 'USDT', 10.5, 1.05, '0:' || md5(cast(:k as text)) || md5('a' || cast(:k as text)), now() + interval '1 hour', now());
insert into bench_floor_idempotency (store_id, idempotency_key, request_hash, response)
values ('${store.id}', cast(md5(cast(:k as text)) as uuid), md5('h' || cast(:k as text)), cast(${literal(response)} as jsonb));
${withJob ? "select 1 from graphile_worker.add_job('bench_floor', json_build_object('k', cast(:k as text)));\n" : ''}commit;
`;

// ---------------------------------------------------------------- Kassa

async function freePort(): Promise<number> {
  const probe = net.createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const port = await freePort();
const baseUrl = `http://127.0.0.1:${port}`;
if (pooler === 'pgbouncer') {
  // Pool as a managed service's: more server connections than Kassa's API pool holds clients.
  bouncer = await startPgBouncer(benchUrl, { poolSize: 20 });
  say(`PgBouncer (transaction mode) on ${new URL(bouncer.url).port} in front of ${BENCH_DATABASE}`);
}
const kassaEnv: NodeJS.ProcessEnv = {
  ...process.env,
  DATABASE_URL: bouncer?.url ?? benchUrl,
  ...(bouncer ? { DATABASE_SESSION_URL: benchUrl } : {}),
  ...(preparedStatements === 'default' ? {} : { DATABASE_PREPARED_STATEMENTS: preparedStatements === 'on' ? 'true' : 'false' }),
  PORT: String(port),
  HOST: '127.0.0.1',
  RATE_LIMIT_PER_STORE: ratePerStore,
  LOG_LEVEL: 'warn',
  // As in production (where it is required): a configured master key, not one kept in the database.
  KASSA_MASTER_KEY: process.env.KASSA_MASTER_KEY ?? crypto.randomBytes(32).toString('hex'),
};
delete kassaEnv.BASE_URL;
delete kassaEnv.CHECKOUT_BASE_URL;
if (cpuProfDir) fs.mkdirSync(cpuProfDir, { recursive: true });
const kassaArgs = [
  ...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : []),
  path.join(kassaRoot, 'src/cli.ts'),
  'start',
  ...(apiOnly ? ['--api'] : []),
];
say(`starting kassa: node ${kassaArgs.join(' ')} (PORT=${port}, RATE_LIMIT_PER_STORE=${ratePerStore}, LOG_LEVEL=warn)`);
kassa = spawn(process.execPath, kassaArgs, { cwd: kassaRoot, env: kassaEnv, stdio: ['ignore', 'pipe', 'pipe'] });
let kassaWarnings = 0;
const forward = (stream: NodeJS.ReadableStream | null) =>
  stream?.on('data', (chunk: Buffer) => {
    kassaWarnings += chunk
      .toString()
      .split('\n')
      .filter((line) => line.trim() !== '').length;
    if (kassaWarnings <= 20) process.stderr.write(`kassa| ${chunk.toString()}`);
  });
forward(kassa.stdout);
forward(kassa.stderr);
const kassaExited = once(kassa, 'exit');

async function waitForHealth(): Promise<void> {
  const deadline = Date.now() + 90_000;
  let exited = false;
  void kassaExited.then(() => (exited = true));
  while (Date.now() < deadline) {
    if (exited) throw new Error(`kassa exited during start (code ${kassa?.exitCode}, signal ${kassa?.signalCode})`);
    try {
      const response = await fetch(`${baseUrl}/healthz`);
      await response.text();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error('kassa did not answer /healthz within 90 s');
}

// ---------------------------------------------------------------- the cells

/** One measured side of a cell: Kassa under load, or a baseline while Kassa is paused. */
interface Measured {
  label: string;
  tps: number;
  completed: number;
  errors: number;
  errorKinds: Map<string, number>;
  p50Ms: number;
  p99Ms: number;
  elapsedMs: number;
  /** CPU ms over the measurement: machine, kassa, postgres, bare (the bare server), driver (load driver or pgbench client). */
  cpu: Map<string, number | null>;
}

interface Cell {
  scenario: 'create' | 'retrieve';
  concurrency: number;
  kassa: Measured;
  /** The target's baseline first (create: the payment floor; retrieve: the raw primary-key SELECT), then the others. */
  baselines: Measured[];
}

/** Issue 13's targets: create ≥ 0.5× the payment floor, retrieve ≥ 0.25× the raw primary-key SELECT. */
const TARGETS = { create: { ratio: 0.5, baseline: 'payment floor' }, retrieve: { ratio: 0.25, baseline: 'raw SELECT' } } as const;

const auth = { authorization: `Bearer ${token}` };
let ids: string[] = [];
const ID_IN_BODY = /"id":"([0-9a-f-]{36})"/;
const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kassa-bench-api-'));
const pathsFile = path.join(workDir, 'retrieve-paths.txt');

const createRequest = (): RequestSpec => ({
  method: 'POST',
  path: '/v1/payments',
  headers: { ...auth, 'content-type': 'application/json', 'x-idempotency-key': crypto.randomUUID() },
  body: CREATE_BODY,
});
const retrieveRequest = (): RequestSpec => ({
  method: 'GET',
  path: `/v1/payments/${ids[Math.floor(Math.random() * ids.length)]}`,
  headers: auth,
});
const CREATE_WRK = wrkScript({
  method: 'POST',
  path: '/v1/payments',
  headers: { Authorization: auth.authorization, 'Content-Type': 'application/json' },
  body: CREATE_BODY,
  idempotencyKey: true,
});
const RETRIEVE_WRK = wrkScript({ method: 'GET', headers: { Authorization: auth.authorization }, pathsFile });

let checkpointNote: string | null = null;
async function settle(): Promise<void> {
  // Same starting point for every cell: dirty pages flushed, no checkpoint due mid-cell.
  await admin.query('checkpoint').catch((error: Error) => {
    checkpointNote ??= `checkpoint before each cell was not possible (${error.message})`;
  });
}

/** Drives `target` with the scenario's requests; the meters are read around the load. */
async function drive(
  label: string,
  target: string,
  scenario: Cell['scenario'],
  concurrency: number,
  seconds: number,
  meters: Record<string, () => number | null>,
): Promise<Measured> {
  await settle();
  if (transport === 'wrk') {
    const all = { ...meters, driver: exitedChildrenCpuMs };
    const before = sampleCpu(all);
    const result = await runWrk({ url: target, connections: concurrency, seconds, script: scenario === 'create' ? CREATE_WRK : RETRIEVE_WRK });
    return {
      label,
      tps: result.requestsPerSecond,
      completed: result.completed,
      errors: result.errors,
      errorKinds: result.errorKinds,
      p50Ms: result.p50Ms,
      p99Ms: result.p99Ms,
      elapsedMs: result.elapsedMs,
      cpu: cpuBetween(before, sampleCpu(all)),
    };
  }
  const before = sampleCpu(meters);
  const load = await runClosedLoop({
    baseUrl: target,
    concurrency,
    durationMs: seconds * 1000,
    transport,
    next: scenario === 'create' ? createRequest : retrieveRequest,
  });
  const cpu = cpuBetween(before, sampleCpu(meters));
  cpu.set('driver', load.driverCpuMs);
  const sorted = sortedCopy(load.latenciesMs);
  return {
    label,
    tps: load.requestsPerSecond,
    completed: load.completed,
    errors: load.errors,
    errorKinds: load.errorKinds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    elapsedMs: load.elapsedMs,
    cpu,
  };
}

const kassaCell = (scenario: Cell['scenario'], concurrency: number, seconds: number) =>
  drive('kassa', baseUrl, scenario, concurrency, seconds, { kassa: () => processCpuMs(kassa!.pid!), postgres: postgresCpu });

/** After a pause, how long Kassa gets to recover before anything of it is measured again. */
const RESUME_SECONDS = 5;

/**
 * Runs `measure` with Kassa paused (SIGSTOP), so the baseline has the machine to itself. A pause of
 * tens of seconds times out the worker's idle database connections (Graphile Worker reconnects
 * them, the chain reader claims its lapsed lease again): the next cell starts RESUME_SECONDS
 * after Kassa resumes, so the default mode is not measured while it recovers from the benchmark.
 */
async function paused<T>(measure: () => Promise<T>): Promise<T> {
  kassa!.kill('SIGSTOP');
  try {
    return await measure();
  } finally {
    kassa!.kill('SIGCONT');
    await new Promise((resolve) => setTimeout(resolve, RESUME_SECONDS * 1000));
  }
}

async function pgbenchCell(label: string, script: string, concurrency: number, mode: PgbenchMode = pgbenchMode): Promise<Measured> {
  await settle();
  return paused(async () => {
    const meters = { postgres: postgresCpu, driver: exitedChildrenCpuMs };
    const before = sampleCpu(meters);
    const result: PgbenchResult = await runPgbench({ url: benchUrl, clients: concurrency, seconds: durationSeconds, script, mode });
    const cpu = cpuBetween(before, sampleCpu(meters));
    const errorKinds = new Map<string, number>(result.failed > 0 ? [['failed transactions', result.failed]] : []);
    return {
      label,
      tps: result.tps,
      completed: result.transactions,
      errors: result.failed,
      errorKinds,
      p50Ms: result.p50Ms,
      p99Ms: result.p99Ms,
      elapsedMs: durationSeconds * 1000,
      cpu,
    };
  });
}

const barePort = await freePort();
async function startBare(): Promise<void> {
  bare = spawn(process.execPath, [path.join(root, 'bench/lib/bare-server.ts')], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: benchUrl, PORT: String(barePort), POOL_SIZE: '10' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [chunk] = (await once(bare.stdout!, 'data')) as [Buffer];
  if (!chunk.toString().includes('listening')) throw new Error(`the bare server did not start: ${chunk.toString()}`);
}

const bareCell = (concurrency: number) =>
  paused(async () => {
    const target = `http://127.0.0.1:${barePort}`;
    const meters = { bare: () => processCpuMs(bare!.pid!), postgres: postgresCpu };
    if (warmupSeconds > 0) await drive('bare warm-up', target, 'retrieve', concurrency, Math.min(warmupSeconds, 2), meters); // its JIT, like Kassa's warm-up
    return drive('bare node:http + pg', target, 'retrieve', concurrency, durationSeconds, meters);
  });

const leanPort = await freePort();
/** The lean server (bench/lib/lean-server.ts): Kassa's recorded statements behind a bare node:http server. */
async function startLean(statements: { create: LeanStatement[]; retrieve: LeanStatement[] }): Promise<void> {
  const file = path.join(workDir, 'lean-statements.json');
  fs.writeFileSync(file, JSON.stringify(statements));
  lean = spawn(process.execPath, [path.join(root, 'bench/lib/lean-server.ts')], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: benchUrl, PORT: String(leanPort), POOL_SIZE: '10', STATEMENTS_FILE: file },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [chunk] = (await once(lean.stdout!, 'data')) as [Buffer];
  if (!chunk.toString().includes('listening')) throw new Error(`the lean server did not start: ${chunk.toString()}`);
}

const LEAN_LABEL = 'lean node, same SQL';
const leanCell = (scenario: Cell['scenario'], concurrency: number) =>
  paused(async () => {
    const target = `http://127.0.0.1:${leanPort}`;
    const meters = { bare: () => processCpuMs(lean!.pid!), postgres: postgresCpu };
    if (warmupSeconds > 0) await drive('lean warm-up', target, scenario, concurrency, Math.min(warmupSeconds, 2), meters);
    if (scenario === 'create') await keepOpen();
    return drive(LEAN_LABEL, target, scenario, concurrency, durationSeconds, meters);
  });

/** The payments Kassa's retrieve cells (and the bare server's) read: every payment of the store. */
async function loadIds(): Promise<void> {
  const client = new pg.Client({ connectionString: benchUrl });
  await client.connect();
  try {
    ids = (await client.query<{ id: string }>('select id from payments where store_id = $1', [store.id])).rows.map((row) => row.id);
  } finally {
    await client.end();
  }
  fs.writeFileSync(pathsFile, ids.map((id) => `/v1/payments/${id}\n`).join(''));
}

const openIds: string[] = [];
/** Creates `--open` pending payments (12-hour TTL) with the create operation, so the worker watches them. */
async function openSeed(): Promise<void> {
  if (openPayments === 0) return;
  const pool = await openPool(benchUrl, { maxPoolSize: 4 });
  try {
    const operations = createOperations({ config: loadConfig(kassaEnv, root) });
    const body = { ...(JSON.parse(CREATE_BODY) as CreatePaymentBody), ttl: 43_200 };
    let started = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (started < openPayments) {
          started += 1;
          const now = new Date();
          const outcome = await idempotent(pool, { storeId: store.id, endpoint: 'POST /v1/payments', key: undefined, body, now }, (tx) =>
            operations.payment(tx, { storeId: store.id, body, now }),
          );
          openIds.push(ID_IN_BODY.exec(outcome.body)![1]!);
        }
      }),
    );
  } finally {
    await pool.end();
  }
}

/**
 * Back to `--open` open payments: the ones the create cells made are cancelled in SQL (no webhook,
 * nothing to watch), so every cell runs with the same number of watched payments.
 */
async function keepOpen(): Promise<void> {
  const client = new pg.Client({ connectionString: benchUrl });
  await client.connect();
  try {
    await client.query(
      `update payments set status = 'cancelled', cancelled_at = now()
       where store_id = $1 and status in ('created', 'pending') and not (id = any($2::uuid[]))`,
      [store.id, openIds],
    );
    await client.query(
      `delete from graphile_worker._private_jobs where task_id in (select id from graphile_worker._private_tasks where identifier = 'bench_floor')`,
    );
  } finally {
    await client.end();
  }
}

/**
 * Records the statements of one create and one retrieve, sent by the functions the routes call
 * (token check, `createOperations`, payment view) on a pool that records them, and turns them
 * into pgbench scripts. Per-request values become expressions over pgbench variables: the
 * idempotency key and the payment id from random numbers, the derivation index from the replay's
 * own nextval (\gset), the deposit address and its jetton wallet from the index. Replayed with -M prepared, as Kassa
 * prepares them.
 */
async function recordReplays(): Promise<{
  create: string;
  retrieve: string;
  statements: { create: number; retrieve: number };
  lean: { create: LeanStatement[]; retrieve: LeanStatement[] };
}> {
  const recorder = statementRecorder();
  const pool = await openPool(benchUrl, { maxPoolSize: 1, interceptors: [recorder.interceptor] });
  try {
    const body = JSON.parse(CREATE_BODY) as CreatePaymentBody;
    const key = crypto.randomUUID();
    // As behind the routes' guard: the token's signature is verified once per process, and its
    // database check is part of the create's first read and of the retrieve's read.
    const verified = await verifyToken(pool, token, new Date());
    recorder.statements.splice(0);
    // The same configuration as the Kassa child, and the same create operation as its route (its two
    // round trips, `paymentOnce`: the read, then the write that commits by itself).
    const now = new Date();
    const outcome = await createOperations({ config: loadConfig(kassaEnv, root) }).paymentOnce(pool, {
      storeId: store.id,
      body,
      now,
      tokenCheck: { token: verified, now: new Date(), checked: false },
      key,
    });
    if (!outcome) throw new Error('the recorded create went the transaction’s way (its key was taken)');
    const create = recorder.statements.splice(0);
    const paymentId = (JSON.parse(outcome.body) as { id: string }).id;
    await findStorePayment(pool, store.id, paymentId, { token: verified, now: new Date(), checked: false });
    const view = recorder.statements.splice(0);
    const deposit = await pool.one(
      sql.type(z.object({ derivation_index: z.string(), address: z.string(), address_friendly: z.string() }))`
        select derivation_index::text, address, address_friendly from deposit_addresses where payment_id = ${paymentId}`,
    );
    // A jetton payment also watches its deposit's jetton wallet (computed when the method is chosen).
    const jettonWallet = await pool.maybeOneFirst(
      sql.type(z.object({ account: z.string() }))`select account from chain_watches where payment_id = ${paymentId} and kind = 'jetton_wallet'`,
    );
    const takesIndex = /nextval\('deposit_address_index_seq'\)/;
    const gset = (statement: ReplayStatement): ReplayStatement => (takesIndex.test(statement.sql) ? { ...statement, gset: true } : statement);
    // The column the derivation index comes back in (the statement that takes it may read more).
    const indexColumn =
      /nextval\('deposit_address_index_seq'\)[^,]*?\bas\s+(\w+)/.exec(create.find((statement) => takesIndex.test(statement.sql))?.sql ?? '')?.[1] ?? 'index';
    const index = `cast(:${indexColumn} as text)`;
    // Each with the name bench/lib/lean-server.ts knows it by (it computes the addresses from the index as these expressions do).
    const substitutions = [
      { name: 'key', value: key, expression: 'cast(md5(cast(:k as text)) as uuid)' },
      { name: 'payment', value: paymentId, expression: 'cast(md5(cast(:p as text)) as uuid)' },
      { name: 'index', value: deposit.derivation_index, expression: `:${indexColumn}`, exact: true, only: /insert into deposit_addresses/ },
      { name: 'address', value: deposit.address, expression: `('0:' || md5(${index}) || md5('a' || ${index}))` },
      { name: 'friendly', value: deposit.address_friendly, expression: `('UQ' || md5(${index}))` },
      ...(jettonWallet ? [{ name: 'jetton_wallet', value: jettonWallet, expression: `('0:' || md5('w' || ${index}) || md5('b' || ${index}))` }] : []),
    ];
    const createScript = replayScript(create.map(gset), {
      substitutions,
      transaction: false,
      prelude: ['\\set k random(1, 9223372036854775806)', '\\set p random(1, 9223372036854775806)'],
    });
    const retrieveScript = replayScript(view, { substitutions: [], transaction: false });
    const lean = {
      create: leanStatements(create.map(gset), substitutions, indexColumn),
      // The lean server reads the path's payment (the pgbench replay reads the recorded one each time).
      retrieve: leanStatements(view, [{ name: 'payment', value: paymentId, expression: '' }]),
    };
    return { create: createScript, retrieve: retrieveScript, statements: { create: create.length, retrieve: view.length }, lean };
  } finally {
    await pool.end();
  }
}

const cells: Cell[] = [];
let replays: Awaited<ReturnType<typeof recordReplays>> | null = null;
let probeBody = '';
const startedAt = new Date();
const loadBefore = os.loadavg();
let quietBefore: number | null = null;
/** Kassa's own CPU while idle (ms per second): its background work, taken out of "kassa net". */
let kassaIdleMsPerSecond: number | null = null;
let openSeedSeconds = 0;
try {
  await waitForHealth();
  if (!skipBaselines) await startBare();
  // Is the machine quiet? Kassa idles now, so what is busy is someone else.
  const idleStart = machineBusyMs();
  const kassaIdleStart = processCpuMs(kassa!.pid!);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const idleEnd = machineBusyMs();
  const kassaIdleEnd = processCpuMs(kassa!.pid!);
  if (idleStart !== null && idleEnd !== null) quietBefore = (idleEnd - idleStart) / (2000 * os.availableParallelism());
  if (kassaIdleStart !== null && kassaIdleEnd !== null) kassaIdleMsPerSecond = (kassaIdleEnd - kassaIdleStart) / 2;
  // One request first: a setup problem (no rates, no jetton master…) is not a benchmark figure.
  const probe = await fetch(`${baseUrl}/v1/payments`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', 'x-idempotency-key': crypto.randomUUID() },
    body: CREATE_BODY,
  });
  probeBody = await probe.text();
  if (probe.status !== 201) throw new Error(`the first create answered ${probe.status}: ${probeBody}`);
  replays = await recordReplays();
  if (!skipBaselines) await startLean(replays.lean);
  if (flags['show-replay']) say(`same-SQL scripts:\n--- create\n${replays.create}--- retrieve\n${replays.retrieve}`);
  say(`opening ${openPayments} payments (12-hour TTL) to be watched during the cells`);
  const seedStarted = performance.now();
  await openSeed();
  openSeedSeconds = (performance.now() - seedStarted) / 1000;
  await keepOpen();

  for (const scenario of scenarios as Array<'create' | 'retrieve'>) {
    if (scenario === 'retrieve') await loadIds();
    if (warmupSeconds > 0) {
      say(`${scenario}: warm-up ${warmupSeconds} s at concurrency ${concurrencies[0]}`);
      await kassaCell(scenario, concurrencies[0]!, warmupSeconds);
      if (scenario === 'create') await keepOpen();
    }
    for (const concurrency of concurrencies) {
      say(`${scenario}: concurrency ${concurrency}, ${durationSeconds} s`);
      const measured = await kassaCell(scenario, concurrency, durationSeconds);
      const baselines: Measured[] = [];
      if (skipBaselines) {
        if (scenario === 'create') await keepOpen();
      } else if (scenario === 'create') {
        await keepOpen();
        say(`pgbench payment floor, then with add_job, raw INSERT, same SQL: ${concurrency} clients, ${durationSeconds} s each (kassa paused)`);
        baselines.push(await pgbenchCell('payment floor', floorScript(probeBody, false), concurrency, 'prepared'));
        baselines.push(await pgbenchCell('floor + add_job', floorScript(probeBody, true), concurrency, 'prepared'));
        await keepOpen();
        baselines.push(await pgbenchCell('raw INSERT', INSERT_SCRIPT, concurrency));
      } else {
        say(`pgbench raw SELECT, bare node:http + pg, same SQL: ${concurrency} clients, ${durationSeconds} s each (kassa paused)`);
        baselines.push(await pgbenchCell('raw SELECT', SELECT_SCRIPT, concurrency));
        baselines.push(await bareCell(concurrency));
      }
      if (!skipBaselines) {
        baselines.push(await pgbenchCell('same SQL', replays[scenario], concurrency, 'prepared'));
        baselines.push(await leanCell(scenario, concurrency));
        if (scenario === 'create') await keepOpen();
      }
      cells.push({ scenario, concurrency, kassa: measured, baselines });
    }
  }
} catch (error) {
  say(`failed: ${(error as Error).stack ?? String(error)}`);
  await cleanUp();
  process.exit(1);
}
const loadAfter = os.loadavg();
await cleanUp();
fs.rmSync(workDir, { recursive: true, force: true });

// ---------------------------------------------------------------- the report

const commit = await new Promise<string>((resolve) => {
  const git = spawn('git', ['describe', '--always', '--dirty=+uncommitted changes', '--abbrev=12'], { cwd: kassaRoot, stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  git.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  git.on('close', () => resolve(out.trim() || 'unknown'));
  git.on('error', () => resolve('unknown'));
});
const cores = os.availableParallelism();
const cpuModel = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
const memoryGiB = os.totalmem() / 2 ** 30;
const driverText =
  transport === 'wrk'
    ? `${wrkVersionText} (-t ≤2 -c N --latency, a child process)`
    : transport === 'http'
      ? 'closed loop in the benchmark process, node:http keep-alive Agent'
      : 'closed loop in the benchmark process, built-in fetch';

const out: string[] = [];
out.push(`Kassa API benchmark — ${startedAt.toISOString()}`);
out.push(
  `machine   ${cpuModel}, ${cores} cores, ${formatNumber(memoryGiB, 1)} GiB, ${os.type()} ${os.release()}; load average ${loadBefore.map((n) => n.toFixed(2)).join(' ')} before, ${loadAfter.map((n) => n.toFixed(2)).join(' ')} after`,
);
out.push(`software  node ${process.version}; PostgreSQL ${serverVersion} (${onDatabaseUrl ? 'DATABASE_URL' : 'embedded'}; ${settings}); ${pgbenchVersionText}`);
out.push(`code      ${commit}${kassaRoot === root ? '' : ` (${kassaRoot})`}`);
out.push(
  `database  ${pooler === 'pgbouncer' ? 'Kassa through PgBouncer (transaction mode), DATABASE_SESSION_URL direct' : 'Kassa direct'}; DATABASE_PREPARED_STATEMENTS ${preparedStatements === 'default' ? "Kassa's default" : preparedStatements}`,
);
out.push(
  `kassa     \`kassa start${apiOnly ? ' --api' : ''}\` in a child process (${apiOnly ? 'API only' : 'API + worker'}), RATE_LIMIT_PER_STORE=${ratePerStore}${limitsOn ? ' (limits on: every request counted, none refused)' : ' (limits off)'}, LOG_LEVEL=warn, KASSA_MASTER_KEY set, TON_NETWORK=${kassaEnv.TON_NETWORK ?? 'sandbox'}`,
);
out.push(
  `open      ${openPayments} pending payments watched during every cell (made in ${openSeedSeconds.toFixed(1)} s; what the create cells add is cancelled after each)`,
);
out.push(`driver    ${driverText}, ${durationSeconds} s per cell after a ${warmupSeconds} s warm-up per scenario`);
if (skipBaselines) out.push('baselines skipped (--skip-baselines): Kassa is never paused; only its own cells are measured');
else {
  out.push(`baselines kassa paused (SIGSTOP) meanwhile; same server and database:`);
  out.push(
    `          payment floor  pgbench -M prepared: begin; a payment-like row (15 columns, unique deposit address, index on store and time); its idempotency record (response as jsonb); commit`,
  );
  out.push(`          floor + add_job  the same with graphile_worker.add_job`);
  out.push(`          raw INSERT / raw SELECT  pgbench -M ${pgbenchMode}: one single-row INSERT / one primary-key SELECT of a 100,000-row table`);
  out.push(
    `          bare node:http + pg  bench/lib/bare-server.ts: GET /v1/payments/{id} → the payment row by primary key (prepared statement, pool of 10) as JSON, same driver`,
  );
  if (replays) {
    out.push(
      `          lean node, same SQL  bench/lib/lean-server.ts: node:http + pg (pool of 10) sending the same statements as Kassa, prepared, fresh key, id and deposit address per create; the first row as JSON — the floor of this stack for Kassa's work`,
    );
    out.push(
      `          same SQL  pgbench -M prepared replaying, as recorded from Kassa's code, one create (${replays.statements.create} round trips: one read with the token's check and the key's earlier answer, one write that commits by itself) and one retrieve (${replays.statements.retrieve})`,
    );
  }
}
out.push(`NOTE      ${cores} core(s) are shared by the load driver, Kassa and PostgreSQL (pgbench and PostgreSQL in its cells):`);
out.push(`          figures are for this machine only, and the driver's CPU is taken from the service under test.`);
if (quietBefore !== null) {
  const busy = Math.round(quietBefore * 100);
  out.push(
    `${busy > 10 ? 'WARNING   ' : 'quiet     '}the machine was ${busy}% busy in the 2 s before the first cell (kassa idle)${busy > 10 ? ': something else is running' : ''}`,
  );
}
if (checkpointNote) out.push(`NOTE      ${checkpointNote}`);
out.push('');

const rows = cells.map((cell) => {
  const target = TARGETS[cell.scenario];
  const baseline = cell.baselines[0];
  const kassaPart = [
    cell.scenario,
    String(cell.concurrency),
    formatNumber(cell.kassa.tps),
    formatNumber(cell.kassa.p50Ms),
    formatNumber(cell.kassa.p99Ms),
    String(cell.kassa.errors),
  ];
  if (!baseline) return [...kassaPart, '(skipped)', '', '', '', ''];
  const ratio = cell.kassa.tps / baseline.tps;
  return [
    ...kassaPart,
    target.baseline,
    formatNumber(baseline.tps),
    formatNumber(baseline.p99Ms),
    `${ratio.toFixed(2)}×`,
    ratio >= target.ratio ? `≥ ${target.ratio}× met` : `≥ ${target.ratio}× MISSED`,
  ];
});
out.push(textTable(['scenario', 'conc', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'target baseline', 'tps', 'p99 ms', 'ratio', 'target'], rows));
out.push('');
const baselineRows = cells.flatMap((cell) =>
  cell.baselines.map((baseline) => [
    `${cell.scenario} @${cell.concurrency}`,
    baseline.label,
    formatNumber(baseline.tps),
    formatNumber(baseline.p50Ms),
    formatNumber(baseline.p99Ms),
    `${(cell.kassa.tps / baseline.tps).toFixed(2)}×`,
  ]),
);
out.push(textTable(['cell', 'baseline', 'tps', 'p50 ms', 'p99 ms', 'kassa ÷'], baselineRows));
out.push('kassa ÷ = Kassa req/s ÷ the baseline\'s rate (for "bare node:http + pg": Kassa\'s retrieve against the cheapest Node HTTP read).');
// The floor of this stack: the lean server does Kassa's statements with nothing around them; how far it
// gets against pgbench replaying the same SQL is what any Node service on node-postgres pays, and
// Kassa against it is what Kassa's own layers cost.
const floorLines = cells.flatMap((cell) => {
  const sameSql = cell.baselines.find((baseline) => baseline.label === 'same SQL');
  const leanServer = cell.baselines.find((baseline) => baseline.label === LEAN_LABEL);
  if (!sameSql || !leanServer) return [];
  return [
    `  ${cell.scenario} @${cell.concurrency}: lean node ÷ same SQL (pgbench) ${(leanServer.tps / sameSql.tps).toFixed(2)}×; kassa ÷ lean node ${(cell.kassa.tps / leanServer.tps).toFixed(2)}×; kassa ÷ same SQL ${(cell.kassa.tps / sameSql.tps).toFixed(2)}×`,
  ];
});
if (floorLines.length > 0) out.push(`the floor of this stack (Kassa's statements, the leanest Node server):\n${floorLines.join('\n')}`);
out.push('');

// Where the CPU went: per request (HTTP cells) and per transaction (pgbench cells), in µs.
// `other` is what the machine spent outside the measured processes: a large figure means the
// machine was not quiet and the cell's figures are suspect.
const known = (value: number | null | undefined): value is number => value !== null && value !== undefined;
const perOp = (ms: number | null | undefined, ops: number) => (!known(ms) || ops === 0 ? '' : formatNumber((ms * 1000) / ops, 0));
const utilisation = (ms: number | null | undefined, elapsedMs: number) => (known(ms) ? `${Math.round((ms / (elapsedMs * cores)) * 100)}%` : '—');
let noisy = false;
const cpuRow = (name: string, concurrency: number, measured: Measured): string[] => {
  const { cpu, completed } = measured;
  const machine = cpu.get('machine');
  const parts = ['kassa', 'postgres', 'bare', 'driver'].map((meter) => cpu.get(meter));
  const measuredParts = parts.filter(known);
  const other =
    known(machine) && parts.every((part) => part === undefined || known(part)) ? machine - measuredParts.reduce((sum, part) => sum + part, 0) : null;
  if (known(other) && known(machine) && other > 0.1 * machine) noisy = true;
  const kassaMs = cpu.get('kassa');
  const net = known(kassaMs) && kassaIdleMsPerSecond !== null ? kassaMs - (kassaIdleMsPerSecond * measured.elapsedMs) / 1000 : null;
  return [
    name,
    String(concurrency),
    utilisation(machine, measured.elapsedMs),
    perOp(machine, completed),
    ...parts.map((part) => perOp(part, completed)),
    perOp(net, completed),
    perOp(other, completed),
  ];
};
const cpuRows = cells.flatMap((cell) => [
  cpuRow(cell.scenario, cell.concurrency, cell.kassa),
  ...cell.baselines.map((baseline) => cpuRow(`  ${baseline.label}`, cell.concurrency, baseline)),
]);
out.push('CPU per request / per pgbench transaction, µs (machine = every process; driver = load driver or pgbench client):');
out.push(textTable(['cell', 'conc', 'busy', 'machine', 'kassa', 'postgres', 'bare', 'driver', 'kassa net', 'other'], cpuRows));
if (kassaIdleMsPerSecond !== null)
  out.push(
    `kassa net = Kassa's CPU less what it spent idle before the first cell (${formatNumber(kassaIdleMsPerSecond, 1)} ms per second: its background work), per request.`,
  );
if (noisy) out.push('WARNING   `other` is above 10% of the machine in some cells: something else was running; treat those figures with care.');
out.push('');

const errorLines: string[] = [];
for (const cell of cells) {
  for (const measured of [cell.kassa, ...cell.baselines]) {
    for (const [kind, count] of measured.errorKinds) errorLines.push(`  ${cell.scenario} @${cell.concurrency} ${measured.label}: ${count} × ${kind}`);
  }
}
out.push(errorLines.length > 0 ? `errors:\n${errorLines.join('\n')}` : 'errors: none');
if (kassaWarnings > 0) out.push(`kassa wrote ${kassaWarnings} warning/error log line(s) (the first ones are above, on stderr)`);
if (cpuProfDir) out.push(`CPU profile of the kassa process written to ${cpuProfDir}`);
process.stdout.write(`${out.join('\n')}\n`);
if (jsonFile) {
  const perRequest = (measured: Measured, meter: string): number | null => {
    const ms = measured.cpu.get(meter);
    return ms === null || ms === undefined || measured.completed === 0 ? null : (ms * 1000) / measured.completed;
  };
  const summary = {
    mode: apiOnly ? 'api-only' : 'default',
    pooler,
    preparedStatements,
    limits: limitsOn ? 'on' : 'off',
    commit,
    kassaRoot,
    loadAverage: { before: loadBefore, after: loadAfter },
    startedAt: startedAt.toISOString(),
    open: openPayments,
    quietBefore,
    kassaIdleMsPerSecond,
    cells: cells.map((cell) => {
      const machine = perRequest(cell.kassa, 'machine');
      const parts = ['kassa', 'postgres', 'driver'].map((meter) => perRequest(cell.kassa, meter));
      return {
        scenario: cell.scenario,
        concurrency: cell.concurrency,
        requestsPerSecond: cell.kassa.tps,
        p50Ms: cell.kassa.p50Ms,
        p99Ms: cell.kassa.p99Ms,
        errors: cell.kassa.errors,
        cpuMicrosecondsPerRequest: {
          machine,
          kassa: parts[0],
          postgres: parts[1],
          driver: parts[2],
          other: machine === null || parts.some((part) => part === null) ? null : machine - parts.reduce((sum, part) => sum! + part!, 0)!,
        },
        baselines: cell.baselines.map((baseline) => ({ label: baseline.label, tps: baseline.tps, p99Ms: baseline.p99Ms })),
      };
    }),
  };
  fs.writeFileSync(jsonFile, `${JSON.stringify(summary, null, 2)}\n`);
}
process.exit(0);
