// Kassa behind real reverse proxies (node:http servers that append X-Forwarded-For as nginx does),
// with clients on distinct loopback addresses that forge their own X-Forwarded-For: the client
// address is the one the trusted proxy saw, /metrics stays closed through a proxy, and the
// process caps its live-status streams whatever the number of addresses they come from.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import type { TestApp } from '../helpers/app.ts';
import { assertError, startPaymentsApp } from '../helpers/payments.ts';
import { requestFrom, startReverseProxy, type ClientResponse, type ReverseProxy } from '../helpers/proxy.ts';

const forged = (): string => `${crypto.randomInt(1, 224)}.${crypto.randomInt(256)}.${crypto.randomInt(256)}.${crypto.randomInt(1, 255)}`;

async function openPayment(app: TestApp): Promise<string> {
  const store = await app.store();
  const created = await app.request('POST', '/v1/payments', { token: store.token, body: { amount: '1', currency: 'USD' } });
  assert.equal(created.status, 201, created.text);
  return created.json.id;
}

function asResponse(response: ClientResponse) {
  return { status: response.status, headers: new Headers(response.headers as Record<string, string>), json: response.json, text: response.text };
}

describe("TRUST_PROXY=true behind one proxy: the address the proxy saw, never the client's X-Forwarded-For", () => {
  let app: TestApp;
  let proxy: ReverseProxy;
  let paymentId: string;
  before(async () => {
    app = await startPaymentsApp({ env: { TRUST_PROXY: 'true', METRICS_TOKEN: 'scrape-secret', RATE_LIMIT_PER_CLIENT: '1' } });
    proxy = await startReverseProxy(app.url);
    paymentId = await openPayment(app);
  });
  after(async () => {
    await proxy.close();
    await app.close();
  });

  it('the per-client checkout limit holds against forged X-Forwarded-For values, per real client', async () => {
    const url = `${proxy.url}/pay/v1/checkout/payments/${paymentId}`;
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await requestFrom('127.0.0.2', url, { headers: { 'x-forwarded-for': forged() } })).status);
    assert.deepEqual(statuses, [200, 200, 429, 429], 'a burst of twice RATE_LIMIT_PER_CLIENT, then 429');
    // Another client behind the same proxy has its own budget.
    assert.equal((await requestFrom('127.0.0.3', url, { headers: { 'x-forwarded-for': forged() } })).status, 200);
  });

  it('the failed-authentication budget holds against forged X-Forwarded-For values', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      const response = await requestFrom('127.0.0.4', `${proxy.url}/v1/payments`, {
        headers: {
          'x-forwarded-for': forged(),
          authorization: `Bearer ${crypto.randomBytes(12).toString('base64url')}.e30.${crypto.randomBytes(32).toString('base64url')}`,
        },
      });
      statuses.push(response.status);
    }
    assert.deepEqual(statuses, [401, 401, 429, 429]);
  });

  it('the per-client stream cap (50) holds against forged X-Forwarded-For values', async () => {
    const limitless = await startPaymentsApp({ env: { TRUST_PROXY: 'true', METRICS_TOKEN: 'scrape-secret' } });
    const hop = await startReverseProxy(limitless.url);
    const opened: ClientResponse[] = [];
    try {
      const id = await openPayment(limitless);
      const url = `${hop.url}/pay/v1/checkout/payments/${id}/events`;
      for (let i = 0; i < 50; i += 1) {
        const stream = await requestFrom('127.0.0.5', url, { headers: { 'x-forwarded-for': forged() }, stream: true });
        opened.push(stream);
        assert.equal(stream.status, 200, `stream ${i + 1}`);
      }
      const refused = await requestFrom('127.0.0.5', url, { headers: { 'x-forwarded-for': forged() }, stream: true });
      opened.push(refused);
      assertError(asResponse(refused), 429, 'rate_limit_error', 'rate_limit_exceeded');
      const other = await requestFrom('127.0.0.6', url, { stream: true });
      opened.push(other);
      assert.equal(other.status, 200, 'another client still gets a stream');
    } finally {
      for (const stream of opened) stream.response.destroy();
      await hop.close();
      await limitless.close();
    }
  });

  it('/metrics needs METRICS_TOKEN through the proxy, even for a loopback client forging X-Forwarded-For: 127.0.0.1', async () => {
    assert.equal((await requestFrom('127.0.0.1', `${proxy.url}/metrics`)).status, 404);
    assert.equal((await requestFrom('127.0.0.1', `${proxy.url}/metrics`, { headers: { 'x-forwarded-for': '127.0.0.1' } })).status, 404);
    const scraped = await requestFrom('127.0.0.1', `${proxy.url}/metrics`, { headers: { authorization: 'Bearer scrape-secret' } });
    assert.equal(scraped.status, 200);
    assert.match(scraped.text, /kassa_http_request_duration_seconds/);
  });
});

