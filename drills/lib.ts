// Shared pieces of the drills: a database (a private PostgreSQL a drill may restart, or under the
// test command a copy of its template), the real service as child processes (API and worker apart
// where it matters), a store with a token, and the result table.
// Every drill prints its table and ends with a line "N passed, M failed" (exit 1 when M > 0).
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { startEmbeddedPostgres, type DatabaseServer } from '../src/db/embedded.ts';
import { migrate } from '../src/db/migrate.ts';
import { openPool, sql, type DatabasePool } from '../src/db/pool.ts';
import { cloneTemplate, hasTestTemplate } from '../test/helpers/db.ts';
import { createTestStore } from '../test/helpers/factories.ts';
import { startKassaProcess, type KassaProcess } from '../test/helpers/kassaProcess.ts';
import { freePort } from '../test/helpers/servers.ts';

export { freePort };

export const ROOT = path.resolve(import.meta.dirname, '..');
export const quiet = pino({ level: process.env.DRILL_LOG_LEVEL ?? 'silent' });

/** `--long` runs the long tier (documented in docs/OPERATIONS.md); the default is the short one. */
export const LONG = process.argv.includes('--long');

export interface DrillDatabase {
  url: string;
  /** Drops the database (a private server: stops it for good and deletes its data). */
  destroy(): Promise<void>;
}

export interface PrivateDrillDatabase extends DrillDatabase {
  /** Stops PostgreSQL (fast shutdown); `start()` brings it back on the same port and data. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

/**
 * The drill's own migrated database. Under the test command (test/run.ts names its server and
 * migrated template in the environment): a copy of the template on that server, dropped at
 * destroy() — initdb, a server's start and stop and the migrations cost several seconds of CPU per
 * drill, which the suite's two cores are short of. With `private: true` (a drill that stops
 * PostgreSQL), and for a drill run by hand: a private embedded PostgreSQL in a temporary folder on
 * a free port (never the dev database).
 */
export async function drillDatabase(options: { private: true }): Promise<PrivateDrillDatabase>;
export async function drillDatabase(options?: { private?: false }): Promise<DrillDatabase>;
export async function drillDatabase(options: { private?: boolean } = {}): Promise<DrillDatabase> {
  if (!options.private && hasTestTemplate()) {
    const database = await cloneTemplate();
    return { url: database.url, destroy: () => database.drop() };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kassa-drill-'));
  fs.chmodSync(dir, 0o755);
  const dataDir = path.join(dir, 'pg');
  const port = await freePort();
  let server: DatabaseServer = await startEmbeddedPostgres(dataDir, port, quiet);
  await migrate(server.url, quiet);
  const database: PrivateDrillDatabase = {
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
  return database;
}

/** A `kassa start` child process (test/helpers/kassaProcess.ts); stop() sends a signal and waits for the exit. */
export type Kassa = KassaProcess;

/** Every Kassa process a drill started and that has not exited: drill() stops them when its body ends. */
const started = new Set<Kassa>();

/** `kassa start [--api|--worker]` as a child process, rate limits off and plain-HTTP receivers allowed; resolves once it logged "kassa started". */
export async function startKassa(options: {
  databaseUrl: string;
  part?: 'api' | 'worker';
  env?: Record<string, string>;
  port?: number;
  baseUrl?: string;
  /** `kassa start --skip-migrate` (containers started after the release step, `kassa migrate`). */
  skipMigrate?: boolean;
}): Promise<Kassa> {
  const kassa = await startKassaProcess({
    args: ['start', ...(options.part ? [`--${options.part}`] : []), ...(options.skipMigrate ? ['--skip-migrate'] : [])],
    cwd: ROOT,
    env: {
      DATABASE_URL: options.databaseUrl,
      PORT: String(options.port ?? (await freePort())),
      ...(options.baseUrl ? { BASE_URL: options.baseUrl } : {}),
      RATE_LIMIT_PER_STORE: '0',
      RATE_LIMIT_PER_CLIENT: '0',
      WEBHOOK_ALLOW_INSECURE: 'true',
      ...options.env,
    },
  });
  started.add(kassa);
  void kassa.exited.then(() => started.delete(kassa));
  return kassa;
}

/** A store (TON/TON, USDT/TON by default) and a token for it. */
export async function drillStore(databaseUrl: string, methods = 'TON/TON,USDT/TON'): Promise<{ storeId: string; token: string; pool: DatabasePool }> {
  const pool = await openPool(databaseUrl, { maxPoolSize: 5 });
  const store = await createTestStore(pool, { name: `Drill ${Date.now()}`, methods });
  return { storeId: store.id, token: store.token, pool };
}

export async function api(
  base: string,
  method: string,
  urlPath: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<{ status: number; text: string; json: any; headers: Headers }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${base}${urlPath}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    ...(options.timeoutMs !== undefined ? { signal: AbortSignal.timeout(options.timeoutMs) } : {}),
  });
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
  // A body that threw before its own clean-up (a store not made — "sorry, too many clients already"
  // when four drills shared PostgreSQL's 100 connections —, a process that did not start) left its
  // services running and its servers listening, which kept this process alive until the test
  // command's 240 s timeout, with nothing printed: its Kassa processes are stopped here and the
  // drill exits once its table is printed (stdout to a pipe or a file is written synchronously).
  await Promise.all([...started].map((kassa) => kassa.stop('SIGKILL')));
  report.print();
  process.exit();
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
}

export interface RawRequest {
  method: string;
  /** Sent exactly as given (no URL normalisation: `..`, `%2F` and long ids reach the server). */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Streams the body in chunks (Transfer-Encoding: chunked, no Content-Length). */
  chunked?: boolean;
}

/**
 * One HTTP request over node:http, without the URL handling of fetch, so odd paths, methods and
 * headers reach the server as written. An event stream is read until its first chunk and closed.
 */
export function rawRequest(base: string, request: RawRequest, options: { agent?: http.Agent; timeoutMs?: number } = {}): Promise<RawResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    let settled = false;
    const done = (error: Error | null, response?: RawResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(response!);
    };
    const body = request.body === undefined ? undefined : Buffer.from(request.body);
    // Framing is explicit: node:http would send a GET's body without Content-Length.
    const framing = body === undefined ? {} : request.chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(body.length) };
    const req = http.request({
      host: url.hostname,
      port: url.port,
      method: request.method,
      path: request.path,
      headers: { ...request.headers, ...framing },
      agent: options.agent ?? false,
    });
    const timer = setTimeout(() => {
      req.destroy();
      done(new Error(`no answer in ${options.timeoutMs ?? 20_000} ms`));
    }, options.timeoutMs ?? 20_000);
    req.on('error', (error) => done(error));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      const finish = () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        done(null, { status: res.statusCode ?? 0, headers: res.headers, text, json });
      };
      const stream = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        if (stream) {
          finish();
          res.destroy();
        }
      });
      res.on('end', finish);
      res.on('error', finish);
      res.on('close', finish);
    });
    if (body === undefined) {
      req.end();
    } else if (request.chunked) {
      for (let at = 0; at < body.length; at += 16 * 1024) req.write(body.subarray(at, at + 16 * 1024));
      req.end();
    } else {
      req.end(body);
    }
  });
}

