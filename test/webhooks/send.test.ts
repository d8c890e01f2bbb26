import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { postWebhook, type ResolveHost } from '../../src/webhooks/send.ts';
import { close, freePort, listen, selfSignedCert } from '../helpers/servers.ts';

interface Seen {
  method: string | undefined;
  url: string | undefined;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** An HTTP server on 127.0.0.1 recording requests and TCP connections. */
async function server(handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void) {
  const seen: Seen[] = [];
  let connections = 0;
  const srv = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      handler(req, res, body);
    });
  });
  srv.on('connection', () => connections++);
  const { port } = await listen(srv);
  return { srv, port, seen, connections: () => connections, url: `http://127.0.0.1:${port}/hook?x=1` };
}

const hooksLookup =
  (...addresses: string[]): ResolveHost =>
  async (hostname) => {
    if (hostname !== 'hooks.example.test') throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: net.isIP(address) }));
  };

const body = '{"payload":{"paymentID":"p1","status":"completed","metadata":{}},"signAt":"2025-01-01T00:00:00.000Z"}';
const headers = { 'Content-Type': 'application/json', 'X-Signature': 'c2ln', 'X-Signature-Kid': 'k1' };

describe('postWebhook over http (allowInsecure, loopback)', () => {
  it('2xx is success; the exact body and headers arrive', async () => {
    const s = await server((_req, res) => res.writeHead(200).end('thanks'));
    try {
      const result = await postWebhook({ url: s.url, body, headers, allowInsecure: true });
      assert.equal(result.ok, true);
      assert.equal(result.status, 200);
      assert.equal(result.error, undefined);
      assert.equal(result.responseSnippet, 'thanks');
      assert.equal(result.address, '127.0.0.1');
      assert.ok(result.durationMs >= 0 && result.durationMs < 5000);
      assert.equal(s.seen.length, 1);
      const [req] = s.seen;
      assert.equal(req?.method, 'POST');
      assert.equal(req?.url, '/hook?x=1');
      assert.equal(req?.body, body);
      assert.equal(req?.headers['content-type'], 'application/json');
      assert.equal(req?.headers['x-signature'], 'c2ln');
      assert.equal(req?.headers['x-signature-kid'], 'k1');
      assert.equal(req?.headers['content-length'], String(Buffer.byteLength(body)));
    } finally {
      await close(s.srv);
    }
  });

  it('counts UTF-8 bytes in Content-Length', async () => {
    const s = await server((_req, res) => res.writeHead(204).end());
    try {
      const text = '{"note":"crème ☕ 🚀"}';
      const result = await postWebhook({ url: s.url, body: text, headers, allowInsecure: true });
      assert.equal(result.ok, true);
      assert.equal(result.status, 204);
      assert.equal(s.seen[0]?.body, text);
    } finally {
      await close(s.srv);
    }
  });

  it('a 500 is a failure that reports the status and the body', async () => {
    const s = await server((_req, res) => res.writeHead(500).end('boom'));
    try {
      const result = await postWebhook({ url: s.url, body, headers, allowInsecure: true });
      assert.equal(result.ok, false);
      assert.equal(result.status, 500);
      assert.equal(result.error, 'HTTP 500');
      assert.equal(result.responseSnippet, 'boom');
    } finally {
      await close(s.srv);
    }
  });

  it('a 4xx is a failure too', async () => {
    const s = await server((_req, res) => res.writeHead(401).end());
    try {
      const result = await postWebhook({ url: s.url, body, headers, allowInsecure: true });
      assert.deepEqual([result.ok, result.status], [false, 401]);
    } finally {
      await close(s.srv);
    }
  });

  it('a 302 is not followed: the redirect target sees nothing', async () => {
    const target = await server((_req, res) => res.writeHead(200).end());
    const redirector = await server((_req, res) => res.writeHead(302, { location: target.url }).end());
    try {
      const result = await postWebhook({ url: redirector.url, body, headers, allowInsecure: true });
      assert.equal(result.ok, false);
      assert.equal(result.status, 302);
      assert.match(result.error ?? '', /redirect not followed \(HTTP 302 to http:\/\/127\.0\.0\.1/);
      assert.equal(redirector.seen.length, 1);
      assert.equal(target.seen.length, 0);
      assert.equal(target.connections(), 0);
    } finally {
      await close(target.srv);
      await close(redirector.srv);
    }
  });

  it('a server that never answers times out at timeoutMs', async () => {
    const s = await server(() => {
      /* never answers */
    });
    try {
      const result = await postWebhook({ url: s.url, body, headers, allowInsecure: true, timeoutMs: 300 });
      assert.equal(result.ok, false);
      assert.equal(result.status, undefined);
      assert.equal(result.error, 'timed out after 300 ms');
      assert.ok(result.durationMs >= 290 && result.durationMs < 3000, `durationMs ${result.durationMs}`);
    } finally {
      await close(s.srv);
    }
  });

  it('a slow resolver counts against the same deadline', async () => {
    const result = await postWebhook({
      url: 'https://hooks.example.test/hook',
      body,
      headers,
      timeoutMs: 200,
      lookup: () => new Promise(() => {}),
    });
    assert.equal(result.ok, false);
    assert.equal(result.error, 'timed out after 200 ms');
  });

  it('an answered 200 whose body stalls is still a success (the receiver has processed it)', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200);
      res.write('partial');
    });
    try {
      const result = await postWebhook({ url: s.url, body, headers, allowInsecure: true, timeoutMs: 300 });
      assert.equal(result.ok, true);
      assert.equal(result.status, 200);
      assert.equal(result.responseSnippet, 'partial');
    } finally {
      await close(s.srv);
    }
  });

  it('connection refused is reported, not thrown', async () => {
    const port = await freePort();
    const result = await postWebhook({ url: `http://127.0.0.1:${port}/hook`, body, headers, allowInsecure: true });
    assert.equal(result.ok, false);
    assert.equal(result.status, undefined);
    assert.equal(result.error, 'connection refused');
  });

  it('reads at most maxResponseBytes of the response', async () => {
    const s = await server((_req, res) => res.writeHead(200).end('x'.repeat(1024 * 1024)));
    try {
      const result = await postWebhook({ url: s.url, body, headers, allowInsecure: true, maxResponseBytes: 1000 });
      assert.equal(result.ok, true);
      assert.equal(result.responseSnippet?.length, 1000);
    } finally {
      await close(s.srv);
    }
  });

  it('the default cap is 64 KiB, and an endless body does not hang', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200);
      const chunk = 'y'.repeat(16 * 1024);
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk)) {
          /* fill the buffer */
        }
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    try {
      const result = await postWebhook({ url: s.url, body, headers, allowInsecure: true, timeoutMs: 5000 });
      assert.equal(result.ok, true);
      assert.equal(result.responseSnippet?.length, 64 * 1024);
      assert.ok(result.durationMs < 4000);
    } finally {
      await close(s.srv);
    }
  });

  it('a host name resolving to loopback is allowed with allowInsecure, and connects to the checked address', async () => {
    const s = await server((_req, res) => res.writeHead(200).end());
    try {
      const result = await postWebhook({
        url: `http://hooks.example.test:${s.port}/hook`,
        body,
        headers,
        allowInsecure: true,
        lookup: hooksLookup('127.0.0.1'),
      });
      assert.equal(result.ok, true);
      assert.equal(result.address, '127.0.0.1');
      assert.equal(s.seen[0]?.headers.host, `hooks.example.test:${s.port}`);
    } finally {
      await close(s.srv);
    }
  });

  it('DNS failure is reported', async () => {
    const result = await postWebhook({ url: 'https://nowhere.example.test/', body, headers, lookup: hooksLookup('8.8.8.8') });
    assert.equal(result.ok, false);
    assert.match(result.error ?? '', /^host not found/);
  });

  it('bad input never throws', async () => {
    assert.deepEqual((await postWebhook({ url: 'not a url', body, headers })).error, 'invalid URL');
    const s = await server((_req, res) => res.writeHead(200).end());
    try {
      const result = await postWebhook({ url: s.url, body, headers: { 'X-Bad': 'a\r\nb' }, allowInsecure: true });
      assert.equal(result.ok, false);
      assert.match(result.error ?? '', /header/i);
      assert.equal(s.seen.length, 0);
    } finally {
      await close(s.srv);
    }
  });
});

