// subscriptions__bill: the billing engine (src/subscriptions/engine.ts). Every minute (crontab,
// no payload): the subscriptions due by the billing clock, under their row locks, batch after batch
// (200 each) until none is left or 50 s have passed (the next tick goes on). With
// {subscriptionId} (job key subscriptions__bill:<id>, enqueued in the transaction that credits a
// subscription's completed payment): that subscription at once. Safe to run twice: a period is
// charged once (the row lock, and a unique index), one renewal payment is open at a time.
import { presentSubscription } from '../src/presenters/subscription.ts';
import type { SubscriptionRow } from '../src/subscriptions/records.ts';
import { runDueSubscriptionsFor, runSubscription } from '../src/subscriptions/engine.ts';
import type { WorkerDeps } from '../src/worker/deps.ts';
import { uuidField } from '../src/worker/payloads.ts';
import type { TaskFactory } from '../src/worker/tasks.ts';

/** How long one tick bills at most: batch after batch, ending before the next minute's tick. */
const TICK_BUDGET_MS = 50_000;

export default ((deps: WorkerDeps) => async (payload) => {
  const engine = { ...deps, present: (row: SubscriptionRow) => presentSubscription(row, deps.config) };
  const subscriptionId = uuidField(payload, 'subscriptionId');
  if (subscriptionId !== null) await runSubscription(engine, subscriptionId);
  else await runDueSubscriptionsFor(engine, TICK_BUDGET_MS);
}) satisfies TaskFactory;
