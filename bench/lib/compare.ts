// Runs of bench/api.ts in several variants (flags), compared in rounds: each round runs every
// variant once, each a fresh `kassa start` on a fresh database, the order rotating from round to
// round so that a machine getting busier or calmer weighs on every variant alike. Prints each
// round's ratio of every variant to the first (the baseline) for create and retrieve, Kassa's and
// PostgreSQL's CPU per request, and the median ratio over the rounds that ran on a quiet machine.
// Used by bench/modes.ts (default mode against --api-only) and bench/pooler.ts (direct against
// PgBouncer, prepared statements on and off).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runBenchApi } from './runs.ts';
import { formatNumber, sortedCopy, textTable } from './stats.ts';

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
  commit: string;
  kassaIdleMsPerSecond: number | null;
  cells: RunCell[];
}

export interface Variant {
  /** Its name in the table. */
  name: string;
  /** bench/api.ts's flags for it, beside the cell flags. */
  args: string[];
}

export interface Comparison {
  title: string;
  /** What the runs were, for the report's first lines. */
  runsLine: string;
  /** The first is the baseline every other is divided by. */
  variants: Variant[];
  rounds: number;
  /** bench/api.ts's cell flags, the same for every run. */
  cellArgs: string[];
  /** A goal for the ratio (each variant ÷ baseline ≥ goal), printed as met or missed; none when absent. */
  goal?: number;
  say: (line: string) => void;
}

const cellOf = (run: Run, scenario: RunCell['scenario'], name: string): RunCell => {
  const cell = run.cells.find((candidate) => candidate.scenario === scenario);
  if (!cell) throw new Error(`no ${scenario} cell in the ${name} run`);
  return cell;
};
const noisy = (run: Run): boolean =>
  run.cells.some((cell) => {
    const { machine, other } = cell.cpuMicrosecondsPerRequest;
    return machine !== null && other !== null && other > NOISY_SHARE * machine;
  });
const median = (values: number[]): { median: number; low: number; high: number } | null => {
  const kept = sortedCopy(values);
  if (kept.length === 0) return null;
  const middle = kept.length / 2;
  return { median: kept.length % 2 === 1 ? kept[Math.floor(middle)]! : (kept[middle - 1]! + kept[middle]!) / 2, low: kept[0]!, high: kept.at(-1)! };
};

/** Runs the comparison and returns its report (the caller prints it). */
export async function compareVariants(root: string, comparison: Comparison): Promise<string> {
  const { variants, rounds, say } = comparison;
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kassa-bench-compare-'));
  const started = new Date();
  const results: Run[][] = [];
  try {
    for (let round = 1; round <= rounds; round += 1) {
      const runs: Run[] = new Array(variants.length);
      for (let step = 0; step < variants.length; step += 1) {
        const index = (step + round - 1) % variants.length;
        const variant = variants[index]!;
        const label = `round ${round} ${variant.name}`;
        runs[index] = await runBenchApi<Run>(root, [...comparison.cellArgs, ...variant.args], path.join(workDir, `${round}-${index}.json`), label, say);
      }
      results.push(runs);
    }
  } finally {
    fs.rmSync(workDir, { recursive: true, force: true });
  }

  const us = (value: number | null) => (value === null ? '—' : formatNumber(value, 0));
  const rows: string[][] = [];
  const ratios = variants.map(() => ({ create: [] as number[], retrieve: [] as number[] }));
  results.forEach((runs, roundIndex) => {
    const quiet = !runs.some(noisy);
    const base = runs[0]!;
    for (const scenario of ['create', 'retrieve'] as const) {
      const b = cellOf(base, scenario, variants[0]!.name);
      runs.forEach((run, index) => {
        const c = cellOf(run, scenario, variants[index]!.name);
        const ratio = c.requestsPerSecond / b.requestsPerSecond;
        if (quiet && index > 0) ratios[index]![scenario].push(ratio);
        rows.push([
          String(roundIndex + 1),
          scenario,
          variants[index]!.name,
          formatNumber(c.requestsPerSecond),
          index === 0 ? '1.00× (baseline)' : `${ratio.toFixed(2)}×`,
          formatNumber(c.p99Ms),
          us(c.cpuMicrosecondsPerRequest.kassa),
          us(c.cpuMicrosecondsPerRequest.postgres),
          us(c.cpuMicrosecondsPerRequest.other),
          String(c.errors),
          quiet ? '' : 'noisy: left out',
        ]);
      });
    }
  });

  const out: string[] = [];
  out.push(`${comparison.title} — ${started.toISOString()}`);
  out.push(`runs      ${comparison.runsLine}; ${rounds} round(s), order rotating`);
  out.push(
    `code      ${results[0]?.[0]?.commit ?? 'unknown'}; node ${process.version}; ${os.availableParallelism()} cores; load average now ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
  out.push(
    `idle      Kassa idle before its first cell, ms CPU per second: ${variants.map((variant, index) => `${variant.name} ${results.map((runs) => us(runs[index]!.kassaIdleMsPerSecond)).join(', ')}`).join('; ')}`,
  );
  out.push('');
  out.push(
    textTable(
      ['round', 'scenario', 'variant', 'req/s', `÷ ${variants[0]!.name}`, 'p99 ms', 'Kassa µs/req', 'PostgreSQL µs/req', 'other µs/req', 'errors', ''],
      rows,
    ),
  );
  out.push('');
  variants.forEach((variant, index) => {
    if (index === 0) return;
    for (const scenario of ['create', 'retrieve'] as const) {
      const m = median(ratios[index]![scenario]);
      if (!m) {
        out.push(`${scenario.padEnd(8)}  ${variant.name}: no quiet round, nothing to conclude`);
        continue;
      }
      const goal = comparison.goal === undefined ? '' : `: goal ≥ ${comparison.goal}× ${m.median >= comparison.goal ? 'met' : 'MISSED'}`;
      out.push(
        `${scenario.padEnd(8)}  median ${variant.name} ÷ ${variants[0]!.name} ${m.median.toFixed(2)}× over ${ratios[index]![scenario].length} quiet round(s) (range ${m.low.toFixed(2)}–${m.high.toFixed(2)}×)${goal}`,
      );
    }
  });
  out.push(
    `other = the machine's CPU outside Kassa, PostgreSQL and wrk; a round where it exceeds ${NOISY_SHARE * 100}% of the machine in any run is left out.`,
  );
  return out.join('\n');
}
