/**
 * A standalone HTTP server for the sandbox chain's toncenter v2 JSON-RPC emulation (node:http),
 * for tests and for running the sandbox apart from the API. The main app mounts
 * `chain.handleJsonRpc` on its own server instead.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SandboxChain } from './chain.ts';

export const JSON_RPC_PATH = '/api/v2/jsonRPC';
const MAX_BODY_BYTES = 1024 * 1024;

export type SandboxServer = {
  /** The JSON-RPC endpoint to give TonClient: `http://host:port/api/v2/jsonRPC`. */
  url: string;
  /** The API root (`http://host:port`): v3 under /api/v3/, v2 JSON-RPC under /api/v2/jsonRPC. */
  root: string;
  chain: SandboxChain;
  close(): Promise<void>;
};

function send(res: ServerResponse, status: number, json: unknown): void {
  const body = JSON.stringify(json);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Serves `chain` (a new SandboxChain when omitted) on 127.0.0.1:`port` (0 = any free port). */
export async function startSandboxServer(opts: { port?: number; host?: string; chain?: SandboxChain } = {}): Promise<SandboxServer> {
  const chain = opts.chain ?? (await SandboxChain.create());
  const host = opts.host ?? '127.0.0.1';
  const server = createServer((req, res) => {
    const [path = '/', query = ''] = (req.url ?? '/').split('?');
    if (path.startsWith('/api/v3/') && req.method === 'GET') {
      void Promise.resolve(chain.handleV3(path.slice('/api/v3/'.length), new URLSearchParams(query))).then(
        (reply) => send(res, reply.status, reply.json),
        (error: unknown) => send(res, 500, { error: error instanceof Error ? error.message : String(error) }),
      );
      return;
    }
    if (path !== JSON_RPC_PATH && path !== '/jsonRPC') {
      send(res, 404, { ok: false, code: 404, error: 'Not found' });
      return;
    }
    if (req.method !== 'POST') {
      send(res, 405, { ok: false, code: 405, error: 'Use POST for JSON-RPC' });
      return;
    }
    readBody(req)
      .then(async (body) => {
        if (body === null) {
          send(res, 413, { ok: false, code: 413, error: 'Request body too large' });
          return;
        }
        const reply = await chain.handleJsonRpc(body);
        send(res, reply.status, reply.json);
      })
      .catch((err: unknown) => {
        if (!res.headersSent) send(res, 500, { ok: false, code: 500, error: err instanceof Error ? err.message : String(err) });
        else res.destroy();
      });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const hostInUrl = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${hostInUrl}:${port}${JSON_RPC_PATH}`,
    root: `http://${hostInUrl}:${port}`,
    chain,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
