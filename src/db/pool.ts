// The project's one SQL access layer: a slonik pool with money-safe type parsing and the sql tag.
//
// What this file adds to slonik and node-postgres, each for a reason, each pinned by a test in
// test/db/pool.test.ts that fails when an upgrade of either breaks it:
// - A bounded wait for a connection (`withBoundedWait`, a Proxy over slonik's pool): slonik queues
//   callers with no time limit and does not always release them when PostgreSQL goes away; a
//   request must get 503 within seconds, not hang for the outage.
// - A client-side bound on each statement (`boundedQueries`, wrapping the driver): statement_timeout
//   is the server's, and a server that does not answer at all (frozen process, hung disk, silent
//   partition) never sends it; node-postgres's own query_timeout leaves the statement running on a
//   connection that goes back to the pool.
// - Named prepared statements, renewed by generation (`prepared`, `preparedStatementRenewal`):
//   planning the payment view's joins costs several times executing them; after a migration
//   changes a result type, PostgreSQL refuses the old statement, and new names prepare afresh.
// - No `DISCARD ALL` between uses (`resetConnection`): it would cost a round trip per use and drop
//   the prepared statements above; Kassa keeps no other session state on a connection.
// - "Database unavailable" told apart from other errors (`isDatabaseUnavailable`), by class and
//   code and, where node-postgres gives neither, by message (a lost connection, a refused one):
//   those answer 503 with Retry-After instead of 500.
import { AsyncLocalStorage } from 'node:async_hooks';
import crypto from 'node:crypto';
import { createPgDriverFactory } from '@slonik/pg-driver';
import {
  BackendTerminatedError,
  BackendTerminatedUnexpectedlyError,
  ConnectionError,
  createPool,
  createSqlTag,
  SchemaValidationError,
  StatementTimeoutError,
  type DatabasePool,
  type DriverFactory,
  type DatabaseTransactionConnection,
  type CommonQueryMethods,
  type Interceptor,
  type QueryResultRow,
  type QuerySqlToken,
  type FragmentSqlToken,
  type ValueExpression,
  isSqlToken,
} from 'slonik';
import { z } from 'zod';

export { isSqlToken, z };
export type { DatabasePool, DatabaseTransactionConnection, CommonQueryMethods, FragmentSqlToken, ValueExpression };
/** Anything that can run a query: the pool, a connection or a transaction. */
export type Db = CommonQueryMethods;

export const sql = createSqlTag({
  typeAliases: {
    void: z.object({}).strict(),
  },
});

const MAX_PREPARED_TEXTS = 200;
const statementNames = new Map<string, string>();
/** Part of every name; a new generation makes every statement be prepared afresh. */
let statementGeneration = 0;

/**
 * Runs `query` as a named prepared statement, so PostgreSQL parses and plans it once per
 * connection instead of on every execution (for the payment view's joins, planning costs several
 * times the execution). For the hot statements of create and retrieve only, and only for a query
 * whose text is fixed (no lists of varying length): the name is derived from the text, so another
 * text never reuses a name, and each distinct text stays prepared on every connection for that
 * connection's life. Past MAX_PREPARED_TEXTS distinct texts a query simply runs unnamed.
 *
 * Requires what `openPool` guarantees: connections are not reset (no DISCARD ALL) between uses.
 * A migration that changes the type of a column such a statement returns makes PostgreSQL refuse
 * the statement where it was prepared before ("cached plan must not change result type", in a
 * process started before the migration): that query fails once, and `preparedStatementRenewal`
 * then moves every name to a new generation, so the next executions prepare afresh.
 */
export function prepared<T extends QuerySqlToken>(query: T): T {
  let name = statementNames.get(query.sql);
  if (name === undefined) {
    if (statementNames.size >= MAX_PREPARED_TEXTS) return query;
    const digest = crypto.createHash('sha256').update(`${statementGeneration}\0${query.sql}`).digest('hex');
    name = `kassa_${digest.slice(0, 24)}`;
    statementNames.set(query.sql, name);
  }
  return Object.freeze({ ...query, name });
}

/**
 * Several writes sent as one statement, so they cost one round trip instead of one each: every
 * write becomes a data-modifying WITH item and `final` is the statement's main part. PostgreSQL
 * runs them all on one snapshot, so no write may need to see another's rows — except through
 * foreign keys, which are checked at the end of the statement (a child may reference a parent
 * inserted beside it) — and no two may write the same table.
 */
