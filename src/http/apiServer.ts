// The API's HTTP server: its timeouts (request, keep-alive) and the envelope for what Node's parser refuses.
import http from 'node:http';
import { answerClientError } from './clientErrors.ts';

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
