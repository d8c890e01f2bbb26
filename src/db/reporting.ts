// Reads for reports (issue 46 item 4): the dashboard's home figures, its CSV export and the Money
// page's `reporting.*` views may read a streaming replica (DATABASE_REPORTING_URL); nothing that
// moves money, previews a refund or writes does. Without a replica they read the primary, the same way.
//
// Structural, not a convention: a report reads through a `ReportingDb`, which has the query methods
// but no `transaction`, `query` or `stream`, so it is not a `Db` (nor a DatabasePool): a money path
// (every one takes a `Db`) cannot be handed it, the type check refuses (test/db/reporting-replica.test.ts
// pins it). And every read runs in a READ ONLY transaction, so a write that slipped into a report
// fails on the primary as it would on a replica.
//
// Pooler-safe: nothing is sent at connect and nothing stays on the session: the read-only mode, the
// statement timeout and `jit = off` are set for the transaction only (set_config(…, true)), in the
// same statement that reads the replica's replay lag (the "as of" the pages show).
import type { CommonQueryMethods, DatabasePool } from './pool.ts';
import { sql, z } from './pool.ts';

const READ_ONLY: unique symbol = Symbol('reporting');

/** What a report may run: the query methods of a read-only transaction, and nothing that is a `Db`. */
export type ReportingDb = Pick<CommonQueryMethods, 'any' | 'anyFirst' | 'exists' | 'many' | 'manyFirst' | 'maybeOne' | 'maybeOneFirst' | 'one' | 'oneFirst'> & {
  readonly [READ_ONLY]: true;
};

/** How current a report's rows are. */
export interface AsOf {
  /** Read on the replica (DATABASE_REPORTING_URL), not the primary. */
  replica: boolean;
  /**
   * The replica's replay lag in seconds when it has WAL not yet applied (now() − the last replayed
   * transaction's commit time); 0 when it has applied all it received; null on the primary.
   */
  lagSeconds: number | null;
}

export interface Reporting {
  /** Whether reports read a replica (DATABASE_REPORTING_URL is set). */
  readonly replica: boolean;
  /** Runs `read` in one read-only transaction (one snapshot for all its queries), with how current it is. */
  read<T>(read: (db: ReportingDb) => Promise<T>): Promise<{ value: T; asOf: AsOf }>;
}

/**
 * The server's replay lag in seconds (float8): null on a primary (not in recovery); 0 when it has
 * applied all the WAL it received; else now() − the commit time of the last transaction it applied.
 * (An idle primary sends no new WAL, so a replica that applied everything is current, however old
 * its last transaction.)
 */
export const REPLAY_LAG_SECONDS = sql.fragment`(case when not pg_is_in_recovery() then null
  when pg_last_wal_receive_lsn() is not distinct from pg_last_wal_replay_lsn() then 0
  else greatest(extract(epoch from now() - pg_last_xact_replay_timestamp()), 0) end)::float8`;

/**
 * How many times a report is run again when its transaction fails with a class-40 error (slonik's
 * transaction retry): on a replica, a query cancelled "due to conflict with recovery" (40001: the
 * primary's VACUUM removed rows it still saw, past max_standby_streaming_delay) nearly always
 * succeeds on its next snapshot. A report cancelled every time fails (the page's error).
 */
const REPORT_RETRIES = 5;

const METHODS = ['any', 'anyFirst', 'exists', 'many', 'manyFirst', 'maybeOne', 'maybeOneFirst', 'one', 'oneFirst'] as const;

/**
 * Reports read `pool`: the replica's pool (server.ts opens it from DATABASE_REPORTING_URL) with
 * `replica: true`, or the primary's. `statementTimeoutMs`: each statement's bound, set for the
 * transaction (the pool sends none at connect: the URL may be a pooler).
 */
export function reportingReader(pool: DatabasePool, options: { replica: boolean; statementTimeoutMs: number }): Reporting {
  return {
    replica: options.replica,
    read: (read) =>
      pool.transaction(async (tx) => {
        const lag = await tx.oneFirst(sql.type(z.object({ lag: z.number().nullable() }))`
          select set_config('transaction_read_only', 'on', true), set_config('statement_timeout', ${String(options.statementTimeoutMs)}, true),
                 set_config('jit', 'off', true),
                 ${REPLAY_LAG_SECONDS} as lag
        `);
        const db = Object.fromEntries(METHODS.map((method) => [method, tx[method].bind(tx)])) as unknown as ReportingDb;
        Object.defineProperty(db, READ_ONLY, { value: true });
        const value = await read(db);
        return { value, asOf: { replica: options.replica, lagSeconds: lag } };
      }, REPORT_RETRIES),
  };
}