export function inOneStatement(writes: readonly FragmentSqlToken[], final: FragmentSqlToken): FragmentSqlToken {
  if (writes.length === 0) return final;
  const items = writes.map((write, index) => sql.fragment`${sql.identifier([`write_${index + 1}`])} as (${write})`);
  return sql.fragment`with ${sql.join(items, sql.fragment`, `)} ${final}`;
}

/**
 * The row of an insert: `values (…)` — or, behind `gate` (the name of a WITH item of the same
 * statement), `select … from gate`: the row is inserted only when the gate has a row (it must have
 * one at most). PostgreSQL types the parameters of either form by the insert's columns; a gated
 * insert takes one row (a union of such selects would type them as text).
 */
export function insertRow(values: readonly ValueExpression[], gate?: string): FragmentSqlToken {
  const list = sql.join(values, sql.fragment`, `);
  return gate === undefined ? sql.fragment`values (${list})` : sql.fragment`select ${list} from ${sql.identifier([gate])}`;
}

/**
 * Runs `effect` once the transaction `db` belongs to has committed — never when it rolls back, nor
 * for an attempt slonik rolled back to retry the callback — or at once when `db` is not a
 * transaction (the pool or a connection, whose statements have committed when they return). For
 * what the process itself does about a change (the payment commands count transitions with it);
 * work that must survive a crash is enqueued in the transaction (worker/enqueue.ts). Sends no
 * statement: it listens to slonik's commit and rollback events.
 */
export function afterCommit(db: Db, effect: () => void): void {
  if (!isTransaction(db)) {
    effect();
    return;
  }
  const depth = db.transactionDepth;
  const forget = () => {
    db.off('commit', onCommit);
    db.off('rollback', onRollback);
    db.off('rollbackToSavepoint', onRollback);
  };
  // slonik emits commit for the outermost transaction only; a rollback at this depth or above it
  // (a savepoint's own, or the whole transaction's) takes the change with it.
  const onCommit = () => {
    forget();
    try {
      effect();
    } catch (error) {
      // The transaction has committed: a failing effect must not make its caller believe otherwise.
      process.emitWarning(error instanceof Error ? error : new Error(String(error)), 'AfterCommitWarning');
    }
  };
  const onRollback = (event: { transactionDepth: number }) => {
    if (event.transactionDepth <= depth) forget();
  };
  db.on('commit', onCommit);
  db.on('rollback', onRollback);
  db.on('rollbackToSavepoint', onRollback);
}

const isTransaction = (db: Db): db is DatabaseTransactionConnection =>
  typeof (db as Partial<DatabaseTransactionConnection>).transactionDepth === 'number' &&
  typeof (db as Partial<DatabaseTransactionConnection>).on === 'function';

/** The error and the errors it wraps (slonik wraps node-postgres's in `cause`), at most five deep. */
function* errorChain(error: unknown): Generator<{ code?: unknown; message?: unknown }> {
  for (let current = error, depth = 0; current && depth < 5; depth += 1) {
    yield current as { code?: unknown; message?: unknown };
    current = (current as { cause?: unknown }).cause;
  }
}

const isStalePreparedStatement = (error: unknown): boolean =>
  [...errorChain(error)].some(
    ({ code, message }) => code === '0A000' && typeof message === 'string' && message.includes('cached plan must not change result type'),
  );

/** See `prepared`: after a schema change under a prepared statement, prepare everything anew. */
const preparedStatementRenewal: Interceptor = {
  name: 'kassa-prepared-statement-renewal',
  queryExecutionError: (_context, query, error) => {
    if (query.name !== undefined && isStalePreparedStatement(error)) {
      statementGeneration += 1;
      statementNames.clear();
    }
    return null;
  },
};

/**
 * Validates rows against the schema given with sql.type(...). Without it, slonik would accept
 * any row shape silently. Synchronous (`transformRow`): slonik runs an asynchronous row hook
 * through a task queue made for every query, parser or not — a visible share of a request's CPU —
 * and every schema here validates synchronously (zod checks only; an asynchronous refinement
 * would be refused here, loudly, rather than skipped).
 */
const resultParser: Interceptor = {
  name: 'kassa-result-parser',
  transformRow: (queryContext, query, row) => {
    const parser = queryContext.resultParser;
    if (!parser) return row;
    const result = parser['~standard'].validate(row);
    if (result instanceof Promise) throw new Error('result schemas must validate synchronously (sql.type with an asynchronous refinement)');
    if (result.issues) {
      throw new SchemaValidationError(query, row, result.issues as never);
    }
    return result.value as QueryResultRow;
  },
};

