// The chain reader benchmark (issue 11): prints numbers, asserts nothing, exits 0.
//
//   node bench/chain.ts [--sizes 10,1000,10000] [--payments 30] [--window 20] [--warmup 3] [--rps 0] [--traffic 25] [--lag 30] [--keep]
//
// Database: a fresh `kassa_bench_chain` (dropped and created again at the start) on DATABASE_URL's
// server when set (its role must be allowed to create databases), otherwise on the embedded
// PostgreSQL. The API (with the sandbox chain, which seals a masterchain block every 400 ms) runs
// in this process (`startService`, API only, PORT 0); the worker is a real `kassa start --worker`
// child process, so its CPU is its own. Every chain API request the worker makes goes through a
// counting proxy in this process (the worker's TON_API_URL; it forwards to the API's
// /sandbox/toncenter), which records the endpoint and time of each request.
//
// For each size of `--sizes`, pending payments (half TON, half USDT, 12-hour TTL) are created with
// the create command (`draftFromPayment` + `createPayment`, the code behind POST /v1/payments,
// minus HTTP and idempotency) until that many are open; after `--warmup` seconds a `--window`-second
// window is measured, during which `--payments` more payments are created (the same way) and each
// paid at once, evenly spread over the window, with POST /sandbox/v1/transfers (so about `size`
// payments are open throughout). Measured per window: chain API requests per second (by endpoint),
// the worker process's CPU per second (/proc), and the time from each transfer's answer to
// GET /v1/payments/{id}/status reading `completed` (woken by LISTEN kassa_payment_changed, with a
// slow poll as a safety net).
//
// The sandbox's toncenter v3 is the faithful one (src/chain/sandbox/v3.ts): every block carries the
// tick and tock of two special accounts and `--traffic` transfers between strangers (rows the
// reader reads and ignores). Per window it also reports chain requests per masterchain block read.
// Then, with `--lag` > 0, an indexer lag: the sandbox stops indexing blocks for `--lag` seconds
// (holdBlocks: masterchainInfo stands still, newer blocks answer 404 "not found"), then indexes them all at
// once; measured: how fast the reader catches up (blocks/s until it is back at the tip, against
// the chain's 2.5 blocks/s) and the requests that took.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { pino } from 'pino';
import { issueToken } from '../src/auth/tokens.ts';
import { LEASE_MS } from '../src/reader/cursor.ts';
import { CAUGHT_UP_POLL_MS } from '../src/reader/reader.ts';
import { INFO_EVERY_MS } from '../src/reader/tip.ts';
import { SANDBOX_BLOCK_INTERVAL_MS } from '../src/chain/sandbox/chain.ts';
import { SANDBOX_TONCENTER_PATH } from '../src/chain/sandbox/path.ts';
import { loadConfig, type Config } from '../src/config.ts';
import { openBenchDatabase, teardownOnSignals } from './lib/database.ts';
import { openPool, sql, z } from '../src/db/pool.ts';
import type { CreatePaymentBody } from '../src/http/routes/payments.schema.ts';
import { createPayment } from '../src/payments/commands.ts';
import { draftFromPayment } from '../src/payments/drafts.ts';
import { startService } from '../src/server.ts';
import { createStore, parseMethodList } from '../src/stores/stores.ts';
import { machineBusyMs, processCpuMs } from './lib/cpu.ts';
import { benchFlags } from './lib/flags.ts';
import { formatNumber, percentile, sortedCopy, textTable } from './lib/stats.ts';

const root = path.resolve(import.meta.dirname, '..');
process.chdir(root);

const USAGE = `usage: node bench/chain.ts [--sizes 10,1000,10000] [--payments 30] [--window 20] [--warmup 3] [--rps 0] [--traffic 25] [--lag 30] [--keep]`;

