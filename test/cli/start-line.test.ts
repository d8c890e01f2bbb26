// What a new user sees from `kassa start`: a start line naming every URL and the next command, and
// request lines for their own requests, not for the sandbox's chain API (the chain reader asks it at every block),
// each field once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SANDBOX_JSON_RPC_PATH } from '../../src/chain/sandbox/path.ts';
import { openPool } from '../../src/db/pool.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createTestStore } from '../helpers/factories.ts';
import { startKassaProcess, type KassaProcess, type LogLine } from '../helpers/kassaProcess.ts';

describe('kassa start, as a new user sees it', () => {
  let db: TestDatabase;
  let kassa: KassaProcess;
  let started: LogLine;

  before(async () => {
    db = await createTestDatabase();
    kassa = await startKassaProcess({ env: { DATABASE_URL: db.url } });
    started = kassa.started;
  });
  after(async () => {
    await kassa?.stop();
    await db.drop();
  });

  it('names the API, checkout, OpenAPI and metrics URLs and the next step (on an empty database: the first-run setup and its code)', async () => {
    const url = started.url as string;
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(started.apiUrl, url);
    assert.equal(started.checkoutUrl, `${url}/pay/{payment id}`);
    assert.equal(started.openapiUrl, `${url}/openapi.json`);
    assert.equal(started.metricsUrl, `${url}/metrics`);
    // An empty database: the next step is the dashboard's first-run setup, with its one-time code.
    assert.equal(started.setupUrl, `${url}/dashboard/setup`);
    assert.match(String(started.setupCode), /^[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/);
    assert.equal(started.next, `open ${url}/dashboard/setup in a browser and type the setup code ${started.setupCode} to make your store and your account`);
    for (const target of [started.openapiUrl, started.metricsUrl]) {
      assert.equal((await fetch(target as string)).status, 200, `${target} answers`);
    }
  });

  it('with PORT=0 and BASE_URL unset, every link it gives names the port it bound (not :0)', async () => {
    const url = started.url as string;
    const document = (await (await fetch(`${url}/openapi.json`)).json()) as { servers: Array<{ url: string }> };
    assert.equal(document.servers[0]!.url, url);
    const pool = await openPool(db.url, { maxPoolSize: 1 });
    try {
      const store = await createTestStore(pool);
      const response = await fetch(`${url}/v1/payments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${store.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ amount: '1', currency: 'USD' }),
      });
      const payment = (await response.json()) as { id: string; checkoutURL: string };
      assert.equal(response.status, 201, JSON.stringify(payment));
      assert.equal(payment.checkoutURL, `${url}/pay/${payment.id}`);
    } finally {
      await pool.end();
    }
  });

  it('logs requests at info, except the sandbox chain API ones (debug)', async () => {
    const url = started.url as string;
    const chain = await fetch(`${url}${SANDBOX_JSON_RPC_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 1, jsonrpc: '2.0', method: 'getMasterchainInfo', params: {} }),
    });
    assert.equal(chain.status, 200);
    await chain.arrayBuffer();
    assert.equal((await fetch(`${url}/healthz`)).status, 200);
    for (let i = 0; i < 50 && !kassa.lines().some((line) => line.msg === 'request' && line.path === '/healthz'); i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const requests = kassa.lines().filter((line) => line.msg === 'request');
    assert.ok(
      requests.some((line) => line.path === '/healthz' && line.level === 30),
      kassa.output(),
    );
    assert.deepEqual(
      requests.filter((line) => String(line.path).startsWith('/sandbox/toncenter')),
      [],
      'no info line for the chain API',
    );
    // Each field once: an authenticated request's line names its store once (JSON: stdout is no terminal).
    const created = kassa
      .output()
      .split('\n')
      .filter((line) => line.includes('"msg":"request"') && line.includes('"path":"/v1/payments"'));
    assert.equal(created.length, 1, kassa.output());
    assert.equal(created[0]!.match(/"storeId"/g)?.length, 1, created[0]);
  });
});
