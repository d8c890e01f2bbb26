// The real app on a real port against a fresh real database, plus factories with overridable
// defaults (stores, tokens) and a small fetch wrapper.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type pg from 'pg';
import { pino } from 'pino';
import { loadConfig, type Config } from '../../src/config.ts';
import { createApp, type RouteInstaller } from '../../src/http/app.ts';
import type { Logger } from '../../src/log.ts';
import type { StoreRecord } from '../../src/stores/stores.ts';
import type { DatabasePool } from '../../src/db/pool.ts';
import type { Reporting } from '../../src/db/reporting.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';
import { createTestStore } from './factories.ts';
import { responseChecker, type ResponseChecker } from './openapi.ts';

export interface TestClock {
  now: () => Date;
  set(date: Date | string): void;
  advance(ms: number): void;
  /** Follows real time again. */
  real(): void;
  /** Follows `source` (e.g. the later of real time and a sandbox chain a test moves ahead) until set or real again. */
  follow(source: () => Date): void;
}

/** A clock that follows real time until set, then stays where it is put. */
export function testClock(): TestClock {
  let fixed: Date | null = null;
  let following: (() => Date) | null = null;
  return {
    now: () => (fixed ? new Date(fixed) : following ? following() : new Date()),
    set: (date) => {
      fixed = new Date(date);
    },
    follow: (source) => {
      fixed = null;
      following = source;
    },
    advance: (ms) => {
      fixed = new Date((fixed ?? new Date()).getTime() + ms);
    },
    real: () => {
      fixed = null;
      following = null;
    },
  };
}

export interface TestApp {
  url: string;
  db: TestDatabase;
  pool: DatabasePool;
  config: Config;
  clock: TestClock;
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  store(options?: { name?: string; methods?: string; refundWindowDays?: number }): Promise<StoreRecord & { token: string }>;
  /** Stops the server and drops the database: call it from after(). */
  close(): Promise<void>;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Sent as is (no JSON encoding). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  json: any;
  text: string;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  routes?: RouteInstaller[];
  /** Runs with the database ready, before the server listens. */
  beforeListen?: (pool: DatabasePool) => Promise<void>;
  /**
   * Opens the pool the app runs on (TestApp.pool), given the test database's URL (e.g. through a
   * TCP proxy that can be frozen). Default: the test database's own pool. Factories (`store`) and
   * `db.pool` always use the test database's own pool.
   */
  openPool?: (url: string) => Promise<DatabasePool>;
  /**
   * The rate limits' shared counters (as `kassa start` gives the app: src/http/rateLimit.ts), a pg
   * pool opened on the test database's URL (e.g. through that proxy). Default: none, each app
   * counts in its own memory. Ended by close().
   */
  rateLimitStore?: (url: string) => pg.Pool;
  /**
   * BASE_URL is http://<this host>:<the port the app listens on> (e.g. `localhost`: a browser takes
   * no IP address as a passkey's relying party). Default: the configuration's own BASE_URL.
   */
  baseUrlHost?: string;
  /** The database the app runs on (default: a copy of the template, createTestDatabase), e.g. a replicated primary's (test/helpers/replica.ts). Dropped by close(). */
  database?: () => Promise<TestDatabase>;
  /** The app's logger (e.g. one writing to an array, to read what a request logged). Default: pino at LOG_LEVEL, silent unless set. */
  log?: Logger;
  /** Where the app's reports read (AppDeps.reporting, src/db/reporting.ts), e.g. a replica. Default: the primary. */
  reporting?: (config: Config) => Reporting;
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const db = await (options.database ?? createTestDatabase)();
  await options.beforeListen?.(db.pool);
  // The server listens first (its port is BASE_URL's with baseUrlHost), then the app answers on it.
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  const baseUrl = options.baseUrlHost ? { BASE_URL: `http://${options.baseUrlHost}:${port}` } : {};
  const config = loadConfig({ DATABASE_URL: db.url, PORT: '0', RATE_LIMIT_PER_STORE: '0', RATE_LIMIT_PER_CLIENT: '0', ...baseUrl, ...options.env });
  const clock = testClock();
  const log = options.log ?? pino({ level: process.env.LOG_LEVEL ?? 'silent' });
  const pool = options.openPool ? await options.openPool(db.url) : db.pool;
  const rateLimitStore = options.rateLimitStore?.(db.url);
  const reporting = options.reporting?.(config);
  const app = createApp(
    { config, pool, log, now: clock.now, ...(rateLimitStore ? { rateLimitStore } : {}), ...(reporting ? { reporting } : {}) },
    options.routes,
  );
  server.on('request', app.callback());
  const close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    if (pool !== db.pool) await pool.end();
    await rateLimitStore?.end();
    await db.drop();
  };

  // Every response is checked against the served OpenAPI document (test/helpers/openapi.ts).
  let checker: Promise<ResponseChecker> | undefined;
  const request: TestApp['request'] = async (method, path, { token, body, rawBody, headers = {} } = {}) => {
    const sent: Record<string, string> = { ...headers };
    if (token) sent.authorization = `Bearer ${token}`;
    let payload: string | Buffer | undefined = rawBody;
    if (body !== undefined) {
      payload = JSON.stringify(body);
      sent['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${url}${path}`, { method, headers: sent, body: payload as BodyInit | undefined });
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    checker ??= fetch(`${url}/openapi.json`).then(async (served) => responseChecker(await served.json()));
    const problems = (await checker)(method, path, response.status, response.headers, text);
    if (problems.length > 0) throw new assert.AssertionError({ message: `the response differs from /openapi.json:\n${problems.join('\n')}` });
    return { status: response.status, headers: response.headers, json, text };
  };

  const store: TestApp['store'] = (spec = {}) => createTestStore(db.pool, spec);

  return { url, db, pool, config, clock, request, store, close };
}
