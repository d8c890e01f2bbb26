// The short tier of every drill in drills/ runs in the test command: each starts the real
// service on a database of its own (a copy of the run's template; db-restart, which stops
// PostgreSQL, on a private server), does its damage, and must end with "N passed, 0 failed".
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { descendants } from '../../bench/lib/cpu.ts';

const DRILLS = path.resolve(import.meta.dirname, '../../drills');
// The longest drills start first, three at a time: the two that wait out the 60 s late-commit margin
// (~95 s each), auth-and-access and several-containers (~60 s each: four processes, a 6 s lease, a 9 s
// freeze), then the rest by name. Started in name order, mid-send began
// last and ran alone for a minute: the drills ended at ~165 s although none takes 100 s.
const LONGEST_FIRST = ['expiry-burst.ts', 'worker-killed-mid-send.ts', 'auth-and-access.ts', 'several-containers.ts'];
const rank = (file: string): number => {
  const at = LONGEST_FIRST.indexOf(file);
  return at === -1 ? LONGEST_FIRST.length : at;
};
const drills = fs
  .readdirSync(DRILLS)
  .filter((file) => file.endsWith('.ts') && file !== 'lib.ts')
  .sort()
  .sort((a, b) => rank(a) - rank(b));

/**
 * Runs one drill. Killed when its test times out (`signal`), with the services it started: node:test
 * only stops waiting, a drill hung in its clean-up would hold the file, and the whole test command,
 * open, and its `kassa start` processes, orphaned, would go on taking CPU from the rest of the run.
 */
function run(file: string, signal: AbortSignal): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(DRILLS, file)], { env: { ...process.env, LOG_LEVEL: 'warn' } });
    const kill = () => {
      if (child.pid === undefined) return;
      for (const pid of [...descendants(child.pid), child.pid]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    };
    signal.addEventListener('abort', kill, { once: true });
    child.on('exit', () => signal.removeEventListener('abort', kill));
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

// Three at a time: most of a drill's time is waiting (the late-commit margin, a killed worker's lease, the
// chain's clock), and each has its own service and database; the suite runs them after its other files.
describe('drills (short tier)', { concurrency: 3 }, () => {
  it('there are drills to run', () => {
    assert.ok(drills.length > 0, 'no drills found in drills/');
  });
  for (const file of drills) {
    // 4 minutes: expiry-burst alone waits the 60 s margin for late shard blocks (LATE_COMMIT_MARGIN_MS) on top of its run.
    it(file, { timeout: 240_000 }, async (t) => {
      const { code, output } = await run(file, t.signal);
      const last = output.trimEnd().split('\n').at(-1) ?? '';
      const match = /^(\d+) passed, (\d+) failed$/.exec(last);
      assert.ok(match, `the drill must end with "N passed, M failed":\n${output.slice(-3000)}`);
      assert.ok(Number(match[1]) > 0, `the drill checked something:\n${output.slice(-3000)}`);
      assert.equal(match[2], '0', output.slice(-3000));
      assert.equal(code, 0, output.slice(-3000));
    });
  }
});
