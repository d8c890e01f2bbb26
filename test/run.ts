// The test command (`npm test`): type-checks, lints and checks formatting (Biome, biome.json),
// prepares a migrated template database (on TEST_DATABASE_URL / DATABASE_URL, or on the embedded
// PostgreSQL), then runs every test/**/*.test.ts with node:test. It fails loudly when it finds no test files.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { run as runTests } from 'node:test';
import { spec } from 'node:test/reporters';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../src/config.ts';
import { openDatabaseServer } from '../src/db/embedded.ts';
import { migrate } from '../src/db/migrate.ts';
import { SHARED_CHROMIUM_ENV, startSharedChromium } from './helpers/chromium.ts';
import slowestFiles from './helpers/slowestFiles.ts';

const root = path.resolve(import.meta.dirname, '..');
process.chdir(root);
// Node's compile cache (keyed by each file's content and Node's version) for every Node process of the
// run: the ~120 test files, the services and CLI commands they start, tsc. Importing the test helpers'
// modules costs ~2.6 s of CPU without it and ~1.5 s with it; on two cores the suite is CPU-bound.
process.env.NODE_COMPILE_CACHE ??= path.join(root, '.kassa', 'compile-cache');
const filters = process.argv.slice(2);
const files = fs
  .globSync('test/**/*.test.ts')
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort();
if (files.length === 0) {
  process.stderr.write(`test: no test files found${filters.length ? ` matching ${filters.join(', ')}` : ''} — refusing to pass\n`);
  process.exit(1);
}

/** Each phase's wall time, printed at the end (type check and lint run beside the tests). */
const phases: Array<{ name: string; ms: number }> = [];
const runStarted = performance.now();
async function timed<T>(name: string, phase: Promise<T> | (() => Promise<T>)): Promise<T> {
  const started = performance.now();
  try {
    return await (typeof phase === 'function' ? phase() : phase);
  } finally {
    phases.push({ name, ms: performance.now() - started });
  }
}
const seconds = (ms: number): string => (ms >= 60_000 ? `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s` : `${(ms / 1000).toFixed(1)} s`);

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit', env });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const log = pino({ level: process.env.LOG_LEVEL === 'debug' ? 'debug' : 'warn' }, pino.destination(2));
const typecheck =
  filters.length === 0
    ? timed('type check (tsc, beside the tests)', run(path.join(root, 'node_modules/.bin/tsc'), ['--noEmit', '-p', '.']))
    : Promise.resolve(0);
// The linter and the formatter check (biome ci: lint findings and unformatted files both fail) take a
// few seconds for the whole tree; like the type check they run on full runs only.
const lint =
  filters.length === 0
    ? timed('lint and format (biome, beside the tests)', run(path.join(root, 'node_modules/.bin/biome'), ['ci', '--error-on-warnings', '.']))
    : Promise.resolve(0);

// One Chromium for the run's browser test files (test/browser/), which connect to it rather than each
// launching their own (~1 s of CPU a file; test/helpers/chromium.ts). It starts beside the database.
// If it cannot start the run goes on without it: the files try to launch their own and fail saying why.
const isBrowserFile = (file: string): boolean => file.split(path.sep).join('/').startsWith('test/browser/');
const sharedChromium = files.some(isBrowserFile)
  ? timed(
      'shared Chromium (beside the database)',
      startSharedChromium().catch((error: Error) => {
        process.stderr.write(`test: the shared Chromium did not start (${error.message.split('\n')[0]}); each browser test file launches its own\n`);
        return null;
      }),
    )
  : Promise.resolve(null);

const preparing = performance.now();
const adminUrl = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? null;
const server = await openDatabaseServer({ ...loadConfig({ ...process.env, DATABASE_URL: adminUrl ?? '' }, root), databaseUrl: adminUrl }, log);
const template = `kassa_test_template_${process.pid}`;
const admin = new pg.Client({ connectionString: server.url });
await admin.connect();
// Leftovers of earlier runs that were killed (databases are named after the runner's pid; runs
// still alive, for example another checkout's on the same embedded server, keep theirs).
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const stale = await admin.query<{ datname: string }>(`select datname from pg_database where datname like 'kassa_test_%'`);
for (const { datname } of stale.rows) {
  const pid = Number(/^kassa_test_(?:template_)?(\d+)/.exec(datname)?.[1]);
  if (Number.isInteger(pid) && pid !== process.pid && alive(pid)) continue;
  await admin.query(`drop database if exists ${pg.escapeIdentifier(datname)} with (force)`).catch(() => {});
}
await admin.query(`create database ${pg.escapeIdentifier(template)}`);
const templateUrl = new URL(server.url);
templateUrl.pathname = `/${template}`;
await migrate(templateUrl.toString(), log);
phases.push({ name: 'database and migrated template', ms: performance.now() - preparing });

