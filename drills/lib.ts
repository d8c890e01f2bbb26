// Shared pieces of the drills: a private PostgreSQL they may restart, the real service as child
// processes (API and worker apart where it matters), a store with a token, and the result table.
// Every drill prints its table and ends with a line "N passed, M failed" (exit 1 when M > 0).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { issueToken } from '../src/auth/tokens.ts';
import { startEmbeddedPostgres, type DatabaseServer } from '../src/db/embedded.ts';
import { migrate } from '../src/db/migrate.ts';
import { openPool, type DatabasePool } from '../src/db/pool.ts';
import { createStore, parseMethodList } from '../src/stores/stores.ts';

export const ROOT = path.resolve(import.meta.dirname, '..');
const CLI = path.join(ROOT, 'src/cli.ts');
export const quiet = pino({ level: process.env.DRILL_LOG_LEVEL ?? 'silent' });

/** `--long` runs the long tier (documented in docs/OPERATIONS.md); the default is the short one. */
export const LONG = process.argv.includes('--long');

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface DrillDatabase {
  url: string;
  /** Stops PostgreSQL (fast shutdown); `start()` brings it back on the same port and data. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and deletes its data. */
  destroy(): Promise<void>;
}

/** A private embedded PostgreSQL in a temporary folder on a free port (never the dev database). */
export async function drillDatabase(): Promise<DrillDatabase> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kassa-drill-'));
  fs.chmodSync(dir, 0o755);
  const dataDir = path.join(dir, 'pg');
  const port = await freePort();
  let server: DatabaseServer = await startEmbeddedPostgres(dataDir, port, quiet);
  await migrate(server.url, quiet);
  return {
    url: server.url,
    stop: () => server.stop(),
    start: async () => {
      server = await startEmbeddedPostgres(dataDir, port, quiet);
    },
    destroy: async () => {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Kassa {
  url: string;
  child: ChildProcess;
  /** Everything the process printed. */
  output(): string;
  /** Sends a signal and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/** `kassa start [--api|--worker]` as a child process; resolves once it logged "kassa started". */
export async function startKassa(options: { databaseUrl: string; part?: 'api' | 'worker'; env?: Record<string, string>; port?: number; baseUrl?: string }): Promise<Kassa> {
  const port = options.port ?? (await freePort());
  const args = [CLI, 'start', ...(options.part ? [`--${options.part}`] : [])];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: options.databaseUrl,
      PORT: String(port),
      ...(options.baseUrl ? { BASE_URL: options.baseUrl } : {}),
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_STORE: '0',
      RATE_LIMIT_PER_CLIENT: '0',
      WEBHOOK_ALLOW_INSECURE: 'true',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kassa did not start in 60 s:\n${output.slice(-2000)}`)), 60_000);
    const check = () => {
      if (output.includes('"msg":"kassa started"')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`kassa exited before it started:\n${output.slice(-2000)}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => output,
    kill: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** A store (TON/TON, USDT/TON by default) and a token for it. */
export async function drillStore(databaseUrl: string, methods = 'TON/TON,USDT/TON'): Promise<{ storeId: string; token: string; pool: DatabasePool }> {
  const pool = await openPool(databaseUrl, { maxPoolSize: 5 });
  const store = await createStore(pool, `Drill ${Date.now()}`, parseMethodList(methods));
  const { token } = await issueToken(pool, store.id, null);
  return { storeId: store.id, token, pool };
}

export async function api(base: string, method: string, urlPath: string, options: { token?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<{ status: number; text: string; json: any; headers: Headers }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${base}${urlPath}`, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json, headers: response.headers };
}

export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 30_000, everyMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** The result table every drill prints. */
export class Report {
  private readonly rows: Array<{ check: string; ok: boolean; detail: string }> = [];
  private readonly figures: Array<[string, string]> = [];
  private readonly title: string;
  constructor(title: string) {
    this.title = title;
  }

  check(check: string, ok: boolean, detail = ''): boolean {
    this.rows.push({ check, ok, detail });
    return ok;
  }

  figure(name: string, value: string | number): void {
    this.figures.push([name, String(value)]);
  }

  /** Prints the table and the final line; sets the exit code. */
  print(): void {
    const width = Math.max(20, ...this.rows.map((row) => row.check.length));
    const lines = [`# ${this.title}${LONG ? ' (long tier)' : ' (short tier)'}`, ''];
    for (const row of this.rows) lines.push(`${row.ok ? 'PASS' : 'FAIL'}  ${row.check.padEnd(width)}  ${row.detail}`);
    if (this.figures.length > 0) {
      lines.push('');
      for (const [name, value] of this.figures) lines.push(`      ${name.padEnd(width)}  ${value}`);
    }
    const failed = this.rows.filter((row) => !row.ok).length;
    lines.push('', `${this.rows.length - failed} passed, ${failed} failed`);
    process.stdout.write(`${lines.join('\n')}\n`);
    process.exitCode = failed > 0 ? 1 : 0;
  }
}

/** Runs a drill body, printing the table even when it throws (the throw is a failed check). */
export async function drill(title: string, body: (report: Report) => Promise<void>): Promise<void> {
  const report = new Report(title);
  try {
    await body(report);
  } catch (error) {
    report.check('drill ran to the end', false, error instanceof Error ? error.message.split('\n')[0]! : String(error));
  }
  report.print();
}
