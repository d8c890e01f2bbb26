// One mapping from the error catalogue to HTTP (src/http/errorEnvelope.ts): every code is an
// envelope with the catalogue's status and a page with that same status and headers, and the
// hosted checkout's error pages, the dashboard's and the API answer the same error alike — each
// thrown through the real middleware of each (checkoutErrorPages, the dashboard's htmlErrors, the
// app's errorEnvelope) on a running app.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ERROR_CODES, type ErrorCode, KassaError, rateLimited, statusOf, typeOf } from '../../src/errors.ts';
import type { RouteInstaller } from '../../src/http/app.ts';
import { type ErrorPageKind, errorPage, httpError } from '../../src/http/errorEnvelope.ts';
import { checkoutErrorPages, checkoutPrefix } from '../../src/http/routes/checkoutSteps.ts';
import { dashboardSteps } from '../../src/http/routes/dashboardSteps.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { dashboardClient } from '../helpers/dashboard.ts';

/** The page a person should see for a code, said again here from the rule (not read from the code under test). */
function expectedKind(code: ErrorCode): ErrorPageKind {
  const status = statusOf(code);
  if (typeOf(code) === 'not_found_error') return 'notFound';
  if (typeOf(code) === 'rate_limit_error') return 'tooMany';
  if (status === 503) return 'unavailable';
  if (status >= 500) return 'error';
  return 'refused';
}

/** The checkout's title of each kind, in English (src/checkout/i18n.ts). */
const CHECKOUT_TITLE: Record<ErrorPageKind, string> = {
  notFound: 'Payment not found',
  tooMany: 'Too many requests',
  unavailable: 'Something went wrong',
  refused: 'Something went wrong',
  error: 'Something went wrong',
};

/** What the probe routes throw: `?code=` an error of the catalogue, `?rate=` the per-client limit's, or something else. */
function failure(query: Record<string, unknown>): unknown {
  if (typeof query.code === 'string') return new KassaError(query.code as ErrorCode, { param: 'probe' });
  if (typeof query.rate === 'string') return rateLimited(Number(query.rate));
  if (query.database !== undefined) return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
  return new Error('a fault of Kassa');
}

/** The same failure behind each of the three real error middlewares. */
const probes: RouteInstaller = (router, deps) => {
  const fail = (ctx: { query: Record<string, unknown> }) => {
    throw failure(ctx.query);
  };
  router.get('/v1/_fails', fail);
  router.get(
    '/_fails/checkout',
    checkoutErrorPages(checkoutPrefix(deps.config.checkoutBaseUrl), () => 'en'),
    fail,
  );
  router.get('/_fails/dashboard', dashboardSteps(deps).htmlErrors as never, fail);
};

describe('errors mapped once: the catalogue to the envelope and to a page', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ routes: [probes] });
  });
  after(() => app.close());

  it('every code of the catalogue is an envelope with its status and a page with that status, those headers and words for a person', () => {
    assert.ok(ERROR_CODES.length > 80, `${ERROR_CODES.length} codes`);
    for (const code of ERROR_CODES) {
      const error = new KassaError(code, { param: 'amount' });
      const envelope = httpError(error);
      const page = errorPage(error);
      assert.equal(envelope.status, statusOf(code), code);
      assert.equal(envelope.body.error.code, code);
      assert.equal(envelope.body.error.type, typeOf(code));
      assert.equal(page.status, envelope.status, `${code}: the page's status is the envelope's`);
      assert.deepEqual(page.headers, envelope.headers, code);
      assert.equal(page.kind, expectedKind(code), code);
      assert.ok(page.title.length > 0 && page.text.length > 0, code);
      assert.doesNotMatch(page.text, /\{param\}|undefined/, code);
    }
    // The request as HTTP is said as the form, never as the API's JSON body.
    assert.equal(errorPage(new KassaError('payload_too_large')).text, 'The form could not be read.');
    assert.equal(errorPage(rateLimited(1)).text, 'Too many requests from your address. Try again in 1 second.');
  });

  it('the checkout and the dashboard show the same status (and Retry-After) as the API for the same error, each in its own page', async () => {
    const cases: { query: string; status: number; kind: ErrorPageKind; code: string }[] = [
      ...ERROR_CODES.map((code) => ({ query: `code=${code}`, status: statusOf(code), kind: expectedKind(code), code })),
      { query: 'rate=7', status: 429, kind: 'tooMany', code: 'rate_limit_exceeded' },
      { query: 'database', status: 503, kind: 'unavailable', code: 'service_unavailable' },
      { query: 'other', status: 500, kind: 'error', code: 'internal_error' },
    ];
    for (const { query, status, kind, code } of cases) {
      const [api, checkout, dashboard] = await Promise.all(
        ['/v1/_fails', '/_fails/checkout', '/_fails/dashboard'].map((path) => fetch(`${app.url}${path}?${query}`)),
      );
      const [json, checkoutPage, dashboardPage] = await Promise.all([api!.json(), checkout!.text(), dashboard!.text()]);
      assert.equal((json as { error: { code: string } }).error.code, code, query);
      assert.deepEqual([checkout!.status, dashboard!.status], [api!.status, api!.status], `${query}: the pages' status is the API's`);
      assert.equal(api!.status, status, query);
      assert.equal(checkout!.headers.get('retry-after'), api!.headers.get('retry-after'), query);
      assert.equal(dashboard!.headers.get('retry-after'), api!.headers.get('retry-after'), query);
      assert.match(checkout!.headers.get('content-type') ?? '', /^text\/html/, query);
      assert.match(dashboard!.headers.get('content-type') ?? '', /^text\/html/, query);
      assert.ok(checkoutPage.includes(`<h1 id="state-title">${CHECKOUT_TITLE[kind]}</h1>`), `${query}: the checkout's ${kind} page`);
      const page = errorPage(new KassaError(code as ErrorCode));
      assert.ok(dashboardPage.includes(`<h1>${page.title}</h1>`), `${query}: the dashboard's ${kind} page`);
    }
  });

  it('the real routes: an unknown payment and an unknown dashboard page are both 404 pages; a form the dashboard cannot read is 413', async () => {
    const prefix = checkoutPrefix(app.config.checkoutBaseUrl);
    const payment = await fetch(`${app.url}${prefix}/00000000-0000-4000-8000-000000000000`);
    assert.equal(payment.status, 404);
    assert.match(await payment.text(), /Payment not found/);
    const dashboard = await dashboardClient(app.url).get('/dashboard/nothing-here');
    assert.equal(dashboard.status, 404);
    const big = await dashboardClient(app.url).post('/dashboard/sign-in', { email: 'a@example.com', password: 'x'.repeat(20_000) });
    assert.equal(big.status, 413, big.text.slice(0, 300));
    assert.match(big.text, /The form could not be read\./);
  });
});
