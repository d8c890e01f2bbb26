// The HTTP pipeline's shared pieces: request id and logging, the error envelope, JSON-only bodies,
// bearer authentication.
import crypto from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Middleware } from 'koa';
import compose from 'koa-compose';
import { koaBody } from 'koa-body';
import { authenticate } from '../auth/tokens.ts';
import { isDatabaseUnavailable } from '../db/pool.ts';
import { ApiError, authInvalid, internalError, invalidRequest, rateLimited, serviceUnavailable } from '../errors.ts';
import type { AppDeps, KassaState } from './context.ts';
import { createRateLimiter, rateLimit } from './rateLimit.ts';
import { httpDuration } from '../metrics.ts';

export const BODY_LIMIT_BYTES = 64 * 1024;
const SANDBOX_CHAIN_API_PREFIX = '/sandbox/toncenter/';

const REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;

/** X-Request-Id (echoed when sent and sane), a child logger per request, one log line per request. */
export function requestLogging(deps: AppDeps): Middleware<KassaState> {
  return async (ctx, next) => {
    const sent = ctx.get('X-Request-Id');
    const requestId = REQUEST_ID.test(sent) ? sent : crypto.randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.log = deps.log.child({ requestId });
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      httpDuration.observe({ method: ctx.method, route, status: String(ctx.status) }, (performance.now() - started) / 1000);
      // The path only: no query string (it may carry cursors), never headers (tokens). The sandbox's
      // own chain API (polled by the watcher every second per open payment) logs at debug.
      const level = ctx.path.startsWith(SANDBOX_CHAIN_API_PREFIX) ? 'debug' : 'info';
      ctx.state.log[level](
        { method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round((performance.now() - started) * 10) / 10, ...(ctx.state.storeId ? { storeId: ctx.state.storeId } : {}) },
        'request',
      );
    }
  };
}

/** Renders every error as the envelope with its status; unknown errors become a logged 500. */
export function errorEnvelope(): Middleware<KassaState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new ApiError('not_found_error', 'route_not_found', `There is no route ${ctx.method} ${ctx.path}.`);
      }
    } catch (caught) {
      let error: ApiError;
      if (caught instanceof ApiError) {
        error = caught;
      } else if (isDatabaseUnavailable(caught)) {
        ctx.state.log?.warn({ err: caught }, 'database unavailable');
        error = serviceUnavailable();
      } else {
        ctx.state.log?.error({ err: caught }, 'unexpected error');
        error = internalError();
      }
      ctx.status = error.status;
      ctx.set(error.headers);
      ctx.body = error.toJSON();
    }
  };
}

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Bodies must be JSON (415 otherwise), at most 64 KiB (413), well-formed (400 invalid_json). */
export function jsonBody(): Middleware<KassaState> {
  const parse = koaBody({
    json: true,
    multipart: false,
    urlencoded: false,
    text: false,
    jsonLimit: BODY_LIMIT_BYTES,
    jsonStrict: true,
    parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'] as never,
    onError: (error: Error & { status?: number; type?: string }) => {
      if (error.status === 413 || error.type === 'entity.too.large') {
        throw new ApiError('invalid_request_error', 'payload_too_large', `The request body is larger than ${BODY_LIMIT_BYTES} bytes.`);
      }
      if (error.status === 415 || error.type === 'encoding.unsupported' || error.type === 'charset.unsupported') {
        throw new ApiError('invalid_request_error', 'unsupported_media_type', 'The request body encoding is not supported; send UTF-8 JSON.');
      }
      throw invalidRequest('invalid_json', 'The request body is not valid JSON (an object is expected).');
    },
  });
  return async (ctx, next) => {
    if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method) && hasBody(ctx.headers)) {
      if (!ctx.is('application/json')) {
        throw new ApiError('invalid_request_error', 'unsupported_media_type', 'Request bodies must be sent as Content-Type: application/json.');
      }
      const declared = Number(ctx.get('Content-Length'));
      if (Number.isFinite(declared) && declared > BODY_LIMIT_BYTES) {
        throw new ApiError('invalid_request_error', 'payload_too_large', `The request body is larger than ${BODY_LIMIT_BYTES} bytes.`);
      }
    }
    await parse(ctx as never, next);
  };
}

