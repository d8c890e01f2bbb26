// A real reverse proxy hop for tests: a node:http server that forwards every request to `target`
// and, as nginx's `proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for` does, appends the
// address its client connected from to whatever X-Forwarded-For the client sent. Responses are
// streamed through (server-sent events included). And a client that connects from a chosen
// loopback address (127.0.0.2, 127.0.0.3, …: every 127/8 address is the local host on Linux), so
// that a test has several real client addresses.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReverseProxy {
  url: string;
  close(): Promise<void>;
}

export async function startReverseProxy(target: string): Promise<ReverseProxy> {
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
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
