// The default mode against `--api-only` (issue 11: "the API benchmark in the default mode (API +
// worker) with 1,000 open payments watched: create and retrieve within 10 % of --api-only"): prints
// numbers, asserts nothing.
//
// Runs bench/api.ts with `--skip-baselines` (Kassa is never paused, so the worker never has to
// recover from a pause) in pairs, one run in each mode, the order alternating from pair to pair
// (bench/lib/compare.ts). Each run is a fresh `kassa start` on a fresh database with the same
// `--open` payments watched. Prints each pair's ratio (default ÷ api-only) for create and retrieve,
// Kassa's and PostgreSQL's CPU per request, and the median of the pairs that ran on a quiet machine.
//
//   node bench/modes.ts [--pairs 4] [--duration 8] [--warmup 3] [--concurrency 8] [--open 1000]
import path from 'node:path';
import { compareVariants } from './lib/compare.ts';
import { benchFlags } from './lib/flags.ts';
import { cellArgs } from './lib/runs.ts';

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

const report = await compareVariants(root, {
  title: 'Kassa default mode against --api-only',
  runsLine: `bench/api.ts --skip-baselines --concurrency ${flags.concurrency} --duration ${flags.duration} --warmup ${flags.warmup} --open ${flags.open}, wrk`,
  variants: [
    { name: 'api-only', args: ['--api-only'] },
    { name: 'default', args: [] },
  ],
  rounds: pairs,
  cellArgs: cellArgs(flags),
  // The goal: the default mode within 10 % of `--api-only`.
  goal: 0.9,
  say: (line) => process.stderr.write(`modes: ${line}\n`),
});
process.stdout.write(`${report}\n`);
