// What every route and middleware receives: configuration, the pool, the logger and the clock.
import type { ParameterizedContext } from 'koa';
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
}

export interface KassaState {
  requestId: string;
  log: Logger;
  /** Set by the auth middleware on authenticated routes. */
  storeId?: string;
  /**
   * Set by the merchant guard whose token check the route makes in its own statement
   * (`Guards.merchantInline`); the route sets `checked` once the database said the token is valid.
   */
  tokenCheck?: TokenCheck;
}

export type KassaContext = ParameterizedContext<KassaState>;

declare module 'koa' {
  interface Request {
    /** The parsed JSON body (http/middleware.ts jsonBody); undefined when the request has none. */
    body?: unknown;
  }
}
