// GET /metrics: Prometheus text, kept from the public unless a token is given or the client is local.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

describe('GET /metrics', () => {
  let app: TestApp;
  let secured: TestApp;
  before(async () => {
    app = await startPaymentsApp();
    secured = await startPaymentsApp({ env: { METRICS_TOKEN: 'scrape-secret' } });
  });
  after(async () => {
    await app.close();
    await secured.close();
  });

  it('serves loopback clients without a token: latency by route, transitions, queue depth, payments by status', async () => {
    const store = await app.store();
    const created = await app.request('POST', '/v1/payments', { token: store.token, body: { amount: '1', currency: 'USD' } });
    assert.equal(created.status, 201);
    const response = await app.request('GET', '/metrics');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /text\/plain/);
    assert.match(response.text, /kassa_http_request_duration_seconds_bucket\{[^}]*route="\/v1\/payments"/);
    assert.match(response.text, /kassa_payment_transitions_total\{to="created"\} \d+/);
    assert.match(response.text, /kassa_jobs_queued|kassa_jobs_oldest_age_seconds/);
    assert.match(response.text, /kassa_payments\{status="created"\} 1/);
  });

  it('with METRICS_TOKEN, needs the bearer token', async () => {
    assert.equal((await secured.request('GET', '/metrics')).status, 404);
    assert.equal((await secured.request('GET', '/metrics', { headers: { authorization: 'Bearer wrong' } })).status, 404);
    const ok = await secured.request('GET', '/metrics', { headers: { authorization: 'Bearer scrape-secret' } });
    assert.equal(ok.status, 200);
    assert.match(ok.text, /kassa_process_cpu_user_seconds_total/);
  });
});
