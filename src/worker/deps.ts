import type { ChainClient } from '../chain/client.ts';
import type { AccountHistory } from '../chain/history.ts';
import type { Config } from '../config.ts';
import type { DatabasePool } from '../db/pool.ts';
import type { Logger } from '../log.ts';

/** What every task receives: configuration, the slonik pool, the logger and the clock. */
export interface WorkerDeps {
  config: Config;
  pool: DatabasePool;
  log: Logger;
  now: () => Date;
  /** The chain API (toncenter v2 JSON-RPC): the signer's account reads and sendBoc, the reconciliation's balances. */
  chain?: ChainClient;
  /** Accounts' histories (toncenter v3 /api/v3/transactions): reconciliation re-reads a deposit that differs. */
  history?: AccountHistory;
}