describe('postWebhook refuses non-public destinations (allowInsecure=false)', () => {
  let target: Awaited<ReturnType<typeof server>>;
  before(async () => {
    target = await server((_req, res) => res.writeHead(200).end());
  });
  after(async () => {
    await close(target.srv);
  });

  it('refuses http', async () => {
    const result = await postWebhook({ url: target.url, body, headers });
    assert.equal(result.ok, false);
    assert.equal(result.error, 'only https URLs are allowed');
    assert.equal(target.connections(), 0);
  });

  it('refuses a host name that resolves to loopback, at connect time, before any byte is sent', async () => {
    const result = await postWebhook({
      url: `https://hooks.example.test:${target.port}/hook`,
      body,
      headers,
      lookup: hooksLookup('127.0.0.1'),
    });
    assert.equal(result.ok, false);
    assert.equal(result.status, undefined);
    assert.equal(result.error, 'hooks.example.test resolves to a loopback address (127.0.0.1); refused');
    assert.equal(target.connections(), 0);
    assert.equal(target.seen.length, 0);
  });

  it('refuses when ANY resolved address is not public', async () => {
    for (const addresses of [
      ['93.184.216.34', '10.0.0.7'],
      ['2606:4700:4700::1111', '::1'],
      ['93.184.216.34', '::ffff:127.0.0.1'],
      ['fd00::1'],
      ['169.254.169.254'],
    ]) {
      const result = await postWebhook({
        url: `https://hooks.example.test:${target.port}/hook`,
        body,
        headers,
        lookup: hooksLookup(...addresses),
      });
      assert.equal(result.ok, false, addresses.join(','));
      assert.match(result.error ?? '', /refused$/);
    }
    assert.equal(target.connections(), 0);
  });

  it('refuses IP-literal hosts, in every spelling', async () => {
    for (const host of ['127.0.0.1', '2130706433', '0x7f.1', '127.1', '[::1]', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '10.0.0.1', '0.0.0.0']) {
      const result = await postWebhook({ url: `https://${host}:${target.port}/hook`, body, headers });
      assert.equal(result.ok, false, host);
      assert.match(result.error ?? '', /; refused$/, host);
    }
    assert.equal(target.connections(), 0);
  });

  it('refuses link-local and unspecified even with allowInsecure', async () => {
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[fe80::1]/', `http://0.0.0.0:${target.port}/`]) {
      const result = await postWebhook({ url, body, headers, allowInsecure: true });
      assert.equal(result.ok, false, url);
      assert.match(result.error ?? '', /refused$/, url);
    }
    const viaDns = await postWebhook({
      url: `http://hooks.example.test:${target.port}/`,
      body,
      headers,
      allowInsecure: true,
      lookup: hooksLookup('169.254.169.254'),
    });
    assert.match(viaDns.error ?? '', /link-local address \(169\.254\.169\.254\); refused$/);
    assert.equal(target.connections(), 0);
  });

  it('refuses URLs with credentials', async () => {
    const result = await postWebhook({ url: 'https://u:p@example.com/', body, headers });
    assert.equal(result.error, 'URL must not contain credentials');
  });
});

