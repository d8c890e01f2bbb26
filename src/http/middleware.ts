// The HTTP pipeline's shared pieces: request id and logging, the error envelope, JSON-only bodies,
// bearer authentication.
import crypto from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import zlib from 'node:zlib';
import type { Context, Middleware } from 'koa';
import { authenticate, checkTokenRow, noteTokenUse, verifyToken, type TokenCheck } from '../auth/tokens.ts';
import { isDatabaseUnavailable } from '../db/pool.ts';
import {
  authInvalid,
  bodyNotUtf8,
  bodyUnreadable,
  chunkExtensionsTooLarge,
  type ErrorCode,
  internalError,
  KassaError,
  rateLimited,
  retryAfterOf,
  routeNotFound,
  serviceUnavailable,
  statusOf,
  typeOf,
  type ErrorType,
  unsafeText,
  unsupportedCharset,
  unsupportedEncoding,
} from '../errors.ts';
import type { AppDeps, KassaState } from './context.ts';
import { codeAt } from './validate.ts';
import { createRateLimiter, createSharedRateLimiter, rateLimit, type RateLimiter } from './rateLimit.ts';
import { httpDuration } from '../metrics.ts';
import type { Logger } from '../log.ts';

export const BODY_LIMIT_BYTES = 64 * 1024;
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
    Object.defineProperty(ctx.state, 'log', {
      configurable: true,
      enumerable: true,
      get: () => (log ??= deps.log.child(ctx.state.storeId ? { requestId, storeId: ctx.state.storeId } : { requestId })),
      set: (value: Logger) => {
        log = value;
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
      if (deps.log.isLevelEnabled(level))
        ctx.state.log[level](
          {
            method: ctx.method,
            path: ctx.path,
            status: ctx.status,
            ms: Math.round((performance.now() - started) * 10) / 10,
            ...(ctx.state.storeId ? { storeId: ctx.state.storeId } : {}),
          },
          'request',
        );
    }
  };
}

export interface ErrorEnvelope {
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

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

const PARSED_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'];
const UTF8 = new TextDecoder('utf-8', { fatal: true });
const tooLarge = () => new KassaError('payload_too_large');
const invalidJson = () => new KassaError('invalid_json');

/** The body's bytes (decompressed when gzip/deflate), at most BODY_LIMIT_BYTES of them. */
async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const coding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  let source: NodeJS.ReadableStream = req;
  if (coding === 'gzip' || coding === 'x-gzip') source = req.pipe(zlib.createGunzip());
  else if (coding === 'deflate') source = req.pipe(zlib.createInflate());
  else if (coding !== 'identity') throw unsupportedEncoding(coding);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > BODY_LIMIT_BYTES) {
        req.unpipe();
        req.pause();
        throw tooLarge();
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof KassaError) throw error;
    throw bodyUnreadable();
  }
  return Buffer.concat(chunks);
}

/**
 * Bodies must be JSON (415 otherwise, also for a charset other than UTF-8), at most 64 KiB (413),
 * well-formed UTF-8 JSON with an object or array at the top (400 invalid_json; invalid UTF-8 is
 * refused, never replaced by U+FFFD). `except`: paths whose routes read their own bodies (the
 * dashboard's HTML forms, src/http/routes/dashboard.ts).
 */
