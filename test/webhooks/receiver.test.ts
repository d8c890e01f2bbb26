import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { createWebhookVerifier, type SeenStore, type WebhookVerifierOptions } from '../../src/webhooks/receiver.ts';
import { buildEventBody, buildWebhookBody, generateSigningKey, publicJwk, signBody, type SigningKey } from '../../src/webhooks/sign.ts';
import { startKeyServer, type KeyServer } from '../helpers/servers.ts';

const T0 = Date.parse('2025-03-01T12:00:00.000Z');
const HOUR = 60 * 60 * 1000;
/** The shop's store (the verifiers here are configured with it) and another store of the same Kassa. */
const STORE_A = '0b5e2c9a-1d2e-4f60-8a7b-9c0d1e2f3a4b';
const STORE_B = '7c1f0e2d-3b4a-4c5d-8e6f-a0b1c2d3e4f5';

/** A webhook as Kassa sends it: body, X-Signature, X-Signature-Kid. */
function webhook(key: SigningKey, options: { paymentId?: string; signAt?: number; kid?: string; orderId?: string; storeId?: string } = {}) {
  const body = buildWebhookBody(
    { paymentId: options.paymentId ?? 'pay-1', storeId: options.storeId ?? STORE_A, metadata: { cart: '42' }, orderId: options.orderId },
    new Date(options.signAt ?? T0),
  );
  return {
    body,
    headers: { 'content-type': 'application/json', 'x-signature': signBody(body, key.secretKey), 'x-signature-kid': options.kid ?? key.kid },
  };
}

