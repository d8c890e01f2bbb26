// The payment commands' rule against real Postgres: a transition is counted
// (kassa_payment_transitions_total) once its transaction has committed — never for a transaction
// that rolls back — and the complete command writes what the transition decided.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql, z } from '../../src/db/pool.ts';
import { paymentTransitions } from '../../src/metrics.ts';
import { cancelPayment, completePayment, lockPayment } from '../../src/payments/commands.ts';
import { findStorePayment } from '../../src/payments/view.ts';
import type { TestApp } from '../helpers/app.ts';
import { buildPayment } from '../helpers/factories.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;
let store: Awaited<ReturnType<TestApp['store']>>;

before(async () => {
  app = await startPaymentsApp();
  store = await app.store();
});
after(() => app.close());

const counted = async (to: string): Promise<number> => (await paymentTransitions.get()).values.find((value) => value.labels.to === to)?.value ?? 0;
const statusOf = (id: string) => app.pool.oneFirst(sql.type(z.object({ status: z.string() }))`select status from payments where id = ${id}`);

describe('payment commands', () => {
  it('count a transition after the commit, and not at all when the transaction rolls back', async () => {
    const payment = await buildPayment(app, store);
    const before = await counted('cancelled');
    await assert.rejects(
      app.pool.transaction(async (tx) => {
        await cancelPayment(tx, (await findStorePayment(tx, store.id, payment.id))!, new Date());
        assert.equal(await counted('cancelled'), before, 'not counted inside the transaction');
        throw new Error('the caller fails after the command');
      }),
      /the caller fails/,
    );
    assert.equal(await statusOf(payment.id), 'pending');
    assert.equal(await counted('cancelled'), before, 'a rolled-back cancel is not counted');
    await app.pool.transaction(async (tx) => cancelPayment(tx, (await findStorePayment(tx, store.id, payment.id))!, new Date()));
    assert.equal(await statusOf(payment.id), 'cancelled');
    assert.equal(await counted('cancelled'), before + 1);
    await app.pool.transaction(async (tx) => cancelPayment(tx, (await findStorePayment(tx, store.id, payment.id))!, new Date()));
    assert.equal(await counted('cancelled'), before + 1, 'cancelling a cancelled payment changes nothing and counts nothing');
  });

  it('complete: pending → completed with paidAt, counted once committed; a payment paid too late stays open', async () => {
    const payment = await buildPayment(app, store);
    const before = await counted('completed');
    const paidAt = new Date();
    const completed = await app.pool.transaction(async (tx) => {
      const locked = (await lockPayment(tx, payment.id))!;
      return completePayment(tx, locked, paidAt, new Date());
    });
    assert.equal(completed, true);
    assert.equal(await statusOf(payment.id), 'completed');
    assert.equal(await counted('completed'), before + 1);

    const late = await buildPayment(app, store);
    const refused = await app.pool.transaction(async (tx) => {
      const locked = (await lockPayment(tx, late.id))!;
      return completePayment(tx, locked, new Date(locked.expires_at.getTime() + 1000), new Date());
    });
    assert.equal(refused, false);
    assert.equal(await statusOf(late.id), 'pending');
    assert.equal(await counted('completed'), before + 1);
  });
});
