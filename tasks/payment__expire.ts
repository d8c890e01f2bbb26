// payment__expire: runs at a payment's expiresAt (job_key payment__expire:<id>).
import { expirePayment } from '../src/payments/commands.ts';
import type { TaskFactory } from '../src/worker/tasks.ts';
import { paymentIdOf } from '../src/worker/payloads.ts';

const task: TaskFactory = (deps) => async (payload, helpers) => {
  const paymentId = paymentIdOf(payload);
  if (!paymentId) {
    helpers.logger.error(`payment__expire: payload without a paymentId, dropped: ${JSON.stringify(payload)}`);
    return;
  }
  const result = await expirePayment(deps.pool, paymentId, deps.now(), deps.expireHooks);
  deps.log.info({ paymentId, ...result }, 'payment expiry ran');
};

export default task;
