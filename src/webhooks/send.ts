// One webhook delivery attempt: an SSRF-safe, one-shot HTTP POST (docs/API.md, Webhooks).
//
// - The host is resolved at connect time by our own `lookup`, which resolves *all* its addresses
//   and refuses the connection if any of them is not public (unless allowInsecure). The address
//   that was checked is the address that is connected to: no second resolution, no DNS rebinding
//   window. IP-literal hosts never reach `lookup`, so they are checked before connecting.
// - Redirects are never followed: a 3xx is a failed attempt.
// - One hard deadline covers resolution, connect, TLS, request and response headers; the response
//   body is read up to `maxResponseBytes` and the rest is discarded.
// - No connection reuse (`agent: false`) and no proxy: every attempt gets a fresh, checked socket.
// - `postWebhook` never throws and never rejects: every failure is reported in the result.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupAddress, LookupOptions } from 'node:dns';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { classifyIp, describeCategory, isDeliverableIp } from '../net/addresses.ts';

/** Resolves a host name to all its addresses (the default uses the system resolver, like Node). */
export type ResolveHost = (hostname: string) => Promise<ReadonlyArray<{ address: string; family?: number }>>;

interface PostWebhookOptions {
  url: string;
  /** The exact bytes that were signed; sent as UTF-8. */
  body: string;
  /** Typically Content-Type, X-Signature, X-Signature-Kid. Content-Length is computed. */
  headers?: Record<string, string>;
  /** WEBHOOK_ALLOW_INSECURE: permit `http:` and loopback/private addresses (never link-local). */
  allowInsecure?: boolean;
  /** Hard deadline for the whole attempt; default 30 s, the time docs/API.md gives receivers. */
  timeoutMs?: number;
  /** At most this many bytes of the response body are read; default 64 KiB. */
  maxResponseBytes?: number;
  /** Host-name resolver, injectable for tests; default `dns.lookup(host, { all: true })`. */
  lookup?: ResolveHost;
  /** Extra CA certificate(s) to trust for https (tests with a self-signed certificate). */
  ca?: string | Buffer | Array<string | Buffer>;
}

