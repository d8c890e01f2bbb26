// The lifecycle of server-sent event streams, shared by the checkout's live status and the dashboard's
// live payments list: how many one client (an address, a person) and the process may hold open, the
// socket made fit for a long answer, a heartbeat comment that keeps proxies from timing it out, a
// maximum life after which the browser reconnects by itself, and the end of every stream once the
// server stops listening (a graceful shutdown would otherwise wait for them). What a stream says is
// its route's business: it writes through `write` and gives `onClose` what to undo.
import type http from 'node:http';
import { PassThrough } from 'node:stream';

/** The headers of an event stream (beside 200 and text/event-stream): never cached, never buffered by a proxy, one stream per connection. */
export const EVENT_STREAM_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-store',
  'X-Accel-Buffering': 'no',
  // The connection serves this stream only; when it ends, so does the connection (no idle
  // keep-alive socket left to delay a graceful shutdown).
  Connection: 'close',
} as const;

interface LiveStreamLimits {
  /** Open streams one key (a client address, a person) may hold at once. */
  perKey: number;
  /** Open streams in all (each holds a socket, a file descriptor); unbounded when absent. */
  total?: number;
  /** A stream ends after this long; the browser reconnects by itself. */
  lifetimeMs: number;
  /** A comment line this often keeps proxies from timing the stream out; none when absent. */
  heartbeatMs?: number;
}

interface LiveStream {
  /** The response body to answer with. */
  readonly body: PassThrough;
  /** True once the stream ended (the client left, its life ended, the server stops, or `close`). */
  readonly closed: boolean;
  /** Writes an event (nothing once closed). */
  write(text: string): void;
  /** Runs `cleanup` when the stream ends (at once when it has ended already). */
  onClose(cleanup: () => void): void;
  close(): void;
}

interface LiveStreams {
  /** Whether `key` may open one more stream: `ok`, or which limit it meets. */
  admit(key: string): 'ok' | 'key_full' | 'all_full';
  /** Opens a stream counted against `key` on the request's socket (closed at once when the client has gone already). */
  open(key: string, req: http.IncomingMessage, res: http.ServerResponse): LiveStream;
  /** Open streams in all (for tests and metrics). */
  size(): number;
}

/** How often an open stream looks whether its server still listens (and counts toward its heartbeat). */
const TICK_MS = 1000;

export function createLiveStreams(limits: LiveStreamLimits): LiveStreams {
  const open = new Map<string, number>();
  let total = 0;
  return {
    admit(key) {
      if ((open.get(key) ?? 0) >= limits.perKey) return 'key_full';
      if (limits.total !== undefined && total >= limits.total) return 'all_full';
      return 'ok';
    },
    open(key, req, res) {
      const body = new PassThrough();
      const cleanups: Array<() => void> = [];
      let closed = false;
      let ticker: NodeJS.Timeout | undefined;
      let lifetime: NodeJS.Timeout | undefined;
      const close = () => {
        if (closed) return;
        closed = true;
        clearInterval(ticker);
        clearTimeout(lifetime);
        total -= 1;
        const left = (open.get(key) ?? 1) - 1;
        if (left > 0) open.set(key, left);
        else open.delete(key);
        for (const cleanup of cleanups.splice(0)) cleanup();
        body.end();
      };
      const stream: LiveStream = {
        body,
        get closed() {
          return closed;
        },
        write: (text) => {
          if (!closed) body.write(text);
        },
        onClose: (cleanup) => {
          if (closed) cleanup();
          else cleanups.push(cleanup);
        },
        close,
      };
      open.set(key, (open.get(key) ?? 0) + 1);
      total += 1;
      req.socket.setTimeout(0);
      req.socket.setNoDelay(true);
      req.socket.setKeepAlive(true);
      res.once('close', close);
      // Gone already (it left while the route read what to stream): nothing to stream, and its place is free.
      if (req.socket.destroyed) {
        close();
        return stream;
      }
      const server = (req.socket as { server?: { listening?: boolean } }).server;
      let sinceHeartbeat = 0;
      ticker = setInterval(() => {
        if (server?.listening === false) return close();
        if (limits.heartbeatMs === undefined) return;
        sinceHeartbeat += TICK_MS;
        if (sinceHeartbeat >= limits.heartbeatMs) {
          sinceHeartbeat = 0;
          stream.write(': keep-alive\n\n');
        }
      }, TICK_MS);
      ticker.unref();
      lifetime = setTimeout(close, limits.lifetimeMs);
      lifetime.unref();
      return stream;
    },
    size: () => total,
  };
}
