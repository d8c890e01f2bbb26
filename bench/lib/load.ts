// A timed closed-loop HTTP load driver: N workers, each sends one request, waits for the whole
// response, records its latency and sends the next, until the duration is over. Requests in
// flight at the deadline are completed and counted (throughput = completed / time until the last
// one finished).
//
// Two transports: `http` (node:http with one keep-alive Agent, maxSockets = concurrency) and
// `fetch` (Node's built-in fetch, undici underneath). bench/lib/compare-transports.ts measures
// both against a trivial server; `http` costs the client less CPU per request, which matters
// when the driver shares two cores with the service and PostgreSQL, so it is the default.
import http from 'node:http';

export type Transport = 'http' | 'fetch';

export interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  /** Sent as is (encode JSON yourself). */
  body?: string;
}

export interface LoadOptions {
  /** http://host:port, no trailing slash. */
  baseUrl: string;
  concurrency: number;
  durationMs: number;
  transport?: Transport;
  /** The next request of worker `worker`. */
  next: (worker: number) => RequestSpec;
  /** Called with every 2xx response body (e.g. to collect created ids). */
  onSuccess?: (status: number, body: string) => void;
}

export interface LoadResult {
  concurrency: number;
  completed: number;
  /** 2xx responses. */
  succeeded: number;
  /** Non-2xx responses plus transport errors. */
  errors: number;
  /** "503 service_unavailable" / "ECONNRESET" → count. */
  errorKinds: Map<string, number>;
  /** Latency of every completed request (ms), in completion order. */
  latenciesMs: Float64Array;
  elapsedMs: number;
  /** 2xx responses per second: the throughput figure (errors are not throughput). */
  requestsPerSecond: number;
  /** CPU time this process (the driver) spent during the run, ms (user + system). */
  driverCpuMs: number;
}

interface Reply {
  status: number;
  body: string;
}

type Send = (spec: RequestSpec) => Promise<Reply>;

function httpSender(baseUrl: string, concurrency: number): { send: Send; close: () => void } {
  const url = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });
  const send: Send = (spec) =>
    new Promise<Reply>((resolve, reject) => {
      const headers: Record<string, string | number> = { ...spec.headers };
      if (spec.body !== undefined) headers['content-length'] = Buffer.byteLength(spec.body);
      const request = http.request({ host: url.hostname, port: url.port, path: spec.path, method: spec.method, headers, agent }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      });
      request.on('error', reject);
      request.end(spec.body);
    });
  return { send, close: () => agent.destroy() };
}

function fetchSender(baseUrl: string): { send: Send; close: () => void } {
  const send: Send = async (spec) => {
    const response = await fetch(`${baseUrl}${spec.path}`, { method: spec.method, headers: spec.headers ?? {}, body: spec.body ?? null });
    return { status: response.status, body: await response.text() };
  };
  return { send, close: () => {} };
}

function errorKind(reply: Reply): string {
  const code = /"code"\s*:\s*"([^"]+)"/.exec(reply.body)?.[1];
  return code ? `${reply.status} ${code}` : String(reply.status);
}

/** Runs the closed loop; never throws for failed requests (they are counted). */
export async function runClosedLoop(options: LoadOptions): Promise<LoadResult> {
  const { concurrency, durationMs } = options;
  const sender = options.transport === 'fetch' ? fetchSender(options.baseUrl) : httpSender(options.baseUrl, concurrency);
  const latencies: number[] = [];
  const errorKinds = new Map<string, number>();
  let errors = 0;
  const count = (kind: string) => {
    errors += 1;
    errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1);
  };
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + durationMs;

  const worker = async (index: number) => {
    while (performance.now() < deadline) {
      const spec = options.next(index);
      const sent = performance.now();
      try {
        const reply = await sender.send(spec);
        latencies.push(performance.now() - sent);
        if (reply.status >= 200 && reply.status < 300) options.onSuccess?.(reply.status, reply.body);
        else count(errorKind(reply));
      } catch (error) {
        latencies.push(performance.now() - sent);
        count((error as { code?: string }).code ?? (error as Error).message ?? 'error');
        // A refused connection fails at once: do not spin.
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, index) => worker(index)));
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  sender.close();
  return {
    concurrency,
    completed: latencies.length,
    succeeded: latencies.length - errors,
    errors,
    errorKinds,
    latenciesMs: Float64Array.from(latencies),
    elapsedMs,
    requestsPerSecond: ((latencies.length - errors) / elapsedMs) * 1000,
    driverCpuMs: (cpu.user + cpu.system) / 1000,
  };
}
