// GET /readyz (issue 21): readiness for load balancers beside /healthz (liveness). 200 while the
// chain reader keeps up with the sandbox chain; 503 with the reason once it is more than
// READY_MAX_BLOCKS_BEHIND blocks behind (a stopped reader falls behind as the chain goes on), and
// before the reader has read a block. The body is the served OpenAPI document's (the test app checks).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from '../../src/db/pool.ts';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';

let app: ChainTestApp;

before(async () => {
  app = await startChainApp({ READY_MAX_BLOCKS_BEHIND: '5' });
});
after(() => app.close());

async function readyUntil(status: number) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const response = await app.request('GET', '/readyz');
    if (response.status === status || Date.now() > deadline) return response;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('GET /readyz', () => {
  it('is ready while the chain reader follows the chain', async () => {
    await app.settle();
    const response = await readyUntil(200);
    assert.equal(response.status, 200, response.text);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.equal(response.json.ready, true);
    assert.deepEqual(response.json.reasons, []);
    assert.equal(response.json.database, 'ok');
    assert.equal(response.json.chain.network, 'sandbox');
    assert.equal(response.json.chain.maxBehindBlocks, 5);
    assert.ok(response.json.chain.behindBlocks <= 5);
    // Liveness is unchanged.
    assert.deepEqual((await app.request('GET', '/healthz')).json, { ok: true });
  });

  it('answers 503 saying why once the reader is more than READY_MAX_BLOCKS_BEHIND blocks behind', async () => {
    await app.stopReader();
    // The sandbox seals a block every 400 ms; the stopped reader falls behind.
    const response = await readyUntil(503);
    assert.equal(response.status, 503, response.text);
    assert.equal(response.json.ready, false);
    assert.equal(response.json.database, 'ok');
    assert.ok(response.json.chain.behindBlocks > 5);
    assert.match(response.json.reasons[0], /chain reader is about \d+ blocks behind .*READY_MAX_BLOCKS_BEHIND=5/);
    // Liveness is not readiness: the process is alive.
    assert.equal((await app.request('GET', '/healthz')).status, 200);
  });

  it('answers 503 before the chain reader has read a block', async () => {
    await app.pool.query(sql.unsafe`delete from chain_reader`);
    const response = await app.request('GET', '/readyz');
    assert.equal(response.status, 503);
    assert.deepEqual(response.json.reasons, ['the chain reader has not read a block yet']);
    assert.equal(response.json.chain.lastBlock, null);
  });

  it('is in the served OpenAPI document', async () => {
    const document = (await app.request('GET', '/openapi.json')).json;
    const responses = document.paths['/readyz'].get.responses;
    // Ready and not ready answer the readiness body (the HTTP layer's own refusals are the envelope, as everywhere).
    for (const status of ['200', '503']) assert.ok(responses[status].content['application/json'].schema.properties.ready, status);
  });
});