export function jsonBody(options: { except?: (path: string) => boolean } = {}): Middleware<KassaState> {
  return async (ctx, next) => {
    if (PARSED_METHODS.includes(ctx.method) && hasBody(ctx.headers) && !options.except?.(ctx.path)) {
      if (!ctx.is('application/json')) {
        throw new KassaError('unsupported_media_type');
      }
      const charset = ctx.request.charset.toLowerCase();
      if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') {
        throw unsupportedCharset(charset);
      }
      const declared = Number(ctx.get('Content-Length'));
      if (Number.isFinite(declared) && declared > BODY_LIMIT_BYTES) throw tooLarge();
      let text: string;
      try {
        text = UTF8.decode(await readBody(ctx.req));
      } catch (error) {
        if (error instanceof KassaError) throw error;
        throw bodyNotUtf8();
      }
      if (!/^[\x20\x09\x0a\x0d]*[[{]/.test(text) && text.trim() !== '') throw invalidJson();
      try {
        ctx.request.body = text.trim() === '' ? {} : JSON.parse(text);
      } catch {
        throw invalidJson();
      }
    }
    await next();
  };
}

/** U+0000 (PostgreSQL's text cannot hold it) or a lone surrogate (not Unicode, nor JSON PostgreSQL accepts). */
const isUnsafeText = (text: string): boolean => text.includes('\0') || !text.isWellFormed();

/**
 * The code a body field's refusal takes: its code on the route's body schema (`codeOf`, from the
 * field's path segments) when that is a 400, else invalid_request.
 */
const fieldCode = (codeOf: ((segments: readonly string[]) => ErrorCode | undefined) | undefined, segments: readonly string[]): ErrorCode => {
  const code = codeOf?.(segments);
  return code !== undefined && statusOf(code) === 400 ? code : 'invalid_request';
};

/**
 * The first unsafe string (value or key) in a parsed JSON body, as the error naming its field
 * (with the code `codeOf` gives its path). A loop over an explicit stack, not recursion: a body may
 * nest thousands of levels deep (64 KiB of brackets), which validation refuses afterwards with a
 * 400, never a stack overflow here.
 */
export function unsafeInBody(body: unknown, codeOf?: (segments: readonly string[]) => ErrorCode | undefined): KassaError | null {
  // `trail`: the keys and indexes from the body down to the value, last first (read only on a refusal).
  type Trail = { key: string; up: Trail } | null;
  const segments = (trail: Trail): string[] => {
    const keys: string[] = [];
    for (let at = trail; at !== null; at = at.up) keys.push(at.key);
    return keys.reverse();
  };
  const pending: Array<{ value: unknown; path: string; trail: Trail }> = [{ value: body, path: '', trail: null }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, path, trail } = next;
    if (typeof value === 'string') {
      if (isUnsafeText(value)) {
        return path === '' ? unsafeText('The body', { code: 'invalid_json' }) : unsafeText(path, { code: fieldCode(codeOf, segments(trail)), param: path });
      }
    } else if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index -= 1) {
        pending.push({ value: value[index], path: path === '' ? `[${index}]` : `${path}[${index}]`, trail: { key: String(index), up: trail } });
      }
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      for (const [key] of entries) {
        if (!isUnsafeText(key)) continue;
        return path === '' ? unsafeText('Body field names') : unsafeText(`${path} keys`, { code: fieldCode(codeOf, segments(trail)), param: path });
      }
      for (let index = entries.length - 1; index >= 0; index -= 1) {
        const [key, item] = entries[index]!;
        pending.push({ value: item, path: path === '' ? key : `${path}.${key}`, trail: { key, up: trail } });
      }
    }
  }
  return null;
}

/** `%xx` escapes decoded, or null when they are not UTF-8 (a lone surrogate sent as its three bytes included). */
function decoded(text: string, plusIsSpace: boolean): string | null {
  try {
    return decodeURIComponent(plusIsSpace ? text.replaceAll('+', ' ') : text);
  } catch {
    return null;
  }
}

/**
 * One rule for every route (the merchant API, the checkout's, the sandbox's): text Kassa takes in —
 * the path, each query parameter's name and value, every string and key of a JSON body — is
 * Unicode without U+0000. Such text would otherwise reach PostgreSQL, which refuses it (a 500), or
 * be silently replaced (U+FFFD). Refused with 400 in the envelope: a body field with its own code
 * (on the body schema the matched route validates against: `bodySchema`) and its path as param
 * (`metadata.color`), a query parameter as invalid_request with its name. Runs after `jsonBody`,
 * before the routes.
 */
