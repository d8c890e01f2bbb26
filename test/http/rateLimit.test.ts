import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import pg from 'pg';
import { issueToken, revokeToken } from '../../src/auth/tokens.ts';
import { createRateLimiter, createSharedRateLimiter } from '../../src/http/rateLimit.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { assertError, startPaymentsApp } from '../helpers/payments.ts';

describe('rate limiter', () => {
  it('RateLimit-Reset counts to a full bucket, Retry-After to the next allowed request', async () => {
    const limiter = createRateLimiter(2); // 2/s, bursts of 4
    const taken = [];
    for (let i = 0; i < 4; i += 1) taken.push(await limiter.take('k', 0));
    assert.deepEqual(
      taken.map((result) => [result.allowed, result.remaining, result.resetSeconds]),
      [
        [true, 3, 1],
        [true, 2, 1],
        [true, 1, 2],
        [true, 0, 2],
      ],
    );
    const refused = await limiter.take('k', 0);
    assert.equal(refused.allowed, false);
    assert.equal(refused.resetSeconds, 2, 'empty: 4 tokens at 2/s');
    assert.equal(refused.retryAfterSeconds, 1, 'one token at 2/s');
    const later = await limiter.take('k', 1000); // 2 tokens back, one taken
    assert.equal(later.allowed, true);
    assert.equal(later.resetSeconds, 2, '3 tokens missing at 2/s');
  });
});

// Issue 35: a leaked, revoked token kept its store at 429 (18 of 20 of the merchant's requests
// refused). A request whose token is refused does not count against the store, with the process's
// own buckets and with the shared counters, on the routes that check the token in their own read
// (create, retrieve, status) and on those whose guard checks it first.
describe('a refused token spends nothing of its store’s rate limit', () => {
  for (const shared of [false, true]) {
    it(shared ? 'with the shared counters (kassa start)' : "with the process's own buckets", async () => {
      const app = await startPaymentsApp({
        env: { RATE_LIMIT_PER_STORE: '1' },
        ...(shared ? { rateLimitStore: (url: string) => new pg.Pool({ connectionString: url, max: 2 }) } : {}),
      });
      try {
        app.clock.set('2026-03-01T00:00:00Z');
        const store = await app.store();
        const leaked = await issueToken(app.pool, store.id, null, app.clock.now());
        assert.equal(await revokeToken(app.pool, leaked.jti, app.clock.now()), true);
        const body = { amount: '1', currency: 'USD', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } };
        const id = crypto.randomUUID();
        for (let i = 0; i < 7; i += 1) {
          for (const [method, path, payload] of [
            ['POST', '/v1/payments', body],
            ['GET', `/v1/payments/${id}`, undefined],
            ['GET', `/v1/payments/${id}/status`, undefined],
            ['GET', '/v1/payments', undefined],
          ] as const) {
            assertError(
              await app.request(method, path, { token: leaked.token, ...(payload ? { body: payload } : {}) }),
              401,
              'authentication_error',
              'auth_invalid',
            );
          }
        }
        // The store's own token has its whole burst (2 × 1) left.
        const answers = [];
        for (let i = 0; i < 3; i += 1) answers.push((await app.request('GET', `/v1/payments/${id}/status`, { token: store.token })).status);
        assert.deepEqual(answers, [404, 404, 429]);
      } finally {
        await app.close();
      }
    });
  }
});

describe('the shared counters (createSharedRateLimiter)', () => {
  it('one process admits exactly the window’s allowance of a burst, deciding past half on the total it reads, and gives refused requests back', async () => {
    const db = await createTestDatabase();
    const store = new pg.Pool({ connectionString: db.url, max: 2 });
    try {
      const limiter = createSharedRateLimiter(5, store); // 10 per 2-second window
      const answers = await Promise.all(Array.from({ length: 30 }, () => limiter.take('burst', 0)));
      assert.equal(answers.filter((answer) => answer.allowed).length, 10);
      assert.ok(answers.every((answer) => answer.limit === 10));
      // The total in PostgreSQL once reconciled: the 10 admitted, none of the 20 refused.
      await new Promise((resolve) => setTimeout(resolve, 400));
      const { rows } = await store.query<{ points: number }>(`select points from rate_limits where key = 'kassa:10:burst'`);
      assert.deepEqual(rows, [{ points: 10 }]);
    } finally {
      await store.end();
      await db.drop();
    }
  });
});
