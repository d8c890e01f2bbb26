// The CPU a `kassa` command costs (issue 32: "kassa --help under 0.5 s of CPU, store list under 1 s"):
// each command runs as a real process, several times, and its CPU (user + system, of the process and
// of what it waited for) is compared with a baseline measured in the same run, `node -e 0` (what
// starting Node alone costs here). Each command is measured cold (Node's compile cache off: the
// first run after an install or an upgrade) and warm (the cache the kassa command enables, primed
// by one run). Prints numbers and ratios; asserts nothing.
//
// `store list` reads a database of its own (dropped at the end): DATABASE_URL's server when set
// (its role must be allowed to create databases), otherwise the embedded PostgreSQL.
//
//   node bench/cli.ts [--runs 5]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { openBenchDatabase, teardownOnSignals } from './lib/database.ts';
import { exitedChildrenCpuMs } from './lib/cpu.ts';
import { benchFlags } from './lib/flags.ts';
import { formatNumber, percentile, sortedCopy, textTable } from './lib/stats.ts';

const root = path.resolve(import.meta.dirname, '..');
const cli = path.join(root, 'src/cli.ts');

const USAGE = 'usage: node bench/cli.ts [--runs 5]';
const { flags, usage } = benchFlags(USAGE, { runs: { type: 'string', default: '5' } });
const runs = Number(flags.runs);
if (!Number.isInteger(runs) || runs < 1 || runs > 100) usage('--runs must be an integer from 1 to 100');

const log = pino({ level: 'warn' }, pino.destination(2));
const database = await openBenchDatabase('kassa_bench_cli', root, log);
const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'kassa-bench-cli-cache-'));
const cleanUp = async () => {
  fs.rmSync(cache, { recursive: true, force: true });
  await database.close(false);
};
teardownOnSignals(cleanUp);

/** The CPU (ms) of one run of `node args…` with that environment; throws when it fails. */
function cpuOf(args: string[], env: Record<string, string>): number {
  const before = exitedChildrenCpuMs();
  // An empty working directory: no `.kassa/run` record of a running `kassa start` is read.
  const result = spawnSync(process.execPath, args, { env: { PATH: process.env.PATH ?? '', ...env }, cwd: cache, encoding: 'utf8' });
  const after = exitedChildrenCpuMs();
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  if (before === null || after === null) throw new Error('bench/cli.ts reads CPU times from /proc (Linux only)');
  return after - before;
}

try {
  await database.fresh();
  const cold = { NODE_DISABLE_COMPILE_CACHE: '1' };
  const warm = { NODE_COMPILE_CACHE: path.join(cache, 'node') };
  const storeEnv = { DATABASE_URL: database.url, LOG_LEVEL: 'warn' };
  const cases: Array<{ name: string; args: string[]; env: Record<string, string>; targetMs: number | null }> = [
    { name: 'node -e 0 (baseline)', args: ['-e', '0'], env: {}, targetMs: null },
    { name: 'kassa --help, cold', args: [cli, '--help'], env: cold, targetMs: 500 },
    { name: 'kassa --help, warm', args: [cli, '--help'], env: warm, targetMs: 500 },
    { name: 'kassa store list, cold', args: [cli, 'store', 'list'], env: { ...storeEnv, ...cold }, targetMs: 1000 },
    { name: 'kassa store list, warm', args: [cli, 'store', 'list'], env: { ...storeEnv, ...warm }, targetMs: 1000 },
  ];
  // Prime the warm cache (and the database's first connection) once.
  for (const entry of cases) cpuOf(entry.args, entry.env);
  const samples = new Map(cases.map((entry) => [entry.name, [] as number[]]));
  // Interleaved, so that a machine getting busier weighs on every case alike.
  for (let run = 0; run < runs; run += 1) for (const entry of cases) samples.get(entry.name)!.push(cpuOf(entry.args, entry.env));
  const median = (name: string) => percentile(sortedCopy(samples.get(name)!), 50);
  const baseline = median(cases[0]!.name);
  const rows = cases.map((entry) => {
    const ms = median(entry.name);
    const sorted = sortedCopy(samples.get(entry.name)!);
    return [
      entry.name,
      formatNumber(ms),
      `${formatNumber(sorted[0]!)}–${formatNumber(sorted[sorted.length - 1]!)}`,
      formatNumber(ms / baseline),
      entry.targetMs === null ? '' : `${entry.targetMs}`,
      entry.targetMs === null ? '' : ms <= entry.targetMs ? 'under' : 'OVER',
    ];
  });
  process.stdout.write(
    `kassa command CPU (user + system, ms; median of ${runs} runs, interleaved; read from /proc in clock ticks, 10 ms on most Linux)\n` +
      `${textTable(['command', 'CPU ms', 'range', '× baseline', 'target ms', ''], rows)}\n` +
      `database: ${database.source}; Node ${process.version}; ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(2)}\n`,
  );
} finally {
  await cleanUp();
}
