// A real reverse proxy hop for tests: a node:http server that forwards every request to `target`
// and, as nginx's `proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for` does, appends the
// address its client connected from to whatever X-Forwarded-For the client sent. Responses are
// streamed through (server-sent events included). And a client that connects from a chosen
// loopback address (127.0.0.2, 127.0.0.3, …: every 127/8 address is the local host on Linux), so
// that a test has several real client addresses.
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';

export interface ReverseProxy {
  url: string;
  /** Every request line that reached the proxy (`GET /path?query HTTP/1.1`). */
  seen: string[];
  close(): Promise<void>;
}

/**
 * `maxRequestLine`: the front refuses a request whose request line (`GET /path?query HTTP/1.1`) is
 * longer, with 414 and forwards nothing — as nginx's `large_client_header_buffers` (8 KB by default)
 * and other fronts before ton-index-go do.
 */
export async function startReverseProxy(target: string, options: { maxRequestLine?: number } = {}): Promise<ReverseProxy> {
  const upstream = new URL(target);
  const lines: string[] = [];
  const server = http.createServer((req, res) => {
    const line = `${req.method} ${req.url} HTTP/${req.httpVersion}`;
    lines.push(line);
    if (options.maxRequestLine !== undefined && Buffer.byteLength(line) > options.maxRequestLine) {
      res.writeHead(414, { 'content-type': 'text/html' }).end('<html><body><h1>414 Request-URI Too Large</h1></body></html>');
      return;
    }
    const seen = req.socket.remoteAddress ?? '';
    const sent = req.headers['x-forwarded-for'];
    const headers: http.OutgoingHttpHeaders = { ...req.headers, host: upstream.host };
    headers['x-forwarded-for'] = sent ? `${Array.isArray(sent) ? sent.join(', ') : sent}, ${seen}` : seen;
    headers['x-forwarded-proto'] = 'http';
    const forwarded = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent: false }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', () => res.destroy());
    res.on('close', () => forwarded.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen: lines,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export interface ClientResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body read to its end (empty when `stream`). */
  text: string;
  json: any;
  /** The response; with `stream` and a 200, still open: read from it, then destroy it. */
  response: http.IncomingMessage;
}

/**
 * One request from the local address `from`, on a connection of its own. With `stream`, a 200
 * answer resolves once its headers arrived and leaves its body open (event streams); any other
 * answer is read to its end.
 */
export function requestFrom(
  from: string,
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown; stream?: boolean } = {},
): Promise<ClientResponse> {
  const target = new URL(url);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = { ...options.headers };
  if (payload !== undefined) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? 'GET',
        headers,
        localAddress: from,
        agent: false,
      },
      (response) => {
        if (options.stream && response.statusCode === 200) {
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text: '', json: undefined, response });
          return;
        }
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, json, response });
        });
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

export interface TcpProxy {
  host: string;
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  through(url: string): string;
  /**
   * Stops forwarding in both directions, as a stopped (SIGSTOP) server or a silent network
   * partition does: connections stay open and new ones are accepted, but nothing written reaches
   * the other side — it is held, as the kernel's buffers hold it — until `thaw`.
   */
  freeze(): void;
  /** Forwards everything held, in order, and carries on. */
  thaw(): void;
  close(): Promise<void>;
  /** With `dropNotifications`: how many NotificationResponse messages (LISTEN's deliveries) were dropped. */
  notificationsDropped(): number;
}

/**
 * PostgreSQL's server-to-client stream with every NotificationResponse ('A') message taken out, so a
 * client's LISTEN hears nothing, as through a pooler in transaction mode. Every message from the
 * server is a type byte and a length (which counts itself) — from the first one on, when the client
 * asks for no TLS (a `postgres://` URL without sslmode, as the tests use).
 */
function withoutNotifications(onDropped: () => void): (chunk: Buffer) => Buffer {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    const kept: Buffer[] = [];
    let at = 0;
    while (pending.length - at >= 5) {
      const end = at + 1 + pending.readInt32BE(at + 1);
      if (pending.length < end) break;
      if (pending[at] === 0x41) onDropped();
      else kept.push(pending.subarray(at, end));
      at = end;
    }
    pending = pending.subarray(at);
    return Buffer.concat(kept);
  };
}

/**
 * A TCP proxy in front of `target` (`host:port`, e.g. the test PostgreSQL) that can be frozen.
 * `dropNotifications`: PostgreSQL's notifications are not passed on (withoutNotifications).
 */
export async function startTcpProxy(target: { host: string; port: number }, options: { dropNotifications?: boolean } = {}): Promise<TcpProxy> {
  let dropped = 0;
  let frozen = false;
  const held: Array<() => void> = [];
  const sockets = new Set<net.Socket>();
  /** Runs `action` now, or at the thaw when frozen (in the order things happened). */
  const forward = (action: () => void) => (frozen ? held.push(action) : action());
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.on('data', (chunk) => forward(() => upstream.write(chunk)));
    const fromServer = options.dropNotifications ? withoutNotifications(() => (dropped += 1)) : (chunk: Buffer) => chunk;
    upstream.on('data', (chunk: Buffer) => {
      const passed = fromServer(chunk);
      if (passed.length > 0) forward(() => client.write(passed));
    });
    client.on('end', () => forward(() => upstream.end()));
    upstream.on('end', () => forward(() => client.end()));
    client.on('close', () => forward(() => upstream.destroy()));
    upstream.on('close', () => forward(() => client.destroy()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    host: '127.0.0.1',
    port,
    through(url) {
      const proxied = new URL(url);
      proxied.hostname = '127.0.0.1';
      proxied.port = String(port);
      return proxied.toString();
    },
    freeze() {
      frozen = true;
    },
    thaw() {
      frozen = false;
      for (const action of held.splice(0)) action();
    },
    notificationsDropped: () => dropped,
    async close() {
      frozen = false;
      held.length = 0;
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
