// Behind a pooler (issue 46): Kassa's API direct to PostgreSQL against the same API through
// PgBouncer in transaction mode (Debian's 1.18, as a managed PostgreSQL's pooled URL:
// DATABASE_URL through it, DATABASE_SESSION_URL direct), and what named prepared statements are
// worth (DATABASE_PREPARED_STATEMENTS, on by default with one URL, off when the URLs differ, as
// PgBouncer 1.18 cannot keep them). Prints numbers, asserts nothing.
//
// Runs bench/api.ts with `--skip-baselines` in rounds of three variants (bench/lib/compare.ts):
//   direct, prepared   — one URL, Kassa's default (named prepared statements for the hot statements)
//   direct, unnamed    — one URL, DATABASE_PREPARED_STATEMENTS=false
//   pgbouncer          — DATABASE_URL through PgBouncer, DATABASE_SESSION_URL direct (unnamed statements)
// each a fresh `kassa start` on a fresh database, the order rotating from round to round.
//
//   node bench/pooler.ts [--rounds 3] [--duration 8] [--warmup 3] [--concurrency 8] [--open 1000] [--api-only]
import path from 'node:path';
import { compareVariants } from './lib/compare.ts';
import { benchFlags } from './lib/flags.ts';
import { cellArgs } from './lib/runs.ts';

const root = path.resolve(import.meta.dirname, '..');

const USAGE = `usage: node bench/pooler.ts [--rounds 3] [--duration 8] [--warmup 3] [--concurrency 8] [--open 1000] [--api-only]
needs what bench/api.ts needs (wrk, pgbench) and PgBouncer (apt-get install pgbouncer)`;
const { flags, usage } = benchFlags(USAGE, {
  rounds: { type: 'string', default: '3' },
  duration: { type: 'string', default: '8' },
  warmup: { type: 'string', default: '3' },
  concurrency: { type: 'string', default: '8' },
  open: { type: 'string', default: '1000' },
  'api-only': { type: 'boolean', default: false },
});
const rounds = Number(flags.rounds);
if (!Number.isInteger(rounds) || rounds < 1) usage('--rounds must be a whole number ≥ 1');
if (!/^\d+$/.test(flags.concurrency)) usage('--concurrency must be one whole number');
const mode = flags['api-only'] ? ['--api-only'] : [];

const report = await compareVariants(root, {
  title: 'Kassa direct against Kassa through PgBouncer (transaction mode)',
  runsLine: `bench/api.ts --skip-baselines --concurrency ${flags.concurrency} --duration ${flags.duration} --warmup ${flags.warmup} --open ${flags.open}${flags['api-only'] ? ' --api-only' : ''}, wrk`,
  variants: [
    { name: 'direct, prepared', args: [...mode, '--prepared-statements', 'on'] },
    { name: 'direct, unnamed', args: [...mode, '--prepared-statements', 'off'] },
    { name: 'pgbouncer', args: [...mode, '--pooler', 'pgbouncer'] },
  ],
  rounds,
  cellArgs: cellArgs(flags),
  say: (line) => process.stderr.write(`pooler: ${line}\n`),
});
process.stdout.write(`${report}\n`);
