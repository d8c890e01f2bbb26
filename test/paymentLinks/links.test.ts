// The payment link's pure rules (issue 47 item 5): how a typed amount is read (readTypedAmount) and
// how maxPayments' places are held (placeState), with an explicit `now`.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { placeState, readTypedAmount } from '../../src/paymentLinks/links.ts';

describe('readTypedAmount: an amount as the customer meant it', () => {
  it('reads a comma or a dot before the decimals, and spaces, commas or dots grouping thousands', () => {
    for (const [typed, lang, read] of [
      ['0,5', 'en', '0.5'],
      ['0.5', 'ru', '0.5'],
      ['12,50', 'en', '12.50'],
      [' 2.25 ', 'en', '2.25'],
      [',5', 'en', '0.5'],
      ['1 234,50', 'ru', '1234.50'],
      ['1\u00a0234,50', 'ru', '1234.50'],
      ['1,234.50', 'en', '1234.50'],
      ['1.234,50', 'en', '1234.50'],
      ['1,000,000', 'en', '1000000'],
      ['0002', 'en', '2'],
      ['1234,567', 'en', '1234.567'],
    ] as const) {
      assert.equal(readTypedAmount(typed, lang), read, `${typed} (${lang})`);
    }
  });

  it('one mark before exactly three digits is the page language’s decimal mark', () => {
    assert.equal(readTypedAmount('1,000', 'en'), '1000');
    assert.equal(readTypedAmount('1.000', 'en'), '1.000');
    assert.equal(readTypedAmount('1,000', 'ru'), '1.000');
    assert.equal(readTypedAmount('1.000', 'ru'), '1000');
  });

  it('refuses what is not an amount', () => {
    for (const typed of ['', 'abc', '-1', '1e5', '5,', '.', '1,2,3', '12,34,567', '1.2.3,4', '1,23.4.5', '+1', '0x10']) {
      assert.equal(readTypedAmount(typed, 'en'), null, typed);
    }
  });
});

describe('placeState: maxPayments counts completed payments and those being paid', () => {
  const now = new Date('2026-11-28T12:00:00Z');
  const link = { deactivated_at: null, expires_at: null, max_payments: 2, payments: 0 };
  it('open while completed and open payments are fewer than maxPayments; full when they fill it; used up once completed ones do', () => {
    assert.equal(placeState(link, 1, now), 'open');
    assert.equal(placeState(link, 2, now), 'full');
    assert.equal(placeState({ ...link, payments: 1 }, 1, now), 'full');
    assert.equal(placeState({ ...link, payments: 2 }, 0, now), 'used_up');
    assert.equal(placeState({ ...link, max_payments: null }, 50, now), 'open');
  });
  it('a closed link says why before anything else', () => {
    assert.equal(placeState({ ...link, deactivated_at: now }, 0, now), 'deactivated');
    assert.equal(placeState({ ...link, expires_at: now }, 0, now), 'expired');
  });
});
