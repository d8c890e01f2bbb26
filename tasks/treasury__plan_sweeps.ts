// treasury__plan_sweeps: every minute, plans the sweeps nobody else plans: completed payments of
// stores that got a treasury later, and refundable money held past REFUND_HOLD_DAYS. Safe to run
// twice: a payment's sweep is planned once (unique index), held money only while refundable.
import { planDueSweeps } from '../src/treasury/sweeps.ts';
import type { WorkerDeps } from '../src/worker/deps.ts';
import type { TaskFactory } from '../src/worker/tasks.ts';

export default ((deps: WorkerDeps) => async (_payload, helpers) => {
  await planDueSweeps(deps.pool, {
    holdDays: deps.config.refundHoldDays,
    now: deps.now(),
    log: deps.log.child({ task: 'treasury__plan_sweeps', jobId: helpers.job.id }),
  });
}) satisfies TaskFactory;
