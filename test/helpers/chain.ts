// An app with the sandbox chain mounted and a chain watcher reading it over HTTP, as in production.
import { pino } from 'pino';
import { sql } from '../../src/db/pool.ts';
import { createChainClient } from '../../src/chain/client.ts';
import { SANDBOX_JSON_RPC_PATH } from '../../src/chain/sandbox/path.ts';
import { startSandbox, type Sandbox } from '../../src/chain/sandbox/routes.ts';
import { createChainWatcher, type ChainWatcher } from '../../src/chain/watcher.ts';
import type { TestApp } from './app.ts';
import { startPaymentsApp } from './payments.ts';

export interface ChainTestApp extends TestApp {
  sandbox: Sandbox;
  watcher: ChainWatcher;
  /** A fresh watcher (as after a restart), reading the same chain. */
  newWatcher(): ChainWatcher;
  /** POST /sandbox/v1/transfers. */
  pay(to: string, coin: string, amount: string, extra?: Record<string, unknown>): Promise<{ hash: string; lt: string }>;
  /** Runs watcher rounds until nothing new is recorded. */
  settle(): Promise<number>;
}

export async function startChainApp(env: Record<string, string> = {}): Promise<ChainTestApp> {
  const log = pino({ level: process.env.LOG_LEVEL ?? 'silent' });
  // The sandbox registers its masters in the app's database, so it needs the pool first.
  let watcher: ChainWatcher | null = null;
  let sandbox: Sandbox | null = null;
  const app = await startPaymentsApp({
    env,
    routes: [(router, deps, guards) => sandbox!.routes(router, deps, guards)],
    beforeListen: async (pool) => {
      sandbox = await startSandbox(pool, log, () => watcher);
    },
  });
  const makeWatcher = () =>
    createChainWatcher({ pool: app.pool, config: app.config, client: createChainClient({ endpoint: `${app.url}${SANDBOX_JSON_RPC_PATH}` }), log, now: app.clock.now });
  watcher = makeWatcher();
  const current = watcher;
  return {
    ...app,
    sandbox: sandbox!,
    watcher: current,
    newWatcher: makeWatcher,
    async pay(to, coin, amount, extra = {}) {
      const response = await app.request('POST', '/sandbox/v1/transfers', { body: { to, coin, amount, ...extra } });
      if (response.status !== 201) throw new Error(`sandbox transfer failed: ${response.status} ${response.text}`);
      return response.json;
    },
    async settle() {
      let total = 0;
      for (let round = 0; round < 20; round += 1) {
        await app.pool.query(sql.unsafe`update chain_watches set next_check_at = now() - interval '1 second'`);
        const result = await current.round(1000);
        total += result.recorded;
        if (result.recorded === 0) return total;
      }
      return total;
    },
  };
}
