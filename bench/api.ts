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
// bench/lib/replay.ts). Kassa is paused (SIGSTOP) while pgbench runs, so each side has the machine
// to itself during its own cells.
//
//   node bench/api.ts [--duration 10] [--warmup 3] [--concurrency 8,32] [--api-only]
//                     [--pgbench-mode simple|extended|prepared] [--transport http|fetch]
//                     [--cpu-prof DIR] [--keep] [--show-replay] [--scenarios create,retrieve]
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
import { migrate } from '../src/db/migrate.ts';
import { openBenchDatabase } from './lib/database.ts';
import { openPool, sql, z } from '../src/db/pool.ts';
import { authenticate, issueToken } from '../src/auth/tokens.ts';
import { createOperations } from '../src/http/routes/payments.ts';
import type { CreatePaymentBody } from '../src/http/schemas/payments.schema.ts';
import { findPaymentView } from '../src/payments/present.ts';
import { createStore, parseMethodList } from '../src/stores/stores.ts';
import { cpuBetween, exitedChildrenCpuMs, machineBusyMs, parentPid, processCpuMs, sampleCpu, serverTreeCpuMs } from './lib/cpu.ts';
import { runClosedLoop, type LoadResult, type RequestSpec, type Transport } from './lib/load.ts';
import { pgbenchVersion, runPgbench, type PgbenchMode, type PgbenchResult } from './lib/pgbench.ts';
import { benchFlags } from './lib/flags.ts';
import { replayScript, statementRecorder, type ReplayStatement } from './lib/replay.ts';
import { formatNumber, percentile, sortedCopy, textTable } from './lib/stats.ts';

const root = path.resolve(import.meta.dirname, '..');
process.chdir(root);

const USAGE = `usage: node bench/api.ts [--duration SECONDS] [--warmup SECONDS] [--concurrency 8,32] [--api-only]
                         [--pgbench-mode simple|extended|prepared] [--transport http|fetch] [--cpu-prof DIR] [--keep] [--show-replay]
                         [--scenarios create,retrieve]`;

const { flags, usage } = benchFlags(USAGE, {
  duration: { type: 'string', default: '10' },
  warmup: { type: 'string', default: '3' },
  concurrency: { type: 'string', default: '8,32' },
  'api-only': { type: 'boolean', default: false },
  'pgbench-mode': { type: 'string', default: 'simple' },
  transport: { type: 'string', default: 'http' },
  'cpu-prof': { type: 'string' },
  keep: { type: 'boolean', default: false },
  'show-replay': { type: 'boolean', default: false },
  scenarios: { type: 'string', default: 'create,retrieve' },
});
const durationSeconds = Number(flags.duration);
if (!Number.isInteger(durationSeconds) || durationSeconds < 1) usage('--duration must be a whole number of seconds ≥ 1 (pgbench -T takes seconds)');
const warmupSeconds = Number(flags.warmup);
if (!Number.isFinite(warmupSeconds) || warmupSeconds < 0) usage('--warmup must be a number of seconds ≥ 0');
const concurrencies = flags.concurrency.split(',').map((part) => Number(part.trim()));
if (concurrencies.some((n) => !Number.isInteger(n) || n < 1 || n > 256)) usage('--concurrency must be a list of integers from 1 to 256, e.g. 8,32');
const pgbenchMode = flags['pgbench-mode'] as PgbenchMode;
if (!['simple', 'extended', 'prepared'].includes(pgbenchMode)) usage('--pgbench-mode must be simple, extended or prepared');
const transport = flags.transport as Transport;
if (transport !== 'http' && transport !== 'fetch') usage('--transport must be http or fetch');
const apiOnly = flags['api-only'];
const scenarios = flags.scenarios.split(',').map((part) => part.trim());
if (scenarios.length === 0 || scenarios.some((name) => name !== 'create' && name !== 'retrieve')) usage('--scenarios must be create, retrieve or both (comma-separated)');
const cpuProfDir = flags['cpu-prof'] ? path.resolve(flags['cpu-prof']) : null;

const BENCH_DATABASE = 'kassa_bench';
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
let cleaningUp: Promise<void> | null = null;
async function cleanUp(): Promise<void> {
  cleaningUp ??= (async () => {
    if (kassa && kassa.exitCode === null && kassa.signalCode === null) {
      kassa.kill('SIGCONT');
      kassa.kill('SIGTERM');
      const exited = once(kassa, 'exit');
      const timer = setTimeout(() => kassa?.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
    await database.close(flags.keep);
  })();
  return cleaningUp;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    say(`${signal}: stopping`);
    void cleanUp().finally(() => process.exit(130));
  });
}