describe('TRUST_PROXY=2 behind two proxies', () => {
  let app: TestApp;
  let inner: ReverseProxy;
  let outer: ReverseProxy;
  before(async () => {
    app = await startPaymentsApp({ env: { TRUST_PROXY: '2', METRICS_TOKEN: 'scrape-secret', RATE_LIMIT_PER_CLIENT: '1' } });
    inner = await startReverseProxy(app.url);
    outer = await startReverseProxy(inner.url);
  });
  after(async () => {
    await outer.close();
    await inner.close();
    await app.close();
  });

  it('the client address is the one the outer proxy saw', async () => {
    const url = `${outer.url}/pay/v1/checkout/payments/${await openPayment(app)}`;
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await requestFrom('127.0.0.7', url, { headers: { 'x-forwarded-for': `${forged()}, ${forged()}` } })).status);
    assert.deepEqual(statuses, [200, 200, 429]);
    assert.equal((await requestFrom('127.0.0.8', url)).status, 200, 'another client, its own budget');
  });
});

describe('/metrics behind a same-host proxy without TRUST_PROXY', () => {
  let app: TestApp;
  let proxy: ReverseProxy;
  before(async () => {
    app = await startPaymentsApp();
    proxy = await startReverseProxy(app.url);
  });
  after(async () => {
    await proxy.close();
    await app.close();
  });

  it('answers a loopback scraper but not a request the proxy forwarded (its socket is loopback too)', async () => {
    assert.equal((await requestFrom('127.0.0.1', `${app.url}/metrics`)).status, 200);
    const forwarded = await requestFrom('127.0.0.9', `${proxy.url}/metrics`);
    assertError(asResponse(forwarded), 404, 'not_found_error', 'route_not_found');
  });

  it('TRUST_PROXY without METRICS_TOKEN is refused at start', () => {
    assert.throws(() => loadConfig({ TRUST_PROXY: 'true' }), /METRICS_TOKEN is required when TRUST_PROXY is on/);
    assert.equal(loadConfig({ TRUST_PROXY: '3', METRICS_TOKEN: 't' }).trustProxyHops, 3);
    assert.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxyHops, 0);
    assert.throws(() => loadConfig({ TRUST_PROXY: 'yes', METRICS_TOKEN: 't' }), /TRUST_PROXY must be/);
  });
});

describe('CHECKOUT_STREAMS_MAX: live-status streams the process holds at once', () => {
  let app: TestApp;
  before(async () => {
    app = await startPaymentsApp({ env: { CHECKOUT_STREAMS_MAX: '3' } });
  });
  after(() => app.close());

  it('beyond the cap, from any address: 503 too_many_streams with Retry-After; a closed stream frees its place', async () => {
    const url = `${app.url}/pay/v1/checkout/payments/${await openPayment(app)}/events`;
    const opened: ClientResponse[] = [];
    try {
      for (const from of ['127.0.0.2', '127.0.0.3', '127.0.0.4']) {
        const stream = await requestFrom(from, url, { stream: true });
        assert.equal(stream.status, 200);
        opened.push(stream);
      }
      const refused = await requestFrom('127.0.0.5', url, { stream: true });
      opened.push(refused);
      assertError(asResponse(refused), 503, 'api_error', 'too_many_streams');
      assert.equal(refused.headers['retry-after'], '30');

      opened.shift()!.response.destroy();
      let status = 0;
      for (let attempt = 0; attempt < 50 && status !== 200; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const again = await requestFrom('127.0.0.5', url, { stream: true });
        status = again.status;
        opened.push(again);
      }
      assert.equal(status, 200);
    } finally {
      for (const stream of opened) stream.response.destroy();
    }
  });
});
