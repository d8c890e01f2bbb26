// The payment statuses of docs/API.md (Payment statuses), row by row, through the one transition function.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { transition, type PaymentEvent, type PaymentStatus } from '../../src/payments/transitions.ts';

const expiresAt = new Date('2026-01-01T12:00:00Z');
const before = new Date('2026-01-01T11:59:59.999Z');
const at = new Date('2026-01-01T12:00:00Z');
const STATUSES: PaymentStatus[] = ['created', 'pending', 'completed', 'expired', 'cancelled'];

const run = (status: PaymentStatus, event: PaymentEvent, now = before) => transition({ status, expiresAt }, event, now);

describe('transition (seed state table)', () => {
  it('created → pending when a method is chosen before expiry', () => {
    assert.deepEqual(run('created', { type: 'select_method' }), { ok: true, to: 'pending', changed: true });
    assert.deepEqual(run('created', { type: 'select_method' }, at), { ok: false, reason: 'payment_expired' });
    assert.deepEqual(run('pending', { type: 'select_method' }), { ok: false, reason: 'method_already_selected' });
    for (const status of ['completed', 'expired', 'cancelled'] as const) {
      assert.deepEqual(run(status, { type: 'select_method' }), { ok: false, reason: 'payment_not_open' });
    }
  });

  it('pending → completed when the reaching transfer happened before expiresAt, even if seen later', () => {
    assert.deepEqual(run('pending', { type: 'confirm', paidAt: before }, new Date('2026-01-01T13:00:00Z')), { ok: true, to: 'completed', changed: true });
    assert.deepEqual(run('pending', { type: 'confirm', paidAt: at }), { ok: false, reason: 'paid_too_late' });
    for (const status of ['created', 'completed', 'expired', 'cancelled'] as const) {
      assert.deepEqual(run(status, { type: 'confirm', paidAt: before }), { ok: false, reason: 'payment_not_open' });
    }
  });

  it('created and pending → expired once the TTL has elapsed, not before', () => {
    for (const status of ['created', 'pending'] as const) {
      assert.deepEqual(run(status, { type: 'expire' }, at), { ok: true, to: 'expired', changed: true });
      assert.deepEqual(run(status, { type: 'expire' }, before), { ok: false, reason: 'not_due' });
    }
    for (const status of ['completed', 'expired', 'cancelled'] as const) {
      assert.deepEqual(run(status, { type: 'expire' }, at), { ok: false, reason: 'payment_not_open' });
    }
  });

  it('created and pending → cancelled; cancelled stays; completed and expired refuse', () => {
    assert.deepEqual(run('created', { type: 'cancel' }), { ok: true, to: 'cancelled', changed: true });
    assert.deepEqual(run('pending', { type: 'cancel' }, at), { ok: true, to: 'cancelled', changed: true });
    assert.deepEqual(run('cancelled', { type: 'cancel' }), { ok: true, to: 'cancelled', changed: false });
    assert.deepEqual(run('completed', { type: 'cancel' }), { ok: false, reason: 'payment_not_cancellable' });
    assert.deepEqual(run('expired', { type: 'cancel' }), { ok: false, reason: 'payment_not_cancellable' });
  });

  it('has no move out of completed, expired or cancelled', () => {
    const events: PaymentEvent[] = [{ type: 'select_method' }, { type: 'confirm', paidAt: before }, { type: 'expire' }, { type: 'cancel' }];
    for (const status of ['completed', 'expired', 'cancelled'] as const) {
      for (const event of events) {
        const result = run(status, event, at);
        assert.ok(!result.ok || (result.to === status && !result.changed), `${status} + ${event.type}`);
      }
    }
    assert.equal(STATUSES.length, 5);
  });
});