export function plainText(options: { bodySchema?: (ctx: Context) => object | undefined } = {}): Middleware<KassaState> {
  return async (ctx, next) => {
    for (const segment of ctx.path.split('/')) {
      const text = decoded(segment, false);
      if (text === null || isUnsafeText(text)) throw unsafeText('The request path', { percentEncoded: true });
    }
    if (ctx.querystring !== '') {
      for (const pair of ctx.querystring.split('&')) {
        const at = pair.indexOf('=');
        const name = decoded(at < 0 ? pair : pair.slice(0, at), true);
        const value = at < 0 ? '' : decoded(pair.slice(at + 1), true);
        if (name === null || isUnsafeText(name)) throw unsafeText('Query parameter names', { percentEncoded: true });
        if (value === null || isUnsafeText(value)) throw unsafeText(name, { percentEncoded: true, param: name });
      }
    }
    const codeOf = (segments: readonly string[]) => {
      const schema = options.bodySchema?.(ctx);
      return schema && codeAt(schema, segments);
    };
    const found = ctx.request.body === undefined ? null : unsafeInBody(ctx.request.body, codeOf);
    if (found) throw found;
    await next();
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
  let refusal: KassaError;
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    refusal = new KassaError('headers_too_large');
  } else if (error.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') {
    refusal = chunkExtensionsTooLarge();
  } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    refusal = new KassaError('request_timeout');
  } else {
    refusal = new KassaError('malformed_request');
  }
  const answer = httpError(refusal);
  const body = JSON.stringify(answer.body);
  // The answer to a HEAD request has no body (the client would read it as a broken next response).
  const head = Buffer.isBuffer(error.rawPacket) && error.rawPacket.subarray(0, 5).toString('latin1') === 'HEAD ';
  socket.end(
    `HTTP/1.1 ${answer.status} ${http.STATUS_CODES[answer.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${crypto.randomUUID()}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${head ? '' : body}`,
  );
}

/**
 * A request (headers and body) must arrive within this time, else 408 request_timeout (docs/API.md) —
 * or within the keep-alive timeout plus a second, when that is longer (see createApiServer).
 */
export const REQUEST_TIMEOUT_MS = 60_000;

/**
 * How long an idle keep-alive connection stays open: longer than the idle timeouts of the proxies
 * and load balancers in front (60 s for AWS ALB and nginx's upstream keepalive_timeout), so that
 * the proxy, not Kassa, closes an idle connection. Were Kassa first, a request the proxy sends on
 * the connection at that moment meets a closed socket: the proxy answers 502 (docs/OPERATIONS.md).
 */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

interface ApiServerOptions {
  requestTimeoutMs?: number;
  keepAliveTimeoutMs?: number;
}

/**
 * The API's HTTP server: envelope answers for what Node's parser refuses, and timeouts that fire
 * on time — Node checks them every `connectionsCheckingInterval` (30 s by default, which made a 60 s
 * timeout fire anywhere up to 90 s), so it checks every second (or sooner for a shorter timeout).
 * Idle connections are kept `keepAliveTimeoutMs`; the headers timeout stays above it (the
 * load-balancer advice: a connection is never closed by the headers timer while the keep-alive
 * one would keep it), and Node wants the request timeout at least the headers timeout.
 */