say(`preparing database ${BENCH_DATABASE} on ${onDatabaseUrl ? 'DATABASE_URL' : 'the embedded PostgreSQL'}`);
await database.recreate();
await migrate(benchUrl, log);

const setupPool = await openPool(benchUrl, { maxPoolSize: 2 });
const store = await createStore(setupPool, 'Bench store', parseMethodList('TON/TON,USDT/TON'));
const { token } = await issueToken(setupPool, store.id, null);
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
const kassaEnv: NodeJS.ProcessEnv = {
  ...process.env,
  DATABASE_URL: benchUrl,
  PORT: String(port),
  HOST: '127.0.0.1',
  RATE_LIMIT_PER_STORE: '0',
  LOG_LEVEL: 'warn',
  // As in production (where it is required): a configured master key, not one kept in the database.
  KASSA_MASTER_KEY: process.env.KASSA_MASTER_KEY ?? crypto.randomBytes(32).toString('hex'),
};
delete kassaEnv.BASE_URL;
delete kassaEnv.CHECKOUT_BASE_URL;
if (cpuProfDir) fs.mkdirSync(cpuProfDir, { recursive: true });
const kassaArgs = [
  ...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : []),
  path.join(root, 'src/cli.ts'),
  'start',
  ...(apiOnly ? ['--api'] : []),
];
say(`starting kassa: node ${kassaArgs.join(' ')} (PORT=${port}, RATE_LIMIT_PER_STORE=0, LOG_LEVEL=warn)`);
kassa = spawn(process.execPath, kassaArgs, { cwd: root, env: kassaEnv, stdio: ['ignore', 'pipe', 'pipe'] });
let kassaWarnings = 0;
const forward = (stream: NodeJS.ReadableStream | null) =>
  stream?.on('data', (chunk: Buffer) => {
    kassaWarnings += chunk.toString().split('\n').filter((line) => line.trim() !== '').length;
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

interface Cell {
  scenario: 'create' | 'retrieve';
  concurrency: number;
  load: LoadResult;
  cpu: Map<string, number | null>;
  pgbench: PgbenchResult;
  pgbenchCpu: Map<string, number | null>;
  replay: PgbenchResult;
  replayCpu: Map<string, number | null>;
}

const auth = { authorization: `Bearer ${token}` };
const ids: string[] = [];
const ID_IN_BODY = /"id":"([0-9a-f-]{36})"/;

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
const collectId = (_status: number, body: string) => {
  const id = ID_IN_BODY.exec(body)?.[1];
  if (id) ids.push(id);
};

let checkpointNote: string | null = null;
async function settle(): Promise<void> {
  // Same starting point for every cell: dirty pages flushed, no checkpoint due mid-cell.
  await admin.query('checkpoint').catch((error: Error) => {
    checkpointNote ??= `checkpoint before each cell was not possible (${error.message})`;
  });
}

async function kassaCell(scenario: Cell['scenario'], concurrency: number, seconds: number) {
  await settle();
  const meters = { kassa: () => processCpuMs(kassa!.pid!), postgres: postgresCpu };
  const before = sampleCpu(meters);
  const load = await runClosedLoop({
    baseUrl,
    concurrency,
    durationMs: seconds * 1000,
    transport,
    next: scenario === 'create' ? createRequest : retrieveRequest,
    ...(scenario === 'create' ? { onSuccess: collectId } : {}),
  });
  return { load, cpu: cpuBetween(before, sampleCpu(meters)) };
}

async function pgbenchCell(script: string, concurrency: number, mode: PgbenchMode = pgbenchMode) {
  await settle();
  kassa!.kill('SIGSTOP');
  try {
    const meters = { postgres: postgresCpu, pgbench: exitedChildrenCpuMs };
    const before = sampleCpu(meters);
    const result = await runPgbench({ url: benchUrl, clients: concurrency, seconds: durationSeconds, script, mode });
    return { result, cpu: cpuBetween(before, sampleCpu(meters)) };
  } finally {
    kassa!.kill('SIGCONT');
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
async function recordReplays(): Promise<{ create: string; retrieve: string; statements: { create: number; retrieve: number } }> {
  const recorder = statementRecorder();
  const pool = await openPool(benchUrl, { maxPoolSize: 1, interceptors: [recorder.interceptor] });
  try {
    const body = JSON.parse(CREATE_BODY) as CreatePaymentBody;
    const key = crypto.randomUUID();
    await authenticate(pool, token); // loads the token key once per pool: not part of a request
    recorder.statements.splice(0);
    await authenticate(pool, token);
    const tokenCheck = recorder.statements.splice(0);
    // The same configuration as the Kassa child, and the same create operation as its route.
    const outcome = await createOperations({ pool, config: loadConfig(kassaEnv, root) }).payment({ storeId: store.id, body, key, now: new Date() });
    const create = recorder.statements.splice(0);
    const paymentId = (JSON.parse(outcome.body) as { id: string }).id;
    await findPaymentView(pool, paymentId, { storeId: store.id });
    const view = recorder.statements.splice(0);
    const deposit = await pool.one(
      sql.type(z.object({ derivation_index: z.string(), address: z.string(), address_friendly: z.string() }))`
        select derivation_index::text, address, address_friendly from deposit_addresses where payment_id = ${paymentId}`,
    );
    // A jetton payment also watches its deposit's jetton wallet (computed when the method is chosen).
    const jettonWallet = await pool.maybeOneFirst(
      sql.type(z.object({ account: z.string() }))`select account from chain_watches where payment_id = ${paymentId} and kind = 'jetton_wallet'`,
    );
    const gset = (statement: ReplayStatement): ReplayStatement => (/nextval\('deposit_address_index_seq'\)/.test(statement.sql) ? { ...statement, gset: true } : statement);
    const index = 'cast(:index as text)';
    const substitutions = [
      { value: key, expression: 'cast(md5(cast(:k as text)) as uuid)' },
      { value: paymentId, expression: 'cast(md5(cast(:p as text)) as uuid)' },
      { value: deposit.derivation_index, expression: ':index', exact: true, only: /insert into deposit_addresses/ },
      { value: deposit.address, expression: `('0:' || md5(${index}) || md5('a' || ${index}))` },
      { value: deposit.address_friendly, expression: `('UQ' || md5(${index}))` },
      ...(jettonWallet ? [{ value: jettonWallet, expression: `('0:' || md5('w' || ${index}) || md5('b' || ${index}))` }] : []),
    ];
    const createScript =
      replayScript(tokenCheck, { substitutions: [], transaction: false, prelude: ['\\set k random(1, 9223372036854775806)', '\\set p random(1, 9223372036854775806)'] }) +
      replayScript(create.map(gset), { substitutions, transaction: true });
    const retrieveScript = replayScript([...tokenCheck, ...view], { substitutions: [], transaction: false });
    return { create: createScript, retrieve: retrieveScript, statements: { create: tokenCheck.length + create.length + 2, retrieve: tokenCheck.length + view.length } };
  } finally {
    await pool.end();
  }
}

const cells: Cell[] = [];
let replays: Awaited<ReturnType<typeof recordReplays>> | null = null;
const startedAt = new Date();
let quietBefore: number | null = null;
try {
  await waitForHealth();
  // Is the machine quiet? Kassa idles now, so what is busy is someone else.
  const idleStart = machineBusyMs();
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const idleEnd = machineBusyMs();
  if (idleStart !== null && idleEnd !== null) quietBefore = (idleEnd - idleStart) / (2000 * os.availableParallelism());
  // One request first: a setup problem (no rates, no jetton master…) is not a benchmark figure.
  const probe = await fetch(`${baseUrl}/v1/payments`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', 'x-idempotency-key': crypto.randomUUID() },
    body: CREATE_BODY,
  });
  const probeText = await probe.text();
  if (probe.status !== 201) throw new Error(`the first create answered ${probe.status}: ${probeText}`);
  collectId(probe.status, probeText);
  replays = await recordReplays();
  if (flags['show-replay']) say(`same-SQL scripts:\n--- create\n${replays.create}--- retrieve\n${replays.retrieve}`);

  for (const scenario of scenarios as Array<'create' | 'retrieve'>) {
    if (warmupSeconds > 0) {
      say(`${scenario}: warm-up ${warmupSeconds} s at concurrency ${concurrencies[0]}`);
      await kassaCell(scenario, concurrencies[0]!, warmupSeconds);
    }
    for (const concurrency of concurrencies) {
      say(`${scenario}: concurrency ${concurrency}, ${durationSeconds} s`);
      const { load, cpu } = await kassaCell(scenario, concurrency, durationSeconds);
      const raw = scenario === 'create' ? 'INSERT' : 'SELECT';
      say(`pgbench raw ${raw}: ${concurrency} clients, ${durationSeconds} s (kassa paused)`);
      const { result, cpu: pgbenchCpu } = await pgbenchCell(scenario === 'create' ? INSERT_SCRIPT : SELECT_SCRIPT, concurrency);
      say(`pgbench same SQL as a ${scenario}: ${concurrency} clients, ${durationSeconds} s (kassa paused)`);
      const { result: replay, cpu: replayCpu } = await pgbenchCell(replays[scenario], concurrency, 'prepared');
      cells.push({ scenario, concurrency, load, cpu, pgbench: result, pgbenchCpu, replay, replayCpu });
    }
  }
} catch (error) {
  say(`failed: ${(error as Error).stack ?? String(error)}`);
  await cleanUp();
  process.exit(1);
}
await cleanUp();

// ---------------------------------------------------------------- the report

const commit = await new Promise<string>((resolve) => {
  const git = spawn('git', ['describe', '--always', '--dirty=+uncommitted changes', '--abbrev=12'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  git.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  git.on('close', () => resolve(out.trim() || 'unknown'));
  git.on('error', () => resolve('unknown'));
});
const cores = os.availableParallelism();
const cpuModel = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
const memoryGiB = os.totalmem() / 2 ** 30;

const TARGET = 0.5;
const out: string[] = [];
out.push(`Kassa API benchmark — ${startedAt.toISOString()}`);
out.push(`machine   ${cpuModel}, ${cores} cores, ${formatNumber(memoryGiB, 1)} GiB, ${os.type()} ${os.release()}`);
out.push(`software  node ${process.version}; PostgreSQL ${serverVersion} (${onDatabaseUrl ? 'DATABASE_URL' : 'embedded'}; ${settings}); ${pgbenchVersionText}`);
out.push(`code      ${commit}`);
out.push(`kassa     \`kassa start${apiOnly ? ' --api' : ''}\` in a child process (${apiOnly ? 'API only' : 'API + worker'}), RATE_LIMIT_PER_STORE=0, LOG_LEVEL=warn, KASSA_MASTER_KEY set, TON_NETWORK=${kassaEnv.TON_NETWORK ?? 'sandbox'}`);
out.push(`driver    closed loop in the benchmark process, ${transport === 'http' ? 'node:http keep-alive Agent' : 'built-in fetch'}, ${durationSeconds} s per cell after a ${warmupSeconds} s warm-up per scenario`);
out.push(`pgbench   -n -c N -j N -T ${durationSeconds} -M ${pgbenchMode} -f script on database ${BENCH_DATABASE} (same server), kassa paused (SIGSTOP) meanwhile`);
if (replays) {
  out.push(`same SQL  pgbench -M prepared replaying, as recorded from Kassa's code, one create (${replays.statements.create} round trips: the token check, then one transaction) and one retrieve (${replays.statements.retrieve})`);
}
out.push(`NOTE      ${cores} core(s) are shared by the load driver, Kassa and PostgreSQL (pgbench and PostgreSQL in its cells):`);
out.push(`          figures are for this machine only, and the driver's CPU is taken from the service under test.`);
if (quietBefore !== null) {
  const busy = Math.round(quietBefore * 100);
  out.push(`${busy > 10 ? 'WARNING   ' : 'quiet     '}the machine was ${busy}% busy in the 2 s before the first cell (kassa idle)${busy > 10 ? ': something else is running' : ''}`);
}
if (checkpointNote) out.push(`NOTE      ${checkpointNote}`);
out.push('');

const rows = cells.map((cell) => {
  const sorted = sortedCopy(cell.load.latenciesMs);
  const ratio = cell.load.requestsPerSecond / cell.pgbench.tps;
  const sameSql = cell.load.requestsPerSecond / cell.replay.tps;
  return [
    cell.scenario,
    String(cell.concurrency),
    formatNumber(cell.load.requestsPerSecond),
    formatNumber(percentile(sorted, 50)),
    formatNumber(percentile(sorted, 99)),
    String(cell.load.errors),
    `${formatNumber(cell.pgbench.tps)} (${cell.scenario === 'create' ? 'INSERT' : 'SELECT'})`,
    formatNumber(cell.pgbench.p50Ms),
    formatNumber(cell.pgbench.p99Ms),
    `${ratio.toFixed(2)}×`,
    ratio >= TARGET ? `≥ ${TARGET}× met` : `≥ ${TARGET}× MISSED`,
    formatNumber(cell.replay.tps),
    `${sameSql.toFixed(2)}×`,
    `${(cell.replay.tps / cell.pgbench.tps).toFixed(2)}×`,
  ];
});
out.push(
  textTable(['scenario', 'conc', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'pgbench tps', 'pg p50', 'pg p99', 'ratio', 'target', 'same-SQL tps', 'ratio', 'ceiling'], rows),
);
out.push('ratio = Kassa req/s ÷ pgbench tps; ceiling = same-SQL tps ÷ raw tps: the ratio a service costing nothing itself would reach with this SQL.');
out.push('');

// Where the CPU went: per request (Kassa cells) and per transaction (pgbench cells), in µs.
// `other` is what the machine spent outside the measured processes: a large figure means the
// machine was not quiet and the cell's figures are suspect.
const known = (value: number | null | undefined): value is number => value !== null && value !== undefined;
const perOp = (ms: number | null | undefined, ops: number) => (!known(ms) || ops === 0 ? '—' : formatNumber((ms * 1000) / ops, 0));
const utilisation = (ms: number | null | undefined, elapsedMs: number) => (known(ms) ? `${Math.round((ms / (elapsedMs * cores)) * 100)}%` : '—');
const remainder = (total: number | null | undefined, parts: Array<number | null | undefined>) =>
  known(total) && parts.every(known) ? total - parts.reduce<number>((sum, part) => sum + (part as number), 0) : null;
let noisy = false;
const flagNoise = (other: number | null, machine: number | null | undefined) => {
  if (known(other) && known(machine) && other > 0.1 * machine) noisy = true;
};
const cpuRows = cells.flatMap((cell) => {
  const machine = cell.cpu.get('machine');
  const kassaMs = cell.cpu.get('kassa');
  const postgresMs = cell.cpu.get('postgres');
  const other = remainder(machine, [kassaMs, postgresMs, cell.load.driverCpuMs]);
  flagNoise(other, machine);
  const pgMachine = cell.pgbenchCpu.get('machine');
  const pgPostgres = cell.pgbenchCpu.get('postgres');
  const pgClient = cell.pgbenchCpu.get('pgbench');
  const pgOther = remainder(pgMachine, [pgPostgres, pgClient]);
  flagNoise(pgOther, pgMachine);
  const rpMachine = cell.replayCpu.get('machine');
  const rpPostgres = cell.replayCpu.get('postgres');
  const rpClient = cell.replayCpu.get('pgbench');
  const rpOther = remainder(rpMachine, [rpPostgres, rpClient]);
  flagNoise(rpOther, rpMachine);
  const ops = cell.load.completed;
  const txs = cell.pgbench.transactions;
  const replayed = cell.replay.transactions;
  return [
    [cell.scenario, String(cell.concurrency), utilisation(machine, cell.load.elapsedMs), perOp(machine, ops), perOp(kassaMs, ops), perOp(postgresMs, ops), perOp(cell.load.driverCpuMs, ops), perOp(other, ops)],
    [`  pgbench ${cell.scenario === 'create' ? 'INSERT' : 'SELECT'}`, String(cell.concurrency), utilisation(pgMachine, durationSeconds * 1000), perOp(pgMachine, txs), '', perOp(pgPostgres, txs), perOp(pgClient, txs), perOp(pgOther, txs)],
    ['  pgbench same SQL', String(cell.concurrency), utilisation(rpMachine, durationSeconds * 1000), perOp(rpMachine, replayed), '', perOp(rpPostgres, replayed), perOp(rpClient, replayed), perOp(rpOther, replayed)],
  ];
});
out.push('CPU per request / per pgbench transaction, µs (machine = every process; driver = load driver or pgbench client):');
out.push(textTable(['cell', 'conc', 'busy', 'machine', 'kassa', 'postgres', 'driver', 'other'], cpuRows));
if (noisy) out.push('WARNING   `other` is above 10% of the machine in some cells: something else was running; treat those figures with care.');
out.push('');

const errorLines: string[] = [];
for (const cell of cells) {
  for (const [kind, count] of cell.load.errorKinds) errorLines.push(`  ${cell.scenario} @${cell.concurrency}: ${count} × ${kind}`);
  if (cell.pgbench.failed > 0) errorLines.push(`  pgbench @${cell.concurrency} (${cell.scenario === 'create' ? 'INSERT' : 'SELECT'}): ${cell.pgbench.failed} failed transactions`);
  if (cell.replay.failed > 0) errorLines.push(`  pgbench @${cell.concurrency} (same SQL as a ${cell.scenario}): ${cell.replay.failed} failed transactions`);
}
out.push(errorLines.length > 0 ? `errors:\n${errorLines.join('\n')}` : 'errors: none');
if (kassaWarnings > 0) out.push(`kassa wrote ${kassaWarnings} warning/error log line(s) (the first ones are above, on stderr)`);
if (cpuProfDir) out.push(`CPU profile of the kassa process written to ${cpuProfDir}`);
process.stdout.write(`${out.join('\n')}\n`);
process.exit(0);
