// treasury__sweep_sale: when a sale's refund window ends (job key treasury__sweep_sale:<paymentId>,
// run_at payments.refundable_until, src/worker/jobs.ts), plans the sweep of what refunds left of it.
// Enqueued in the transaction that completes the payment. Safe to run twice, or early: a payment's
// sweep is planned once (unique index), never inside its window; the recurring planner catches up.
import { sweepSaleAfterWindow } from '../src/treasury/sweeps.ts';
import type { WorkerDeps } from '../src/worker/deps.ts';
import { uuidField } from '../src/worker/payloads.ts';
import type { TaskFactory } from '../src/worker/tasks.ts';

export default ((deps: WorkerDeps) => async (payload, helpers) => {
  const paymentId = uuidField(payload, 'paymentId');
  if (paymentId === null) {
    helpers.logger.error(`treasury__sweep_sale: payload without a payment id, dropped: ${JSON.stringify(payload)}`);
    return;
  }
  await sweepSaleAfterWindow(deps.pool, paymentId, deps.now());
}) satisfies TaskFactory;
