// effectOf: what one incoming transfer does to its payment, decided from the transfer and the
// payment's state alone (pure). The expiry boundary is the same as the transition function's:
// a transfer at expiresAt or later is late (paidInTime in src/payments/transitions.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { effectOf } from '../../src/payments/transfers.ts';
import { paidInTime, transition } from '../../src/payments/transitions.ts';

const expiresAt = new Date('2026-11-23T12:00:00.000Z');
const before = new Date(expiresAt.getTime() - 1);
const transfer = (overrides: Partial<Parameters<typeof effectOf>[0]> = {}): Parameters<typeof effectOf>[0] => ({
  coinSymbol: 'TON',
  credited: true,
  payment: true,
  chainTime: before,
  amountBaseUnits: 1_000_000_000n,
  ...overrides,
});
const payment = (overrides: Partial<Parameters<typeof effectOf>[1]> = {}): Parameters<typeof effectOf>[1] => ({
  status: 'pending',
  coinSymbol: 'TON',
  expiresAt,
  requiredBaseUnits: 2_000_000_000n,
  countedBaseUnits: 0n,
  ...overrides,
});

describe('effectOf', () => {
  it('counts a transfer in the payment coin before expiry: partial, completed or overpaid by the running sum', () => {
    assert.equal(effectOf(transfer(), payment()), 'partial');
    assert.equal(effectOf(transfer(), payment({ countedBaseUnits: 1_000_000_000n })), 'completed');
    assert.equal(effectOf(transfer(), payment({ countedBaseUnits: 1_500_000_000n })), 'overpaid');
    assert.equal(effectOf(transfer({ amountBaseUnits: 3_000_000_000n }), payment()), 'overpaid');
  });

  it('does not count what did not stay, is not a payment, or is of an unknown token or another coin', () => {
    assert.equal(effectOf(transfer({ credited: false }), payment()), 'not_credited');
    assert.equal(effectOf(transfer({ coinSymbol: null }), payment()), 'unknown_token');
    assert.equal(effectOf(transfer({ payment: false }), payment()), 'not_counted');
    assert.equal(effectOf(transfer({ coinSymbol: 'USDT' }), payment()), 'wrong_coin');
  });

  it('does not count what arrives after the payment ended, or before a method was chosen', () => {
    assert.equal(effectOf(transfer(), payment({ status: 'completed' })), 'after_completion');
    assert.equal(effectOf(transfer(), payment({ status: 'cancelled' })), 'after_cancel');
    assert.equal(effectOf(transfer(), payment({ status: 'expired' })), 'after_expiry');
    assert.equal(effectOf(transfer(), payment({ status: 'created', requiredBaseUnits: null })), 'not_counted');
  });

  it('the expiry boundary is the transition function\'s: at expiresAt is late, one millisecond before is in time', () => {
    assert.equal(effectOf(transfer({ chainTime: expiresAt }), payment()), 'after_expiry');
    assert.equal(effectOf(transfer({ chainTime: before, amountBaseUnits: 2_000_000_000n }), payment()), 'completed');
    assert.equal(paidInTime(expiresAt, expiresAt), false);
    assert.equal(paidInTime(before, expiresAt), true);
    const subject = { status: 'pending' as const, expiresAt };
    assert.deepEqual(transition(subject, { type: 'confirm', paidAt: expiresAt }, before), { ok: false, reason: 'paid_too_late' });
    assert.deepEqual(transition(subject, { type: 'confirm', paidAt: before }, before), { ok: true, to: 'completed', changed: true });
  });
});
