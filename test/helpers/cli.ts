// Runs the `kassa` command as a real process (tests of CLI commands).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { childBaseEnv } from './kassaProcess.ts';

const CLI = path.resolve(import.meta.dirname, '../../src/cli.ts');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

let scratch: string | undefined;
/**
 * The commands' default working directory: an empty one of this test process, so that they never
 * read the `.kassa/run` records of `kassa start` processes other tests run from the checkout.
 */
function emptyDirectory(): string {
  if (scratch === undefined) {
    const made = fs.mkdtempSync(path.join(os.tmpdir(), 'kassa-cli-'));
    process.once('exit', () => fs.rmSync(made, { recursive: true, force: true }));
    scratch = made;
  }
  return scratch;
}

/** `env` is the process's whole environment beside PATH and LOG_LEVEL=info (nothing else is inherited). */
export function kassa(args: string[], env: Record<string, string>, options: { cwd?: string } = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...childBaseEnv(), LOG_LEVEL: 'info', ...env },
      cwd: options.cwd ?? emptyDirectory(),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code: code ?? 1, stdout, stderr, json });
    });
  });
}

export function assertFails(result: CliResult, pattern: RegExp): void {
  assert.notEqual(result.code, 0, result.stdout);
  assert.equal(result.stdout, '');
  const lines = result.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one line on stderr, got: ${result.stderr}`);
  assert.match(lines[0]!, pattern);
}
