// The dashboard spends from the app's per-client limit (RATE_LIMIT_PER_CLIENT, the checkout's): every
// route, the sign-in and invitation POSTs (each a 32 MiB scrypt) and the CSV included; over it, the
// dashboard's own 429 page with Retry-After, never the JSON envelope. The app's clock is held still,
// so the bucket refills only when the test moves it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { dashboardClient, member } from '../helpers/dashboard.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;
before(async () => {
  // 1 request per second, bursts of 2.
  app = await startPaymentsApp({ env: { RATE_LIMIT_PER_CLIENT: '1' } });
});
after(() => app.close());

const assertLimited = (response: { status: number; headers: Headers; text: string }, what: string) => {
  assert.equal(response.status, 429, what);
  assert.match(response.headers.get('content-type') ?? '', /^text\/html/, what);
  assert.ok(Number(response.headers.get('retry-after')) >= 1, what);
  assert.match(response.headers.get('content-security-policy') ?? '', /default-src 'none'/, what);
  assert.match(response.text, /<h1>Too many requests<\/h1>/, what);
  assert.match(response.text, /Try again in \d+ seconds?\./, what);
};

describe('dashboard: rate limits', () => {
  it('pages, sign-in, invitations and the CSV are limited per client with an HTML 429 and Retry-After; the bucket refills with time', async () => {
    app.clock.set('2026-11-26T00:00:00Z');
    const store = await app.store({ name: 'Limited shop' });
    const anonymous = dashboardClient(app.url);
    assert.equal((await anonymous.get('/dashboard/sign-in')).status, 200);
    assert.equal((await anonymous.get('/dashboard/sign-in')).status, 200);
    assertLimited(await anonymous.get('/dashboard/sign-in'), 'sign-in page');
    // A refused sign-in never reaches the password check.
    assertLimited(await anonymous.post('/dashboard/sign-in', { email: 'a@example.com', password: 'whatever it is' }), 'sign-in');
    assertLimited(await anonymous.post('/dashboard/invite/not-a-token', { password: 'whatever it is', confirm: 'whatever it is' }), 'invitation');
    assertLimited(await anonymous.get('/dashboard/no-such-page'), 'any path under /dashboard');

    // Time passes: the bucket is full again (2 requests), then refuses again.
    app.clock.advance(10_000);
    const owner = await member(app.url, app.pool, store.id, 'limited@example.com', 'owner');
    assert.equal((await owner.get(`/dashboard/stores/${store.id}/payments.csv`)).status, 200);
    assertLimited(await owner.get(`/dashboard/stores/${store.id}/payments.csv`), 'CSV');
    assertLimited(await owner.get(`/dashboard/stores/${store.id}/settings`), 'settings');
    // The JSON API keeps its envelope.
    const api = await app.request('GET', '/pay/v1/webhook/keys');
    assert.equal(api.status, 429);
    assert.equal(api.json.error.type, 'rate_limit_error');
    app.clock.real();
  });
});
