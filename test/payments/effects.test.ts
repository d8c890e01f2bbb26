// The books' pure rules: what a transfer does to a payment (effectOf), and what the books say
// beside the status (anomaliesOf). Every branch, and the expiry boundary written once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { anomaliesOf } from '../../src/payments/anomalies.ts';
import { effectOf } from '../../src/payments/transfers.ts';
import { pastExpiry, transition } from '../../src/payments/transitions.ts';

const expiresAt = new Date('2026-11-23T12:00:00.000Z');
const before = new Date(expiresAt.getTime() - 1);
const payment = (over: Partial<Parameters<typeof effectOf>[1]> = {}): Parameters<typeof effectOf>[1] => ({
  status: 'pending',
  coinSymbol: 'TON',
  expiresAt,
  requiredBaseUnits: 1_000_000_000n,
  countedBaseUnits: 0n,
  ...over,
});
const transfer = (over: Partial<Parameters<typeof effectOf>[0]> = {}): Parameters<typeof effectOf>[0] => ({
  coinSymbol: 'TON',
  credited: true,
  payment: true,
  chainTime: before,
  amountBaseUnits: 1_000_000_000n,
  ...over,
});

describe('effectOf', () => {
  it('counts a transfer of the right coin made in time: partial, completed, overpaid', () => {
    assert.equal(effectOf(transfer({ amountBaseUnits: 400_000_000n }), payment()), 'partial');
    assert.equal(effectOf(transfer({ amountBaseUnits: 600_000_000n }), payment({ countedBaseUnits: 400_000_000n })), 'completed');
    assert.equal(effectOf(transfer(), payment()), 'completed');
    assert.equal(effectOf(transfer({ amountBaseUnits: 1_000_000_001n }), payment()), 'overpaid');
    assert.equal(effectOf(transfer(), payment({ countedBaseUnits: 1n })), 'overpaid');
  });

  it('value that did not stay, an unknown token, and a non-payment come first, whatever the payment', () => {
    for (const status of ['pending', 'completed', 'expired', 'cancelled', 'created']) {
      assert.equal(effectOf(transfer({ credited: false, coinSymbol: null }), payment({ status })), 'not_credited');
      assert.equal(effectOf(transfer({ coinSymbol: null }), payment({ status })), 'unknown_token');
      assert.equal(effectOf(transfer({ payment: false }), payment({ status })), 'not_counted');
    }
  });

  it('another accepted coin is wrong_coin, before any status or time rule', () => {
    assert.equal(effectOf(transfer({ coinSymbol: 'USDT' }), payment()), 'wrong_coin');
    assert.equal(effectOf(transfer({ coinSymbol: 'USDT', chainTime: expiresAt }), payment({ status: 'expired' })), 'wrong_coin');
  });

  it('after completion, after cancel, after expiry (by status, or made at or after expiresAt)', () => {
    assert.equal(effectOf(transfer(), payment({ status: 'completed' })), 'after_completion');
    assert.equal(effectOf(transfer(), payment({ status: 'cancelled' })), 'after_cancel');
    assert.equal(effectOf(transfer(), payment({ status: 'expired' })), 'after_expiry');
    assert.equal(effectOf(transfer({ chainTime: expiresAt }), payment()), 'after_expiry', 'made exactly at expiresAt: too late');
    assert.equal(effectOf(transfer({ chainTime: before }), payment()), 'completed', 'made a millisecond before: in time');
  });

  it('a payment without a method (created) counts nothing', () => {
    assert.equal(effectOf(transfer(), payment({ status: 'created', requiredBaseUnits: null })), 'not_counted');
  });

  it('the boundary is the one transition uses: paid at expiresAt is paid too late', () => {
    assert.equal(pastExpiry(expiresAt, expiresAt), true);
    assert.equal(pastExpiry(before, expiresAt), false);
    const subject = { status: 'pending' as const, expiresAt };
    assert.deepEqual(transition(subject, { type: 'confirm', paidAt: expiresAt }, expiresAt), { ok: false, reason: 'paid_too_late' });
    assert.equal(transition(subject, { type: 'confirm', paidAt: before }, expiresAt).ok, true);
    assert.equal(transition(subject, { type: 'expire' }, expiresAt).ok, true);
    assert.deepEqual(transition(subject, { type: 'expire' }, before), { ok: false, reason: 'not_due' });
  });
});

describe('anomaliesOf', () => {
  it('nothing unusual: no anomalies', () => {
    assert.deepEqual(anomaliesOf('completed', ['completed']), []);
    assert.deepEqual(anomaliesOf('pending', []), []);
    assert.deepEqual(anomaliesOf('completed', ['partial', 'completed', 'not_credited', 'not_counted', 'unknown_token']), []);
  });

  it('partially paid: counted money on a payment that did not complete', () => {
    assert.deepEqual(anomaliesOf('pending', ['partial']), ['partially_paid']);
    assert.deepEqual(anomaliesOf('expired', ['partial']), ['partially_paid']);
    assert.deepEqual(anomaliesOf('cancelled', ['partial']), ['partially_paid']);
  });

  it('overpaid, paid late, paid after cancel, wrong coin, in that order', () => {
    assert.deepEqual(anomaliesOf('completed', ['overpaid']), ['overpaid']);
    assert.deepEqual(anomaliesOf('completed', ['completed', 'after_completion']), ['overpaid']);
    assert.deepEqual(anomaliesOf('expired', ['after_expiry', 'partial']), ['partially_paid', 'paid_late']);
    assert.deepEqual(anomaliesOf('cancelled', ['after_cancel']), ['paid_after_cancel']);
    assert.deepEqual(anomaliesOf('completed', ['wrong_coin', 'after_completion', 'completed']), ['overpaid', 'wrong_coin']);
  });
});
