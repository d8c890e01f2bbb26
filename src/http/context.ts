// What every route and middleware receives: configuration, the pool, the logger and the clock.
import type { ParameterizedContext } from 'koa';
import type { TokenScope } from '../auth/scopes.ts';
import type { TokenCheck } from '../auth/tokens.ts';
import type { Config } from '../config.ts';
import type { DatabasePool } from '../db/pool.ts';
import type { Logger } from '../log.ts';

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
}

export interface KassaState {
  requestId: string;
  log: Logger;
  /** Set by the auth middleware on authenticated routes. */
  storeId?: string;
  /** Set with storeId: what the token may do; routes declare what they need (http/scope.ts). */
  tokenScope?: TokenScope;
  /**
   * Set by the merchant guard whose token check the route makes in its own statement
   * (`Guards.merchantInline`); the route sets `checked` once the database said the token is valid.
   */
  tokenCheck?: TokenCheck;
  /** Set by `validate(…)` (http/validate.ts): the path parameters, query string and body it checked. */
  params?: unknown;
  query?: unknown;
  body?: unknown;
  /** The request's one reading of the clock, for the steps that must agree on it (`idempotent`, cancel's wait). */
  now?: Date;
}

/** The state a handler sees behind `validate(…)`: e.g. `Validated<{ params: { id: string }; body: CreateRefundBody }>`. */
export type Validated<Input extends { params?: unknown; query?: unknown; body?: unknown }> = KassaState & Input;

export type KassaContext = ParameterizedContext<KassaState>;

declare module 'koa' {
  interface Request {
    /** The parsed JSON body (http/middleware.ts jsonBody); undefined when the request has none. */
    body?: unknown;
  }
}
