// Runs pgbench with a custom script and reads its figures: tps, failed transactions and, from the
// per-transaction log (-l), p50/p99 latency measured the same way as the HTTP driver does.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { percentile, sortedCopy } from './stats.ts';

export type PgbenchMode = 'simple' | 'extended' | 'prepared';

export interface PgbenchOptions {
  /** postgres:// URL of the database (pgbench takes a URI where it takes a database name). */
  url: string;
  clients: number;
  seconds: number;
  /** The custom script's text (pgbench -f). */
  script: string;
  mode?: PgbenchMode;
  binary?: string;
}

export interface PgbenchResult {
  tps: number;
  transactions: number;
  failed: number;
  p50Ms: number;
  p99Ms: number;
  output: string;
}

export const PGBENCH = process.env.PGBENCH ?? '/usr/bin/pgbench';

function run(binary: string, args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

/** `pgbench --version` → "pgbench (PostgreSQL) 15.20 …", or null when it cannot run. */
export async function pgbenchVersion(binary = PGBENCH): Promise<string | null> {
  try {
    const { code, stdout } = await run(binary, ['--version'], os.tmpdir());
    return code === 0 ? stdout.trim() : null;
  } catch {
    return null;
  }
}

export async function runPgbench(options: PgbenchOptions): Promise<PgbenchResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kassa-pgbench-'));
  try {
    const scriptFile = path.join(dir, 'script.sql');
    fs.writeFileSync(scriptFile, options.script);
    const args = [
      '-n', // no vacuum of pgbench's own tables (we use none)
      '-c',
      String(options.clients),
      '-j',
      String(options.clients),
      '-T',
      String(options.seconds),
      '-M',
      options.mode ?? 'simple',
      '-f',
      scriptFile,
      '-l',
      '--log-prefix',
      path.join(dir, 'tx'),
      options.url,
    ];
    const { code, stdout, stderr } = await run(options.binary ?? PGBENCH, args, dir);
    const output = `${stdout}${stderr}`;
    if (code !== 0) throw new Error(`pgbench exited with ${code}:\n${output.trim()}`);
    const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(output)?.[1] ?? Number.NaN);
    const transactions = Number(/number of transactions actually processed: (\d+)/.exec(output)?.[1] ?? Number.NaN);
    const failed = Number(/number of failed transactions: (\d+)/.exec(output)?.[1] ?? 0);
    // Log lines: client_id transaction_no time(µs) script_no time_epoch time_us [schedule_lag]
    const latencies: number[] = [];
    for (const file of fs.readdirSync(dir).filter((name) => name.startsWith('tx.'))) {
      for (const line of fs.readFileSync(path.join(dir, file), 'utf8').split('\n')) {
        const micros = line.split(' ')[2];
        if (micros !== undefined && /^\d+$/.test(micros)) latencies.push(Number(micros) / 1000);
      }
    }
    const sorted = sortedCopy(latencies);
    return { tps, transactions, failed, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), output };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
