// A store's plans and subscriptions (docs/API.md, Subscriptions; CONTRACT §12).
//   POST /v1/plans                          → 201 plan (X-Idempotency-Key)
//   GET  /v1/plans                          → 200 {"data": [plan]}, newest first
//   GET  /v1/plans/{id}                     → 200 plan
//   POST /v1/plans/{id}                     → 200 plan ({amount}: the price from the next period on; audited)
//   POST /v1/plans/{id}/archive             → 200 plan (no new subscriptions; its subscribers go on)
//   POST /v1/subscriptions                  → 201 subscription, with its portalURL this once (X-Idempotency-Key; a replay without it)
//   GET  /v1/subscriptions?status=&customer_reference= → 200 {"data": [subscription]}, newest first
//   GET  /v1/subscriptions/{id}             → 200 subscription
//   GET  /v1/subscriptions/{id}/ledger      → 200 {"data": [entry]}, oldest first
//   POST /v1/subscriptions/{id}/cancel      → 200 subscription ({atPeriodEnd})
//   POST /v1/subscriptions/{id}/credits     → 200 subscription (a manual credit, audited; X-Idempotency-Key)
//   POST /v1/subscriptions/{id}/portal      → 200 subscription with a new portalURL, this once (the old one stops working; audited)
// Each change, its events and the engine's run for it are one transaction.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { recordAudit, tokenActor } from '../../dashboard/audit.ts';
import type { Db } from '../../db/pool.ts';
import { KassaError } from '../../errors.ts';
import { presentList } from '../../presenters/list.ts';
import { presentLedgerEntry, presentPlan, presentSubscription } from '../../presenters/subscription.ts';
import { cancelSubscription, creditSubscription, subscribe, subscriptionNotFound } from '../../subscriptions/commands.ts';
import {
  archivePlan,
  createPlan,
  findPlan,
  findSubscription,
  listLedger,
  listPlans,
  listSubscriptions,
  reissuePortalToken,
  type SubscriptionRow,
  updatePlanPrice,
} from '../../subscriptions/records.ts';
import type { AppDeps, Authenticated, KassaState } from '../context.ts';
import type { Guards } from '../guards.ts';
import { idempotency } from '../idempotent.ts';
import { needs } from '../scope.ts';
import { validate } from '../validate.ts';
import {
  type AddCreditBody,
  addCreditSchema,
  type CancelSubscriptionBody,
  cancelSubscriptionSchema,
  type CreatePlanBody,
  type CreateSubscriptionBody,
  createPlanSchema,
  createSubscriptionSchema,
  type ListSubscriptionsQuery,
  listPlansQuery,
  listSubscriptionsQuery,
  type PlanParams,
  planParams,
  type SubscriptionParams,
  subscriptionParams,
  type UpdatePlanBody,
  updatePlanSchema,
} from './subscriptions.schema.ts';
import { type EmptyBody, emptyBodySchema } from './paymentLinks.schema.ts';

