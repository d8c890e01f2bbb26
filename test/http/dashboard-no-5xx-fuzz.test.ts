// No dashboard input gives a 5xx (issue 33 item 2): every form of the dashboard — found by walking
// the dashboard's router for the routes whose form step carries a schema — is posted by a signed-in
// owner with each field replaced, one at a time, by hostile text (U+0000, lone surrogates, odd and
// overlong strings, prototype names, impossible days), repeated and bracketed field names and an
// unknown field; every list query the same. Any 5xx fails the test. The API's fuzz is no-5xx-fuzz.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { issueToken } from '../../src/auth/tokens.ts';
import { sql, z } from '../../src/db/pool.ts';
import type { KassaState } from '../../src/http/context.ts';
import { createGuards } from '../../src/http/guards.ts';
import { dashboardRoutes } from '../../src/http/routes/dashboard.ts';
import { DASHBOARD_PATH, FORM_SCHEMA, QUERY_SCHEMA } from '../../src/http/routes/dashboardSteps.ts';
import { createLogger } from '../../src/log.ts';
import type { TestApp } from '../helpers/app.ts';
import { type DashboardClient, member } from '../helpers/dashboard.ts';
import { buildPayment } from '../helpers/factories.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

type Schema = { properties?: Record<string, Schema>; enum?: readonly string[]; format?: string; anyOf?: Schema[]; examples?: readonly string[] };
interface Layer {
  path: string;
  methods: string[];
  stack: Middleware[];
}

/** What each field is replaced by (forms and query strings are text). */
const HOSTILE = [
  '\u0000',
  'x\udc00y',
  ' ',
  'x'.repeat(5000),
  '1e999',
  '00.5',
  '__proto__',
  'constructor',
  '2026-02-30',
  '0000-01-01',
  "'; select pg_sleep(10); --",
];
/** Where every accepted form costs a 32 MiB scrypt (sign-in, an invitation): only what is refused before it. */
const BEFORE_SCRYPT = ['\u0000', 'x\udc00y', 'x'.repeat(5000), '__proto__'];
const SCRYPT_ROUTES = /\/sign-in$|\/invite\/:token$/;

/** The forms the fuzz must reach by name (the walk finds the rest). */
const LINK_FORMS = ['/links', '/links/payments', '/links/:linkId/deactivate'];
const ENDPOINT_FORMS = [
  '/webhooks/endpoints',
  '/webhooks/endpoints/:endpointId/test',
  '/webhooks/endpoints/:endpointId/deliveries/:deliveryId/redeliver',
  '/webhooks/endpoints/:endpointId/delete',
];

let app: TestApp;
let owner: DashboardClient;
const values: Record<string, string> = {};

before(async () => {
  app = await startPaymentsApp();
  const store = await app.store({ name: 'Fuzzed' });
  owner = await member(app.url, app.pool, store.id, 'fuzz-owner@example.com', 'owner');
  await member(app.url, app.pool, store.id, 'fuzz-viewer@example.com', 'viewer');
  const payment = await buildPayment(app, store, {
    status: 'completed',
    body: { amount: '1', currency: 'TON' },
    transfers: [{ baseUnits: 1_500_000_000n, amount: '1.5', effect: 'overpaid' }],
  });
  const viewerId = await app.pool.oneFirst(sql.type(z.object({ id: z.string() }))`select id from dashboard_users where email = 'fuzz-viewer@example.com'`);
  const token = await issueToken(app.pool, store.id, null, new Date(), 'full');
  // A payment link of the store, for the Payment links pages' forms (issue 30).
  const link = await app.request('POST', '/v1/payment-links', { token: store.token, body: { currency: 'TON', amount: '1' } });
  assert.equal(link.status, 201, link.text);
  // A webhook endpoint of the store and one of its deliveries, for the Webhooks page's endpoint forms (issue 29).
  const endpoint = await app.request('POST', '/v1/webhook-endpoints', {
    token: store.token,
    body: { url: 'https://shop.example/kassa/webhooks', events: ['payment.completed'] },
  });
  assert.equal(endpoint.status, 201, endpoint.text);
  const ping = await app.request('POST', `/v1/webhook-endpoints/${endpoint.json.id}/test`, { token: store.token });
  assert.equal(ping.status, 202, ping.text);
  Object.assign(values, {
    storeId: store.id,
    paymentId: payment.id,
    userId: viewerId,
    jti: token.jti,
    passkeyId: crypto.randomUUID(),
    invitationId: crypto.randomUUID(),
    token: 'A'.repeat(43),
    linkId: link.json.id,
    endpointId: endpoint.json.id,
    deliveryId: ping.json.id,
  });
});
after(() => app.close());

