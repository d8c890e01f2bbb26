import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bookComment } from '../../src/reader/classify.ts';

describe('bookComment', () => {
  it('keeps what PostgreSQL text can hold', () => {
    assert.equal(bookComment(undefined), null);
    assert.equal(bookComment('order #42 ✓'), 'order #42 ✓');
    assert.equal(bookComment('a\u0000b'), 'a\uFFFDb');
    assert.equal(bookComment('x'.repeat(5000))?.length, 1000);
  });
});
