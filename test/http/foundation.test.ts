import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { authenticate, issueToken, revokeToken } from '../../src/auth/tokens.ts';
import { sql } from '../../src/db/pool.ts';
import type { RouteInstaller } from '../../src/http/app.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

// A route that needs a store token, to exercise auth and the envelope on its own.
const probe: RouteInstaller = (router, _deps, guards) => {
  router.get('/v1/_probe', guards.merchant, (ctx) => {
    ctx.body = { storeId: ctx.state.merchant?.storeId };
  });
  router.post('/v1/_echo', (ctx) => {
    ctx.body = { received: ctx.request.body ?? null };
  });
  router.get('/v1/_boom', () => {
    throw new Error('secret internals');
  });
};

function assertEnvelope(response: { status: number; json: any }, status: number, type: string, code: string): void {
  assert.equal(response.status, status, JSON.stringify(response.json));
  assert.equal(response.json?.error?.type, type);
  assert.equal(response.json?.error?.code, code);
  assert.equal(typeof response.json.error.message, 'string');
}

describe('HTTP foundation', () => {
  let app: TestApp;
  let store: Awaited<ReturnType<TestApp['store']>>;
  before(async () => {
    app = await startTestApp({ routes: [probe] });
    store = await app.store();
  });
  after(() => app.close());

  it('answers /healthz', async () => {
    const response = await app.request('GET', '/healthz');
    assert.equal(response.status, 200);
    assert.deepEqual(response.json, { ok: true });
  });

  it('echoes a sane X-Request-Id and makes one otherwise', async () => {
    const echoed = await app.request('GET', '/healthz', { headers: { 'x-request-id': 'abc-123' } });
    assert.equal(echoed.headers.get('x-request-id'), 'abc-123');
    const made = await app.request('GET', '/healthz', { headers: { 'x-request-id': 'bad id with spaces' } });
    assert.match(made.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  });

  it('uses the envelope for unknown routes and methods', async () => {
    assertEnvelope(await app.request('GET', '/nope'), 404, 'not_found_error', 'route_not_found');
    assertEnvelope(await app.request('DELETE', '/healthz'), 405, 'invalid_request_error', 'method_not_allowed');
  });

  it('refuses bodies that are not JSON (415), too large (413) or malformed (400)', async () => {
    assertEnvelope(
      await app.request('POST', '/v1/_echo', { rawBody: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      415,
      'invalid_request_error',
      'unsupported_media_type',
    );
    assertEnvelope(
      await app.request('POST', '/v1/_echo', { rawBody: 'hello', headers: { 'content-type': 'text/plain' } }),
      415,
      'invalid_request_error',
      'unsupported_media_type',
    );
    const big = JSON.stringify({ pad: 'x'.repeat(70 * 1024) });
    assertEnvelope(
      await app.request('POST', '/v1/_echo', { rawBody: big, headers: { 'content-type': 'application/json' } }),
      413,
      'invalid_request_error',
      'payload_too_large',
    );
    assertEnvelope(
      await app.request('POST', '/v1/_echo', { rawBody: '{"a":', headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_request_error',
      'invalid_json',
    );
    assertEnvelope(
      await app.request('POST', '/v1/_echo', { rawBody: '"just a string"', headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_request_error',
      'invalid_json',
    );
    const ok = await app.request('POST', '/v1/_echo', { body: { a: 1 } });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.json, { received: { a: 1 } });
  });

  it('takes UTF-8 JSON only: another charset is 415, invalid UTF-8 is 400 invalid_json (never U+FFFD)', async () => {
    const latin1 = Buffer.from('{"name":"caf\xe9"}', 'latin1');
    assertEnvelope(
      await app.request('POST', '/v1/_echo', { rawBody: latin1, headers: { 'content-type': 'application/json; charset=latin1' } }),
      415,
      'invalid_request_error',
      'unsupported_media_type',
    );
    assertEnvelope(
      await app.request('POST', '/v1/_echo', { rawBody: '{"a":1}', headers: { 'content-type': 'application/json; charset=utf-16' } }),
      415,
      'invalid_request_error',
      'unsupported_media_type',
    );
    const invalid = await app.request('POST', '/v1/_echo', { rawBody: latin1, headers: { 'content-type': 'application/json' } });
    assertEnvelope(invalid, 400, 'invalid_request_error', 'invalid_json');
    assert.match(invalid.json.error.message, /not valid UTF-8/);
    for (const charset of ['utf-8', 'UTF-8', 'utf8']) {
      const ok = await app.request('POST', '/v1/_echo', {
        rawBody: Buffer.from('{"name":"café ☕"}'),
        headers: { 'content-type': `application/json; charset=${charset}` },
      });
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual(ok.json, { received: { name: 'café ☕' } });
    }
    // A real U+FFFD sent as UTF-8 is text like any other.
    const replacement = await app.request('POST', '/v1/_echo', { rawBody: Buffer.from('{"name":"\ufffd"}'), headers: { 'content-type': 'application/json' } });
    assert.deepEqual(replacement.json, { received: { name: '\ufffd' } });
    // Compressed bodies are still taken; the 64 KiB limit holds for the decompressed size.
    const gzipped = await app.request('POST', '/v1/_echo', {
      rawBody: zlib.gzipSync('{"a":2}'),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    assert.deepEqual(gzipped.json, { received: { a: 2 } });
    const bomb = zlib.gzipSync(JSON.stringify({ pad: 'x'.repeat(200 * 1024) }));
    assertEnvelope(
      await app.request('POST', '/v1/_echo', { rawBody: bomb, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } }),
      413,
      'invalid_request_error',
      'payload_too_large',
    );
    assertEnvelope(
      await app.request('POST', '/v1/_echo', { rawBody: '{}', headers: { 'content-type': 'application/json', 'content-encoding': 'compress' } }),
      415,
      'invalid_request_error',
      'unsupported_media_type',
    );
  });

  it('hides unexpected errors behind internal_error', async () => {
    const response = await app.request('GET', '/v1/_boom');
    assertEnvelope(response, 500, 'api_error', 'internal_error');
    assert.doesNotMatch(response.text, /secret internals/);
  });

  describe('auth', () => {
    it('accepts a valid token', async () => {
      const response = await app.request('GET', '/v1/_probe', { token: store.token });
      assert.equal(response.status, 200);
      assert.equal(response.json.storeId, store.id);
    });

    const refused = async (authorization: string | undefined) => {
      const response = await app.request('GET', '/v1/_probe', { headers: authorization === undefined ? {} : { authorization } });
      assertEnvelope(response, 401, 'authentication_error', 'auth_invalid');
      assert.equal(response.headers.get('www-authenticate'), 'Bearer');
      assert.equal(response.json.error.param, undefined);
      return response;
    };

    it('refuses a missing header, garbage and the wrong scheme', async () => {
      await refused(undefined);
      await refused('Bearer');
      await refused('Bearer not-a-jwt');
      await refused(`Basic ${Buffer.from('a:b').toString('base64')}`);
      await refused(`Token ${store.token}`);
      await refused(`Bearer${store.token}`);
    });

    it('takes the scheme name in any case (RFC 9110 §11.1)', async () => {
      for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
        const response = await app.request('GET', '/v1/_probe', { headers: { authorization: `${scheme} ${store.token}` } });
        assert.equal(response.status, 200, scheme);
      }
    });

    it('refuses a token signed with another key', async () => {
      const { privateKey } = crypto.generateKeyPairSync('ed25519');
      const forged = await new SignJWT({}).setProtectedHeader({ alg: 'EdDSA' }).setSubject(store.id).setJti(crypto.randomUUID()).setIssuedAt().sign(privateKey);
      await refused(`Bearer ${forged}`);
    });

    it('refuses alg none and HS256', async () => {
      const [, payload] = store.token.split('.');
      const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
      await refused(`Bearer ${none}`);
      const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
      // HS256 "signed" with guessable material (the classic public-key confusion attack).
      const signature = crypto.createHmac('sha256', 'kassa').update(`${header}.${payload}`).digest('base64url');
      await refused(`Bearer ${header}.${payload}.${signature}`);
    });

    it('refuses an expired token', async () => {
      const { token } = await issueToken(app.pool, store.id, 60, new Date(Date.now() - 3600_000));
      await refused(`Bearer ${token}`);
    });

    it('refuses a token verified before once it has expired', async () => {
      const issuedAt = new Date(Date.now() - 30_000);
      const { token } = await issueToken(app.pool, store.id, 60, issuedAt);
      // The first check verifies the signature and remembers it; the later ones reuse that.
      assert.equal((await authenticate(app.pool, token, new Date(issuedAt.getTime() + 1_000))).storeId, store.id);
      assert.equal((await authenticate(app.pool, token, new Date(issuedAt.getTime() + 59_000))).storeId, store.id);
      await assert.rejects(authenticate(app.pool, token, new Date(issuedAt.getTime() + 60_000)), { code: 'auth_invalid' });
    });

    it('refuses a revoked token at once', async () => {
      const { token, jti } = await issueToken(app.pool, store.id, null, new Date());
      assert.equal((await app.request('GET', '/v1/_probe', { token })).status, 200);
      assert.equal(await revokeToken(app.pool, jti, new Date()), true);
      await refused(`Bearer ${token}`);
    });

    it('refuses a token of a store that no longer exists', async () => {
      const other = await app.store({ name: 'Gone' });
      await app.pool.query(sql.unsafe`delete from stores where id = ${other.id}`);
      await refused(`Bearer ${other.token}`);
    });

    it('refuses a token whose subject was changed', async () => {
      const other = await app.store({ name: 'Other' });
      const [header, , signature] = store.token.split('.');
      const claims = JSON.parse(Buffer.from(store.token.split('.')[1]!, 'base64url').toString());
      const tampered = Buffer.from(JSON.stringify({ ...claims, sub: other.id })).toString('base64url');
      await refused(`Bearer ${header}.${tampered}.${signature}`);
    });
  });
});

describe('rate limiting', () => {
  it('limits per store with RateLimit headers, then 429 with Retry-After', async () => {
    const app = await startTestApp({ env: { RATE_LIMIT_PER_STORE: '2' }, routes: [] });
    after(() => app.close());
    const store = await app.store();
    const other = await app.store({ name: 'Other' });
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof app.request>> | undefined;
    for (let i = 0; i < 6; i += 1) {
      last = await app.request('GET', '/v1/payment-methods', { token: store.token });
      statuses.push(last.status);
    }
    assert.equal(statuses.filter((s) => s === 429).length >= 1, true, `statuses ${statuses}`);
    assertEnvelope(last!, 429, 'rate_limit_error', 'rate_limit_exceeded');
    assert.match(last!.headers.get('retry-after') ?? '', /^\d+$/);
    assert.equal(last!.headers.get('ratelimit-limit'), '4');
    assert.equal(last!.headers.get('ratelimit-remaining'), '0');
    // RateLimit-Reset is what docs/API.md says: seconds until the bucket is full again (4 tokens at
    // 2/s from empty: 2 s); Retry-After, until the next request may go (1 s).
    assert.equal(last!.headers.get('ratelimit-reset'), '2');
    assert.equal(last!.headers.get('retry-after'), '1');
    // Another store has its own budget.
    assert.notEqual((await app.request('GET', '/v1/payment-methods', { token: other.token })).status, 429);
  });
});
