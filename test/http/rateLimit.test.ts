import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRateLimiter } from '../../src/http/rateLimit.ts';

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
