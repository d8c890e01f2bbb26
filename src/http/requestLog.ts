// The request's id and its one log line: X-Request-Id (echoed when sent and sane), a child logger per
// request made only when something logs through it, and the request's duration as a metric.
import crypto from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../log.ts';
import { httpDuration } from '../metrics.ts';
import type { AppDeps, KassaState } from './context.ts';

const SANDBOX_CHAIN_API_PREFIX = '/sandbox/toncenter/';

const REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;

/** X-Request-Id (echoed when sent and sane), a child logger per request, one log line per request. */
export function requestLogging(deps: AppDeps): Middleware<KassaState> {
  return async (ctx, next) => {
    const sent = ctx.get('X-Request-Id');
    const requestId = REQUEST_ID.test(sent) ? sent : crypto.randomUUID();
    ctx.state.requestId = requestId;
    // The request's child logger is made when something logs through it (most requests log only
    // their one line, and none at LOG_LEVEL=warn): it binds the request id and, once the token is
    // known, the store id. Setting ctx.state.log replaces it.
    let log: Logger | undefined;
    /** The child logger names the store (made once the token was known): the request line does not again. */
    let namesStore = false;
    Object.defineProperty(ctx.state, 'log', {
      configurable: true,
      enumerable: true,
      get: () => {
        if (log === undefined) {
          namesStore = ctx.state.merchant !== undefined;
          log = deps.log.child(ctx.state.merchant ? { requestId, storeId: ctx.state.merchant.storeId } : { requestId });
        }
        return log;
      },
      set: (value: Logger) => {
        log = value;
        namesStore = false;
      },
    });
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      httpDuration.observe({ method: ctx.method, route, status: String(ctx.status) }, (performance.now() - started) / 1000);
      // The path only: no query string (it may carry cursors), never headers (tokens). The sandbox's
      // own chain API (asked by the chain reader at every block) logs at debug.
      const level = ctx.path.startsWith(SANDBOX_CHAIN_API_PREFIX) ? 'debug' : 'info';
      if (deps.log.isLevelEnabled(level)) {
        const requestLog = ctx.state.log;
        requestLog[level](
          {
            method: ctx.method,
            path: ctx.path,
            status: ctx.status,
            ms: Math.round((performance.now() - started) * 10) / 10,
            // Each field once: the store only when the child logger does not name it already.
            ...(ctx.state.merchant && !namesStore ? { storeId: ctx.state.merchant.storeId } : {}),
          },
          'request',
        );
      }
    }
  };
}
