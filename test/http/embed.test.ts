// <kassa-pay>'s HTTP surface (issue 30 items 4–5; docs/API.md "The drop-in element") against the real
// app and Postgres: the module served to any page; a store's embedOrigins refused unless each is an
// origin (https, or http on loopback) and kept normalised; CORS on the element's reads (the JSON view,
// the event stream, a link's view, the methods) for listed origins only; the checkout framed only by
// the listed origin it was opened for (frame-ancestors, no X-Frame-Options, embed.js), through a
// link's visit too; and where payments and links say they came from.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { sql, z } from '../../src/db/pool.ts';
import { embedOrigins, findStore, updateStore } from '../../src/stores/stores.ts';
import { FormProblem } from '../../src/errors.ts';
import type { TestApp } from '../helpers/app.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

const SHOP = 'https://shop.example';
const OTHER = 'https://evil.example';

let app: TestApp;
let store: Awaited<ReturnType<TestApp['store']>>;

before(async () => {
  app = await startPaymentsApp();
  store = await app.store({ name: 'Embedding shop', methods: 'TON/TON,USDT/TON' });
  await updateStore(app.pool, store.id, { 'embed-origins': `${SHOP}, http://localhost:8080` });
});
after(() => app.close());

async function createPayment(body: Record<string, unknown> = { amount: '2', currency: 'TON' }) {
  const created = await app.request('POST', '/v1/payments', { token: store.token, body });
  assert.equal(created.status, 201, created.text);
  return created.json;
}

const get = (path: string, origin?: string) => fetch(`${app.url}${path}`, { headers: origin ? { origin } : {}, redirect: 'manual' });