export interface PostWebhookResult {
  /** True only for a 2xx answer. */
  ok: boolean;
  /** The HTTP status, when a response arrived. */
  status?: number;
  durationMs: number;
  /** Why the attempt failed, short and human-readable; absent when ok. */
  error?: string;
  /** The beginning of the response body (at most maxResponseBytes, decoded as UTF-8). */
  responseSnippet?: string;
  /** The remote address actually connected to. */
  address?: string;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;

const BLOCKED = 'EWEBHOOK_BLOCKED_ADDRESS';

const defaultResolve: ResolveHost = (hostname) => dns.promises.lookup(hostname, { all: true, order: 'verbatim' });

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

function errnoError(message: string, code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

/** A `lookup` for net/tls that resolves every address and refuses if any one is not deliverable. */
function checkingLookup(resolve: ResolveHost, allowInsecure: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    Promise.resolve()
      .then(() => resolve(hostname))
      .then(
        (found) => {
          const addresses: LookupAddress[] = [];
          for (const entry of found) {
            const family = net.isIP(entry.address);
            if (family === 0) return callback(errnoError(`${hostname} resolved to a non-address`, BLOCKED), '');
            addresses.push({ address: entry.address, family });
          }
          if (addresses.length === 0) return callback(errnoError(`${hostname} has no address`, 'ENOTFOUND'), '');
          const refused = addresses.find((a) => !isDeliverableIp(a.address, { allowInsecure }));
          if (refused !== undefined) {
            const what = describeCategory(classifyIp(refused.address));
            return callback(errnoError(`${hostname} resolves to ${what} (${refused.address}); refused`, BLOCKED), '');
          }
          const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
          const first = wanted[0];
          if (first === undefined) return callback(errnoError(`${hostname} has no IPv${options.family} address`, 'ENOTFOUND'), '');
          if (options.all === true) return callback(null, wanted);
          return callback(null, first.address, first.family);
        },
        (err: unknown) => {
          const e = err instanceof Error ? (err as NodeJS.ErrnoException) : errnoError(String(err), 'ENOTFOUND');
          callback(e, '');
        },
      );
  };
}

const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

function describeError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  switch (e?.code) {
    case BLOCKED:
      return message;
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset by the receiver';
    case 'EPIPE':
      return 'connection closed by the receiver';
    case 'ENOTFOUND':
      return `host not found (${message})`;
    case 'EAI_AGAIN':
      return 'DNS lookup failed temporarily';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'ETIMEDOUT':
      return 'connection timed out';
  }
  if (typeof e?.code === 'string' && (TLS_CODES.has(e.code) || e.code.startsWith('ERR_SSL') || e.code.startsWith('ERR_TLS'))) {
    return `TLS error: ${message}`;
  }
  return message;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * POSTs `body` to `url` once. Resolves with the outcome; never throws.
 * Success means a 2xx answer; a 3xx (not followed), 4xx or 5xx is a failure with its status.
 */
export function postWebhook(options: PostWebhookOptions): Promise<PostWebhookResult> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const allowInsecure = options.allowInsecure ?? false;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxResponseBytes = Math.max(0, options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES);
  const failNow = (error: string): Promise<PostWebhookResult> => Promise.resolve({ ok: false, durationMs: elapsed(), error });

  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    return failNow('invalid URL');
  }
  const isHttps = url.protocol === 'https:';
  if (!isHttps && !(allowInsecure && url.protocol === 'http:')) {
    return failNow(allowInsecure ? `unsupported scheme ${url.protocol}` : 'only https URLs are allowed');
  }
  if (url.username !== '' || url.password !== '') return failNow('URL must not contain credentials');
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (net.isIP(hostname) !== 0 && !isDeliverableIp(hostname, { allowInsecure })) {
    // lookup() is not called for IP literals: check them here.
    return failNow(`${hostname} is ${describeCategory(classifyIp(hostname))}; refused`);
  }

  return new Promise<PostWebhookResult>((resolvePromise) => {
    let settled = false;
    let status: number | undefined;
    let address: string | undefined;
    const chunks: Buffer[] = [];
    let received = 0;

    const finish = (result: Omit<PostWebhookResult, 'durationMs' | 'address'>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const out: PostWebhookResult = { ...result, durationMs: elapsed() };
      if (address !== undefined) out.address = address;
      resolvePromise(out);
      req?.destroy();
    };

    /** The outcome once a status line has arrived (whether or not the body was read to the end). */
    const finishWithResponse = (location: string | undefined): void => {
      const code = status ?? 0;
      const result: Omit<PostWebhookResult, 'durationMs' | 'address'> = { ok: code >= 200 && code < 300, status: code };
      if (chunks.length > 0) result.responseSnippet = Buffer.concat(chunks).toString('utf8');
      if (code >= 300 && code < 400) {
        result.error = `redirect not followed (HTTP ${code}${location ? ` to ${clip(location, 200)}` : ''})`;
      } else if (!result.ok) {
        result.error = `HTTP ${code}`;
      }
      finish(result);
    };

    let location: string | undefined;
    const timer = setTimeout(() => {
      if (status !== undefined)
        finishWithResponse(location); // the answer arrived; only the body stalled
      else finish({ ok: false, error: `timed out after ${timeoutMs} ms` });
    }, timeoutMs);

    let req: http.ClientRequest | undefined;
    try {
      const requestOptions: https.RequestOptions = {
        protocol: url.protocol,
        hostname,
        port: url.port === '' ? (isHttps ? 443 : 80) : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Kassa-Webhooks/1',
          ...options.headers,
          'content-length': String(Buffer.byteLength(options.body, 'utf8')),
          connection: 'close',
        },
        agent: false,
        lookup: checkingLookup(options.lookup ?? defaultResolve, allowInsecure),
        rejectUnauthorized: true,
      };
      if (isHttps && options.ca !== undefined) requestOptions.ca = options.ca;
      req = (isHttps ? https : http).request(requestOptions);
    } catch (err) {
      finish({ ok: false, error: describeError(err) });
      return;
    }

    req.on('socket', (socket) => {
      socket.once('connect', () => {
        address = socket.remoteAddress;
      });
    });
    req.on('error', (err) => {
      if (status !== undefined) finishWithResponse(location);
      else finish({ ok: false, error: describeError(err) });
    });
    req.on('response', (res) => {
      status = res.statusCode ?? 0;
      const rawLocation = res.headers.location;
      location = typeof rawLocation === 'string' ? rawLocation : undefined;
      if (maxResponseBytes === 0) return finishWithResponse(location);
      res.on('data', (chunk: Buffer) => {
        const room = maxResponseBytes - received;
        if (room > 0) {
          const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
          chunks.push(part);
          received += part.length;
        }
        if (received >= maxResponseBytes) finishWithResponse(location);
      });
      res.on('end', () => finishWithResponse(location));
      res.on('error', () => finishWithResponse(location));
      res.on('close', () => finishWithResponse(location));
    });
    req.end(options.body, 'utf8');
  });
}