const { flags, usage } = benchFlags(USAGE, {
  sizes: { type: 'string', default: '10,1000,10000' },
  payments: { type: 'string', default: '30' },
  window: { type: 'string', default: '20' },
  warmup: { type: 'string', default: '3' },
  rps: { type: 'string', default: '0' },
  traffic: { type: 'string', default: '25' },
  lag: { type: 'string', default: '30' },
  keep: { type: 'boolean', default: false },
});
const SIZES = flags.sizes.split(',').map((part) => Number(part.trim()));
const PAYMENTS = Number(flags.payments);
const WINDOW_MS = Number(flags.window) * 1000;
const WARMUP_MS = Number(flags.warmup) * 1000;
const RPS = Number(flags.rps);
const TRAFFIC = Number(flags.traffic);
const LAG_MS = Number(flags.lag) * 1000;
if (SIZES.some((n) => !Number.isInteger(n) || n < 1) || SIZES.some((n, i) => i > 0 && n <= SIZES[i - 1]!)) {
  usage('--sizes must be increasing positive integers, e.g. 10,1000,10000');
}
if (!Number.isInteger(PAYMENTS) || PAYMENTS < 1) usage('--payments must be a positive integer (paid in each window)');
if (!(WINDOW_MS >= 5000)) usage('--window must be at least 5 seconds');
if (!(WARMUP_MS >= 0)) usage('--warmup must be a number of seconds ≥ 0');
if (!Number.isInteger(TRAFFIC) || TRAFFIC < 0) usage("--traffic must be an integer ≥ 0 (strangers' transfers per block)");
if (!(LAG_MS >= 0)) usage('--lag must be a number of seconds ≥ 0 (0: no indexer-lag phase)');
if (!Number.isInteger(RPS) || RPS < 0) usage("--rps must be an integer ≥ 0 (the worker's TON_API_RPS; 0: no budget, the sandbox default)");

const BENCH_DATABASE = process.env.KASSA_BENCH_DATABASE ?? 'kassa_bench_chain';
const PAYMENT_TIMEOUT_MS = 30_000;
const CREATE_CONCURRENCY = 6;
const TON_METHOD = { methods: [{ coin: 'TON', chain: 'TON' }] };
const USDT_METHOD = { methods: [{ coin: 'USDT', chain: 'TON' }] };

const log = pino({ level: 'warn' }, pino.destination(2));
const say = (line: string) => process.stderr.write(`bench: ${line}\n`);
const out = (line = '') => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const ms = (value: number) => (Number.isFinite(value) ? `${formatNumber(value, 0)} ms` : '—');
const pct = (value: number | null) => (value === null || !Number.isFinite(value) ? '—' : `${formatNumber(value * 100, 1)} %`);

// ---------------------------------------------------------------- the counting chain API proxy

interface ChainRequest {
  /** performance.now() when the request arrived. */
  at: number;
  /** `v3 masterchainInfo`, `v3 transactionsByMasterchainBlock`, `v2 runGetMethod`, … */
  endpoint: string;
  status: number;
  /** Bytes of the answer (a block not indexed yet is a 404 `{"error":"masterchain block N not found"}`). */
  bytes: number;
}

interface CountingProxy {
  /** The API root to give the worker as TON_API_URL. */
  url: string;
  requests: ChainRequest[];
  /** Where requests go: the API's sandbox toncenter root (503 until set). */
  setTarget(url: string): void;
  close(): Promise<void>;
}

function endpointOf(pathname: string, body: Buffer): string {
  if (pathname.startsWith('/api/v3/')) return `v3 ${pathname.slice('/api/v3/'.length)}`;
  if (pathname.endsWith('/jsonRPC')) {
    try {
      const method = (JSON.parse(body.toString('utf8')) as { method?: unknown }).method;
      return `v2 ${typeof method === 'string' ? method : '?'}`;
    } catch {
      return 'v2 ?';
    }
  }
  return pathname;
}

