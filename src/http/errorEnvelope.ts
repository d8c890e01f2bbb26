// What HTTP makes of an error of the catalogue (docs/API.md, Errors), once for every answer: the
// API's envelope (`httpError`) and the page a person sees on the hosted checkout or the dashboard
// (`errorPage`) — the same status and headers for the same error — and the two middlewares that
// turn every error a request meets into one of them (`errorEnvelope` for the API, `errorPages` for
// the pages, each page drawn in its own look by its caller).
import type { Middleware, ParameterizedContext } from 'koa';
import { isDatabaseUnavailable } from '../db/pool.ts';
import { type ErrorCode, internalError, KassaError, retryAfterOf, routeNotFound, serviceUnavailable, statusOf, typeOf, type ErrorType } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { KassaState } from './context.ts';

interface ErrorEnvelope {
  error: { type: ErrorType; message: string; code: string; param?: string };
}

/** The catalogue's status of the error, and the headers it asks for. */
function statusAndHeaders(error: KassaError): { status: number; headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  const retryAfter = error.details.retryAfterSeconds ?? retryAfterOf(error.code);
  if (retryAfter !== undefined) headers['Retry-After'] = String(retryAfter);
  if (error.code === 'auth_invalid') headers['WWW-Authenticate'] = 'Bearer';
  if (error.details.allowedMethods !== undefined) headers.Allow = error.details.allowedMethods;
  return { status: statusOf(error.code), headers };
}

/**
 * What HTTP makes of an error of the catalogue: the catalogue's status, the envelope, and the
 * headers — `Retry-After` (the error's own seconds, else the catalogue's), `WWW-Authenticate` for
 * auth_invalid, `Allow` for method_not_allowed.
 */
export function httpError(error: KassaError): { status: number; headers: Record<string, string>; body: ErrorEnvelope } {
  const body = { type: typeOf(error.code), message: error.message, code: error.code, ...(error.param !== undefined ? { param: error.param } : {}) };
  return { ...statusAndHeaders(error), body: { error: body } };
}

/**
 * Which page a person sees: nothing there (not_found_error), too many requests (rate_limit_error),
 * the service unavailable for a moment (an api_error of 503), their request refused (any other
 * 4xx), or Kassa's own failure (any other 5xx).
 */
export type ErrorPageKind = 'notFound' | 'tooMany' | 'unavailable' | 'refused' | 'error';

/** An error as a page: the envelope's status and headers, and what the page says (the dashboard's words; the checkout words each kind in the customer's language). */
interface ErrorPage {
  status: number;
  headers: Record<string, string>;
  kind: ErrorPageKind;
  title: string;
  text: string;
}

/** The request itself could not be read (a form too large, of another type, or broken): said as such, whatever the API's message about JSON bodies. */
const UNREADABLE: ReadonlySet<ErrorCode> = new Set([
  'invalid_json',
  'payload_too_large',
  'unsupported_media_type',
  'malformed_request',
  'headers_too_large',
  'request_timeout',
]);

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** What a page says of an error of the catalogue, with the status and headers the API would answer it with. */
export function errorPage(error: KassaError): ErrorPage {
  const { status, headers } = statusAndHeaders(error);
  const type = typeOf(error.code);
  const page = (kind: ErrorPageKind, title: string, text: string): ErrorPage => ({ status, headers, kind, title, text });
  if (type === 'not_found_error') return page('notFound', 'Not found', 'There is nothing here, or it is not yours to see.');
  if (type === 'rate_limit_error') {
    const seconds = Number(headers['Retry-After'] ?? 1);
    return page('tooMany', 'Too many requests', `Too many requests from your address. Try again in ${plural(seconds, 'second')}.`);
  }
  // The catalogue's words: the database or the TON network out of reach, no fresh rate (each with Retry-After).
  if (status === 503) return page('unavailable', 'Unavailable', error.message);
  if (status >= 500) return page('error', 'Something went wrong', 'The page could not be made. Try again; if it keeps failing, tell the operator.');
  // A refusal the domain words for people (the form's text under the unsafe-text rule, say).
  return page('refused', 'Not accepted', UNREADABLE.has(error.code) ? 'The form could not be read.' : error.message);
}

/**
 * Any error a request meets, as an error of the catalogue: a KassaError as it is, the database out
 * of reach as service_unavailable (a warning), anything else as internal_error (logged as an error).
 */
function asKassaError(caught: unknown, log: Logger | undefined): KassaError {
  if (caught instanceof KassaError) return caught;
  if (isDatabaseUnavailable(caught)) {
    log?.warn({ err: caught }, 'database unavailable');
    return serviceUnavailable();
  }
  log?.error({ err: caught }, 'unexpected error');
  return internalError();
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
      const answer = httpError(asKassaError(caught, ctx.state.log));
      ctx.status = answer.status;
      ctx.set(answer.headers);
      ctx.body = answer.body;
    }
  };
}

/**
 * Renders every error as a page (errorPage: its status and headers set here), drawn by `draw` in
 * the page's own look — the hosted checkout's (in the customer's language, by kind) or the dashboard's.
 */
export function errorPages<State extends KassaState>(draw: (ctx: ParameterizedContext<State>, page: ErrorPage) => void): Middleware<State> {
  return async (ctx, next) => {
    try {
      await next();
    } catch (caught) {
      const page = errorPage(asKassaError(caught, ctx.state.log));
      ctx.set(page.headers);
      draw(ctx, page);
      ctx.status = page.status;
    }
  };
}