export function createApiServer(handler: http.RequestListener, options: ApiServerOptions = {}): http.Server {
  const keepAliveTimeoutMs = options.keepAliveTimeoutMs ?? KEEP_ALIVE_TIMEOUT_MS;
  const requestTimeoutMs = Math.max(options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS, keepAliveTimeoutMs + 1_000);
  const server = http.createServer(
    {
      requireHostHeader: false,
      requestTimeout: requestTimeoutMs,
      headersTimeout: requestTimeoutMs,
      keepAliveTimeout: keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.min(1_000, Math.max(50, requestTimeoutMs / 20)),
    },
    handler,
  );
  server.on('clientError', answerClientError);
  server.keepAliveTimeout = keepAliveTimeoutMs;
  return server;
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
 *
 * `inline`: the token's database check (revoked? expired? docs/API.md, Authentication: "refused at once") is left
 * to the route, which makes it in its own first statement (`tokenValidSql`) and marks
 * `ctx.state.tokenCheck.checked`; a route that writes must make it before its first write commits.
 * Whatever answer the route did not check the token for — a replay, any error, a 429 of the store's
 * rate limit — is preceded by the ordinary check here, so a refused token is still refused first.
 */
export function requireStore(deps: AppDeps, options: { inline?: boolean; failures?: RateLimiter | null } = {}): Middleware<KassaState> {
  const failures =
    options.failures !== undefined ? options.failures : deps.config.rateLimitPerClient > 0 ? createRateLimiter(deps.config.rateLimitPerClient) : null;
  return async (ctx, next) => {
    const match = BEARER.exec(ctx.get('Authorization'));
    if (!match) throw authInvalid();
    const client = `auth-failures:${ctx.ip}`;
    const now = deps.now();
    const hooks = {
      beforeVerifying: async () => {
        const budget = await failures?.take(client, deps.now().getTime());
        if (budget && !budget.allowed) throw rateLimited(budget.retryAfterSeconds);
      },
      verified: async () => {
        await failures?.refund(client);
      },
    };
    if (!options.inline) {
      const { storeId, jti } = await authenticate(deps.pool, match[1]!, now, hooks);
      ctx.state.storeId = storeId;
      await noteTokenUse(deps.pool, jti, now);
      await next();
      return;
    }
    const token = await verifyToken(deps.pool, match[1]!, now, hooks);
    const check: TokenCheck = { token, now, checked: false };
    ctx.state.storeId = token.storeId;
    ctx.state.tokenCheck = check;
    try {
      await next();
    } catch (error) {
      if (!check.checked) await checkTokenRow(deps.pool, token, now);
      await noteTokenUse(deps.pool, token.jti, now);
      throw error;
    }
    if (!check.checked) {
      try {
        await checkTokenRow(deps.pool, token, now);
      } catch (error) {
        ctx.remove('Idempotent-Replayed');
        throw error;
      }
    }
    await noteTokenUse(deps.pool, token.jti, now);
  };
}

/**
 * The steps that guard a route, named on its line: who may call it, then the rate limit it
 * spends from, e.g. `router.get('/v1/payments', guards.merchant, guards.storeLimit, …)`.
 */
export interface Guards {
  /** Merchant API: the bearer token of a store (sets ctx.state.storeId). */
  merchant: Middleware<KassaState>;
  /** The same, the token's database check made by the route in its own statement (`requireStore`'s `inline`). */
  merchantInline: Middleware<KassaState>;
  /** The store's rate limit (after `merchant`/`merchantInline`): RateLimit-* headers, 429 with Retry-After. */
  storeLimit: Middleware<KassaState>;
  /** Public checkout endpoints: the client address's rate limit. */
  clientLimit: Middleware<KassaState>;
}

/** One set of guards (and so one set of rate-limit buckets) per app. */
export function createGuards(deps: AppDeps): Guards {
  // With deps.rateLimitStore, one counter per key for every API process of the deployment.
  const store = deps.rateLimitStore;
  const storeLimit = rateLimit(deps.config.rateLimitPerStore, (ctx) => `store:${(ctx.state as KassaState).storeId}`, deps.now, store);
  const clientLimit = rateLimit(deps.config.rateLimitPerClient, (ctx) => `client:${ctx.ip}`, deps.now, store);
  // One failure budget per client for both merchant guards.
  const perClient = deps.config.rateLimitPerClient;
  const failures = perClient > 0 ? (store ? createSharedRateLimiter(perClient, store, { refundable: true }) : createRateLimiter(perClient)) : null;
  return {
    merchant: requireStore(deps, { failures }),
    merchantInline: requireStore(deps, { failures, inline: true }),
    storeLimit: storeLimit as Middleware<KassaState>,
    clientLimit: clientLimit as Middleware<KassaState>,
  };
}
