// subscriptions__credit {paymentId}: a subscription's payment that expired or was cancelled with money
// paid on it (a part of a renewal or a top-up) credits that money at once (src/subscriptions/engine.ts
// creditPaymentNow, which enqueues the subscription's run). Enqueued by the statement that expires
// or cancels the payment (engine.ts CREDIT_PART_PAID; job key subscriptions__credit:<paymentId>). Safe to run
// twice: only what the ledger has not credited for the payment is credited.
import { creditPaymentNow } from '../src/subscriptions/engine.ts';
import type { WorkerDeps } from '../src/worker/deps.ts';
import { uuidField } from '../src/worker/payloads.ts';
import type { TaskFactory } from '../src/worker/tasks.ts';

export default ((deps: WorkerDeps) => async (payload, helpers) => {
  const paymentId = uuidField(payload, 'paymentId');
  if (paymentId === null) {
    helpers.logger.error(`subscriptions__credit: payload without a payment id, dropped: ${JSON.stringify(payload)}`);
    return;
  }
  await creditPaymentNow(deps.pool, deps.config.tonNetwork, paymentId);
}) satisfies TaskFactory;
