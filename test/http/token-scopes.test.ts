// Token scopes over real HTTP (docs/API.md, Token scopes): every authenticated operation of the
// served OpenAPI document is called with a read_only and a create_payments token; each answers 403
// insufficient_scope exactly where its route's `needs(…)` step (found by walking the app's router,
// issue 49) says the scope falls short, and the document lists that answer there and only there;
// what was refused changed nothing. Every route behind a merchant guard names its need. Tokens issued
// before scopes (no scope claim) keep full access; a scope Kassa does not know is no token at all.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Router from '@koa/router';
import { SignJWT } from 'jose';
import type { Middleware } from 'koa';
import crypto from 'node:crypto';
import { type ScopeNeed, scopeAllows, TOKEN_SCOPES, type TokenScope } from '../../src/auth/scopes.ts';
import { ROUTES } from '../../src/http/app.ts';
import type { AppDeps, KassaState } from '../../src/http/context.ts';
import { createGuards, type Guards } from '../../src/http/guards.ts';
import { SCOPE_NEED } from '../../src/http/scope.ts';
import { createLogger } from '../../src/log.ts';
import { issueToken } from '../../src/auth/tokens.ts';
import { sql, z } from '../../src/db/pool.ts';
import type { TestApp } from '../helpers/app.ts';
import { buildPayment } from '../helpers/factories.ts';
import { member } from '../helpers/dashboard.ts';
import { assertError, startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;
let store: Awaited<ReturnType<TestApp['store']>>;
const tokens = {} as Record<TokenScope, string>;

before(async () => {
  app = await startPaymentsApp();
  store = await app.store({ name: 'Scoped store' });
  for (const scope of TOKEN_SCOPES) tokens[scope] = (await issueToken(app.pool, store.id, null, new Date(), scope)).token;
});
after(() => app.close());

/** The app's router, installed as createApp installs it, with the guards it was given. */
function apiRouter(): { router: Router<KassaState>; guards: Guards } {
  const deps: AppDeps = { config: app.config, pool: {} as AppDeps['pool'], log: createLogger('silent'), now: () => new Date() };
  const router = new Router<KassaState>({ strict: true });
  const guards = createGuards(deps);
  for (const install of ROUTES) install(router, deps, guards);
  return { router, guards };
}
type Layer = { path: string; methods: string[]; stack: Middleware[] };
const needOf = (stack: Middleware[]): ScopeNeed | undefined =>
  stack.map((step) => (step as unknown as Record<symbol, ScopeNeed | undefined>)[SCOPE_NEED]).find((need) => need !== undefined);

/** The routes behind a merchant guard that name no need (`needs(…)`, http/scope.ts), as `METHOD path`. */
function withoutNeed(router: Router<KassaState>, guards: Guards): string[] {
  return (router as unknown as { stack: Layer[] }).stack
    .filter((layer) => layer.methods.length > 0 && layer.stack.some((step) => step === guards.merchant || step === guards.merchantInline))
    .filter((layer) => needOf(layer.stack) === undefined)
    .map((layer) => `${layer.methods.filter((m) => m !== 'HEAD').join(',')} ${layer.path}`);
}

/** What the route serving `method path` needs, as its `needs(…)` step says. */
function routeNeed(router: Router<KassaState>, method: string, path: string): ScopeNeed | undefined {
  return needOf(router.match(path, method).pathAndMethod.flatMap((layer) => layer.stack as unknown as Middleware[]));
}

const count = (table: 'payments' | 'outgoing_transfers' | 'webhook_deliveries') =>
  app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from ${sql.identifier([table])}`);

describe('token scopes', () => {
  it('what each scope allows (docs/API.md, Token scopes): read_only reads; create_payments also creates payments; full does all', () => {
    const table = Object.fromEntries(
      TOKEN_SCOPES.map((scope) => [scope, (['read', 'create_payment', 'change'] as const).filter((need) => scopeAllows(scope, need))]),
    );
    assert.deepEqual(table, { full: ['read', 'create_payment', 'change'], read_only: ['read'], create_payments: ['read', 'create_payment'] });
  });

  it('every route behind a merchant guard names what it needs of the token (a new one without `needs(…)` fails here)', () => {
    const { router, guards } = apiRouter();
    assert.deepEqual(withoutNeed(router, guards), []);
    router.post('/v1/forgotten', guards.merchant, guards.storeLimit, async (ctx) => {
      ctx.body = {};
    });
    assert.deepEqual(withoutNeed(router, guards), ['POST /v1/forgotten']);
  });

  it('every authenticated operation refuses a token outside its scope with 403 insufficient_scope, and only those', async () => {
    const served = (await app.request('GET', '/openapi.json')).json as {
      paths: Record<string, Record<string, { operationId: string; security?: unknown[]; responses: Record<string, unknown> }>>;
    };
    const payment = await buildPayment(app, store, { status: 'completed', body: { webhookURL: 'https://shop.example.com/hook' }, webhook: true });
    const bodies: Record<string, unknown> = {
      createPayment: { amount: '5', currency: 'TON' },
      createInvoice: { invoiceType: 'FIAT', fiatAmount: '5', fiatCurrency: 'USD' },
      createRefund: { coin: 'TON', amount: '1', address: 'EQD__________________________________________0vo' },
    };
    const authenticated = Object.entries(served.paths).flatMap(([path, byMethod]) =>
      Object.entries(byMethod)
        .filter(([, operation]) => operation.security === undefined)
        .map(([method, operation]) => ({ method: method.toUpperCase(), path: path.replace('{paymentID}', payment.id), operation })),
    );
    assert.ok(authenticated.length >= 13, `the document lists the merchant operations (${authenticated.length})`);
    // What each operation needs, from the route that serves it (its `needs(…)` step), not a list kept here.
    const { router } = apiRouter();
    const needs = new Map(authenticated.map(({ method, path, operation }) => [operation.operationId, routeNeed(router, method, path)]));
    assert.deepEqual(
      [...needs].filter(([, need]) => need === undefined).map(([operationId]) => operationId),
      [],
      'operations whose route names no need',
    );
    const NEEDS = Object.fromEntries([...needs].filter(([, need]) => need !== 'read')) as Record<string, ScopeNeed>;
    assert.ok(Object.keys(NEEDS).length >= 15, `${Object.keys(NEEDS).length} operations need more than reading`);
    const listed = authenticated.filter(({ operation }) => '403' in operation.responses).map(({ operation }) => operation.operationId);
    assert.deepEqual(listed.sort(), Object.keys(NEEDS).sort(), 'the document lists 403 for exactly the operations that need more than reading');

    for (const { method, path, operation } of authenticated) {
      const need = needs.get(operation.operationId)!;
      for (const scope of ['read_only', 'create_payments'] as const) {
        const before = { payments: await count('payments'), outgoing: await count('outgoing_transfers'), deliveries: await count('webhook_deliveries') };
        const body = bodies[operation.operationId] ?? (method === 'POST' ? {} : undefined);
        const response = await app.request(method, path, { token: tokens[scope], ...(body !== undefined ? { body } : {}) });
        const where = `${method} ${path} with a ${scope} token`;
        if (scopeAllows(scope, need)) {
          assert.notEqual(response.status, 403, `${where}: ${response.text}`);
          assert.notEqual(response.status, 401, `${where}: ${response.text}`);
        } else {
          assertError(response, 403, 'authentication_error', 'insufficient_scope');
          assert.match(response.json.error.message, new RegExp(`scope \\(${scope}\\)`), where);
          assert.deepEqual(
            { payments: await count('payments'), outgoing: await count('outgoing_transfers'), deliveries: await count('webhook_deliveries') },
            before,
            `${where}: nothing changed`,
          );
        }
      }
    }
  });

  it('a create_payments token creates payments (both operations) and reads them; a full token cancels', async () => {
    const created = await app.request('POST', '/v1/payments', { token: tokens.create_payments, body: { amount: '5', currency: 'TON' } });
    assert.equal(created.status, 201, created.text);
    assert.equal((await app.request('GET', `/v1/payments/${created.json.id}`, { token: tokens.create_payments })).status, 200);
    assert.equal((await app.request('GET', `/v1/payments/${created.json.id}`, { token: tokens.read_only })).status, 200);
    const invoice = await app.request('POST', '/v1/payments/create', {
      token: tokens.create_payments,
      body: { invoiceType: 'FIAT', fiatAmount: '5', fiatCurrency: 'USD' },
    });
    assert.equal(invoice.status, 201, invoice.text);
    assertError(
      await app.request('POST', `/v1/payments/${created.json.id}/cancel`, { token: tokens.create_payments }),
      403,
      'authentication_error',
      'insufficient_scope',
    );
    const cancelled = await app.request('POST', `/v1/payments/${created.json.id}/cancel`, { token: tokens.full });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.json.status, 'cancelled');
  });

  it('a revoked narrowed token is refused as revoked (401) before its scope is looked at', async () => {
    const { token, jti } = await issueToken(app.pool, store.id, null, new Date(), 'read_only');
    await app.pool.query(sql.unsafe`update api_tokens set revoked_at = now() where jti = ${jti}`);
    assertError(await app.request('POST', '/v1/payments', { token, body: { amount: '5', currency: 'TON' } }), 401, 'authentication_error', 'auth_invalid');
  });

  it('a token issued before scopes (no scope claim, the column default) keeps full access; an unknown scope is refused as invalid', async () => {
    // The service's own token key, as an older Kassa signed with it (service_secrets).
    const der = await app.pool.oneFirst(
      sql.type(z.object({ secret: z.instanceof(Buffer) }))`select secret from service_secrets where name = 'api_token_signing_key'`,
    );
    const privateKey = crypto.createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    const sign = async (claims: Record<string, unknown>) => {
      const jti = crypto.randomUUID();
      const token = await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', typ: 'JWT' }).setSubject(store.id).setJti(jti).setIssuedAt().sign(privateKey);
      await app.pool.query(sql.unsafe`insert into api_tokens (jti, store_id) values (${jti}, ${store.id})`);
      return { token, jti };
    };
    const old = await sign({});
    assert.equal(await app.pool.oneFirst(sql.type(z.object({ scope: z.string() }))`select scope from api_tokens where jti = ${old.jti}`), 'full');
    const created = await app.request('POST', '/v1/payments', { token: old.token, body: { amount: '5', currency: 'TON' } });
    assert.equal(created.status, 201, created.text);
    assert.equal((await app.request('POST', `/v1/payments/${created.json.id}/cancel`, { token: old.token })).status, 200);
    const odd = await sign({ scope: 'admin' });
    assertError(await app.request('GET', '/v1/payments', { token: odd.token }), 401, 'authentication_error', 'auth_invalid');
  });
});

describe('token scopes on the dashboard', () => {
  it("an owner chooses a token's scope; the list shows it; the token is held to it; the audit row says it", async () => {
    const owner = await member(app.url, app.pool, store.id, 'scopes@example.com', 'owner');
    const page = `/dashboard/stores/${store.id}/tokens`;
    const form = await owner.get(page);
    assert.match(form.text, /<select id="scope" name="scope">/);
    const issued = await owner.post(page, { lifetime: 'never', scope: 'read_only' });
    assert.equal(issued.status, 201, issued.text);
    const token = /id="new-token"[^>]*value="([^"]+)"/.exec(issued.text)![1]!;
    const jti = /is <span class="mono">([0-9a-f-]{36})<\/span>/.exec(issued.text)![1]!;
    assert.match(issued.text, new RegExp(`<span class="mono">${jti}</span>.*?<td class="token-scope">read-only</td>`, 's'));
    assert.equal((await app.request('GET', '/v1/payments', { token })).status, 200);
    assertError(
      await app.request('POST', '/v1/payments', { token, body: { amount: '5', currency: 'TON' } }),
      403,
      'authentication_error',
      'insufficient_scope',
    );
    const detail = await app.pool.oneFirst(
      sql.type(z.object({ detail: z.record(z.string(), z.unknown()) }))`select detail from audit_log where action = 'token.issue' and subject = ${jti}`,
    );
    assert.equal(detail.scope, 'read_only');
    // A scope the form does not offer changes nothing.
    const before = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from api_tokens where store_id = ${store.id}`);
    const refused = await owner.post(page, { lifetime: 'never', scope: 'admin' });
    assert.equal(refused.status, 400);
    assert.equal(
      await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from api_tokens where store_id = ${store.id}`),
      before,
    );
  });
});
