// One run of bench/api.ts with `--json FILE`, for the scripts that compare runs (bench/modes.ts,
// bench/pairs.ts): spawned from `root`, its stderr kept for the error, its JSON read back.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export function runBenchApi<Run>(root: string, args: string[], file: string, label: string, say: (line: string) => void): Promise<Run> {
  const all = [path.join(root, 'bench/api.ts'), '--skip-baselines', '--json', file, ...args];
  say(`${label}: node ${all.map((arg) => path.relative(root, arg) || arg).join(' ')}`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, all, { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0 || !fs.existsSync(file)) reject(new Error(`bench/api.ts (${label}) exited with ${code}:\n${stderr.slice(-3000)}`));
      else resolve(JSON.parse(fs.readFileSync(file, 'utf8')) as Run);
    });
  });
}

/** The cell flags both comparisons pass on to every run. */
export function cellArgs(flags: { duration: string; warmup: string; concurrency: string; open: string }): string[] {
  return ['--duration', flags.duration, '--warmup', flags.warmup, '--concurrency', flags.concurrency, '--open', flags.open];
}
