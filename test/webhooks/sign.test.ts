import assert from 'node:assert/strict';
import { createPublicKey, verify } from 'node:crypto';
import { describe, it } from 'node:test';
import nacl from 'tweetnacl';
import { buildWebhookBody, generateSigningKey, publicJwk, signBody, signingKeyFromSeed, verifyBody } from '../../src/webhooks/sign.ts';

const signAt = new Date('2025-01-02T03:04:05.678Z');
const storeId = '0b5e2c9a-1d2e-4f60-8a7b-9c0d1e2f3a4b';

describe('buildWebhookBody', () => {
  it("has the seed's shape, in order, with signAt as RFC 3339 UTC with milliseconds, and names its store last (additive)", () => {
    const body = buildWebhookBody({ paymentId: '7d9f1c9e-2f3b-4c59-9a44-0c1e2f3a4b5c', storeId, metadata: { color: 'blue', size: 'L' } }, signAt);
    assert.equal(
      body,
      `{"payload":{"paymentID":"7d9f1c9e-2f3b-4c59-9a44-0c1e2f3a4b5c","status":"completed","metadata":{"color":"blue","size":"L"},"storeID":"${storeId}"},"signAt":"2025-01-02T03:04:05.678Z"}`,
    );
  });

  it('carries order_id after metadata only when the payment has one', () => {
    assert.equal(
      buildWebhookBody({ paymentId: 'p1', storeId, metadata: {}, orderId: 'order-42' }, signAt),
      `{"payload":{"paymentID":"p1","status":"completed","metadata":{},"order_id":"order-42","storeID":"${storeId}"},"signAt":"2025-01-02T03:04:05.678Z"}`,
    );
    assert.equal(
      buildWebhookBody({ paymentId: 'p1', storeId, metadata: {}, orderId: null }, signAt),
      `{"payload":{"paymentID":"p1","status":"completed","metadata":{},"storeID":"${storeId}"},"signAt":"2025-01-02T03:04:05.678Z"}`,
    );
  });

  it('signAt parses back to the signing time', () => {
    const parsed = JSON.parse(buildWebhookBody({ paymentId: 'p', storeId, metadata: {} }, signAt)) as { signAt: string };
    assert.match(parsed.signAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.equal(Date.parse(parsed.signAt), signAt.getTime());
  });

  it('refuses an invalid date', () => {
    assert.throws(() => buildWebhookBody({ paymentId: 'p', storeId, metadata: {} }, new Date(Number.NaN)), RangeError);
  });
});

describe('signing keys and signatures', () => {
  it('generateSigningKey makes a short kid and tweetnacl-sized keys', () => {
    const a = generateSigningKey(new Date('2025-06-01T10:00:00Z'));
    const b = generateSigningKey(new Date('2025-06-01T10:00:00Z'));
    assert.match(a.kid, /^k20250601-[0-9a-f]{8}$/);
    assert.notEqual(a.kid, b.kid);
    assert.equal(a.publicKey.length, 32);
    assert.equal(a.secretKey.length, 64);
    assert.deepEqual(a.secretKey.subarray(32), a.publicKey);
  });

  it('publicJwk publishes x as standard base64 of the raw key, with the members docs/API.md names', () => {
    const key = generateSigningKey(new Date());
    const jwk = publicJwk(key.kid, key.publicKey);
    assert.deepEqual(Object.keys(jwk).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x']);
    assert.equal(jwk.kid, key.kid);
    assert.equal(jwk.kty, 'OKP');
    assert.equal(jwk.crv, 'Ed25519');
    assert.equal(jwk.alg, 'EdDSA');
    assert.equal(jwk.use, 'sig');
    assert.match(jwk.x, /^[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(new Uint8Array(Buffer.from(jwk.x, 'base64')), key.publicKey);
    assert.throws(() => publicJwk('k', new Uint8Array(31)), TypeError);
  });

  it('the signature verifies with tweetnacl using the published x, over the exact UTF-8 bytes', () => {
    const key = generateSigningKey(new Date());
    const body = buildWebhookBody({ paymentId: 'p-ü', storeId, metadata: { note: 'crème brûlée ☕', emoji: '🚀' }, orderId: 'Ω-1' }, signAt);
    const signature = signBody(body, key.secretKey);
    assert.match(signature, /^[A-Za-z0-9+/]{86}==$/);
    const x = Buffer.from(publicJwk(key.kid, key.publicKey).x, 'base64');
    const bytes = new Uint8Array(Buffer.from(body, 'utf8'));
    assert.equal(nacl.sign.detached.verify(bytes, new Uint8Array(Buffer.from(signature, 'base64')), new Uint8Array(x)), true);
    assert.equal(verifyBody(body, signature, key.publicKey), true);

    const tampered = body.replace('"p-ü"', '"p-u"');
    assert.equal(verifyBody(tampered, signature, key.publicKey), false);
    const other = generateSigningKey(new Date());
    assert.equal(verifyBody(body, signature, other.publicKey), false);
    assert.equal(verifyBody(body, 'not base64!', key.publicKey), false);
  });

  it('the signature also verifies with node:crypto from the JWK (independent implementation)', () => {
    const key = generateSigningKey(new Date());
    const body = buildWebhookBody({ paymentId: 'p1', storeId, metadata: {} }, signAt);
    const jwk = publicJwk(key.kid, key.publicKey);
    const publicKey = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(jwk.x, 'base64').toString('base64url') },
      format: 'jwk',
    });
    assert.equal(verify(null, Buffer.from(body), publicKey, Buffer.from(signBody(body, key.secretKey), 'base64')), true);
  });

  it('signingKeyFromSeed rebuilds the same key pair', () => {
    const key = generateSigningKey(new Date());
    const again = signingKeyFromSeed(key.kid, key.secretKey.subarray(0, 32));
    assert.deepEqual(again.publicKey, key.publicKey);
    assert.equal(signBody('x', again.secretKey), signBody('x', key.secretKey));
  });

  it('signBody refuses a key of the wrong size', () => {
    assert.throws(() => signBody('x', new Uint8Array(32)), TypeError);
  });
});