describe('<kassa-pay>', () => {
  it('serves its module to any page: JavaScript, no build step, CORS for a module script', async () => {
    const response = await get('/pay/v1/kassa-pay.js', OTHER);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type')!, /^text\/javascript/);
    assert.equal(response.headers.get('access-control-allow-origin'), '*');
    const text = await response.text();
    assert.match(text, /customElements\.define\('kassa-pay', KassaPay\)/);
    assert.doesNotMatch(text, /^\s*import\s/m, 'no dependency');
    const again = await fetch(`${app.url}/pay/v1/kassa-pay.js`, { headers: { 'if-none-match': response.headers.get('etag')! } });
    assert.equal(again.status, 304);
  });

  it('embedOrigins: origins only (https, or http on loopback), normalised, at most 20; "" lists none', async () => {
    assert.equal(embedOrigins('HTTPS://Shop.Example:443/, https://shop.example, http://127.0.0.1:5173'), 'https://shop.example,http://127.0.0.1:5173');
    assert.equal(embedOrigins(' '), null);
    for (const [value, message] of [
      ['http://shop.example', /must be https:\/\//],
      ['https://shop.example/checkout', /origin only/],
      ['https://user:pw@shop.example', /origin only/],
      ['https://shop.example?x=1', /origin only/],
      ['shop.example', /not an origin|origin only|must be https/],
      ['javascript:alert(1)', /origin only|must be https/],
      ['https://shop.example;script-src', /origin only|must name a host|not an origin/],
      [Array.from({ length: 21 }, (_, i) => `https://s${i}.example`).join(','), /at most 20/],
    ] as const) {
      assert.throws(() => embedOrigins(value), message, value.slice(0, 60));
    }
    // Through the store's update: refused with its flag, nothing changed.
    await assert.rejects(updateStore(app.pool, store.id, { 'embed-origins': 'http://shop.example' }), (error: unknown) => {
      assert.ok(error instanceof FormProblem);
      assert.equal(error.field, 'embed-origins');
      return true;
    });
    assert.deepEqual((await findStore(app.pool, store.id))!.embedOrigins, [SHOP, 'http://localhost:8080']);
    const other = await app.store({ name: 'Not embedding' });
    assert.deepEqual((await findStore(app.pool, other.id))!.embedOrigins, []);
  });

  it('CORS on the JSON view, the event stream and the methods: the listed origin only, never *', async () => {
    const payment = await createPayment();
    const view = `/pay/v1/checkout/payments/${payment.id}`;
    const listed = await get(view, SHOP);
    assert.equal(listed.status, 200);
    assert.equal(listed.headers.get('access-control-allow-origin'), SHOP);
    assert.match(listed.headers.get('vary')!, /Origin/i);
    assert.equal(listed.headers.get('access-control-allow-credentials'), null);
    assert.equal((await get(view, OTHER)).headers.get('access-control-allow-origin'), null);
    assert.equal((await get(view)).headers.get('access-control-allow-origin'), null);
    // Another store's listed origin reads nothing of this store's payment.
    const other = await app.store({ name: 'Other shop' });
    await updateStore(app.pool, other.id, { 'embed-origins': OTHER });
    assert.equal((await get(view, OTHER)).headers.get('access-control-allow-origin'), null);

    // The stream's headers, then the connection closed (its own socket: nothing pooled is reset).
    const streamHeaders = (origin: string) =>
      new Promise<{ status: number | undefined; allowOrigin: string | undefined }>((resolve, reject) => {
        const request = http.get(`${app.url}${view}/events`, { headers: { origin, accept: 'text/event-stream' }, agent: false }, (response) => {
          resolve({ status: response.statusCode, allowOrigin: response.headers['access-control-allow-origin'] as string | undefined });
          request.destroy();
        });
        request.on('error', (error) => ((error as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(error)));
      });
    const stream = await streamHeaders(SHOP);
    assert.equal(stream.status, 200);
    assert.equal(stream.allowOrigin, SHOP);
    assert.equal((await streamHeaders(OTHER)).allowOrigin, undefined);

    const methods = await get(`${view}/methods`, SHOP);
    assert.equal(methods.headers.get('access-control-allow-origin'), SHOP);
    const body = await methods.json();
    assert.deepEqual(
      body.data.map((m: { coin: string; chain: string }) => `${m.coin}/${m.chain}`),
      ['TON/TON', 'USDT/TON'],
    );
    assert.equal(body.data[0].coinAmount, '2');
    const unknown = await get(`/pay/v1/checkout/payments/${crypto.randomUUID()}/methods`, SHOP);
    assert.equal(unknown.status, 404);
    assert.equal((await unknown.json()).error.code, 'payment_not_found');
  });

  it('a link’s public view for the element: its state and price, CORS for the listed origin', async () => {
    const created = await app.request('POST', '/v1/payment-links', { token: store.token, body: { currency: 'USD', minAmount: '5', description: 'Tip' } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.createdVia, 'api');
    const read = await get(`/pay/v1/checkout/links/${created.json.id}`, SHOP);
    assert.equal(read.status, 200);
    assert.equal(read.headers.get('access-control-allow-origin'), SHOP);
    assert.deepEqual(await read.json(), { id: created.json.id, state: 'open', currency: 'USD', minAmount: '5', description: 'Tip' });
    assert.equal((await get(`/pay/v1/checkout/links/${created.json.id}`, OTHER)).headers.get('access-control-allow-origin'), null);
    const missing = await get(`/pay/v1/checkout/links/${crypto.randomUUID()}`, SHOP);
    assert.equal(missing.status, 404);
    assert.equal((await missing.json()).error.code, 'payment_link_not_found');
    const malformed = await get('/pay/v1/checkout/links/nope', SHOP);
    assert.equal(malformed.status, 400);
    assert.equal((await malformed.json()).error.code, 'invalid_payment_link_id');
  });

  it('the checkout is framed only by the listed origin it was opened for; a link’s visit keeps it', async () => {
    const payment = await createPayment({ amount: '2', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } });
    const plain = await get(`/pay/${payment.id}`);
    assert.equal(plain.headers.get('x-frame-options'), 'DENY');
    assert.match(plain.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
    assert.doesNotMatch(await plain.text(), /embed\.js/);

    const framed = await get(`/pay/${payment.id}?embed=${encodeURIComponent(SHOP)}`);
    assert.equal(framed.status, 200);
    assert.equal(framed.headers.get('x-frame-options'), null);
    const csp = framed.headers.get('content-security-policy')!;
    assert.match(csp, new RegExp(`frame-ancestors ${SHOP}$`));
    assert.doesNotMatch(csp, /frame-ancestors 'none'/);
    assert.match(await framed.text(), /<script src="\/pay\/assets\/embed\.js\?v=\w+" defer><\/script>/);

    for (const origin of [OTHER, '*', "https://shop.example 'self'", 'null']) {
      const refused = await get(`/pay/${payment.id}?embed=${encodeURIComponent(origin)}`);
      assert.equal(refused.headers.get('x-frame-options'), 'DENY', origin);
      assert.match(refused.headers.get('content-security-policy')!, /frame-ancestors 'none'/, origin);
    }

    const link = await app.request('POST', '/v1/payment-links', { token: store.token, body: { currency: 'TON', amount: '1' } });
    // The link's page, framed, makes no payment; its button's POST keeps the origin in its address.
    const shown = await get(`/pay/l/${link.json.id}?embed=${encodeURIComponent(SHOP)}`);
    assert.equal(shown.status, 200);
    assert.match(shown.headers.get('content-security-policy')!, new RegExp(`frame-ancestors ${SHOP}$`));
    const action = /<form method="post" action="([^"]+)"/.exec(await shown.text())![1]!.replaceAll('&amp;', '&');
    assert.equal(new URL(action, app.url).searchParams.get('embed'), SHOP);
    const visit = await fetch(new URL(action, app.url), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    assert.equal(visit.status, 303);
    const location = new URL(visit.headers.get('location')!, app.url);
    assert.equal(location.searchParams.get('embed'), SHOP);
    const paymentId = location.pathname.split('/').pop()!;
    assert.equal(
      await app.pool.oneFirst(sql.type(z.object({ created_via: z.string() }))`select created_via from payments where id = ${paymentId}`),
      'payment_link',
    );
    // An open amount's form, framed, keeps the origin through its POST.
    const open = await app.request('POST', '/v1/payment-links', { token: store.token, body: { currency: 'TON' } });
    const form = await get(`/pay/l/${open.json.id}?embed=${encodeURIComponent(SHOP)}`);
    assert.equal(form.status, 200);
    assert.match(form.headers.get('content-security-policy')!, new RegExp(`frame-ancestors ${SHOP}$`));
    assert.match(
      await form.text(),
      new RegExp(`<form method="post" action="/pay/l/${open.json.id}\\?embed=${encodeURIComponent(SHOP).replace(/\./g, '\\.')}"`),
    );
  });
});