interface PoolOptions {
  maxPoolSize?: number;
  /** The server's bound on each statement (PostgreSQL's statement_timeout); 30 s unless given. */
  statementTimeoutMs?: number;
  /**
   * The client's own bound on each statement, for when the server does not answer at all (a frozen
   * process, a hung disk, a silent network partition), where statement_timeout never fires:
   * `statementTimeoutMs` plus QUERY_TIMEOUT_MARGIN_MS unless given.
   */
  queryTimeoutMs?: number;
  /** How long a call waits for a connection (`withBoundedWait`); CONNECTION_TIMEOUT_MS unless given (tests shorten it). */
  connectionWaitMs?: number;
  /** Run after Kassa's own (the benchmark records statements with one). */
  interceptors?: Interceptor[];
  /**
   * The URL may be a transaction pooler (DATABASE_URL apart from DATABASE_SESSION_URL: config.ts
   * `databasePooled`): nothing is sent at connect that PgBouncer refuses or that would stay on a
   * server connection shared with others — no statement_timeout nor
   * idle_in_transaction_session_timeout in the startup packet (PgBouncer 1.18 refuses both). The
   * statement timeout in force is then the role's (or database's) default, which `kassa doctor`
   * compares with `statementTimeoutMs`; the client's own bound (`queryTimeoutMs`) applies either way.
   */
  pooled?: boolean;
  /**
   * Whether `prepared` statements keep their names (true unless given): false sends them unnamed,
   * for a pooler that does not track named prepared statements (PgBouncer before 1.21, or without
   * max_prepared_statements): config.ts `databasePreparedStatements`.
   */
  preparedStatements?: boolean;
}

/** See PoolOptions.preparedStatements: the names of `prepared` dropped, every statement unnamed. */
const unnamedStatements: Interceptor = {
  name: 'kassa-unnamed-statements',
  transformQuery: (_context, query) => (query.name === undefined ? query : { ...query, name: undefined }),
};

/** How much longer than statement_timeout the client waits, so that the server's own refusal normally comes first. */
const QUERY_TIMEOUT_MARGIN_MS = 2_000;

/**
 * Type parsing: we pass no slonik parsers, so node-postgres defaults apply, which are the safe
 * ones for money: numeric and int8 come back as strings, timestamptz as Date, json(b) parsed.
 *
 * Every call waits at most CONNECTION_TIMEOUT_MS for a connection (`withBoundedWait`) and every
 * statement at most `queryTimeoutMs` for its answer (`boundedQueries`); either failure is
 * "database unavailable" (`isDatabaseUnavailable`: the API answers 503 with Retry-After).
 */
export async function openPool(connectionUri: string, options: PoolOptions = {}): Promise<DatabasePool> {
  const statementTimeoutMs = options.statementTimeoutMs ?? 30_000;
  const connectionWaitMs = options.connectionWaitMs ?? CONNECTION_TIMEOUT_MS;
  const pool = await createPool(connectionUri, {
    driverFactory: boundedQueries(createPgDriverFactory(), options.queryTimeoutMs ?? statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS),
    typeParsers: [],
    interceptors: [
      ...(options.preparedStatements === false ? [unnamedStatements] : []),
      resultParser,
      preparedStatementRenewal,
      ...(options.interceptors ?? []),
    ],
    maxPoolSize: options.maxPoolSize ?? 10,
    statementTimeout: options.pooled ? 'DISABLE_TIMEOUT' : statementTimeoutMs,
    ...(options.pooled ? { idleInTransactionSessionTimeout: 'DISABLE_TIMEOUT' as const } : {}),
    connectionTimeout: connectionWaitMs,
    idleTimeout: 10_000,
    // How long closing a connection waits for its running statement, then for the server to
    // acknowledge: a connection given up on (see boundedQueries) is gone within twice this.
    gracefulTerminationTimeout: 1_000,
    captureStackTrace: false,
    // Kassa keeps no session state on these connections (no SET, LISTEN, temporary tables or
    // session locks) beyond the named statements of `prepared`, which are meant to last, so
    // slonik's DISCARD ALL after every use would be a wasted round trip that also drops them and
    // every cached plan.
    resetConnection: async () => {},
  });
  return withBoundedWait(pool, connectionWaitMs);
}

