// Plans and subscriptions made and changed in the dashboard (issue 45): each action is the API's own
// command — a plan through subscriptions/records.ts createPlan and archivePlan (as POST /v1/plans and
// …/archive), a subscription, a cancel and a manual credit through subscriptions/commands.ts (as
// POST /v1/subscriptions, …/cancel, …/credits), a new portal link through records.ts
// reissuePortalToken (as POST …/portal) — with its audit row in the same transaction (via
// dashboard). What the pages read beside the API's reads: a subscription's payments.
import type { TonNetwork } from '../config.ts';
import { type DatabasePool, type Db, sql } from '../db/pool.ts';
import { REFUNDS_OF_PAYMENT } from '../payments/counted.ts';
import { cancelSubscription, creditSubscription, type SubscriptionCommandDeps, subscribe } from '../subscriptions/commands.ts';
import { archivePlan, createPlan, type PlanInput, type PlanRow, reissuePortalToken, type SubscriptionInput } from '../subscriptions/records.ts';
import { type Actor, recordAudit } from './audit.ts';
import { type ListedPayment, listedPayment } from './payments.ts';

/** Makes a plan (audited plan.create). KassaError (with its param) when the API would refuse it. */
export async function createDashboardPlan(
  pool: DatabasePool,
  network: TonNetwork,
  actor: Actor,
  storeId: string,
  input: PlanInput,
  now: Date,
): Promise<PlanRow> {
  return pool.transaction(async (tx) => {
    const plan = await createPlan(tx, network, storeId, input, now);
    await recordAudit(
      tx,
      actor,
      {
        storeId,
        action: 'plan.create',
        subject: plan.id,
        detail: { name: plan.name, amount: plan.amount, currency: plan.currency, interval: `${plan.interval_count} ${plan.interval_unit}`, via: 'dashboard' },
      },
      now,
    );
    return plan;
  });
}

/** Archives the store's plan (audited plan.archive once); null when it is not the store's. */
export async function archiveDashboardPlan(pool: DatabasePool, actor: Actor, storeId: string, planId: string, now: Date): Promise<PlanRow | null> {
  return pool.transaction(async (tx) => {
    const plan = await archivePlan(tx, storeId, planId, now);
    if (plan && plan.archived_at?.getTime() === now.getTime()) {
      await recordAudit(tx, actor, { storeId, action: 'plan.archive', subject: plan.id, detail: { name: plan.name, via: 'dashboard' } }, now);
    }
    return plan;
  });
}

/** Subscribes a customer to the store's open plan (audited subscription.create); its id and portal token (shown once). KassaError when the API would refuse it. */
export async function createDashboardSubscription(
  pool: DatabasePool,
  engine: SubscriptionCommandDeps,
  actor: Actor,
  storeId: string,
  input: SubscriptionInput,
  now: Date,
): Promise<{ id: string; portalToken: string }> {
  return pool.transaction(async (tx) => {
    const made = await subscribe(tx, engine, storeId, input, now);
    const id = made.id;
    await recordAudit(
      tx,
      actor,
      { storeId, action: 'subscription.create', subject: id, detail: { planID: input.planID, customer: input.customer.reference, via: 'dashboard' } },
      now,
    );
    return made;
  });
}

/** A new portal link for the store's subscription (the old one stops working; audited subscription.portal_reissue); the new token, or null when it is not the store's. */
export async function reissueDashboardPortal(pool: DatabasePool, actor: Actor, storeId: string, subscriptionId: string, now: Date): Promise<string | null> {
  return pool.transaction(async (tx) => {
    const token = await reissuePortalToken(tx, storeId, subscriptionId);
    if (token !== null) {
      await recordAudit(tx, actor, { storeId, action: 'subscription.portal_reissue', subject: subscriptionId, detail: { via: 'dashboard' } }, now);
    }
    return token;
  });
}

/** Adds credit with its note (a ledger adjustment by the member, audited subscription.credit). */
export async function creditDashboardSubscription(
  pool: DatabasePool,
  engine: SubscriptionCommandDeps,
  actor: Actor,
  storeId: string,
  subscriptionId: string,
  credit: { amount: string; note: string },
  now: Date,
): Promise<void> {
  await pool.transaction(async (tx) => {
    await creditSubscription(tx, engine, storeId, subscriptionId, credit, actor.name, now);
    await recordAudit(tx, actor, { storeId, action: 'subscription.credit', subject: subscriptionId, detail: { ...credit, via: 'dashboard' } }, now);
  });
}

/** Cancels now or at the period's end (audited subscription.cancel when it changed it). */
export async function cancelDashboardSubscription(
  pool: DatabasePool,
  engine: SubscriptionCommandDeps,
  actor: Actor,
  storeId: string,
  subscriptionId: string,
  atPeriodEnd: boolean,
  now: Date,
): Promise<void> {
  await pool.transaction(async (tx) => {
    if (await cancelSubscription(tx, engine, storeId, subscriptionId, atPeriodEnd, now)) {
      await recordAudit(tx, actor, { storeId, action: 'subscription.cancel', subject: subscriptionId, detail: { atPeriodEnd, via: 'dashboard' } }, now);
    }
  });
}

/** How many of a subscription's payments its page shows, newest first. */
const SUBSCRIPTION_PAYMENTS_SHOWN = 100;

/** A subscription's payments (its renewals and top-ups, every status), newest first. */
export async function subscriptionPayments(db: Db, storeId: string, subscriptionId: string): Promise<readonly ListedPayment[]> {
  return db.any(sql.type(listedPayment)`
    select p.id, p.status, p.amount::text as amount, p.currency, p.order_id, p.coin_symbol, p.coin_amount::text as coin_amount, p.created_at, p.paid_at,
           p.description, c.decimals::int as coin_decimals, refunds.sale_refunded_base_units
    from payments p left join coins c on c.symbol = p.coin_symbol
    ${REFUNDS_OF_PAYMENT}
    where p.store_id = ${storeId} and p.subscription_id = ${subscriptionId}
    order by p.created_at desc, p.id desc
    limit ${SUBSCRIPTION_PAYMENTS_SHOWN}
  `);
}
