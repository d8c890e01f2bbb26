// `kassa start` as a real process, and the API's behaviour with its database down.
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.ts';
import { openPool } from '../../src/db/pool.ts';
import { createApp } from '../../src/http/app.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { createTestStore } from '../helpers/factories.ts';
import { startKassaProcess } from '../helpers/kassaProcess.ts';

describe('kassa start', () => {
  it('serves /healthz, then shuts down cleanly on SIGTERM', async () => {
    const db = await createTestDatabase();
    after(() => db.drop());
    const kassa = await startKassaProcess({ env: { DATABASE_URL: db.url } });
    const url = kassa.url;
    const health = await fetch(`${url}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { ok: true });

    // End to end in one process: a sandbox transfer is found by the worker's chain reader, which reads
    // the emulated chain over HTTP, and the payment completes.
    const { token } = await createTestStore(db.pool, { name: 'E2E' });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const created = await fetch(`${url}/v1/payments`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ amount: '5', currency: 'USD', payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } }),
    });
    assert.equal(created.status, 201);
    const payment = (await created.json()) as any;
    const sent = await fetch(`${url}/sandbox/v1/transfers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ to: payment.paymentDetails.address, coin: 'USDT', amount: payment.paymentDetails.coinAmount }),
    });
    assert.equal(sent.status, 201);
    let status = 'pending';
    for (let i = 0; i < 100 && status !== 'completed'; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = ((await (await fetch(`${url}/v1/payments/${payment.id}/status`, { headers })).json()) as any).status;
    }
    assert.equal(status, 'completed', kassa.output());

    assert.equal(await kassa.stop(), 0, kassa.output());
    assert.match(kassa.output(), /"msg":"shut down"/);
    assert.doesNotMatch(kassa.output(), new RegExp(token.slice(0, 40)), 'no token in the logs');
  });
});

describe('database down', () => {
  it('answers 503 with Retry-After from /healthz and authenticated routes', async () => {
    // The app reaches PostgreSQL through a TCP relay that we then cut.
    const db = await createTestDatabase();
    const target = new URL(db.url);
    const sockets = new Set<net.Socket>();
    const relay = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      sockets.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const relayed = new URL(db.url);
    relayed.host = `127.0.0.1:${(relay.address() as AddressInfo).port}`;
    const config = loadConfig({ DATABASE_URL: relayed.toString(), RATE_LIMIT_PER_STORE: '0' });
    const pool = await openPool(config.databaseUrl!);
    const app = createApp({ config, pool, log: pino({ level: 'silent' }), now: () => new Date() });
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    after(async () => {
      server.close();
      await pool.end();
      await db.drop();
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    relay.close();
    for (const socket of sockets) socket.destroy();

    const health = await fetch(`${base}/healthz`);
    assert.equal(health.status, 503);
    assert.equal(health.headers.get('retry-after'), '5');
    const body = (await health.json()) as any;
    assert.equal(body.error.type, 'api_error');
    assert.equal(body.error.code, 'service_unavailable');
    // Readiness says so too, in its own body.
    const ready = await fetch(`${base}/readyz`);
    assert.equal(ready.status, 503);
    assert.deepEqual(((await ready.json()) as any).reasons, ['the database does not answer']);

    // A well-formed token cannot be checked without the database: 503, not 401.
    const token = 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2ln';
    const methods = await fetch(`${base}/v1/payment-methods`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(methods.status, 503);
    assert.equal(((await methods.json()) as any).error.code, 'service_unavailable');
  });
});
