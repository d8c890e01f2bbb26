// Real servers on 127.0.0.1, port 0, for the webhook tests. No mocks.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { PublicJwk } from '../../src/webhooks/sign.ts';

export async function listen<T extends net.Server>(server: T): Promise<{ server: T; port: number }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}

export function close(server: net.Server): Promise<void> {
  return new Promise((resolve) => {
    if ('closeAllConnections' in server && typeof server.closeAllConnections === 'function') server.closeAllConnections();
    server.close(() => resolve());
  });
}

/** A port on which nothing listens (bound then released). */
export async function freePort(): Promise<number> {
  const { server, port } = await listen(net.createServer());
  await close(server);
  return port;
}

export interface KeyServer {
  url: string;
  port: number;
  /** What GET /v1/webhook/keys answers; change it to rotate keys. */
  keys: Array<Partial<PublicJwk> & { kid: string; x: string }>;
  /** When set, the key set answers this status instead (e.g. 503). */
  failWith: number | null;
  /** When set, the body of a 200 answer (e.g. invalid JSON). */
  rawBody: string | null;
  requests: number;
  close(): Promise<void>;
}

/** A key-set server like Kassa's `GET {checkout_base_url}/v1/webhook/keys`. */
export async function startKeyServer(keys: KeyServer['keys'] = []): Promise<KeyServer> {
  const server = http.createServer((req, res) => {
    if (req.url !== '/pay/v1/webhook/keys') {
      res.writeHead(404).end();
      return;
    }
    state.requests++;
    if (state.failWith !== null) {
      res.writeHead(state.failWith, { 'content-type': 'text/plain' }).end('unavailable');
      return;
    }
    res
      .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' })
      .end(state.rawBody ?? JSON.stringify({ keys: state.keys }));
  });
  const state: KeyServer = { url: '', port: 0, keys, failWith: null, rawBody: null, requests: 0, close: () => close(server) };
  const { port } = await listen(server);
  state.port = port;
  state.url = `http://127.0.0.1:${port}/pay/v1/webhook/keys`;
  return state;
}

/** A self-signed certificate for hooks.example.test and 127.0.0.1, made with openssl at test time. */
export function selfSignedCert(): { key: string; cert: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kassa-cert-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=hooks.example.test',
        '-addext',
        'subjectAltName=DNS:hooks.example.test,IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(path.join(dir, 'key.pem'), 'utf8'), cert: readFileSync(path.join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
