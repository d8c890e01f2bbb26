// The default mode against `--api-only` (issue 11: "the API benchmark in the default mode (API +
// worker) with 1,000 open payments watched: create and retrieve within 10 % of --api-only"): prints
// numbers, asserts nothing.
//
// Runs bench/api.ts with `--skip-baselines` (Kassa is never paused, so the worker never has to
// recover from a pause) in pairs, one run in each mode, the order alternating from pair to pair so
// that a machine getting busier or calmer during the run weighs on both modes alike. Each run is a
// fresh `kassa start` on a fresh database with the same `--open` payments watched. Prints each pair's
// ratio (default ÷ api-only) for create and retrieve, Kassa's and PostgreSQL's CPU per request, and
// the median of the pairs that ran on a quiet machine.
//
//   node bench/modes.ts [--pairs 4] [--duration 8] [--warmup 3] [--concurrency 8] [--open 1000]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchFlags } from './lib/flags.ts';
import { cellArgs, runBenchApi } from './lib/runs.ts';
import { formatNumber, sortedCopy, textTable } from './lib/stats.ts';

const root = path.resolve(import.meta.dirname, '..');

const USAGE = `usage: node bench/modes.ts [--pairs 4] [--duration 8] [--warmup 3] [--concurrency 8] [--open 1000]
needs what bench/api.ts needs (wrk, pgbench)`;
const { flags, usage } = benchFlags(USAGE, {
  pairs: { type: 'string', default: '4' },
  duration: { type: 'string', default: '8' },
  warmup: { type: 'string', default: '3' },
  concurrency: { type: 'string', default: '8' },
  open: { type: 'string', default: '1000' },
});
const pairs = Number(flags.pairs);
if (!Number.isInteger(pairs) || pairs < 1) usage('--pairs must be a whole number ≥ 1');
if (!/^\d+$/.test(flags.concurrency)) usage('--concurrency must be one whole number');

/** The goal: the default mode within 10 % of `--api-only`. */
const GOAL = 0.9;
/** A run whose cells saw more than this share of the machine spent outside Kassa, PostgreSQL and wrk is left out of the median. */
const NOISY_SHARE = 0.1;

interface RunCell {
  scenario: 'create' | 'retrieve';
  requestsPerSecond: number;
  p99Ms: number;
  errors: number;
  cpuMicrosecondsPerRequest: { machine: number | null; kassa: number | null; postgres: number | null; driver: number | null; other: number | null };
}
interface Run {
  mode: 'default' | 'api-only';
  commit: string;
  quietBefore: number | null;
  kassaIdleMsPerSecond: number | null;
  cells: RunCell[];
}

const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kassa-bench-modes-'));
const say = (line: string) => process.stderr.write(`modes: ${line}\n`);

function runApi(mode: Run['mode'], label: string): Promise<Run> {
  const file = path.join(workDir, `${label}.json`);
  return runBenchApi<Run>(root, [...cellArgs(flags), ...(mode === 'api-only' ? ['--api-only'] : [])], file, label, say);
}

const cellOf = (run: Run, scenario: RunCell['scenario']): RunCell => {
  const cell = run.cells.find((candidate) => candidate.scenario === scenario);
  if (!cell) throw new Error(`no ${scenario} cell in the ${run.mode} run`);
  return cell;
};
const noisy = (run: Run): boolean =>
  run.cells.some((cell) => {
    const { machine, other } = cell.cpuMicrosecondsPerRequest;
    return machine !== null && other !== null && other > NOISY_SHARE * machine;
  });

const started = new Date();
const results: Array<{ pair: number; apiOnly: Run; defaultMode: Run }> = [];
try {
  for (let pair = 1; pair <= pairs; pair += 1) {
    const order: Run['mode'][] = pair % 2 === 1 ? ['default', 'api-only'] : ['api-only', 'default'];
    const runs = new Map<Run['mode'], Run>();
    for (const mode of order) runs.set(mode, await runApi(mode, `pair ${pair} ${mode}`));
    results.push({ pair, apiOnly: runs.get('api-only')!, defaultMode: runs.get('default')! });
  }
} finally {
  fs.rmSync(workDir, { recursive: true, force: true });
}

