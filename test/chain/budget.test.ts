// The chain request budget's Retry-After reading (src/chain/budget.ts): seconds, or an HTTP date
// judged at the moment its caller gives.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { retryAfterMs } from '../../src/chain/budget.ts';

describe('retryAfterMs', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');

  it('reads seconds, and an HTTP date as the time left from now', () => {
    assert.equal(retryAfterMs('3', now), 3_000);
    assert.equal(retryAfterMs(' 0 ', now), 0);
    assert.equal(retryAfterMs('Sun, 01 Mar 2026 12:00:07 GMT', now), 7_000);
    assert.equal(retryAfterMs('Sun, 01 Mar 2026 11:59:00 GMT', now), 0, 'a date past is no wait');
  });

  it('null when absent or unreadable', () => {
    for (const value of [undefined, null, '', 'soon']) assert.equal(retryAfterMs(value, now), null, String(value));
  });
});