// Six at a time on two cores: most files wait on clocks (the sandbox's 400-ms blocks, the signer's and
// the gas wallet's windows), Chromium and PostgreSQL rather than compute — a CPU profile of the
// longest file (treasury/jettons-out) found it idle 39 s of 62. Measured: 3 at a time 10 min 54 s, 4 at
// a time 9 min 56 s (133 files, 2026-11); 6 at a time, 155 files, a fresh clone on a quiet machine: 7 min
// 50 s of tests, 9 min 23 s in all with the drills (2026-11-29).
// KASSA_TEST_CONCURRENCY overrides it (measuring which is fastest on a machine).
const concurrency = Number(process.env.KASSA_TEST_CONCURRENCY) || Math.max(6, Math.min(8, os.availableParallelism()));
// The longest files start first, so none of them begins near the end and runs alone (the files the
// run's "slowest test files" list names most often); a file not listed keeps its alphabetical place
// after them. The drills measure a real service under load (answers within a bound, expiry on time):
// they run after the other files (three at a time inside their file, test/drills/drills.test.ts), so the
// suite's own load does not decide their figures (one of them missed its 10 s bound by 0.4 s on a
// machine busy with more than the suite).
const LONGEST_FIRST = [
  // The run's "slowest test files" list of 2026-11-28 (the sandbox chain's refunds and sweeps, the
  // treasury's settlement: each 100–160 s), then the earlier list's.
  'test/treasury/jettons-out.test.ts',
  'test/browser/dashboard-treasury-refund.test.ts',
  'test/treasury/treasury-refunds.test.ts',
  'test/reader/treasury-settlement.test.ts',
  'test/treasury/refunds.test.ts',
  'test/treasury/money-out.test.ts',
  'test/reader/reader.test.ts',
  'test/treasury/reconcile.test.ts',
  'test/http/dashboard-no-5xx-fuzz.test.ts',
  'test/http/dashboard-accounts.test.ts',
  'test/treasury/refund-window.test.ts',
  'test/http/dashboard.test.ts',
  'test/cli/cli.test.ts',
  'test/package/package.test.ts',
  'test/treasury/treasury.test.ts',
  'test/http/no-5xx-fuzz.test.ts',
  'test/operations/doctor-and-coins.test.ts',
  'test/reader/payments-on-chain.test.ts',
  'test/cli/second-terminal.test.ts',
  'test/browser/dashboard.test.ts',
  'test/browser/dashboard-money.test.ts',
  'test/treasury/outgoing.test.ts',
  'test/browser/checkout.test.ts',
  // Its own PostgreSQL primary and replica, two kassa start processes and a doctor: 25 s, 50 s on a busy machine.
  'test/db/reporting-replica.test.ts',
];
const rank = (file: string): number => {
  const at = LONGEST_FIRST.indexOf(file.split(path.sep).join('/'));
  return at === -1 ? LONGEST_FIRST.length : at;
};
const ordered = files.map((file, index) => ({ file, index })).sort((a, b) => rank(a.file) - rank(b.file) || a.index - b.index);
// The files' processes inherit the runner's environment: the template database, the run's id and the
// shared Chromium's address.
Object.assign(process.env, {
  KASSA_TEST_ADMIN_URL: server.url,
  KASSA_TEST_TEMPLATE: template,
  KASSA_TEST_RUN: String(process.pid),
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
});
const chromiumServer = await sharedChromium;
if (chromiumServer) process.env[SHARED_CHROMIUM_ENV] = chromiumServer.wsEndpoint();
/**
 * node:test's run() (not `node --test`, which sorts its files by name), so the files start in the
 * order given; its events go to the spec reporter and to the slowest-files list.
 */
async function runFiles(batch: string[], parallel: number): Promise<boolean> {
  let failed = false;
  const toSpec = new PassThrough({ objectMode: true });
  const toSlowest = new PassThrough({ objectMode: true });
  const reporter = toSpec.compose(spec);
  reporter.on('data', (chunk: string | Buffer) => process.stdout.write(chunk));
  const reported = once(reporter, 'end');
  const slowest = (async () => {
    let text = '';
    for await (const chunk of slowestFiles(toSlowest)) text += chunk;
    return text;
  })();
  // KASSA_TEST_NAME: only the tests whose name matches (a regular expression; their files' hooks still run).
  const only = process.env.KASSA_TEST_NAME ? { testNamePatterns: [new RegExp(process.env.KASSA_TEST_NAME)] } : {};
  for await (const event of runTests({ files: batch.map((file) => path.resolve(root, file)), concurrency: parallel, timeout: 120_000, ...only })) {
    if (event.type === 'test:fail') failed = true;
    toSpec.write(event);
    toSlowest.write(event);
  }
  toSpec.end();
  toSlowest.end();
  await reported;
  process.stdout.write(await slowest);
  return !failed;
}
const isDrill = (file: string): boolean => file.split(path.sep).join('/').startsWith('test/drills/');
const others = ordered.map(({ file }) => file).filter((file) => !isDrill(file));
const drills = files.filter(isDrill);
const othersPassed =
  others.length === 0 || (await timed(`tests (${others.length} files, ${concurrency} at a time, the longest first)`, () => runFiles(others, concurrency)));
const drillsPassed =
  drills.length === 0 || (await timed(`drills (${drills.length} file${drills.length === 1 ? '' : 's'}, after the others)`, () => runFiles(drills, 1)));
const testsPassed = othersPassed && drillsPassed;
const typesPassed = (await typecheck) === 0;
const lintPassed = (await lint) === 0;

await admin.query(`drop database if exists ${pg.escapeIdentifier(template)} with (force)`).catch(() => {});
await admin.end();
await server.stop();
await chromiumServer?.close();
process.stderr.write(
  `test: wall time ${seconds(performance.now() - runStarted)}\n${phases.map((phase) => `  ${phase.name.padEnd(48)} ${seconds(phase.ms)}`).join('\n')}\n`,
);
if (!typesPassed) process.stderr.write('test: type check (tsc --noEmit) failed\n');
if (!lintPassed) process.stderr.write('test: lint or format check (biome ci) failed; `npm run lint` shows why, `npm run format` formats\n');
if (!testsPassed) process.stderr.write('test: some tests failed\n');
process.exit(testsPassed && typesPassed && lintPassed ? 0 : 1);