describe('postWebhook over https (self-signed certificate made with openssl)', () => {
  // A successful https delivery to a loopback server is only possible with allowInsecure (loopback
  // is never public); the certificate is still verified, against the test CA passed as `ca`.
  let tls: { key: string; cert: string };
  let srv: https.Server;
  let port: number;
  let connections = 0;
  const received: string[] = [];
  before(async () => {
    tls = selfSignedCert();
    srv = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200).end('ok');
      });
    });
    srv.on('connection', () => connections++);
    ({ port } = await listen(srv));
  });
  after(async () => {
    await close(srv);
  });

  it('delivers to a verified certificate through the checking lookup (SNI and host name check)', async () => {
    const result = await postWebhook({
      url: `https://hooks.example.test:${port}/hook`,
      body,
      headers,
      allowInsecure: true,
      lookup: hooksLookup('127.0.0.1'),
      ca: tls.cert,
    });
    assert.equal(result.error, undefined);
    assert.equal(result.ok, true);
    assert.equal(result.status, 200);
    assert.equal(received.at(-1), body);
  });

  it('an untrusted certificate is a reported TLS failure', async () => {
    const result = await postWebhook({
      url: `https://hooks.example.test:${port}/hook`,
      body,
      headers,
      allowInsecure: true,
      lookup: hooksLookup('127.0.0.1'),
    });
    assert.equal(result.ok, false);
    assert.match(result.error ?? '', /^TLS error: self[- ]signed certificate/);
  });

  it('a certificate for another name is a reported TLS failure', async () => {
    const result = await postWebhook({
      url: `https://other.example.test:${port}/hook`,
      body,
      headers,
      allowInsecure: true,
      lookup: async () => [{ address: '127.0.0.1', family: 4 }],
      ca: tls.cert,
    });
    assert.equal(result.ok, false);
    assert.match(result.error ?? '', /^TLS error: .*other\.example\.test/);
  });

  it('without allowInsecure the loopback server is never contacted', async () => {
    const before = connections;
    const result = await postWebhook({
      url: `https://hooks.example.test:${port}/hook`,
      body,
      headers,
      lookup: hooksLookup('127.0.0.1'),
      ca: tls.cert,
    });
    assert.equal(result.ok, false);
    assert.match(result.error ?? '', /refused$/);
    assert.equal(connections, before);
  });
});
