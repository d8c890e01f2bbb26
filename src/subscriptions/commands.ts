// A merchant's commands on subscriptions, shared by the API (src/http/routes/subscriptions.ts), the dashboard (src/dashboard/subscriptions.ts) and
// the CLI (`kassa subscription …`, src/operations/subscriptions.ts): each change, its events and the
// engine's run for it in the caller's transaction; the caller writes the audit row (with who asked)
// and gives the events' subscription shape (`present`: src/presenters/subscription.ts).
import { sql, type Db } from '../db/pool.ts';
import { KassaError } from '../errors.ts';
import { isEnded, nextStatus } from './calendar.ts';
import { cancelPayment } from '../payments/commands.ts';
import { billingNow, CREDIT_PART_PAID, type EngineConfig, emitSubscriptionEvent, runSubscriptionIn } from './engine.ts';
import { appendLedger, createSubscription, findSubscription, type SubscriptionInput, type SubscriptionRow, subscriptionById } from './records.ts';

/** The engine's configuration and the subscription's shape in its events. */
export interface SubscriptionCommandDeps {
  config: EngineConfig;
  present: (row: SubscriptionRow) => unknown;
}

const engineOf = (deps: SubscriptionCommandDeps, now: Date) => ({ config: deps.config, now: () => now, present: deps.present });

export const subscriptionNotFound = () => new KassaError('subscription_not_found', { param: 'id' });

/**
 * The subscription, subscription.created, and the engine's first run (without a trial, its first
 * payment at once). Returns its id and its portal's token (kept only as a hash: the caller shows it
 * once; no event carries it).
 */
export async function subscribe(
  tx: Db,
  deps: SubscriptionCommandDeps,
  storeId: string,
  input: SubscriptionInput,
  now: Date,
): Promise<{ id: string; portalToken: string }> {
  const clock = await billingNow(tx, deps.config.tonNetwork);
  const { id, portalToken } = await createSubscription(tx, storeId, { ...input, planID: input.planID.toLowerCase() }, clock);
  const row = (await subscriptionById(tx, id, now))!;
  await emitSubscriptionEvent(tx, row, deps.present(row), 'subscription.created', now);
  await runSubscriptionIn(tx, engineOf(deps, now), id, clock, 'wait');
  return { id, portalToken };
}

/**
 * Cancel now (subscription.cancelled; its open renewal payment cancelled too, the money already on
 * it credited at once), or at the current period's end (the engine cancels it then;
 * no renewal, no reminder meanwhile). An ended subscription is refused (409 subscription_ended),
 * except a second cancel of a cancelled one, which changes nothing (returns false). The caller
 * audits it (subscription.cancel).
 */
export async function cancelSubscription(
  tx: Db,
  deps: SubscriptionCommandDeps,
  storeId: string,
  id: string,
  atPeriodEnd: boolean,
  now: Date,
): Promise<boolean> {
  const found = await findSubscription(tx, storeId, id, now);
  if (!found) throw subscriptionNotFound();
  // Its open renewal payment is locked before the subscription: the order a booking locks them in (the payment, then its subscription's credit).
  if (!atPeriodEnd && found.open_payment_id !== null) await tx.query(sql.unsafe`select id from payments where id = ${found.open_payment_id} for update`);
  const row = (await subscriptionById(tx, id, now, 'wait'))!;
  if (row.status === 'cancelled') return false;
  if (isEnded(row.status) || nextStatus(row.status, 'cancel') === null) throw new KassaError('subscription_ended', { param: 'id' });
  const clock = await billingNow(tx, deps.config.tonNetwork);
  if (atPeriodEnd) {
    await tx.query(sql.unsafe`update subscriptions set cancel_at_period_end = true, next_run_at = current_period_end where id = ${id}`);
    await runSubscriptionIn(tx, engineOf(deps, now), id, clock, 'wait');
  } else {
    await tx.query(sql.unsafe`
      update subscriptions set status = 'cancelled', cancelled_at = ${sql.timestamp(clock)}, next_run_at = null where id = ${id}
    `);
    // Its open renewal payment is no longer owed: cancelled (payment.cancelled), and money already on it credited at once (subscriptions__credit).
    if (row.open_payment_id !== null) await cancelPayment(tx, { id: row.open_payment_id }, now, CREDIT_PART_PAID);
    const after = (await subscriptionById(tx, id, now))!;
    await emitSubscriptionEvent(tx, after, deps.present(after), 'subscription.cancelled', now);
  }
  return true;
}

/**
 * A manual credit: a ledger adjustment with who (`actor`: the API token's jti, or "cli") and why
 * (the note), and the engine's run (it may cover a due period). The caller audits it
 * (subscription.credit).
 */
export async function creditSubscription(
  tx: Db,
  deps: SubscriptionCommandDeps,
  storeId: string,
  id: string,
  credit: { amount: string; note: string },
  actor: string,
  now: Date,
): Promise<void> {
  if (!(await findSubscription(tx, storeId, id, now))) throw subscriptionNotFound();
  await subscriptionById(tx, id, now, 'wait');
  const clock = await billingNow(tx, deps.config.tonNetwork);
  await appendLedger(tx, id, { kind: 'adjustment', amount: credit.amount, actor, note: credit.note }, clock);
  await runSubscriptionIn(tx, engineOf(deps, now), id, clock, 'wait');
}
