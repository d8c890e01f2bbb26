// `kassa start` (or `kassa start --api|--worker`) as a real child process: started with the
// environment it is given, ready once it logged its "kassa started" line, stopped with SIGTERM
// and waited for. A process that exits or stays silent before its start line fails with its output.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const CLI = path.resolve(import.meta.dirname, '../../src/cli.ts');

/** One line of the process's JSON log (pino). */
export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface KassaProcess {
  child: ChildProcess;
  /** The "kassa started" line: url, apiUrl, checkoutUrl, openapiUrl, metricsUrl, next, api, worker, network. */
  started: LogLine;
  /** The API's URL from the start line (http://127.0.0.1:PORT); a worker-only process has none and throws. */
  readonly url: string;
  /** Everything the process printed so far, stdout and stderr. */
  output(): string;
  /** The JSON log lines printed so far. */
  lines(): LogLine[];
  /** Resolves with the exit code once the process exited (null when a signal ended it). */
  exited: Promise<number | null>;
  /** Sends `signal` (SIGTERM: a graceful stop) unless it already exited, and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface KassaProcessOptions {
  /** The process's whole environment beside PATH, LOG_LEVEL=info and PORT=0 (nothing else is inherited). */
  env: Record<string, string>;
  /** Arguments after the entry script; default `start`. */
  args?: string[];
  /** The entry script, default src/cli.ts (the packed package's is bin/kassa.js). */
  entry?: string;
  cwd?: string;
  /** How long to wait for the start line; default 60 s. */
  timeoutMs?: number;
}

function parseLines(text: string): LogLine[] {
  const lines: LogLine[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(line) as LogLine);
    } catch {
      // a line still being written, or not JSON
    }
  }
  return lines;
}

/**
 * What every Kassa process a test starts inherits whatever else it is given: PATH, and Node's compile
 * cache when the test command set one (test/run.ts; it saves ~0.3 s of CPU per process started).
 */
export function childBaseEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? '', ...(process.env.NODE_COMPILE_CACHE ? { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE } : {}) };
}

export async function startKassaProcess(options: KassaProcessOptions): Promise<KassaProcess> {
  const child = spawn(process.execPath, [options.entry ?? CLI, ...(options.args ?? ['start'])], {
    ...(options.cwd ? { cwd: options.cwd } : {}),
    env: { ...childBaseEnv(), LOG_LEVEL: 'info', PORT: '0', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stdout = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const timeoutMs = options.timeoutMs ?? 60_000;
  const started = await new Promise<LogLine>((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      reject(new Error(`kassa ${why}; its output:\n${output.slice(-4000)}`));
    };
    const timer = setTimeout(() => {
      fail(`logged no "kassa started" line in ${timeoutMs / 1000} s`);
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      stdout += chunk;
      const line = stdout.includes('"kassa started"') ? parseLines(stdout).find((candidate) => candidate.msg === 'kassa started') : undefined;
      if (line) {
        clearTimeout(timer);
        stdout = '';
        resolve(line);
      }
    });
    child.stderr!.on('data', (chunk) => (output += chunk));
    void exited.then((code) => fail(`exited (${code ?? child.signalCode}) before it started`));
  });
  return {
    child,
    started,
    get url() {
      if (typeof started.url !== 'string') throw new Error('this kassa process serves no API (kassa start --worker)');
      return started.url;
    },
    output: () => output,
    lines: () => parseLines(output),
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
