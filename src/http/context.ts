// What every route and middleware receives: configuration, the pool, the logger and the clock.
import type { ParameterizedContext } from 'koa';
import type { TokenCheck, VerifiedToken } from '../auth/tokens.ts';
import type { Config } from '../config.ts';
import type { DatabasePool } from '../db/pool.ts';
import { reportingReader, type Reporting } from '../db/reporting.ts';
import type { Logger } from '../log.ts';
import type { StorePayment } from '../payments/view.ts';

export interface AppDeps {
  config: Config;
  pool: DatabasePool;
  log: Logger;
  /** The clock. Tests inject their own; nothing in the app reads Date.now() directly. */
  now: () => Date;
  /**
   * The rate limits' shared counters (a small pg pool on the same database, src/http/rateLimit.ts):
   * every API process of the deployment counts in them. Absent: this process's own buckets.
   */
  rateLimitStore?: import('pg').Pool;
  /**
   * Where reports read (src/db/reporting.ts): the replica of DATABASE_REPORTING_URL. Absent: the
   * primary, through `pool` (`reportingOf`).
   */
  reporting?: Reporting;
}

/** The deps' reporting reader: theirs, or the primary's (read-only transactions on `pool`). */
export const reportingOf = (deps: Pick<AppDeps, 'pool' | 'reporting' | 'config'>): Reporting =>
  deps.reporting ?? reportingReader(deps.pool, { replica: false, statementTimeoutMs: deps.config.databaseStatementTimeoutMs });

export interface KassaState {
  requestId: string;
  log: Logger;
  /** Set by `guards.merchant` (http/bearer.ts): who called. Handlers behind it read it through `Authenticated<…>`. */
  merchant?: Merchant;
  /**
   * Set by `guards.merchantInline`, whose token check the route makes in its own first statement;
   * that statement sets `checked` once the database said the token is valid.
   */
  tokenCheck?: TokenCheck;
  /** Set by `guards.storePayment` (http/guards.ts): the path's payment, the caller's store's. Read through `OfStorePayment<…>`. */
  payment?: StorePayment;
  /** Set by `validate(…)` (http/validate.ts): the path parameters, query string and body it checked. */
  params?: unknown;
  query?: unknown;
  body?: unknown;
  /**
   * Set by a rate limit's step (http/rateLimit.ts) once the request took from it: gives that back. The
   * bearer guard calls it when the request's token turns out refused (a refused token does not count).
   */
  giveBackLimit?: () => Promise<void>;
  /** The request's one reading of the clock, for the steps that must agree on it (`idempotent`, cancel's wait). */
  now?: Date;
}

/** The caller of the merchant API, as its bearer token says (its signature verified; its database row checked by the guard, or behind `merchantInline` by the route's first statement). */
interface Merchant {
  storeId: string;
  /** The token itself (its jti; what a route may require of it). */
  token: VerifiedToken;
}

type Input = { params?: unknown; query?: unknown; body?: unknown };

/** The state a handler sees behind `validate(…)`: e.g. `Validated<{ params: { id: string }; body: CreateRefundBody }>`. */
export type Validated<In extends Input> = KassaState & In;

/** Behind `guards.merchant` (and `validate(…)` of `In`): the caller is a store's. */
export type Authenticated<In extends Input = Record<never, never>> = Validated<In> & { merchant: Merchant };

/** Behind `guards.merchant` and `guards.storePayment`: the path's payment is the caller's store's. */
export type OfStorePayment<In extends Input = Record<never, never>> = Authenticated<In> & { payment: StorePayment };

export type KassaContext = ParameterizedContext<KassaState>;

declare module 'koa' {
  interface Request {
    /** The parsed JSON body (http/jsonBody.ts); undefined when the request has none. */
    body?: unknown;
  }
}