describe('createWebhookVerifier against a real key-set server', () => {
  let keyA: SigningKey;
  let keyB: SigningKey;
  let keys: KeyServer;
  let clock: number;
  const verifier = (extra: Partial<WebhookVerifierOptions> = {}) => createWebhookVerifier({ keysUrl: keys.url, now: () => clock, storeID: STORE_A, ...extra });

  before(() => {
    keyA = generateSigningKey(new Date());
    keyB = generateSigningKey(new Date());
  });
  beforeEach(async () => {
    clock = T0;
    keys = await startKeyServer([publicJwk(keyA.kid, keyA.publicKey)]);
  });
  afterEach(async () => {
    await keys.close();
  });

  it('accepts a valid webhook and returns its payload', async () => {
    const v = verifier();
    const w = webhook(keyA, { orderId: 'order-7' });
    const result = await v.verify(Buffer.from(w.body), w.headers);
    assert.equal(result.ok, true);
    if (!result.ok) return;
    assert.deepEqual(result.payload, { paymentID: 'pay-1', status: 'completed', metadata: { cart: '42' }, order_id: 'order-7', storeID: STORE_A });
    assert.equal(result.duplicate, false);
    assert.equal(result.kid, keyA.kid);
    assert.equal(result.signAt.getTime(), T0);
    assert.equal(keys.requests, 1);
  });

  it('accepts the body as a string, and Fetch Headers or mixed-case header names', async () => {
    const v = verifier();
    const w = webhook(keyA);
    assert.equal((await v.verify(w.body, new Headers(w.headers))).ok, true);
    const upper = { 'X-Signature': w.headers['x-signature'], 'X-SIGNATURE-KID': w.headers['x-signature-kid'] };
    assert.equal((await v.verify(w.body, upper)).ok, true);
  });

  it('uses the cached key set: no fetch on later verifications', async () => {
    const v = verifier();
    for (let i = 0; i < 5; i++) {
      const w = webhook(keyA, { paymentId: `pay-${i}` });
      assert.equal((await v.verify(w.body, w.headers)).ok, true);
    }
    assert.equal(keys.requests, 1);
  });

  it('coalesces concurrent first fetches', async () => {
    const v = verifier();
    const results = await Promise.all([1, 2, 3, 4].map((i) => webhook(keyA, { paymentId: `p${i}` })).map((w) => v.verify(w.body, w.headers)));
    assert.ok(results.every((r) => r.ok));
    assert.equal(keys.requests, 1);
  });

  it('refetches after the cache lifetime (6 h by default, clamped to 6–12 h)', async () => {
    const v = verifier({ cacheTtlMs: 1000 }); // clamped up to 6 h
    assert.equal((await v.verify(webhook(keyA).body, webhook(keyA).headers)).ok, true);
    clock = T0 + HOUR;
    assert.equal((await v.verify(webhook(keyA, { signAt: clock }).body, webhook(keyA, { signAt: clock }).headers)).ok, true);
    assert.equal(keys.requests, 1, 'still cached after 1 h');
    clock = T0 + 6 * HOUR;
    assert.equal((await v.verify(webhook(keyA, { signAt: clock }).body, webhook(keyA, { signAt: clock }).headers)).ok, true);
    assert.equal(keys.requests, 2, 'refetched at 6 h');

    const longest = verifier({ cacheTtlMs: 48 * HOUR }); // clamped down to 12 h
    clock = T0;
    const before = keys.requests;
    await longest.verify(webhook(keyA).body, webhook(keyA).headers);
    clock = T0 + 11 * HOUR;
    await longest.verify(webhook(keyA, { signAt: clock }).body, webhook(keyA, { signAt: clock }).headers);
    assert.equal(keys.requests, before + 1);
    clock = T0 + 12 * HOUR;
    await longest.verify(webhook(keyA, { signAt: clock }).body, webhook(keyA, { signAt: clock }).headers);
    assert.equal(keys.requests, before + 2);
  });

  it('rejects a tampered body', async () => {
    const v = verifier();
    const w = webhook(keyA);
    const tampered = w.body.replace('"cart":"42"', '"cart":"43"');
    assert.deepEqual(await v.verify(tampered, w.headers), { ok: false, status: 401, reason: 'invalid signature' });
    const reformatted = JSON.stringify(JSON.parse(w.body), null, 2); // same JSON, other bytes
    assert.deepEqual(await v.verify(reformatted, w.headers), { ok: false, status: 401, reason: 'invalid signature' });
  });

  it('rejects a signAt older than 30 s or more than 5 s in the future', async () => {
    const v = verifier();
    const check = async (offset: number) => {
      const w = webhook(keyA, { signAt: T0 + offset });
      return v.verify(w.body, w.headers);
    };
    assert.equal((await check(-30_000)).ok, true);
    assert.equal((await check(-29_000)).ok, true);
    const stale = await check(-31_000);
    assert.deepEqual(stale, { ok: false, status: 401, reason: 'signAt is older than 30 s' });
    assert.equal((await check(-3 * HOUR)).ok, false);
    assert.equal((await check(5_000)).ok, true);
    const future = await check(6_000);
    assert.deepEqual(future, { ok: false, status: 401, reason: 'signAt is more than 5 s in the future' });
  });

  it('on an unknown kid fetches the key set exactly once more, then verifies after a rotation', async () => {
    const v = verifier();
    assert.equal((await v.verify(webhook(keyA).body, webhook(keyA).headers)).ok, true);
    assert.equal(keys.requests, 1);
    keys.keys = [publicJwk(keyB.kid, keyB.publicKey), publicJwk(keyA.kid, keyA.publicKey)]; // the service rotates
    const w = webhook(keyB, { paymentId: 'pay-2' });
    const result = await v.verify(w.body, w.headers);
    assert.equal(result.ok, true);
    assert.equal(keys.requests, 2);
    // The refreshed set is cached: both keys verify with no further fetch.
    assert.equal((await v.verify(webhook(keyA, { paymentId: 'pay-3' }).body, webhook(keyA, { paymentId: 'pay-3' }).headers)).ok, true);
    assert.equal((await v.verify(webhook(keyB, { paymentId: 'pay-4' }).body, webhook(keyB, { paymentId: 'pay-4' }).headers)).ok, true);
    assert.equal(keys.requests, 2);
  });

  it('a kid still unknown after the refetch is rejected; refetches are rate-limited', async () => {
    const v = verifier();
    await v.verify(webhook(keyA).body, webhook(keyA).headers);
    assert.equal(keys.requests, 1);
    const stranger = generateSigningKey(new Date());
    const w = webhook(stranger);
    assert.deepEqual(await v.verify(w.body, w.headers), { ok: false, status: 401, reason: `unknown signing key id "${stranger.kid}"` });
    assert.equal(keys.requests, 2);
    // A flood of forged kids does not turn into a flood of fetches…
    for (let i = 0; i < 5; i++) assert.equal((await v.verify(w.body, { ...w.headers, 'x-signature-kid': `forged-${i}` })).ok, false);
    assert.equal(keys.requests, 2);
    // …but after minRefetchIntervalMs an unknown kid may refetch again.
    clock = T0 + 10_000;
    const later = webhook(stranger, { signAt: clock });
    assert.equal((await v.verify(later.body, later.headers)).ok, false);
    assert.equal(keys.requests, 3);
  });

  it('never falls back to another key', async () => {
    keys.keys = [publicJwk(keyA.kid, keyA.publicKey), publicJwk(keyB.kid, keyB.publicKey)];
    const v = verifier();
    // Signed with A, labelled B: B is known, so B alone is tried.
    const mislabelled = webhook(keyA, { kid: keyB.kid });
    assert.deepEqual(await v.verify(mislabelled.body, mislabelled.headers), { ok: false, status: 401, reason: 'invalid signature' });
    assert.equal(keys.requests, 1);
    // Signed with A, labelled with an unknown kid: one refetch, still unknown, rejected — A is not tried.
    const unknown = webhook(keyA, { kid: 'no-such-kid' });
    const result = await v.verify(unknown.body, unknown.headers);
    assert.deepEqual(result, { ok: false, status: 401, reason: 'unknown signing key id "no-such-kid"' });
    assert.equal(keys.requests, 2);
  });

  it('answers 500 when the key set is unavailable (so that the sender retries)', async () => {
    keys.failWith = 503;
    const w = webhook(keyA);
    const result = await verifier().verify(w.body, w.headers);
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.equal(result.status, 500);
    assert.match(result.reason, /^webhook key set unavailable \(key set answered HTTP 503\)$/);

    keys.failWith = null;
    keys.rawBody = '<html>not json';
    const notJson = await verifier().verify(w.body, w.headers);
    assert.equal(!notJson.ok && notJson.status, 500);
    keys.rawBody = '{"nokeys":[]}';
    const noKeys = await verifier().verify(w.body, w.headers);
    assert.equal(!noKeys.ok && noKeys.status, 500);
  });

  it('answers 500 when the key server is down, and when a rotation refetch fails', async () => {
    const v = verifier();
    assert.equal((await v.verify(webhook(keyA).body, webhook(keyA).headers)).ok, true);
    await keys.close();
    const rotated = webhook(keyB);
    const result = await v.verify(rotated.body, rotated.headers);
    assert.equal(!result.ok && result.status, 500);
    assert.match(!result.ok ? result.reason : '', /^webhook key set unavailable \(key set fetch failed/);
    // The cached key still verifies while the server is down.
    assert.equal((await v.verify(webhook(keyA, { paymentId: 'p9' }).body, webhook(keyA, { paymentId: 'p9' }).headers)).ok, true);

    const fresh = verifier();
    const down = await fresh.verify(webhook(keyA).body, webhook(keyA).headers);
    assert.equal(!down.ok && down.status, 500);
    keys = await startKeyServer(); // for afterEach
  });

  it('flags a paymentID already processed as a duplicate', async () => {
    const v = verifier();
    const w = webhook(keyA, { paymentId: 'dup-1' });
    const first = await v.verify(w.body, w.headers);
    assert.equal(first.ok && first.duplicate, false);
    // Verified but not processed yet: a redelivery is not a duplicate.
    const again = await v.verify(w.body, w.headers);
    assert.equal(again.ok && again.duplicate, false);
    await v.markProcessed('dup-1');
    clock = T0 + 20_000;
    const retry = webhook(keyA, { paymentId: 'dup-1', signAt: clock }); // a retry is signed afresh
    const third = await v.verify(retry.body, retry.headers);
    assert.equal(third.ok && third.duplicate, true);
    const other = webhook(keyA, { paymentId: 'dup-2', signAt: clock });
    const fourth = await v.verify(other.body, other.headers);
    assert.equal(fourth.ok && fourth.duplicate, false);
  });

  it('handle(): 200 after processing, duplicates skipped, failed processing retried', async () => {
    const processed: string[] = [];
    let failNext = true;
    const v = verifier();
    const onPayment = async (payload: { paymentID: string }) => {
      if (failNext) {
        failNext = false;
        throw new Error('database down');
      }
      processed.push(payload.paymentID);
    };
    const w = webhook(keyA, { paymentId: 'h-1' });
    assert.deepEqual(await v.handle(w.body, w.headers, onPayment), {
      status: 500,
      reason: 'processing failed',
      payload: { paymentID: 'h-1', status: 'completed', metadata: { cart: '42' }, storeID: STORE_A },
      duplicate: false,
    });
    assert.equal((await v.handle(w.body, w.headers, onPayment)).status, 200);
    const dup = await v.handle(w.body, w.headers, onPayment);
    assert.equal(dup.status, 200);
    assert.equal(dup.duplicate, true);
    assert.deepEqual(processed, ['h-1']);
    const bad = await v.handle(w.body.replace('h-1', 'h-2'), w.headers, onPayment);
    assert.deepEqual(bad, { status: 401, reason: 'invalid signature' });
    assert.deepEqual(processed, ['h-1']);
  });

  it("a store endpoint's event body: verified the same way, told by its eventID, handled by onEvent (400 without one)", async () => {
    const v = verifier();
    const signed = (body: string) => ({ body, headers: { 'x-signature': signBody(body, keyA.secretKey), 'x-signature-kid': keyA.kid } });
    const event = { type: 'payment.expired', eventId: 'ev-1', storeId: STORE_A, payload: { paymentID: 'pay-9', status: 'expired', metadata: {} } };
    const w = signed(buildEventBody(event, new Date(T0)));
    assert.deepEqual(Object.keys(JSON.parse(w.body)), ['type', 'eventID', 'payload', 'signAt']);
    const result = await v.verify(w.body, w.headers);
    assert.ok(result.ok && result.event !== undefined, JSON.stringify(result));
    assert.deepEqual(result.event, { type: 'payment.expired', eventID: 'ev-1', payload: { ...event.payload, storeID: STORE_A } });
    assert.equal(result.payload, undefined);
    // Tampered, stale or misshapen: refused as the payment webhook is.
    assert.deepEqual(await v.verify(w.body.replace('pay-9', 'pay-8'), w.headers), { ok: false, status: 401, reason: 'invalid signature' });
    clock = T0 + 31_000;
    assert.equal(((await v.verify(w.body, w.headers)) as { status: number }).status, 401);
    clock = T0;
    const noId = signed(JSON.stringify({ type: 'ping', payload: {}, signAt: new Date(T0).toISOString() }));
    assert.deepEqual(await v.verify(noId.body, noId.headers), { ok: false, status: 400, reason: 'eventID is missing' });

    assert.equal((await v.handle(w.body, w.headers, () => {})).status, 400, 'an event, and no onEvent');
    const told: string[] = [];
    const onEvent = (e: { type: string; eventID: string }) => void told.push(`${e.type} ${e.eventID}`);
    const first = await v.handle(w.body, w.headers, () => assert.fail('not a payment webhook'), onEvent);
    assert.deepEqual([first.status, first.duplicate, first.event?.eventID], [200, false, 'ev-1']);
    // The same event again (a retry, or another delivery of it): a duplicate, not handled twice.
    const again = signed(buildEventBody(event, new Date(T0 + 1000)));
    assert.deepEqual([(await v.handle(again.body, again.headers, () => {}, onEvent)).duplicate], [true]);
    assert.deepEqual(told, ['payment.expired ev-1']);
  });

  it('rejects (403) a genuine webhook for another store, before the callback runs and before the seen store is asked or told', async () => {
    const asked: string[] = [];
    const seen: SeenStore = {
      has: (id) => {
        asked.push(`has ${id}`);
        return false;
      },
      add: (id) => void asked.push(`add ${id}`),
    };
    const v = verifier({ seen });
    const theirs = webhook(keyA, { paymentId: 'b-1', orderId: 'A-1001', storeId: STORE_B });
    const refusal = { status: 403, reason: `payload.storeID "${STORE_B}" is another store's: this receiver takes only its own store's` };
    assert.deepEqual(await v.verify(theirs.body, theirs.headers), { ok: false, ...refusal });
    assert.deepEqual(await v.handle(theirs.body, theirs.headers, () => assert.fail('the callback must not run')), refusal);
    // The same through a store endpoint's event body.
    const event = buildEventBody(
      { type: 'payment.completed', eventId: 'ev-b', storeId: STORE_B, payload: { paymentID: 'b-1', order_id: 'A-1001' } },
      new Date(T0),
    );
    const eventHeaders = { 'x-signature': signBody(event, keyA.secretKey), 'x-signature-kid': keyA.kid };
    assert.deepEqual(
      await v.handle(
        event,
        eventHeaders,
        () => assert.fail('not a payment'),
        () => assert.fail('the event callback must not run'),
      ),
      refusal,
    );
    assert.deepEqual(asked, [], 'the seen store is neither asked nor told');
    // A's own, of either kind, go through.
    const ours = webhook(keyA, { paymentId: 'a-1', orderId: 'A-1001' });
    assert.equal((await v.handle(ours.body, ours.headers, () => {})).status, 200);
    assert.deepEqual(asked, ['has a-1', 'add a-1']);
  });

  it('with storeID set, a body naming no store (a Kassa before issue 48.1) is rejected (403); a list of stores takes each; the id is compared without case', async () => {
    const unnamed = '{"payload":{"paymentID":"p","status":"completed","metadata":{}},"signAt":"2025-03-01T12:00:00.000Z"}';
    const headers = { 'x-signature': signBody(unnamed, keyA.secretKey), 'x-signature-kid': keyA.kid };
    assert.deepEqual(await verifier().verify(unnamed, headers), {
      ok: false,
      status: 403,
      reason: "payload.storeID is missing: the body names no store, and this receiver takes only its own store's",
    });
    const both = verifier({ storeID: [STORE_A, STORE_B] });
    for (const storeId of [STORE_A, STORE_B]) {
      const w = webhook(keyA, { storeId });
      assert.equal((await both.verify(w.body, w.headers)).ok, true, storeId);
    }
    const upper = webhook(keyA, { storeId: STORE_A.toUpperCase() });
    assert.equal((await verifier().verify(upper.body, upper.headers)).ok, true);
    const notString = `{"payload":{"paymentID":"p","status":"completed","metadata":{},"storeID":7},"signAt":"2025-03-01T12:00:00.000Z"}`;
    assert.deepEqual(await verifier().verify(notString, { 'x-signature': signBody(notString, keyA.secretKey), 'x-signature-kid': keyA.kid }), {
      ok: false,
      status: 400,
      reason: 'payload.storeID is not a string',
    });
    for (const storeID of ['', '  ', [] as string[], [STORE_A, '']]) {
      assert.throws(() => verifier({ storeID }), TypeError, JSON.stringify(storeID));
    }
  });

  it('handle(): concurrent deliveries of one payment are processed once', async () => {
    const v = verifier();
    let calls = 0;
    const slow = async () => {
      calls++;
      await new Promise((resolve) => setTimeout(resolve, 50));
    };
    const w = webhook(keyA, { paymentId: 'c-1' });
    const results = await Promise.all([v.handle(w.body, w.headers, slow), v.handle(w.body, w.headers, slow)]);
    assert.deepEqual(
      results.map((r) => r.status),
      [200, 200],
    );
    assert.equal(calls, 1);
  });

  it('uses a pluggable (async) seen store', async () => {
    const ids = new Map<string, number>();
    const seen: SeenStore = {
      has: async (id) => ids.has(id),
      add: async (id) => void ids.set(id, clock),
    };
    const v = verifier({ seen });
    const w = webhook(keyA, { paymentId: 's-1' });
    assert.equal((await v.handle(w.body, w.headers, () => {})).duplicate, false);
    assert.deepEqual([...ids.keys()], ['s-1']);
    const another = verifier({ seen }); // e.g. another process sharing the table
    const result = await another.verify(w.body, w.headers);
    assert.equal(result.ok && result.duplicate, true);

    const broken = verifier({ seen: { has: () => Promise.reject(new Error('down')), add: () => {} } });
    const down = await broken.verify(w.body, w.headers);
    assert.deepEqual(down, { ok: false, status: 500, reason: 'processed-payments store unavailable' });
  });

  it('rejects missing or malformed signature headers with 401', async () => {
    const v = verifier();
    const w = webhook(keyA);
    assert.deepEqual(await v.verify(w.body, { 'x-signature-kid': keyA.kid }), { ok: false, status: 401, reason: 'missing X-Signature header' });
    assert.deepEqual(await v.verify(w.body, { 'x-signature': w.headers['x-signature'] }), {
      ok: false,
      status: 401,
      reason: 'missing X-Signature-Kid header',
    });
    assert.deepEqual(await v.verify(w.body, { ...w.headers, 'x-signature': 'AAAA' }), { ok: false, status: 401, reason: 'malformed X-Signature header' });
    assert.deepEqual(await v.verify(w.body, { ...w.headers, 'x-signature': 'not base64 at all!' }), {
      ok: false,
      status: 401,
      reason: 'malformed X-Signature header',
    });
    assert.equal(keys.requests, 0, 'no key fetch for requests that cannot be webhooks');
  });

  it('rejects a correctly signed body that is not a webhook with 400', async () => {
    const v = verifier();
    const signed = (body: string) => ({ 'x-signature': signBody(body, keyA.secretKey), 'x-signature-kid': keyA.kid });
    const cases: Array<[string, string]> = [
      ['not json', 'body is not valid JSON'],
      ['[]', 'body has no payload object'],
      ['{"payload":{"status":"completed","metadata":{}},"signAt":"2025-03-01T12:00:00Z"}', 'payload.paymentID is missing'],
      ['{"payload":{"paymentID":"p","status":"completed","metadata":{}},"signAt":"yesterday"}', 'signAt is not an RFC 3339 time'],
      ['{"payload":{"paymentID":"p","status":"completed","metadata":{}},"signAt":1740830400000}', 'signAt is not an RFC 3339 time'],
      ['{"payload":{"paymentID":"p","status":"completed","metadata":[]},"signAt":"2025-03-01T12:00:00Z"}', 'payload.metadata is not an object'],
    ];
    for (const [body, reason] of cases) {
      assert.deepEqual(await v.verify(body, signed(body)), { ok: false, status: 400, reason }, body);
    }
    // signAt with seconds precision and an offset is RFC 3339 too.
    const body = `{"payload":{"paymentID":"p","status":"completed","metadata":{},"storeID":"${STORE_A}"},"signAt":"2025-03-01T13:00:00+01:00"}`;
    assert.equal((await v.verify(body, signed(body))).ok, true);
  });

  it('accepts x published as base64url without padding too', async () => {
    const x = Buffer.from(keyA.publicKey).toString('base64url');
    keys.keys = [{ kid: keyA.kid, x }];
    const w = webhook(keyA);
    assert.equal((await verifier().verify(w.body, w.headers)).ok, true);
  });

  it('ignores malformed or non-Ed25519 entries of the key set', async () => {
    keys.keys = [
      { kid: keyA.kid, x: Buffer.from(keyA.publicKey).toString('base64'), kty: 'EC' as 'OKP' },
      { kid: keyB.kid, x: 'short' },
    ];
    const v = verifier();
    const a = webhook(keyA);
    assert.equal((await v.verify(a.body, a.headers)).ok, false);
    const b = webhook(keyB);
    assert.equal((await v.verify(b.body, b.headers)).ok, false);
  });

  it('refuses a keysUrl that is not an http(s) URL', () => {
    assert.throws(() => createWebhookVerifier({ keysUrl: 'keys.json' }), TypeError);
    assert.throws(() => createWebhookVerifier({ keysUrl: 'file:///etc/keys' }), TypeError);
  });
});

describe('createWebhookVerifier without storeID', () => {
  let keys: KeyServer;
  const key = generateSigningKey(new Date());
  before(async () => {
    keys = await startKeyServer([publicJwk(key.kid, key.publicKey)]);
  });
  after(async () => {
    await keys.close();
  });
  it('keeps working as before (every store of the Kassa is accepted), and warns once per process that it should be given', async () => {
    const warnings: Array<{ name: string; code?: string; message: string }> = [];
    const onWarning = (warning: Error & { code?: string }) => void warnings.push({ name: warning.name, code: warning.code, message: warning.message });
    process.on('warning', onWarning);
    try {
      const first = createWebhookVerifier({ keysUrl: keys.url });
      createWebhookVerifier({ keysUrl: keys.url });
      for (const storeId of [STORE_A, STORE_B]) {
        const w = webhook(key, { storeId, signAt: Date.now() });
        assert.equal((await first.verify(w.body, w.headers)).ok, true);
      }
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
      assert.equal(warnings.length, 1, JSON.stringify(warnings));
      assert.equal(warnings[0]!.code, 'KASSA_WEBHOOKS_NO_STORE_ID');
      assert.match(warnings[0]!.message, /without storeID accepts every store's webhooks/);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('createWebhookVerifier with the real clock', () => {
  let keys: KeyServer;
  const key = generateSigningKey(new Date());
  before(async () => {
    keys = await startKeyServer([publicJwk(key.kid, key.publicKey)]);
  });
  after(async () => {
    await keys.close();
  });
  it('accepts a webhook signed just now', async () => {
    const w = webhook(key, { signAt: Date.now() });
    const result = await createWebhookVerifier({ keysUrl: keys.url, storeID: STORE_A }).verify(w.body, w.headers);
    assert.equal(result.ok, true);
  });
});
