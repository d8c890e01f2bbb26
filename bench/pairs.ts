// Before and after a change, measured alternately (docs/PERFORMANCE.md: compare within one sitting,
// the order swapped from pair to pair so that a machine getting busier or calmer weighs on both).
// Prints numbers, asserts nothing.
//
//   node bench/pairs.ts --before DIR [--pairs 3] [--limits on,off] [--duration 8] [--warmup 3]
//                       [--concurrency 8] [--open 1000] [--transport wrk|http] [--api-only]
//
// `--before DIR`: a tree of the code before the change (e.g. `git worktree add /tmp/before main`, or
// `git archive main | tar -x -C /tmp/before` with node_modules linked); the code after is this tree.
// Each run is bench/api.ts of this tree with `--skip-baselines --json` (Kassa is never paused), on a
// fresh database, with `--kassa-root DIR` for the code before — the same harness for both. For each
// `--limits` setting (on: the shared rate limiter counting every request, none refused; off:
// RATE_LIMIT_PER_STORE=0) and each pair: req/s, p99 and Kassa's and PostgreSQL's CPU per request,
// before → after, the load average beside each run, then the median of the pairs' ratios.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchFlags } from './lib/flags.ts';
import { cellArgs, runBenchApi } from './lib/runs.ts';
import { formatNumber, sortedCopy, textTable } from './lib/stats.ts';

const root = path.resolve(import.meta.dirname, '..');
const USAGE = `usage: node bench/pairs.ts --before DIR [--pairs 3] [--limits on,off] [--duration 8] [--warmup 3] [--concurrency 8] [--open 1000]
                          [--transport wrk|http] [--api-only]
needs what bench/api.ts needs (pgbench; wrk for the default --transport)`;
const { flags, usage } = benchFlags(USAGE, {
  before: { type: 'string' },
  pairs: { type: 'string', default: '3' },
  limits: { type: 'string', default: 'on,off' },
  duration: { type: 'string', default: '8' },
  warmup: { type: 'string', default: '3' },
  concurrency: { type: 'string', default: '8' },
  open: { type: 'string', default: '1000' },
  transport: { type: 'string', default: 'wrk' },
  'api-only': { type: 'boolean', default: false },
});
if (!flags.before) usage('--before DIR is needed: a tree of the code before the change');
const before = path.resolve(flags.before!);
if (!fs.existsSync(path.join(before, 'src/cli.ts'))) usage(`${before} holds no Kassa (src/cli.ts)`);
const pairs = Number(flags.pairs);
if (!Number.isInteger(pairs) || pairs < 1) usage('--pairs must be a whole number ≥ 1');
const limitSettings = flags.limits.split(',').map((part) => part.trim());
if (limitSettings.some((setting) => setting !== 'on' && setting !== 'off')) usage('--limits must be on, off or both (on,off)');

interface RunCell {
  scenario: 'create' | 'retrieve';
  requestsPerSecond: number;
  p99Ms: number;
  errors: number;
  cpuMicrosecondsPerRequest: { kassa: number | null; postgres: number | null; other: number | null; machine: number | null };
}
interface Run {
  commit: string;
  loadAverage: { before: number[]; after: number[] };
  cells: RunCell[];
}
type Side = 'before' | 'after';

const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kassa-bench-pairs-'));
const say = (line: string) => process.stderr.write(`pairs: ${line}\n`);

function runApi(side: Side, limits: string, label: string): Promise<Run> {
  const file = path.join(workDir, `${label.replaceAll(' ', '-')}.json`);
  return runBenchApi<Run>(
    root,
    [
      '--limits',
      limits,
      ...cellArgs(flags),
      '--transport',
      flags.transport,
      '--database',
      'kassa_bench_pairs',
      ...(flags['api-only'] ? ['--api-only'] : []),
      ...(side === 'before' ? ['--kassa-root', before] : []),
    ],
    file,
    label,
    say,
  );
}