/** The error codes of the table in docs/API.md, each with its type and status. */
export function documentedErrors(): Map<string, { type: string; status: number }> {
  const codes = new Map<string, { type: string; status: number }>();
  const text = fs.readFileSync(path.join(ROOT, 'docs/API.md'), 'utf8');
  for (const line of text.split('\n')) {
    const row = /^\|\s*((?:`[a-z0-9_]+`(?:,\s*)?)+)\s*\|\s*([a-z_]+)\s*\|\s*(\d{3})\s*\|/.exec(line);
    if (!row) continue;
    for (const [, code] of row[1]!.matchAll(/`([a-z0-9_]+)`/g)) codes.set(code!, { type: row[2]!, status: Number(row[3]) });
  }
  return codes;
}

/**
 * An API process (which hosts the sandbox chain) and a worker process that reads it at BASE_URL,
 * started at the same time, as a deployment would. When one fails to start the other is stopped.
 */
export async function startApart(
  databaseUrl: string,
  options: { env?: Record<string, string>; workerEnv?: Record<string, string> } = {},
): Promise<{ api: Kassa; worker: Kassa }> {
  const port = await freePort();
  const started = await Promise.allSettled([
    startKassa({ databaseUrl, part: 'api', port, env: options.env }),
    startKassa({ databaseUrl, part: 'worker', baseUrl: `http://127.0.0.1:${port}`, env: { ...options.env, ...options.workerEnv } }),
  ]);
  const [api, worker] = started;
  if (api.status === 'fulfilled' && worker.status === 'fulfilled') return { api: api.value, worker: worker.value };
  for (const result of started) if (result.status === 'fulfilled') await result.value.stop();
  throw (started.find((result) => result.status === 'rejected') as PromiseRejectedResult).reason;
}

/**
 * Waits until a worker's chain reader holds the cursor (chain_reader). A reader that has never run
 * starts at the chain's newest block, so a drill whose point is not the first start waits for it
 * before any money is sent.
 */
export async function readerRunning(pool: DatabasePool, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    "the worker's chain reader to hold the cursor",
    () => pool.exists(sql.unsafe`select 1 from chain_reader where reader is not null and lease_expires_at > now()`),
    timeoutMs,
    100,
  );
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** With DRILL_LOGS=<folder>, writes each process's output there (<drill>-<name>.log) for a look afterwards. */
export function keepLogs(processes: Record<string, Kassa | undefined>): void {
  const folder = process.env.DRILL_LOGS;
  if (!folder) return;
  fs.mkdirSync(folder, { recursive: true });
  const drillName = path.basename(process.argv[1] ?? 'drill', '.ts');
  for (const [name, kassa] of Object.entries(processes)) {
    if (kassa) fs.writeFileSync(path.join(folder, `${drillName}-${name}.log`), kassa.output());
  }
}

/** Sends bytes over a bare TCP connection and reads what comes back until the server closes it. */
export function rawSocket(base: string, bytes: string): Promise<{ status: number; headers: Record<string, string>; text: string; raw: string }> {
  const url = new URL(base);
  return new Promise((resolve) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const raw = Buffer.concat(chunks).toString('latin1');
      const [head = '', ...rest] = raw.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, text: rest.join('\r\n\r\n'), raw });
    };
    const timer = setTimeout(finish, 6000);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', finish);
    socket.on('close', finish);
    socket.write(Buffer.from(bytes, 'latin1'));
  });
}
