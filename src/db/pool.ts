// The project's one SQL access layer: a slonik pool with money-safe type parsing and the sql tag.
import {
  BackendTerminatedError,
  BackendTerminatedUnexpectedlyError,
  ConnectionError,
  createPool,
  createSqlTag,
  SchemaValidationError,
  type DatabasePool,
  type DatabaseTransactionConnection,
  type CommonQueryMethods,
  type Interceptor,
  type QueryResultRow,
} from 'slonik';
import { z } from 'zod';

export { z };
export type { DatabasePool, DatabaseTransactionConnection, CommonQueryMethods };
/** Anything that can run a query: the pool, a connection or a transaction. */
export type Db = CommonQueryMethods;

export const sql = createSqlTag({
  typeAliases: {
    void: z.object({}).strict(),
  },
});

/**
 * Validates rows against the schema given with sql.type(...). Without it, slonik would accept
 * any row shape silently.
 */
const resultParser: Interceptor = {
  name: 'kassa-result-parser',
  transformRowAsync: async (queryContext, query, row) => {
    const parser = queryContext.resultParser;
    if (!parser) return row;
    const result = await parser['~standard'].validate(row);
    if (result.issues) {
      throw new SchemaValidationError(query, row, result.issues as never);
    }
    return result.value as QueryResultRow;
  },
};

export interface PoolOptions {
  maxPoolSize?: number;
  statementTimeoutMs?: number;
}

/**
 * Type parsing: we pass no slonik parsers, so node-postgres defaults apply, which are the safe
 * ones for money: numeric and int8 come back as strings, timestamptz as Date, json(b) parsed.
 */
export async function openPool(connectionUri: string, options: PoolOptions = {}): Promise<DatabasePool> {
  return createPool(connectionUri, {
    typeParsers: [],
    interceptors: [resultParser],
    maxPoolSize: options.maxPoolSize ?? 10,
    statementTimeout: options.statementTimeoutMs ?? 30_000,
    connectionTimeout: 5_000,
    idleTimeout: 10_000,
    captureStackTrace: false,
    // Kassa keeps no session state on these connections (no SET, LISTEN, temporary tables or
    // session locks), so slonik's DISCARD ALL after every use is a wasted round trip that also
    // drops cached plans.
    resetConnection: async () => {},
  });
}

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '53300', '08000', '08001', '08003', '08004', '08006']);

/** True when the error means "the database cannot be reached right now" (answer 503, retry later). */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth += 1) {
    if (current instanceof ConnectionError || current instanceof BackendTerminatedError || current instanceof BackendTerminatedUnexpectedlyError) {
      return true;
    }
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
    const message = (current as { message?: unknown }).message;
    if (typeof message === 'string' && /Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(message)) {
      return true;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
