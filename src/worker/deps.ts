import type { Config } from '../config.ts';
import type { DatabasePool } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import type { ExpireHooks } from '../payments/commands.ts';
import type { ChainWatcher } from '../chain/watcher.ts';

/** What every task receives: configuration, the slonik pool, the logger and the clock. */
export interface WorkerDeps {
  config: Config;
  pool: DatabasePool;
  log: Logger;
  now: () => Date;
  /** The chain watcher's seam into expiry (see expirePayment). */
  expireHooks?: ExpireHooks;
  /** Present in workers that watch the chain. */
  watcher?: ChainWatcher;
}
