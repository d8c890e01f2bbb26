// POST /sandbox/v1/clock/advance {seconds} (docs/API.md, Sandbox network; CONTRACT §12), mounted
// only when TON_NETWORK=sandbox: moves the clock subscriptions bill by (billing_clock) ahead, then
// runs the billing engine at once for what became due, so a test (or a shop trying Kassa) sees a
// month pass without waiting. Payments keep the wall clock. Any store's token with the change scope.
import type { ParameterizedContext } from 'koa';
import { presentSubscription } from '../../presenters/subscription.ts';
import type { SubscriptionRow } from '../../subscriptions/records.ts';
import { advanceBillingClock, runDueSubscriptions } from '../../subscriptions/engine.ts';
import type { RouteInstaller } from '../app.ts';
import type { Authenticated } from '../context.ts';
import { needs } from '../scope.ts';
import { validate } from '../validate.ts';
import { type AdvanceClockBody, advanceClockSchema } from './subscriptions.schema.ts';

export const sandboxClockRoutes: RouteInstaller = (router, deps, guards) => {
  if (deps.config.tonNetwork !== 'sandbox') return;
  router.post(
    '/sandbox/v1/clock/advance',
    guards.merchant,
    needs('change'),
    guards.storeLimit,
    validate({ body: advanceClockSchema }),
    async (ctx: ParameterizedContext<Authenticated<{ body: AdvanceClockBody }>>) => {
      const now = await advanceBillingClock(deps.pool, ctx.state.body.seconds);
      const present = (row: SubscriptionRow) => presentSubscription(row, deps.config);
      // The request's logger: a subscription that cannot be billed here is logged (and tried again in an hour), as the worker's run logs it.
      const changed = await runDueSubscriptions({ pool: deps.pool, config: deps.config, now: deps.now, log: ctx.state.log, present });
      ctx.body = { now: now.toISOString(), subscriptionsChanged: changed };
    },
  );
};