async function startCountingProxy(): Promise<CountingProxy> {
  let target: URL | null = null;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  const requests: ChainRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    const at = performance.now();
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const [pathname = '/', query] = (req.url ?? '/').split('?');
      const endpoint = endpointOf(pathname, body);
      const answer = (status: number, headers: http.OutgoingHttpHeaders, payload: Buffer | string) => {
        res.writeHead(status, headers);
        res.end(payload);
        requests.push({ at, endpoint, status, bytes: typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length });
      };
      if (target === null) {
        answer(503, { 'content-type': 'application/json' }, '{"error":"bench proxy: no target yet"}');
        return;
      }
      const upstream = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: `${target.pathname}${pathname}${query === undefined ? '' : `?${query}`}`,
          method: req.method,
          agent,
          headers: { 'content-type': req.headers['content-type'] ?? 'application/json', 'content-length': body.length, accept: 'application/json' },
        },
        (response) => {
          const parts: Buffer[] = [];
          response.on('data', (chunk: Buffer) => parts.push(chunk));
          response.on('end', () => {
            const payload = Buffer.concat(parts);
            const headers: http.OutgoingHttpHeaders = {
              'content-type': response.headers['content-type'] ?? 'application/json',
              'content-length': payload.length,
            };
            if (response.headers['retry-after']) headers['retry-after'] = response.headers['retry-after'];
            answer(response.statusCode ?? 502, headers, payload);
          });
        },
      );
      upstream.on('error', (error) => answer(502, { 'content-type': 'application/json' }, JSON.stringify({ error: `bench proxy: ${error.message}` })));
      upstream.end(body);
    });
  });
  server.keepAliveTimeout = 5_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setTarget: (url) => {
      target = new URL(url);
    },
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// ---------------------------------------------------------------- the database

const database = await openBenchDatabase(BENCH_DATABASE, root, log);
const { url: benchUrl } = database;
const onDatabaseUrl = database.source === 'DATABASE_URL';

const masterKey = process.env.KASSA_MASTER_KEY ?? crypto.randomBytes(32).toString('hex');
/** The environment of both processes: the API here, the worker child (TON_API_URL: the proxy). */
function serviceEnv(tonApiUrl: string, baseUrl: string | null): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: benchUrl,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_STORE: '0',
    TON_NETWORK: 'sandbox',
    TON_API_URL: tonApiUrl,
    TON_API_RPS: String(RPS),
    KASSA_MASTER_KEY: masterKey,
  };
  if (baseUrl) env.BASE_URL = baseUrl;
  return env;
}
const serviceConfig = (tonApiUrl: string): Config => loadConfig(serviceEnv(tonApiUrl, null), root);

// Everything started is stopped here, also on SIGINT/SIGTERM.
const cleanups: Array<() => Promise<void>> = [];
let cleaningUp: Promise<void> | null = null;
function cleanUp(): Promise<void> {
  cleaningUp ??= (async () => {
    while (cleanups.length > 0) await cleanups.pop()!().catch((error: unknown) => say(`cleanup: ${(error as Error).message}`));
    await database.close(flags.keep);
  })();
  return cleaningUp;
}
teardownOnSignals(cleanUp);
/** Registers `stop` for the final cleanup and returns it, made idempotent, to stop the thing now. */
function track(stop: () => Promise<void>): () => Promise<void> {
  let done = false;
  const stopOnce = async () => {
    if (done) return;
    done = true;
    await stop();
  };
  cleanups.push(stopOnce);
  return stopOnce;
}

/** `kassa start --worker` as a child process; resolves once its chain reader holds the cursor. */
async function startWorker(env: NodeJS.ProcessEnv, pool: Awaited<ReturnType<typeof openPool>>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(root, 'src/cli.ts'), 'start', '--worker'], { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the worker exited (${child.exitCode}): ${stderr}`);
    const held = await pool.exists(sql.unsafe`select 1 from chain_reader where network = 'sandbox' and reader is not null and lease_expires_at > now()`);
    if (held) return child;
    if (Date.now() > deadline) throw new Error(`the worker's chain reader did not take the cursor in 60 s: ${stderr}`);
    await sleep(200);
  }
}

// ---------------------------------------------------------------- the measurement

interface Probe {
  id: string;
  coin: 'TON' | 'USDT';
  address: string;
  coinAmount: string;
}

interface Cell {
  open: number;
  windowMs: number;
  requests: ChainRequest[];
  workerCpuMs: number | null;
  selfCpuMs: number;
  machineCpuMs: number | null;
  blocks: number;
  behindAtEnd: number;
  latencies: Array<{ coin: 'TON' | 'USDT'; ms: number | null }>;
  viaPoll: number;
  createMs: number;
}

interface CatchUp {
  /** Blocks the sandbox did not index during the lag. */
  heldBlocks: number;
  /** Blocks read from the release until the reader was back at the tip, and how long it took. */
  blocks: number;
  ms: number;
  requests: ChainRequest[];
}