export function subscriptionRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards): void {
  const { pool, config } = deps;
  const idempotent = idempotency(deps);
  const commandDeps = { config, present: (row: SubscriptionRow) => presentSubscription(row, config) };
  const planNotFound = () => new KassaError('plan_not_found', { param: 'id' });

  /**
   * The store's subscription as it now is, presented (`now`: the wall clock its renewal payment
   * expires by; `portalToken`: just issued, so the answer shows its portalURL, this once).
   */
  const presented = async (db: Db, storeId: string, id: string, now: Date, portalToken?: string) => {
    const row = await findSubscription(db, storeId, id, now);
    if (!row) throw subscriptionNotFound();
    return presentSubscription(row, config, portalToken);
  };

  const createPlanCommand = idempotent<Authenticated<{ body: CreatePlanBody }>>('POST /v1/plans', async (tx, ctx, now) => {
    const plan = await createPlan(tx, config.tonNetwork, ctx.state.merchant.storeId, ctx.state.body, now);
    return { status: 201, body: presentPlan(plan) };
  });

  const listPlansRoute: Middleware<Authenticated> = async (ctx) => {
    ctx.body = presentList((await listPlans(pool, ctx.state.merchant.storeId)).map(presentPlan));
  };

  const retrievePlan: Middleware<Authenticated<{ params: PlanParams }>> = async (ctx) => {
    const plan = await findPlan(pool, ctx.state.merchant.storeId, ctx.state.params.id);
    if (!plan) throw planNotFound();
    ctx.body = presentPlan(plan);
  };

  /** A new price, from the next period on (records.ts updatePlanPrice), and its audit row: one transaction. */
  const updatePlan: Middleware<Authenticated<{ params: PlanParams; body: UpdatePlanBody }>> = async (ctx) => {
    const { merchant, params, body } = ctx.state;
    const now = deps.now();
    ctx.body = await pool.transaction(async (tx) => {
      const before = await findPlan(tx, merchant.storeId, params.id);
      const plan = await updatePlanPrice(tx, config.tonNetwork, merchant.storeId, params.id, body.amount);
      if (!plan || !before) throw planNotFound();
      await recordAudit(
        tx,
        tokenActor(merchant.token.jti, ctx.ip || null, ctx.get('user-agent') || null),
        { storeId: merchant.storeId, action: 'plan.update', subject: plan.id, detail: { amountBefore: before.amount, amount: plan.amount, via: 'api' } },
        now,
      );
      return presentPlan(plan);
    });
  };

  const archive: Middleware<Authenticated<{ params: PlanParams; body: EmptyBody }>> = async (ctx) => {
    const plan = await archivePlan(pool, ctx.state.merchant.storeId, ctx.state.params.id, deps.now());
    if (!plan) throw planNotFound();
    ctx.body = presentPlan(plan);
  };

  // The subscription, subscription.created, and the engine's first run (a subscription without a
  // trial gets its first payment at once): one transaction (subscriptions/commands.ts). The answer
  // shows the portalURL, once: a replay of it does not (the token is kept nowhere).
  const createSubscriptionCommand = idempotent<Authenticated<{ body: CreateSubscriptionBody }>>('POST /v1/subscriptions', async (tx, ctx, now) => {
    const storeId = ctx.state.merchant.storeId;
    const { id, portalToken } = await subscribe(tx, commandDeps, storeId, ctx.state.body, now);
    return { status: 201, body: await presented(tx, storeId, id, now, portalToken), replayBody: await presented(tx, storeId, id, now) };
  });

  const listSubscriptionsRoute: Middleware<Authenticated<{ query: ListSubscriptionsQuery }>> = async (ctx) => {
    const { status, customer_reference: customerReference } = ctx.state.query;
    const rows = await listSubscriptions(
      pool,
      ctx.state.merchant.storeId,
      { ...(status !== undefined ? { status } : {}), ...(customerReference !== undefined ? { customerReference } : {}) },
      deps.now(),
    );
    ctx.body = presentList(rows.map((row) => presentSubscription(row, config)));
  };

  const retrieveSubscription: Middleware<Authenticated<{ params: SubscriptionParams }>> = async (ctx) => {
    ctx.body = await presented(pool, ctx.state.merchant.storeId, ctx.state.params.id, deps.now());
  };

  const ledger: Middleware<Authenticated<{ params: SubscriptionParams }>> = async (ctx) => {
    const row = await findSubscription(pool, ctx.state.merchant.storeId, ctx.state.params.id, deps.now());
    if (!row) throw subscriptionNotFound();
    ctx.body = presentList((await listLedger(pool, row.id)).map(presentLedgerEntry));
  };

  /** Cancel now or at the period's end (commands.ts cancelSubscription), audited. */
  const cancel = idempotent<Authenticated<{ params: SubscriptionParams; body: CancelSubscriptionBody }>>(
    'POST /v1/subscriptions/:id/cancel',
    async (tx, ctx, now) => {
      const { merchant, params, body } = ctx.state;
      const actor = tokenActor(merchant.token.jti, ctx.ip || null, ctx.get('user-agent') || null);
      const atPeriodEnd = body.atPeriodEnd === true;
      if (await cancelSubscription(tx, commandDeps, merchant.storeId, params.id, atPeriodEnd, now)) {
        await recordAudit(
          tx,
          actor,
          { storeId: merchant.storeId, action: 'subscription.cancel', subject: params.id, detail: { atPeriodEnd, via: 'api' } },
          now,
        );
      }
      return { status: 200, body: await presented(tx, merchant.storeId, params.id, now) };
    },
  );

  /** A manual credit (commands.ts creditSubscription): the ledger names the token, the audit row, the engine's run. */
  const credit = idempotent<Authenticated<{ params: SubscriptionParams; body: AddCreditBody }>>('POST /v1/subscriptions/:id/credits', async (tx, ctx, now) => {
    const { merchant, params, body } = ctx.state;
    const actor = tokenActor(merchant.token.jti, ctx.ip || null, ctx.get('user-agent') || null);
    await creditSubscription(tx, commandDeps, merchant.storeId, params.id, body, actor.name, now);
    await recordAudit(
      tx,
      actor,
      { storeId: merchant.storeId, action: 'subscription.credit', subject: params.id, detail: { amount: body.amount, note: body.note, via: 'api' } },
      now,
    );
    return { status: 200, body: await presented(tx, merchant.storeId, params.id, now) };
  });

  /** A new secret for the customer's portal: the old URL is dead at once (a leaked link, a customer who lost it, a shop that lost it); the answer shows the new one, once. */
  const reissuePortal: Middleware<Authenticated<{ params: SubscriptionParams; body: EmptyBody }>> = async (ctx) => {
    const storeId = ctx.state.merchant.storeId;
    const id = ctx.state.params.id;
    ctx.body = await pool.transaction(async (tx) => {
      const now = deps.now();
      const portalToken = await reissuePortalToken(tx, storeId, id);
      if (portalToken === null) throw subscriptionNotFound();
      await recordAudit(
        tx,
        tokenActor(ctx.state.merchant.token.jti, ctx.ip || null, ctx.get('user-agent') || null),
        { storeId, action: 'subscription.portal_reissue', subject: id, detail: { via: 'api' } },
        now,
      );
      return presented(tx, storeId, id, now, portalToken);
    });
  };

  const P = '/v1/plans';
  const S = '/v1/subscriptions';
  router.post(P, guards.merchant, needs('change'), guards.storeLimit, validate({ body: createPlanSchema }), createPlanCommand);
  router.get(P, guards.merchant, needs('read'), guards.storeLimit, validate({ query: listPlansQuery }), listPlansRoute);
  router.get(`${P}/:id`, guards.merchant, needs('read'), guards.storeLimit, validate({ params: planParams }), retrievePlan);
  router.post(`${P}/:id`, guards.merchant, needs('change'), guards.storeLimit, validate({ params: planParams, body: updatePlanSchema }), updatePlan);
  router.post(`${P}/:id/archive`, guards.merchant, needs('change'), guards.storeLimit, validate({ params: planParams, body: emptyBodySchema }), archive);
  router.post(S, guards.merchant, needs('change'), guards.storeLimit, validate({ body: createSubscriptionSchema }), createSubscriptionCommand);
  router.get(S, guards.merchant, needs('read'), guards.storeLimit, validate({ query: listSubscriptionsQuery }), listSubscriptionsRoute);
  router.get(`${S}/:id`, guards.merchant, needs('read'), guards.storeLimit, validate({ params: subscriptionParams }), retrieveSubscription);
  router.get(`${S}/:id/ledger`, guards.merchant, needs('read'), guards.storeLimit, validate({ params: subscriptionParams }), ledger);
  router.post(
    `${S}/:id/cancel`,
    guards.merchant,
    needs('change'),
    guards.storeLimit,
    validate({ params: subscriptionParams, body: cancelSubscriptionSchema }),
    cancel,
  );
  router.post(
    `${S}/:id/portal`,
    guards.merchant,
    needs('change'),
    guards.storeLimit,
    validate({ params: subscriptionParams, body: emptyBodySchema }),
    reissuePortal,
  );
  router.post(`${S}/:id/credits`, guards.merchant, needs('change'), guards.storeLimit, validate({ params: subscriptionParams, body: addCreditSchema }), credit);
}