/** The dashboard's routes with their form or query schema, as the router holds them. */
function routes(): Array<{ method: string; path: string; form?: Schema; query?: Schema }> {
  const router = new Router<KassaState>({ strict: true });
  const deps = { config: app.config, pool: app.pool, log: createLogger('silent'), now: () => new Date() };
  dashboardRoutes(router, deps as never, createGuards(deps as never));
  const found: Array<{ method: string; path: string; form?: Schema; query?: Schema }> = [];
  for (const layer of (router as unknown as { stack: Layer[] }).stack) {
    if (!layer.path.startsWith(DASHBOARD_PATH) || layer.methods.length === 0 || layer.path.includes('{*rest}')) continue;
    const schemaOf = (tag: symbol) => layer.stack.map((step) => (step as unknown as Record<symbol, Schema>)[tag]).find(Boolean);
    const form = schemaOf(FORM_SCHEMA);
    const query = schemaOf(QUERY_SCHEMA);
    if (form) found.push({ method: 'POST', path: layer.path, form });
    else if (query) found.push({ method: 'GET', path: layer.path, query });
  }
  return found;
}

/** A value the field's schema accepts, as far as it tells. */
const sample = (schema: Schema): string =>
  schema.examples?.[0] ?? schema.enum?.[0] ?? (schema.format === 'uuid' ? crypto.randomUUID() : schema.format === 'kassa-day' ? '2026-01-01' : 'x');

describe('the dashboard: no input gives a 5xx', () => {
  // Every form, each field a dozen ways: minutes on a loaded machine.
  it('answers every form and list query with no 5xx, whatever its fields hold', { timeout: 600_000 }, async () => {
    const all = routes();
    const forms = all.filter((route) => route.form);
    assert.ok(forms.length >= 21, `${forms.length} forms found`);
    // The Payment links page's forms (issue 30) and the Webhooks page's endpoint forms (issue 29) among them.
    for (const path of [...LINK_FORMS, ...ENDPOINT_FORMS]) {
      assert.ok(
        forms.some((route) => route.path.endsWith(path)),
        `the form of ${path} is fuzzed`,
      );
    }
    const failures: string[] = [];
    /** The statuses each route answered (its path as registered). */
    const answered = new Map<string, Set<number>>();
    let sent = 0;
    const send = async (route: string, method: string, path: string, body?: string) => {
      sent += 1;
      const headers: Record<string, string> = { cookie: owner.cookie ?? '', origin: app.url };
      if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
      const response = await fetch(`${app.url}${path}`, { method, headers, body: body ?? null, redirect: 'manual' });
      const text = await response.text();
      answered.set(route, (answered.get(route) ?? new Set()).add(response.status));
      if (response.status >= 500) failures.push(`${response.status} ${method} ${path.slice(0, 200)} ${(body ?? '').slice(0, 200)}: ${text.slice(0, 120)}`);
    };
    const encode = (fields: Array<[string, string]>) => fields.map(([name, value]) => `${encodeURIComponent(name)}=${encodeWtf8(value)}`).join('&');
    for (const route of all) {
      // Signing out would end the fuzzing owner's session.
      if (route.path.endsWith('/sign-out') || route.path.endsWith('/sign-out-everywhere')) continue;
      const path = route.path.replace(/:(\w+)/g, (_, name: string) => values[name] ?? 'x');
      const schema = (route.form ?? route.query)!;
      const base: Array<[string, string]> = Object.entries(schema.properties ?? {}).map(([name, field]) => [name, sample(field.anyOf?.[0] ?? field)]);
      // An accepted sign-in or invitation costs a scrypt: there, only what is refused before it.
      const scrypt = SCRYPT_ROUTES.test(route.path);
      const variants: Array<Array<[string, string]>> = scrypt
        ? [[...base, ['unknown', 'x']]]
        : [base, [...base, ['unknown', 'x']], [...base, ...base], [['a[b]', 'c'], ...base], [['__proto__[x]', '1'], ...base]];
      for (const [index, [name]] of base.entries()) {
        for (const hostile of scrypt ? BEFORE_SCRYPT : HOSTILE) variants.push(base.map((field, at) => (at === index ? [name, hostile] : field)));
      }
      // A few at a time (a double click's worth of concurrency, and the test stays short).
      for (let at = 0; at < variants.length; at += 6) {
        await Promise.all(
          variants
            .slice(at, at + 6)
            .map((fields) => (route.method === 'POST' ? send(route.path, 'POST', path, encode(fields)) : send(route.path, 'GET', `${path}?${encode(fields)}`))),
        );
      }
    }
    assert.ok(sent > 400, `${sent} requests sent`);
    // Reached, not only walked: each endpoint form's command ran and answered with its redirect at least once.
    for (const path of ENDPOINT_FORMS) {
      const [route, statuses] = [...answered].find(([registered]) => registered.endsWith(path)) ?? [path, new Set<number>()];
      assert.ok(statuses.has(303), `${route} reached its command (answered ${[...statuses].join(', ')})`);
    }
    assert.deepEqual(failures.slice(0, 20), [], `${failures.length} of ${sent} requests answered 5xx`);
  });
});

/** Percent-encodes every UTF-16 unit, a lone surrogate as its WTF-8 bytes (as a sloppy client sends it). */
function encodeWtf8(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdfff && !(unit < 0xdc00 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00)) {
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 63), 0x80 | (unit & 63)].map((byte) => `%${byte.toString(16).toUpperCase()}`).join('');
    } else if (unit >= 0xd800 && unit < 0xdc00) {
      out += encodeURIComponent(text.slice(i, i + 2));
      i += 1;
    } else out += encodeURIComponent(text[i]!);
  }
  return out;
}
