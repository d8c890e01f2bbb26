// The whole service as `kassa start` puts it together (src/server.ts startService), run inside the
// test's process on port 0 against a test database: the API, the worker, or both, with the test
// defaults (rate limits off). For `kassa start` as a child process, see kassaProcess.ts.
import { pino } from 'pino';
import { loadConfig } from '../../src/config.ts';
import { startService, type RunningService } from '../../src/server.ts';

export type { RunningService };

/** Starts the service with `env` over the defaults (PORT=0, no rate limits); `parts` as `kassa start [--api|--worker]`. */
export function startTestService(env: Record<string, string>, parts: { api: boolean; worker: boolean } = { api: true, worker: true }): Promise<RunningService> {
  const config = loadConfig({ PORT: '0', RATE_LIMIT_PER_STORE: '0', RATE_LIMIT_PER_CLIENT: '0', ...env });
  return startService(config, parts, pino({ level: process.env.LOG_LEVEL ?? 'silent' }), () => new Date());
}

/** One JSON request to a running service; `token` is the store's bearer token. */
export async function call(base: string, method: string, path: string, token: string | null, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, json: (await response.json()) as any };
}

/** Reads until `done` holds (every 200 ms, for `ms`); fails naming `what` and the last value read. */
export async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