const started = new Date();
const results: Array<{ limits: string; pair: number; runs: Record<Side, Run> }> = [];
try {
  for (let pair = 1; pair <= pairs; pair += 1) {
    for (const limits of limitSettings) {
      const order: Side[] = pair % 2 === 1 ? ['before', 'after'] : ['after', 'before'];
      const runs = {} as Record<Side, Run>;
      for (const side of order) runs[side] = await runApi(side, limits, `pair ${pair} limits ${limits} ${side}`);
      results.push({ limits, pair, runs });
    }
  }
} finally {
  fs.rmSync(workDir, { recursive: true, force: true });
}

const us = (value: number | null) => (value === null ? '—' : formatNumber(value, 0));
const load = (run: Run) => run.loadAverage.before[0]!.toFixed(1);
const cellOf = (run: Run, scenario: RunCell['scenario']) => run.cells.find((cell) => cell.scenario === scenario)!;
const median = (values: number[]) => {
  const sorted = sortedCopy(values);
  const middle = sorted.length / 2;
  return sorted.length % 2 === 1 ? sorted[Math.floor(middle)]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const out: string[] = [];
out.push(`Kassa before → after — ${started.toISOString()}`);
out.push(`before    ${before} (${results[0]?.runs.before.commit ?? 'unknown'}); after ${root} (${results[0]?.runs.after.commit ?? 'unknown'})`);
out.push(
  `runs      bench/api.ts --skip-baselines --concurrency ${flags.concurrency} --duration ${flags.duration} --warmup ${flags.warmup} --open ${flags.open} --transport ${flags.transport}${flags['api-only'] ? ' --api-only' : ''}; ${pairs} pair(s) per limits setting, order alternating`,
);
out.push(
  `machine   ${os.availableParallelism()} cores; node ${process.version}; load average now ${os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}`,
);
out.push('');
const rows: string[][] = [];
const ratios = new Map<string, number[]>();
for (const { limits, pair, runs } of results) {
  for (const scenario of ['create', 'retrieve'] as const) {
    const b = cellOf(runs.before, scenario);
    const a = cellOf(runs.after, scenario);
    if (!a || !b) continue;
    const ratio = a.requestsPerSecond / b.requestsPerSecond;
    const cpu =
      a.cpuMicrosecondsPerRequest.kassa !== null && b.cpuMicrosecondsPerRequest.kassa !== null
        ? a.cpuMicrosecondsPerRequest.kassa / b.cpuMicrosecondsPerRequest.kassa
        : null;
    const key = `${scenario}, limits ${limits}`;
    ratios.set(`${key} req/s`, [...(ratios.get(`${key} req/s`) ?? []), ratio]);
    if (cpu !== null) ratios.set(`${key} Kassa µs`, [...(ratios.get(`${key} Kassa µs`) ?? []), cpu]);
    rows.push([
      limits,
      String(pair),
      scenario,
      `${formatNumber(b.requestsPerSecond)} → ${formatNumber(a.requestsPerSecond)}`,
      `${ratio.toFixed(2)}×`,
      `${formatNumber(b.p99Ms)} → ${formatNumber(a.p99Ms)}`,
      `${us(b.cpuMicrosecondsPerRequest.kassa)} → ${us(a.cpuMicrosecondsPerRequest.kassa)}`,
      `${us(b.cpuMicrosecondsPerRequest.postgres)} → ${us(a.cpuMicrosecondsPerRequest.postgres)}`,
      `${us(b.cpuMicrosecondsPerRequest.other)} → ${us(a.cpuMicrosecondsPerRequest.other)}`,
      `${load(runs.before)} / ${load(runs.after)}`,
      String(a.errors + b.errors),
    ]);
  }
}
out.push(
  textTable(
    ['limits', 'pair', 'scenario', 'req/s before → after', 'after ÷', 'p99 ms', 'Kassa µs/req', 'PostgreSQL µs/req', 'other µs/req', 'load avg', 'errors'],
    rows,
  ),
);
out.push('');
for (const [what, values] of ratios)
  out.push(`${what.padEnd(32)} median after ÷ before ${median(values).toFixed(2)}× (${values.map((v) => v.toFixed(2)).join(', ')})`);
out.push('load avg: the 1-minute load average when each run (before / after) started; other: the machine outside Kassa, PostgreSQL and the driver.');
process.stdout.write(`${out.join('\n')}\n`);