async function measure(): Promise<{ cells: Cell[]; errors: string[]; catchUp: CatchUp | null }> {
  say(`preparing ${BENCH_DATABASE}`);
  await database.fresh();
  const pool = await openPool(benchUrl, { maxPoolSize: CREATE_CONCURRENCY + 4 });
  const stopPool = track(() => pool.end());
  const store = await createStore(pool, 'Chain bench store', parseMethodList('TON/TON,USDT/TON'));
  const { token } = await issueToken(pool, store.id, null, new Date());

  const proxy = await startCountingProxy();
  const stopProxy = track(() => proxy.close());
  const config = serviceConfig(proxy.url);
  say('starting kassa in-process (API with the sandbox chain)');
  const service = await startService(config, { api: true, worker: false }, log, () => new Date());
  const stopService = track(() => service.stop('bench done'));
  const baseUrl = service.url!;
  const chain = service.sandboxChain!;
  chain.setTrafficPerBlock(TRAFFIC);
  proxy.setTarget(`${baseUrl}${SANDBOX_TONCENTER_PATH}`);
  say('starting `kassa start --worker` (child process)');
  const worker = await startWorker(serviceEnv(proxy.url, baseUrl), pool);
  const stopWorker = track(async () => {
    if (worker.exitCode === null && worker.signalCode === null) {
      worker.kill('SIGTERM');
      await once(worker, 'exit');
    }
  });

  // Completion signal: the status trigger's NOTIFY, then the status endpoint confirms.
  const listener = new pg.Client({ connectionString: benchUrl });
  listener.on('error', () => {});
  await listener.connect();
  const stopListener = track(() => listener.end());
  await listener.query('listen kassa_payment_changed');
  const waiters = new Map<string, { since: number; check: (viaPoll: boolean) => void }>();
  listener.on('notification', (message) => {
    if (message.payload) waiters.get(message.payload)?.check(false);
  });
  const poller = setInterval(() => {
    const now = performance.now();
    for (const waiter of waiters.values()) if (now - waiter.since > 3_000) waiter.check(true);
  }, 500);
  const stopPoller = track(async () => clearInterval(poller));

  const errors: string[] = [];
  const api = async (method: 'GET' | 'POST', route: string, body?: unknown): Promise<{ status: number; json: any }> => {
    const response = await fetch(`${baseUrl}${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, json: text ? JSON.parse(text) : null };
  };

  /** Pays `probe` in full; resolves with transfer answer → status `completed` (null: not within the timeout). */
  async function pay(probe: Probe): Promise<{ ms: number | null; viaPoll: boolean }> {
    let completedAt: number | null = null;
    let viaPoll = false;
    let resolveDone!: () => void;
    const done = new Promise<void>((resolve) => (resolveDone = resolve));
    let checking = false;
    let again = false;
    const check = (poll: boolean) => {
      if (completedAt !== null) return;
      if (checking) {
        again = true;
        return;
      }
      checking = true;
      void api('GET', `/v1/payments/${probe.id}/status`)
        .then((reply) => {
          if (reply.json?.status === 'completed' && completedAt === null) {
            completedAt = performance.now();
            viaPoll = poll;
            resolveDone();
          }
        })
        .catch((error: unknown) => errors.push(`status: ${(error as Error).message}`))
        .finally(() => {
          checking = false;
          if (again && completedAt === null) {
            again = false;
            check(poll);
          }
        });
    };
    waiters.set(probe.id, { since: performance.now(), check });
    const sent = await api('POST', '/sandbox/v1/transfers', { to: probe.address, coin: probe.coin, amount: probe.coinAmount });
    const sentAt = performance.now();
    if (sent.status !== 201) {
      waiters.delete(probe.id);
      errors.push(`transfer ${sent.status} ${JSON.stringify(sent.json).slice(0, 200)}`);
      return { ms: null, viaPoll: false };
    }
    waiters.get(probe.id)!.since = sentAt;
    check(false); // completed before the transfer's answer reached us?
    await Promise.race([done, sleep(PAYMENT_TIMEOUT_MS)]);
    waiters.delete(probe.id);
    return { ms: completedAt === null ? null : Math.max(0, completedAt - sentAt), viaPoll };
  }

  let created = 0;
  /** One pending payment, created with the create command; half TON, half USDT. */
  async function createOne(): Promise<Probe> {
    const index = created++;
    const coin = index % 2 === 0 ? 'TON' : 'USDT';
    const body: CreatePaymentBody =
      coin === 'TON'
        ? { amount: '0.5', currency: 'TON', payment_options: TON_METHOD, ttl: 43200 }
        : { amount: '2', currency: 'USD', payment_options: USDT_METHOD, ttl: 43200 };
    const view = await pool.transaction(async (tx) =>
      createPayment(tx, config, store.id, await draftFromPayment(tx, store.id, body, { network: config.tonNetwork }), new Date()),
    );
    return { id: view.id, coin, address: view.address_friendly!, coinAmount: view.coin_amount! };
  }
  async function createPending(count: number): Promise<void> {
    let next = 0;
    const creator = async () => {
      while (next < count) {
        next += 1;
        await createOne();
      }
    };
    await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, creator));
  }
  const openCount = () => pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from payments where status = 'pending'`);
  const cursor = () =>
    pool.one(sql.type(z.object({ last: z.number(), latest: z.number() }))`
      select last_block_seqno::float8 as last, latest_block_seqno::float8 as latest from chain_reader where network = 'sandbox'
    `);

  const cells: Cell[] = [];
  for (const size of SIZES) {
    const t0 = performance.now();
    const missing = size - (await openCount());
    say(`creating ${missing} pending payments (${size} open in all)`);
    await createPending(missing);
    const createMs = performance.now() - t0;
    await sleep(WARMUP_MS);
    say(`measuring ${WINDOW_MS / 1000} s with ${await openCount()} open payments, ${PAYMENTS} more created and paid meanwhile`);
    const cpuBefore = { worker: processCpuMs(worker.pid!), self: process.cpuUsage(), machine: machineBusyMs() };
    const cursorBefore = await cursor();
    const from = performance.now();
    const every = WINDOW_MS / PAYMENTS;
    const paying = Array.from({ length: PAYMENTS }, (_, i) =>
      sleep(i * every + every / 2)
        .then(createOne)
        .then((probe) => pay(probe).then((r) => ({ coin: probe.coin, ...r }))),
    );
    await sleep(WINDOW_MS);
    const to = performance.now();
    const workerAfter = processCpuMs(worker.pid!);
    const selfUsed = process.cpuUsage(cpuBefore.self);
    const machineAfter = machineBusyMs();
    const cursorAfter = await cursor();
    const results = await Promise.all(paying);
    cells.push({
      open: size,
      windowMs: to - from,
      requests: proxy.requests.filter((r) => r.at >= from && r.at < to),
      workerCpuMs: cpuBefore.worker === null || workerAfter === null ? null : workerAfter - cpuBefore.worker,
      selfCpuMs: (selfUsed.user + selfUsed.system) / 1000,
      machineCpuMs: cpuBefore.machine === null || machineAfter === null ? null : machineAfter - cpuBefore.machine,
      blocks: cursorAfter.last - cursorBefore.last,
      behindAtEnd: cursorAfter.latest - cursorAfter.last,
      latencies: results.map((r) => ({ coin: r.coin, ms: r.ms })),
      viaPoll: results.filter((r) => r.viaPoll).length,
      createMs,
    });
  }
  let catchUp: CatchUp | null = null;
  if (LAG_MS > 0) {
    say(`indexer lag: no block indexed for ${LAG_MS / 1000} s, then all at once`);
    const before = await cursor();
    chain.holdBlocks();
    await sleep(LAG_MS);
    const tipBefore = chain.latestPublishedBlock().seqno;
    chain.releaseBlocks();
    const heldBlocks = chain.latestPublishedBlock().seqno - tipBefore;
    const from = performance.now();
    const atRelease = await cursor();
    for (;;) {
      const at = await cursor();
      if (at.last >= chain.latestPublishedBlock().seqno - 1) {
        const to = performance.now();
        catchUp = { heldBlocks, blocks: at.last - atRelease.last, ms: to - from, requests: proxy.requests.filter((r) => r.at >= from && r.at < to) };
        break;
      }
      if (performance.now() - from > 10 * 60_000) {
        errors.push(
          `catch-up: not back at the tip in 10 minutes (cursor ${at.last}, tip ${chain.latestPublishedBlock().seqno}; ${before.last} before the lag)`,
        );
        break;
      }
      await sleep(50);
    }
  }
  await stopPoller();
  await stopListener();
  await stopWorker();
  await stopService();
  await stopProxy();
  await stopPool();
  return { cells, errors, catchUp };
}

// ---------------------------------------------------------------- run and print

const startedAt = new Date();
let result: Awaited<ReturnType<typeof measure>>;
try {
  result = await measure();
} catch (error) {
  say(`failed: ${(error as Error).stack ?? String(error)}`);
  await cleanUp();
  process.exit(1);
}
await cleanUp();
const { cells, errors, catchUp } = result;

out(`# Kassa chain reader benchmark — ${startedAt.toISOString()}`);
out(`node ${process.version}, ${os.availableParallelism()} CPUs, database ${onDatabaseUrl ? 'DATABASE_URL' : 'embedded PostgreSQL'} (${BENCH_DATABASE})`);
out(
  `sandbox: one masterchain block per ${SANDBOX_BLOCK_INTERVAL_MS} ms; reader: caught up, asks for the next block every ${CAUGHT_UP_POLL_MS} ms and masterchainInfo every ${INFO_EVERY_MS / 1000} s, lease ${LEASE_MS} ms; worker TON_API_RPS=${RPS}${RPS === 0 ? ' (no budget)' : ''}`,
);
out(`${PAYMENTS} payments created and paid at once per ${WINDOW_MS / 1000} s window (half TON, half USDT), besides the open ones`);
out(`faithful toncenter v3: every block has 4 tick/tock transactions and ${TRAFFIC} strangers' transfers besides the payments'`);
out();

const perSecond = (count: number, cell: Cell) => (count / cell.windowMs) * 1000;
const rows = cells.map((cell) => {
  const done = sortedCopy(cell.latencies.filter((l) => l.ms !== null).map((l) => l.ms!));
  return [
    formatNumber(cell.open, 0),
    formatNumber(perSecond(cell.requests.length, cell), 1),
    formatNumber(perSecond(cell.blocks, cell), 2),
    formatNumber(cell.requests.length / Math.max(1, cell.blocks), 2),
    formatNumber(cell.requests.filter((r) => r.endpoint.startsWith('v3 ')).length / Math.max(1, cell.blocks), 2),
    cell.workerCpuMs === null ? '—' : `${formatNumber(perSecond(cell.workerCpuMs, cell), 0)} ms`,
    `${done.length}/${cell.latencies.length}`,
    ms(percentile(done, 50)),
    ms(percentile(done, 99)),
    ms(percentile(done, 100)),
    String(cell.behindAtEnd),
  ];
});
out(textTable(['open', 'chain API req/s', 'blocks/s', 'req/block', 'v3 req/block', 'worker CPU/s', 'completed', 'p50', 'p99', 'max', 'behind'], rows));
out();
for (const cell of cells) {
  const byEndpoint = new Map<string, number>();
  for (const r of cell.requests) byEndpoint.set(r.endpoint, (byEndpoint.get(r.endpoint) ?? 0) + 1);
  const notOk = cell.requests.filter((r) => r.status !== 200).length;
  const byCoin = (coin: 'TON' | 'USDT') => {
    const done = sortedCopy(cell.latencies.filter((l) => l.coin === coin && l.ms !== null).map((l) => l.ms!));
    return `${coin} p50 ${ms(percentile(done, 50))} p99 ${ms(percentile(done, 99))}`;
  };
  const machine = cell.machineCpuMs === null ? '—' : pct(cell.machineCpuMs / cell.windowMs / os.availableParallelism());
  out(
    `  ${formatNumber(cell.open, 0)} open: ${[...byEndpoint].map(([endpoint, count]) => `${endpoint} ${count}`).join(', ')} in ${formatNumber(cell.windowMs / 1000, 1)} s` +
      `${notOk ? ` (${notOk} not 200)` : ''}; ${byCoin('TON')}, ${byCoin('USDT')}; worker ${pct(cell.workerCpuMs === null ? null : cell.workerCpuMs / cell.windowMs)} of a core,` +
      ` this process (API + sandbox chain + driver) ${pct(cell.selfCpuMs / cell.windowMs)}, machine ${machine} of ${os.availableParallelism()} cores;` +
      ` payments created in ${formatNumber(cell.createMs / 1000, 1)} s${cell.viaPoll ? `; ${cell.viaPoll} completions seen by the safety poll` : ''}`,
  );
}
if (errors.length > 0) out(`errors (${errors.length}): ${[...new Set(errors)].slice(0, 5).join(' | ')}`);
out(`chain API req/s: every request the worker sent to the chain API in the window; blocks/s: masterchain blocks the reader`);
out(`processed; worker CPU/s: CPU time of the \`kassa start --worker\` process per second of wall clock; p50/p99/max: transfer`);
out(`answer → status \`completed\`; behind: blocks published but not yet processed at the end of the window; req/block: every`);
out(`chain request of the window per block read (v3: masterchainInfo and block pages only; the rest are v2 get methods).`);
out();
if (catchUp !== null) {
  const byEndpoint = new Map<string, number>();
  for (const r of catchUp.requests) byEndpoint.set(r.endpoint, (byEndpoint.get(r.endpoint) ?? 0) + 1);
  const rate = (catchUp.blocks / catchUp.ms) * 1000;
  const chainRate = 1000 / SANDBOX_BLOCK_INTERVAL_MS;
  // Reading proper: from the first block served after the release (the reader noticed) to the tip.
  const firstRead = catchUp.requests.find((r) => r.endpoint === 'v3 transactionsByMasterchainBlock' && r.status === 200 && r.bytes > 64);
  const readingMs = firstRead === undefined ? Number.NaN : catchUp.requests[catchUp.requests.length - 1]!.at - firstRead.at;
  const readingRate = (catchUp.blocks / readingMs) * 1000;
  out(`## Indexer lag of ${LAG_MS / 1000} s (${catchUp.heldBlocks} blocks indexed at once), TON_API_RPS=${RPS}${RPS === 0 ? ' (no budget)' : ''}`);
  out(
    `- back at the tip in ${formatNumber(catchUp.ms / 1000, 1)} s: ${catchUp.blocks} blocks read at ${formatNumber(rate, 1)} blocks/s = ` +
      `${formatNumber(rate / chainRate, 1)}× the chain's ${formatNumber(chainRate, 1)} blocks/s; ${catchUp.requests.length} requests ` +
      `(${formatNumber(catchUp.requests.length / Math.max(1, catchUp.blocks), 2)} per block: ${[...byEndpoint].map(([endpoint, count]) => `${endpoint} ${count}`).join(', ')})`,
  );
  out(
    `- reading, from the first block served after the release: ${formatNumber(readingMs / 1000, 1)} s, ${formatNumber(readingRate, 1)} blocks/s = ` +
      `${formatNumber(readingRate / chainRate, 1)}× the chain's rate (the rest, ${formatNumber((catchUp.ms - readingMs) / 1000, 1)} s, is the reader noticing: it asks a block not served again within 1 s, masterchainInfo within 2 s)`,
  );
  out();
}

const first = cells[0]!;
const last = cells[cells.length - 1]!;
const ratio = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? Number.NaN : a / b);
const reqRatio = ratio(perSecond(last.requests.length, last), perSecond(first.requests.length, first));
const cpuRatio = ratio(
  last.workerCpuMs === null ? null : perSecond(last.workerCpuMs, last),
  first.workerCpuMs === null ? null : perSecond(first.workerCpuMs, first),
);
const worstP99 = Math.max(...cells.map((cell) => percentile(sortedCopy(cell.latencies.map((l) => l.ms ?? Number.POSITIVE_INFINITY)), 99)));
const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
out('## Goal (issue 11)');
out(
  `- requests/s flat within 1.5× from ${formatNumber(first.open, 0)} to ${formatNumber(last.open, 0)} open: ×${formatNumber(reqRatio, 2)} — ${verdict(reqRatio <= 1.5)}`,
);
out(`- worker CPU/s flat within 1.5×: ×${formatNumber(cpuRatio, 2)} — ${verdict(cpuRatio <= 1.5)}`);
out(`- p99 transfer → completed ≤ 1.5 s: worst p99 ${ms(worstP99)} — ${verdict(worstP99 <= 1500)}`);
process.exit(0);
