// The public surface: the OpenAPI document, the webhook key set and the coin images.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import nacl from 'tweetnacl';
import { ROTATION_MIN_INTERVAL_MS, rotateSigningKey } from '../../src/webhooks/keys.ts';
import { signBody } from '../../src/webhooks/sign.ts';
import { sql, z } from '../../src/db/pool.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(() => app.close());

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document covering every merchant endpoint', async () => {
    const response = await app.request('GET', '/openapi.json');
    assert.equal(response.status, 200);
    const validator = new Validator();
    const result = await validator.validate(response.json);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    assert.equal(validator.version, '3.1');
    for (const path of [
      '/v1/payments',
      '/v1/payments/create',
      '/v1/payments/{paymentID}',
      '/v1/payments/{paymentID}/status',
      '/v1/payments/{paymentID}/cancel',
      '/v1/payments/{paymentID}/refunds',
      '/v1/payment-methods',
      '/v1/payments/methods',
      '/pay/v1/webhook/keys',
    ]) {
      assert.ok(response.json.paths[path], `documents ${path}`);
    }
    assert.equal(response.json.components.schemas.CreatePaymentRequest.additionalProperties, false);
    assert.equal(response.json.components.schemas.CreateRefundRequest.additionalProperties, false);
    assert.deepEqual(Object.keys(response.json.paths['/v1/payments/{paymentID}/refunds']).sort(), ['get', 'post']);
  });
});

describe('GET {checkout_base_url}/v1/webhook/keys', () => {
  it('publishes the active key and keys retired less than 24 hours ago', async () => {
    const first = await rotateSigningKey(app.pool, new Date());
    // The command's rule: one rotation in ROTATION_MIN_INTERVAL_MS.
    const second = await rotateSigningKey(app.pool, new Date(Date.now() + ROTATION_MIN_INTERVAL_MS));
    const response = await app.request('GET', '/pay/v1/webhook/keys');
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'public, max-age=300');
    const kids = response.json.keys.map((key: any) => key.kid);
    assert.deepEqual(kids, [second, first]);
    for (const key of response.json.keys) {
      assert.deepEqual(Object.keys(key).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x']);
      assert.equal(key.kty, 'OKP');
      assert.equal(key.crv, 'Ed25519');
      assert.equal(key.alg, 'EdDSA');
      assert.equal(key.use, 'sig');
      assert.equal(Buffer.from(key.x, 'base64').length, 32);
    }
    // A signature made with the stored secret key verifies with the published x.
    const secret = await app.pool.oneFirst(
      sql.type(z.object({ secret_key: z.instanceof(Buffer) }))`select secret_key from webhook_signing_keys where kid = ${second}`,
    );
    const body = '{"payload":{}}';
    const published = response.json.keys.find((key: any) => key.kid === second);
    assert.equal(
      nacl.sign.detached.verify(Buffer.from(body), Buffer.from(signBody(body, new Uint8Array(secret)), 'base64'), Buffer.from(published.x, 'base64')),
      true,
    );
    // Retired more than 24 hours ago: no longer published.
    await app.pool.query(sql.unsafe`update webhook_signing_keys set retired_at = now() - interval '25 hours' where kid = ${first}`);
    const later = await app.request('GET', '/pay/v1/webhook/keys');
    assert.deepEqual(
      later.json.keys.map((key: any) => key.kid),
      [second],
    );
  });

  it('needs no Authorization header and never shows a secret key', async () => {
    const response = await app.request('GET', '/pay/v1/webhook/keys');
    assert.equal(response.status, 200);
    assert.doesNotMatch(response.text, /secret/i);
  });
});

describe('coin and chain images', () => {
  it('serves an SVG for every coin and chain, and 404 for anything else', async () => {
    const coin = await app.request('GET', '/pay/assets/coins/USDT.svg');
    assert.equal(coin.status, 200);
    assert.equal(coin.headers.get('content-type'), 'image/svg+xml');
    assert.match(coin.text, /^<svg /);
    assert.equal((await app.request('GET', '/pay/assets/chains/TON.svg')).status, 200);
    assert.equal((await app.request('GET', '/pay/assets/coins/FAKE.svg')).status, 404);
    assert.equal((await app.request('GET', '/pay/assets/coins/..%2F..%2Fetc.svg')).status, 404);
  });
});