/**
 * A request Node's HTTP parser refuses never reaches Koa: headers over 16 KiB, a malformed request
 * line or header, conflicting framing, a request not received within `requestTimeout`. Node would
 * answer a bare 400/408/413/431; this answers the same statuses with the envelope (docs/API.md).
 * Installed with `server.on('clientError', answerClientError)`.
 */
export function answerClientError(error: Error & { code?: string; rawPacket?: unknown }, socket: Duplex): void {
  const sent = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (error.code === 'ECONNRESET' || !socket.writable || sent) {
    socket.destroy();
    return;
  }
  let apiError: ApiError;
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    apiError = invalidRequest('headers_too_large', 'The request headers are larger than 16 KiB.');
  } else if (error.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') {
    apiError = new ApiError('invalid_request_error', 'payload_too_large', 'The chunk extensions of the request body are too large.');
  } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    apiError = invalidRequest('request_timeout', 'The request was not received in time.');
  } else {
    apiError = invalidRequest('malformed_request', 'The HTTP request could not be parsed.');
  }
  const body = JSON.stringify(apiError.toJSON());
  // The answer to a HEAD request has no body (the client would read it as a broken next response).
  const head = Buffer.isBuffer(error.rawPacket) && error.rawPacket.subarray(0, 5).toString('latin1') === 'HEAD ';
  socket.end(
    `HTTP/1.1 ${apiError.status} ${http.STATUS_CODES[apiError.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${crypto.randomUUID()}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${head ? '' : body}`,
  );
}

// The scheme name is case-insensitive (RFC 9110 §11.1); the token is taken as sent.
const BEARER = /^Bearer +([A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*)$/i;

/**
 * Bearer JWT authentication; every failure is the same 401 auth_invalid. Each signature
 * verification takes a token from the client address's failure budget (RATE_LIMIT_PER_CLIENT per
 * second, bursts of twice that) and a successful one gives it back: a client whose tokens keep
 * failing is answered 429 before any further verification, so a flood of forged tokens cannot make
 * the API spend its CPU on Ed25519 — taken before verifying, the budget also holds for requests
 * that arrive at once. Tokens this process has verified before need no verification and pass.
 */
export function requireStore(deps: AppDeps): Middleware<KassaState> {
  const failures = deps.config.rateLimitPerClient > 0 ? createRateLimiter(deps.config.rateLimitPerClient) : null;
  return async (ctx, next) => {
    const match = BEARER.exec(ctx.get('Authorization'));
    if (!match) throw authInvalid();
    const client = `auth-failures:${ctx.ip}`;
    const { storeId } = await authenticate(deps.pool, match[1]!, deps.now(), {
      beforeVerifying: () => {
        const budget = failures?.take(client, deps.now().getTime());
        if (budget && !budget.allowed) throw rateLimited(budget.retryAfterSeconds);
      },
      verified: () => failures?.refund(client),
    });
    ctx.state.storeId = storeId;
    ctx.state.log = ctx.state.log.child({ storeId });
    await next();
  };
}

export interface Guards {
  /** Merchant API: bearer token, then the store's rate limit. */
  merchant: Middleware<KassaState>;
  /** Public checkout endpoints: the client address's rate limit. */
  public: Middleware<KassaState>;
}

/** One set of guards (and so one set of rate-limit buckets) per app. */
export function createGuards(deps: AppDeps): Guards {
  const storeLimit = rateLimit(deps.config.rateLimitPerStore, (ctx) => `store:${(ctx.state as KassaState).storeId}`, deps.now);
  const clientLimit = rateLimit(deps.config.rateLimitPerClient, (ctx) => `client:${ctx.ip}`, deps.now);
  return {
    merchant: compose([requireStore(deps), storeLimit]) as Middleware<KassaState>,
    public: clientLimit as Middleware<KassaState>,
  };
}
