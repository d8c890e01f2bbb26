// Keep-alive: the API's server (createApiServer, as `kassa start` runs it) keeps an idle connection
// longer than the proxies in front keep theirs (65 s by default, above their 60 s), so a client or
// proxy that reuses a connection after a pause finds it open. Here a request, 10 s of silence, and
// a second request on the same connection.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.ts';
import { createApp } from '../../src/http/app.ts';
import { createApiServer } from '../../src/http/apiServer.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

describe('keep-alive', () => {
  let db: TestDatabase;
  let server: http.Server;
  let port: number;
  before(async () => {
    db = await createTestDatabase();
    const config = loadConfig({ DATABASE_URL: db.url, PORT: '0' });
    assert.equal(config.keepAliveTimeoutMs, 65_000);
    server = createApiServer(createApp({ config, pool: db.pool, log: pino({ level: 'silent' }), now: () => new Date() }).callback(), {
      keepAliveTimeoutMs: config.keepAliveTimeoutMs,
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await db.drop();
  });

  /** GET /healthz through `agent`: the status, and whether it went over a connection used before. */
  const get = (agent: http.Agent): Promise<{ status: number; reused: boolean; localPort: number }> =>
    new Promise((resolve, reject) => {
      const request = http.get({ host: '127.0.0.1', port, path: '/healthz', agent }, (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0, reused: request.reusedSocket, localPort: request.socket!.localPort! }));
      });
      request.on('error', reject);
    });

  it('reuses a connection left idle for 10 s', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await get(agent);
      assert.equal(first.status, 200);
      assert.equal(first.reused, false);
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      const second = await get(agent);
      assert.equal(second.status, 200);
      assert.equal(second.reused, true, 'the idle connection was still open');
      assert.equal(second.localPort, first.localPort);
    } finally {
      agent.destroy();
    }
  });

  it('says how long it keeps a connection (Keep-Alive: timeout=65) and KEEP_ALIVE_TIMEOUT_SECONDS sets it', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/healthz`);
    await response.text();
    assert.equal(response.headers.get('keep-alive'), 'timeout=65');
    assert.equal(loadConfig({ KEEP_ALIVE_TIMEOUT_SECONDS: '120' }).keepAliveTimeoutMs, 120_000);
    assert.throws(() => loadConfig({ KEEP_ALIVE_TIMEOUT_SECONDS: '0' }), /KEEP_ALIVE_TIMEOUT_SECONDS must be an integer from 1 to 3600/);
  });
});