/** A statement the server did not answer within the client's bound (see `boundedQueries`). */
export class QueryTimeoutError extends ConnectionError {
  constructor(timeoutMs: number) {
    super(`the database did not answer a statement within ${timeoutMs} ms`);
  }
}

/** The pool call (`withBoundedWait`) a statement runs for: told at once when one of its statements times out. */
const currentCall = new AsyncLocalStorage<{ giveUp(error: Error): void }>();

/**
 * node-postgres has no usable bound of its own here (its query_timeout leaves the statement
 * running on a connection that goes back to the pool). This wraps slonik's driver: a statement
 * unanswered after `timeoutMs` fails with QueryTimeoutError, its connection is destroyed (never
 * reused: what it was doing is unknown; a transaction on it is rolled back by the server once it
 * reads again), and the pool call it belongs to gives up at once rather than wait out slonik's
 * rollback and destroy on a server that does not answer.
 */
function boundedQueries(factory: DriverFactory, timeoutMs: number): DriverFactory {
  return async (setup) => {
    const driver = await factory(setup);
    return {
      ...driver,
      createClient: async () => {
        const client = await driver.createClient();
        const query = client.query;
        client.query = (...args) => {
          const running = query(...args);
          const call = currentCall.getStore();
          let timer: NodeJS.Timeout | undefined;
          const expired = new Promise<never>((_, reject) => {
            timer = setTimeout(() => {
              const error = new QueryTimeoutError(timeoutMs);
              client.destroy().catch(() => {});
              call?.giveUp(error);
              reject(error);
            }, timeoutMs);
          });
          running.catch(() => {});
          return Promise.race([running, expired]).finally(() => clearTimeout(timer));
        };
        return client;
      },
    };
  };
}

const CONNECTION_TIMEOUT_MS = 5_000;
const POOL_METHODS = new Set([
  'any',
  'anyFirst',
  'exists',
  'many',
  'manyFirst',
  'maybeOne',
  'maybeOneFirst',
  'one',
  'oneFirst',
  'query',
  'record',
  'stream',
  'transaction',
  'connect',
]);

/**
 * slonik's pool queues callers while all its connections are busy, with no time limit, and when
 * PostgreSQL goes away it does not always release the queued ones: they wait out the whole outage
 * (the database-restart drill saw requests hang for its 15 s). Here every call gives up after
 * `timeoutMs` without a connection and fails as "database unavailable" (so the API answers 503);
 * a connection that still arrives for a caller that gave up is handed back unused.
 */
function withBoundedWait(pool: DatabasePool, timeoutMs: number): DatabasePool {
  const call = (method: string, args: unknown[]): Promise<unknown> =>
    new Promise((resolve, reject) => {
      let gaveUp = false;
      const timer = setTimeout(() => {
        gaveUp = true;
        reject(new ConnectionError(`no database connection within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      // A statement of this call that times out fails the call at once (boundedQueries).
      const giveUp = (error: Error) => {
        gaveUp = true;
        clearTimeout(timer);
        reject(error);
      };
      currentCall
        .run({ giveUp }, () =>
          pool.connect(async (connection) => {
            clearTimeout(timer);
            if (gaveUp) return undefined;
            if (method === 'connect') return (args[0] as (connection: unknown) => Promise<unknown>)(connection);
            return (connection as unknown as Record<string, (...rest: unknown[]) => Promise<unknown>>)[method]!(...args);
          }),
        )
        .then(resolve, (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        });
    });
  return new Proxy(pool, {
    get(target, property, receiver) {
      if (typeof property === 'string' && POOL_METHODS.has(property)) return (...args: unknown[]) => call(property, args);
      return Reflect.get(target, property, receiver);
    },
  });
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);

/**
 * True when the error means "the database cannot be reached right now, or did not answer in time"
 * (answer 503, retry later): no connection, a lost one, a statement the client gave up on
 * (QueryTimeoutError is a ConnectionError) or one the server cancelled at statement_timeout.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (const current of errorChain(error)) {
    if (
      current instanceof ConnectionError ||
      current instanceof BackendTerminatedError ||
      current instanceof BackendTerminatedUnexpectedlyError ||
      current instanceof StatementTimeoutError
    ) {
      return true;
    }
    const { code, message } = current;
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
    if (
      typeof message === 'string' &&
      /Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(message)
    ) {
      return true;
    }
  }
  return false;
}
