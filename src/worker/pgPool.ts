// Graphile Worker's connection pool, patient with the database. Graphile Worker records a job's
// completion or failure without awaiting it and retries only a few error codes, not a refused
// connection: when PostgreSQL restarted while a job finished, the rejection went unhandled and
// took the worker process down. With this pool, taking a connection waits for the database to
// come back (backing off up to 5 s) instead of failing, so job bookkeeping, polling, cron and
// LISTEN resume by themselves once it is back.
import pg from 'pg';
import { isDatabaseUnavailable } from '../db/pool.ts';
import type { Logger } from '../log.ts';

const FIRST_DELAY_MS = 100;
const MAX_DELAY_MS = 5_000;

type ConnectCallback = (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: Error | boolean) => void) => void;

export class PatientPool extends pg.Pool {
  // Not `log`: pg-pool uses `this.log` for its own debug output.
  private readonly logger: Logger;
  private waiting = false;

  constructor(config: pg.PoolConfig, log: Logger) {
    super(config);
    this.logger = log;
    // Idle clients killed by the server are dropped by pg; without a listener the event would crash.
    this.on('error', (error) => log.warn({ err: error }, 'worker pool: an idle database connection failed'));
    this.on('connect', (client) => client.on('error', (error) => log.warn({ err: error }, 'worker pool: a database connection failed')));
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | undefined {
    const connected = this.connectPatiently();
    if (!callback) return connected;
    connected.then(
      (client) => callback(undefined, client, (release?: Error | boolean) => client.release(release)),
      (error: Error) => callback(error, undefined, () => {}),
    );
    return undefined;
  }

  private async connectPatiently(): Promise<pg.PoolClient> {
    for (let delay = FIRST_DELAY_MS; ; delay = Math.min(MAX_DELAY_MS, delay * 2)) {
      try {
        const client = await super.connect();
        if (this.waiting) {
          this.waiting = false;
          this.logger.info('worker pool: the database answers again');
        }
        return client;
      } catch (error) {
        if (this.ending || !isDatabaseUnavailable(error)) throw error;
        if (!this.waiting) {
          this.waiting = true;
          this.logger.warn({ err: error }, 'worker pool: database unreachable; waiting for it');
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }
}
