// The billing engine's pure parts (src/subscriptions/calendar.ts): periods by the calendar, counted
// from the anchor; statuses that only move forward; the step a subscription takes at a moment.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addPeriods, type BillingState, nextRunAt, nextStatus, nextStep, SUBSCRIPTION_STATUSES } from '../../src/subscriptions/calendar.ts';

const at = (text: string) => new Date(text);
const month = { unit: 'month', count: 1 } as const;

describe('addPeriods: the calendar, from the anchor', () => {
  it('Jan 31 + 1 month is the end of February; the next is Mar 31, not Mar 28 (counted from the anchor)', () => {
    const anchor = at('2026-01-31T10:00:00Z');
    assert.equal(addPeriods(anchor, month, 1).toISOString(), '2026-02-28T10:00:00.000Z');
    assert.equal(addPeriods(anchor, month, 2).toISOString(), '2026-03-31T10:00:00.000Z');
    assert.equal(addPeriods(anchor, month, 3).toISOString(), '2026-04-30T10:00:00.000Z');
    assert.equal(addPeriods(at('2028-01-31T00:00:00Z'), month, 1).toISOString(), '2028-02-29T00:00:00.000Z');
  });
  it('years keep the day (Feb 29 → Feb 28), across December; days and weeks are 24-hour days; counts multiply', () => {
    assert.equal(addPeriods(at('2028-02-29T00:00:00Z'), { unit: 'year', count: 1 }, 1).toISOString(), '2029-02-28T00:00:00.000Z');
    assert.equal(addPeriods(at('2028-02-29T00:00:00Z'), { unit: 'year', count: 1 }, 4).toISOString(), '2032-02-29T00:00:00.000Z');
    assert.equal(addPeriods(at('2026-11-30T00:00:00Z'), { unit: 'month', count: 3 }, 1).toISOString(), '2027-02-28T00:00:00.000Z');
    assert.equal(addPeriods(at('2026-12-15T00:00:00Z'), month, 1).toISOString(), '2027-01-15T00:00:00.000Z');
    assert.equal(addPeriods(at('2026-03-01T00:00:00Z'), { unit: 'week', count: 2 }, 1).toISOString(), '2026-03-15T00:00:00.000Z');
    assert.equal(addPeriods(at('2026-03-01T00:00:00Z'), { unit: 'day', count: 1 }, 30).toISOString(), '2026-03-31T00:00:00.000Z');
  });
});

describe('nextStatus: forward only', () => {
  it('a charge makes it active, a shortfall past_due, the grace’s end expired, cancel cancelled', () => {
    assert.equal(nextStatus('trialing', 'charge'), 'active');
    assert.equal(nextStatus('trialing', 'shortfall'), 'past_due');
    assert.equal(nextStatus('active', 'charge'), 'active');
    assert.equal(nextStatus('active', 'shortfall'), 'past_due');
    assert.equal(nextStatus('past_due', 'charge'), 'active');
    assert.equal(nextStatus('past_due', 'grace_over'), 'expired');
    for (const from of ['trialing', 'active', 'past_due'] as const) assert.equal(nextStatus(from, 'cancel'), 'cancelled');
  });
  it('nothing moves expired or cancelled; an active one never expires without being past_due first', () => {
    for (const from of ['expired', 'cancelled'] as const) {
      for (const event of ['charge', 'shortfall', 'grace_over', 'cancel'] as const) assert.equal(nextStatus(from, event), null, `${from} ${event}`);
    }
    assert.equal(nextStatus('active', 'grace_over'), null);
    assert.equal(nextStatus('trialing', 'grace_over'), null);
    assert.equal(nextStatus('past_due', 'shortfall'), null);
    assert.deepEqual([...SUBSCRIPTION_STATUSES], ['trialing', 'active', 'past_due', 'expired', 'cancelled']);
  });
});

describe('nextStep: what is due at a moment', () => {
  const state: BillingState = {
    status: 'active',
    anchorAt: at('2026-01-31T00:00:00Z'),
    periodsCharged: 1,
    currentPeriodEnd: at('2026-02-28T00:00:00Z'),
    credit: '10',
    cancelAtPeriodEnd: false,
    remindedFor: null,
    price: '10',
    interval: month,
    graceDays: 3,
    reminderDays: 3,
  };
  it('at the end: charge the next period (from the anchor) when the credit covers it, else past_due', () => {
    assert.deepEqual(nextStep(state, at('2026-02-28T00:00:00Z')), {
      kind: 'charge',
      periodStart: at('2026-02-28T00:00:00Z'),
      periodEnd: at('2026-03-31T00:00:00Z'),
    });
    assert.deepEqual(nextStep({ ...state, credit: '9.99' }, at('2026-02-28T00:00:00Z')), { kind: 'shortfall' });
    assert.deepEqual(nextStep(state, at('2026-02-27T23:59:59Z')), { kind: 'none' });
  });
  it('past_due waits for its payment until the grace ends, then expires; credit that covers charges it', () => {
    const due = { ...state, status: 'past_due' as const, credit: '0' };
    assert.deepEqual(nextStep(due, at('2026-03-02T23:59:59Z')), { kind: 'await_payment' });
    assert.deepEqual(nextStep(due, at('2026-03-03T00:00:00Z')), { kind: 'expire' });
    assert.equal(nextStep({ ...due, credit: '10' }, at('2026-03-10T00:00:00Z')).kind, 'charge');
  });
  it('the reminder once per period, only when the credit will not cover it; cancel at the period’s end', () => {
    const short = { ...state, credit: '5' };
    assert.deepEqual(nextStep(short, at('2026-02-25T00:00:00Z')), { kind: 'remind', periodEnd: state.currentPeriodEnd });
    assert.deepEqual(nextStep({ ...short, remindedFor: state.currentPeriodEnd }, at('2026-02-25T00:00:00Z')), { kind: 'none' });
    assert.deepEqual(nextStep(state, at('2026-02-25T00:00:00Z')), { kind: 'none' });
    assert.deepEqual(nextStep(short, at('2026-02-24T23:59:59Z')), { kind: 'none' });
    assert.deepEqual(nextStep({ ...state, cancelAtPeriodEnd: true }, at('2026-02-28T00:00:00Z')), { kind: 'cancel' });
    assert.deepEqual(nextStep({ ...state, status: 'expired' }, at('2027-01-01T00:00:00Z')), { kind: 'none' });
  });
  it('nextRunAt: the reminder while ahead, the period’s end, the grace’s end while past_due, none once ended', () => {
    assert.deepEqual(nextRunAt(state, at('2026-02-01T00:00:00Z')), at('2026-02-25T00:00:00Z'));
    assert.deepEqual(nextRunAt(state, at('2026-02-26T00:00:00Z')), state.currentPeriodEnd);
    assert.deepEqual(nextRunAt({ ...state, remindedFor: state.currentPeriodEnd }, at('2026-02-01T00:00:00Z')), state.currentPeriodEnd);
    assert.deepEqual(nextRunAt({ ...state, status: 'past_due' }, at('2026-02-28T00:00:00Z')), at('2026-03-03T00:00:00Z'));
    assert.equal(nextRunAt({ ...state, status: 'cancelled' }, at('2026-02-28T00:00:00Z')), null);
  });
});
