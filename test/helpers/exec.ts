// A command run to its end with its output collected: the package tests' npm, node and tool runs.
import { spawn } from 'node:child_process';

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** npm without its update notices, funding and audit lines (nothing to fetch beyond what the test asks). */
export const NPM_ENV = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };

/** Runs `command` in `cwd` (environment: `env`, NPM_ENV when none); resolves with its exit code and output. */
export function exec(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? NPM_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}