const us = (value: number | null) => (value === null ? '—' : formatNumber(value, 0));
const rows: string[][] = [];
const ratios = { create: [] as number[], retrieve: [] as number[] };
for (const { pair, apiOnly, defaultMode } of results) {
  const quiet = !noisy(apiOnly) && !noisy(defaultMode);
  for (const scenario of ['create', 'retrieve'] as const) {
    const a = cellOf(apiOnly, scenario);
    const d = cellOf(defaultMode, scenario);
    const ratio = d.requestsPerSecond / a.requestsPerSecond;
    if (quiet) ratios[scenario].push(ratio);
    rows.push([
      String(pair),
      scenario,
      `${formatNumber(a.requestsPerSecond)} → ${formatNumber(d.requestsPerSecond)}`,
      `${ratio.toFixed(2)}×`,
      `${formatNumber(a.p99Ms)} → ${formatNumber(d.p99Ms)}`,
      `${us(a.cpuMicrosecondsPerRequest.kassa)} → ${us(d.cpuMicrosecondsPerRequest.kassa)}`,
      `${us(a.cpuMicrosecondsPerRequest.postgres)} → ${us(d.cpuMicrosecondsPerRequest.postgres)}`,
      `${us(a.cpuMicrosecondsPerRequest.other)} → ${us(d.cpuMicrosecondsPerRequest.other)}`,
      String(a.errors + d.errors),
      quiet ? '' : 'noisy: left out',
    ]);
  }
}

const out: string[] = [];
out.push(`Kassa default mode against --api-only — ${started.toISOString()}`);
out.push(
  `runs      bench/api.ts --skip-baselines --concurrency ${flags.concurrency} --duration ${flags.duration} --warmup ${flags.warmup} --open ${flags.open}, wrk; ${pairs} pair(s), order alternating`,
);
out.push(
  `code      ${results[0]?.defaultMode.commit ?? 'unknown'}; node ${process.version}; ${os.availableParallelism()} cores; load average now ${os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}`,
);
out.push(
  `idle      Kassa idle before its first cell, ms CPU per second: default ${results.map((r) => us(r.defaultMode.kassaIdleMsPerSecond)).join(', ')}; api-only ${results.map((r) => us(r.apiOnly.kassaIdleMsPerSecond)).join(', ')}`,
);
out.push('');
out.push(
  textTable(['pair', 'scenario', 'req/s api-only → default', 'default ÷', 'p99 ms', 'Kassa µs/req', 'PostgreSQL µs/req', 'other µs/req', 'errors', ''], rows),
);
out.push('');
for (const scenario of ['create', 'retrieve'] as const) {
  const kept = sortedCopy(ratios[scenario]);
  if (kept.length === 0) {
    out.push(`${scenario.padEnd(8)}  no quiet pair: nothing to conclude`);
    continue;
  }
  const middle = kept.length / 2;
  const median = kept.length % 2 === 1 ? kept[Math.floor(middle)]! : (kept[middle - 1]! + kept[middle]!) / 2;
  out.push(
    `${scenario.padEnd(8)}  median default ÷ api-only ${median.toFixed(2)}× over ${kept.length} quiet pair(s) (range ${kept[0]!.toFixed(2)}–${kept.at(-1)!.toFixed(2)}×): goal ≥ ${GOAL}× ${median >= GOAL ? 'met' : 'MISSED'}`,
  );
}
out.push(`other = the machine's CPU outside Kassa, PostgreSQL and wrk; a pair where it exceeds ${NOISY_SHARE * 100}% of the machine in any cell is left out.`);
process.stdout.write(`${out.join('\n')}\n`);
