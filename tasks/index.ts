// Every Graphile Worker task, by identifier (`entity__verb`). Each file is thin: it checks its
// payload and calls one function in src/.
import { recurring, type TaskFactory } from '../src/worker/tasks.ts';
import depositsReconcile from './deposits__reconcile.ts';
import idempotencyPurge from './idempotency__purge.ts';
import notificationSend from './notification__send.ts';
import outgoingSend from './outgoing__send.ts';
import treasuryPlanSweeps from './treasury__plan_sweeps.ts';
import treasurySweepSale from './treasury__sweep_sale.ts';
import ratesRefresh from './rates__refresh.ts';
import subscriptionsBill from './subscriptions__bill.ts';
import subscriptionsCredit from './subscriptions__credit.ts';
import webhookDeliver from './webhook__deliver.ts';
import workerUnlockDead from './worker__unlock_dead.ts';

export const TASKS: Record<string, TaskFactory> = {
  deposits__reconcile: recurring('deposits__reconcile', depositsReconcile),
  idempotency__purge: recurring('idempotency__purge', idempotencyPurge),
  notification__send: notificationSend,
  outgoing__send: outgoingSend,
  rates__refresh: recurring('rates__refresh', ratesRefresh),
  subscriptions__bill: recurring('subscriptions__bill', subscriptionsBill),
  subscriptions__credit: subscriptionsCredit,
  treasury__plan_sweeps: recurring('treasury__plan_sweeps', treasuryPlanSweeps),
  treasury__sweep_sale: treasurySweepSale,
  webhook__deliver: webhookDeliver,
  worker__unlock_dead: recurring('worker__unlock_dead', workerUnlockDead),
};

/** Recurring tasks (Graphile Worker crontab syntax); their tasks above are `recurring` (a failure waits for the next tick). */
export const CRONTAB = [
  '* * * * * rates__refresh',
  '17 * * * * idempotency__purge',
  // Sweeps for stores that got a treasury after their payments completed, and held money past REFUND_HOLD_DAYS.
  '* * * * * treasury__plan_sweeps',
  // Each deposit's books against its on-chain balance (reporting.deposit_differences).
  '*/5 * * * * deposits__reconcile',
  // The subscriptions due by the billing clock (src/subscriptions/engine.ts).
  '* * * * * subscriptions__bill',
  // Unlocks the jobs of a worker that died, instead of waiting for Graphile's 4-hour lock timeout.
  '* * * * * worker__unlock_dead',
].join('\n');
