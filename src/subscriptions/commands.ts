// The merchant's commands on a subscription, one each for every way in (the API's routes, the
// dashboard's forms): a new subscription (subscription.created and the engine's first run: without
// a trial its first payment is opened at once), a cancel (now, or at the period's end), and a manual
// credit (a ledger adjustment with who and why, then the engine's run, which may cover a due period).
// Each runs in the caller's transaction, under the subscription's row lock; the caller writes its
// audit row (who asked is the caller's to name: an API token, a dashboard member).
import { sql, type Db } from '../db/pool.ts';
import { KassaError } from '../errors.ts';
import { isEnded, nextStatus } from './calendar.ts';
import { billingNow, type EngineDeps, emitSubscriptionEvent, runSubscriptionIn } from './engine.ts';
import { appendLedger, createSubscription, findSubscription, subscriptionById, type SubscriptionInput } from './records.ts';

export type CommandEngine = Omit<EngineDeps, 'pool'>;

const notFound = () => new KassaError('subscription_not_found', { param: 'id' });

/** A new subscription to the store's open plan (records.ts createSubscription), told and run at once; its id. `now`: the wall clock. */
export async function startSubscription(tx: Db, engine: CommandEngine, storeId: string, input: SubscriptionInput, now: Date): Promise<string> {
  const clock = await billingNow(tx, engine.config.tonNetwork);
  const id = await createSubscription(tx, storeId, { ...input, planID: input.planID.toLowerCase() }, clock);
  const row = (await subscriptionById(tx, id, now))!;
  await emitSubscriptionEvent(tx, row, engine.present(row), 'subscription.created', now);
  await runSubscriptionIn(tx, engine, id, clock, 'wait');
  return id;
}

/**
 * Cancel now (subscription.cancelled), or at the current period's end (the engine cancels it then;
 * no renewal, no reminder meanwhile). An ended subscription is refused (409 subscription_ended),
 * except a cancelled one, which is left as it is: returns whether this call changed it (the caller
 * audits only a change). Another store's subscription is not found.
 */
export async function cancelSubscription(tx: Db, engine: CommandEngine, storeId: string, id: string, atPeriodEnd: boolean, now: Date): Promise<boolean> {
  if (!(await findSubscription(tx, storeId, id, now))) throw notFound();
  const row = (await subscriptionById(tx, id, now, 'wait'))!;
  if (row.status === 'cancelled') return false;
  if (isEnded(row.status) || nextStatus(row.status, 'cancel') === null) throw new KassaError('subscription_ended', { param: 'id' });
  const clock = await billingNow(tx, engine.config.tonNetwork);
  if (atPeriodEnd) {
    await tx.query(sql.unsafe`update subscriptions set cancel_at_period_end = true, next_run_at = current_period_end where id = ${id}`);
    await runSubscriptionIn(tx, engine, id, clock, 'wait');
  } else {
    await tx.query(sql.unsafe`
      update subscriptions set status = 'cancelled', cancelled_at = ${sql.timestamp(clock)}, next_run_at = null where id = ${id}
    `);
    const after = (await subscriptionById(tx, id, now))!;
    await emitSubscriptionEvent(tx, after, engine.present(after), 'subscription.cancelled', now);
  }
  return true;
}

/** A manual credit in the plan's currency: a ledger adjustment by `actor` with its note, then the engine's run. Another store's subscription is not found. */
export async function addSubscriptionCredit(
  tx: Db,
  engine: CommandEngine,
  storeId: string,
  id: string,
  credit: { amount: string; note: string; actor: string },
  now: Date,
): Promise<void> {
  if (!(await findSubscription(tx, storeId, id, now))) throw notFound();
  await subscriptionById(tx, id, now, 'wait');
  const clock = await billingNow(tx, engine.config.tonNetwork);
  await appendLedger(tx, id, { kind: 'adjustment', amount: credit.amount, actor: credit.actor, note: credit.note }, clock);
  await runSubscriptionIn(tx, engine, id, clock, 'wait');
}
