// The error envelope (docs/API.md, Errors): what HTTP makes of an error of the catalogue, and the
// middleware that renders every error a request meets as that envelope.
import type { Middleware } from 'koa';
import { isDatabaseUnavailable } from '../db/pool.ts';
import { internalError, KassaError, retryAfterOf, routeNotFound, serviceUnavailable, statusOf, typeOf, type ErrorType } from '../errors.ts';
import type { KassaState } from './context.ts';

interface ErrorEnvelope {
  error: { type: ErrorType; message: string; code: string; param?: string };
}

/**
 * What HTTP makes of an error of the catalogue: the catalogue's status, the envelope, and the
 * headers — `Retry-After` (the error's own seconds, else the catalogue's), `WWW-Authenticate` for
 * auth_invalid, `Allow` for method_not_allowed.
 */
export function httpError(error: KassaError): { status: number; headers: Record<string, string>; body: ErrorEnvelope } {
  const headers: Record<string, string> = {};
  const retryAfter = error.details.retryAfterSeconds ?? retryAfterOf(error.code);
  if (retryAfter !== undefined) headers['Retry-After'] = String(retryAfter);
  if (error.code === 'auth_invalid') headers['WWW-Authenticate'] = 'Bearer';
  if (error.details.allowedMethods !== undefined) headers.Allow = error.details.allowedMethods;
  const body = { type: typeOf(error.code), message: error.message, code: error.code, ...(error.param !== undefined ? { param: error.param } : {}) };
  return { status: statusOf(error.code), headers, body: { error: body } };
}

/** Renders every error as the envelope with its status; unknown errors become a logged 500. */
export function errorEnvelope(): Middleware<KassaState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw routeNotFound(ctx.method, ctx.path);
      }
    } catch (caught) {
      let error: KassaError;
      if (caught instanceof KassaError) {
        error = caught;
      } else if (isDatabaseUnavailable(caught)) {
        ctx.state.log?.warn({ err: caught }, 'database unavailable');
        error = serviceUnavailable();
      } else {
        ctx.state.log?.error({ err: caught }, 'unexpected error');
        error = internalError();
      }
      const answer = httpError(error);
      ctx.status = answer.status;
      ctx.set(answer.headers);
      ctx.body = answer.body;
    }
  };
}
