// A merchant's commands on subscriptions, shared by the API (src/http/routes/subscriptions.ts) and
// the CLI (`kassa subscription …`, src/subscriptions/cli.ts): each change, its events, the engine's
// run for it and its audit row in the caller's transaction.
import { type Actor, recordAudit } from '../dashboard/audit.ts';
import { sql, type Db } from '../db/pool.ts';
import { KassaError } from '../errors.ts';
import { presentSubscription } from '../presenters/subscription.ts';
import { isEnded, nextStatus } from './calendar.ts';
import { billingNow, type EngineConfig, emitSubscriptionEvent, runSubscriptionIn } from './engine.ts';
import { appendLedger, createSubscription, findSubscription, type SubscriptionInput, type SubscriptionRow, subscriptionById } from './records.ts';

export type SubscriptionCommandConfig = EngineConfig;

const engineOf = (config: SubscriptionCommandConfig, now: Date) => ({
  config,
  now: () => now,
  present: (row: SubscriptionRow) => presentSubscription(row, config),
});

export const subscriptionNotFound = () => new KassaError('subscription_not_found', { param: 'id' });

/** The subscription, subscription.created, and the engine's first run (without a trial, its first payment at once). Returns its id. */
export async function subscribe(tx: Db, config: SubscriptionCommandConfig, storeId: string, input: SubscriptionInput, now: Date): Promise<string> {
  const clock = await billingNow(tx, config.tonNetwork);
  const id = await createSubscription(tx, storeId, { ...input, planID: input.planID.toLowerCase() }, clock);
  const row = (await subscriptionById(tx, id, now))!;
  await emitSubscriptionEvent(tx, row, presentSubscription(row, config), 'subscription.created', now);
  await runSubscriptionIn(tx, engineOf(config, now), id, clock, 'wait');
  return id;
}

/**
 * Cancel now (subscription.cancelled), or at the current period's end (the engine cancels it then;
 * no renewal, no reminder meanwhile). An ended subscription is refused (409 subscription_ended),
 * except a second cancel of a cancelled one, which changes nothing. Audited (subscription.cancel).
 */
export async function cancelSubscription(
  tx: Db,
  config: SubscriptionCommandConfig,
  storeId: string,
  id: string,
  atPeriodEnd: boolean,
  actor: Actor,
  via: 'api' | 'cli',
  now: Date,
): Promise<void> {
  if (!(await findSubscription(tx, storeId, id, now))) throw subscriptionNotFound();
  const row = (await subscriptionById(tx, id, now, 'wait'))!;
  if (row.status === 'cancelled') return;
  if (isEnded(row.status) || nextStatus(row.status, 'cancel') === null) throw new KassaError('subscription_ended', { param: 'id' });
  const clock = await billingNow(tx, config.tonNetwork);
  if (atPeriodEnd) {
    await tx.query(sql.unsafe`update subscriptions set cancel_at_period_end = true, next_run_at = current_period_end where id = ${id}`);
    await runSubscriptionIn(tx, engineOf(config, now), id, clock, 'wait');
  } else {
    await tx.query(sql.unsafe`
      update subscriptions set status = 'cancelled', cancelled_at = ${sql.timestamp(clock)}, next_run_at = null where id = ${id}
    `);
    const after = (await subscriptionById(tx, id, now))!;
    await emitSubscriptionEvent(tx, after, presentSubscription(after, config), 'subscription.cancelled', now);
  }
  await recordAudit(tx, actor, { storeId, action: 'subscription.cancel', subject: id, detail: { atPeriodEnd, via } }, now);
}

/**
 * A manual credit: a ledger adjustment with who (`actor.name`: the API token's jti, or "cli") and
 * why (the note), the audit row, and the engine's run (it may cover a due period).
 */
export async function creditSubscription(
  tx: Db,
  config: SubscriptionCommandConfig,
  storeId: string,
  id: string,
  credit: { amount: string; note: string },
  actor: Actor,
  via: 'api' | 'cli',
  now: Date,
): Promise<void> {
  if (!(await findSubscription(tx, storeId, id, now))) throw subscriptionNotFound();
  await subscriptionById(tx, id, now, 'wait');
  const clock = await billingNow(tx, config.tonNetwork);
  await appendLedger(tx, id, { kind: 'adjustment', amount: credit.amount, actor: actor.name, note: credit.note }, clock);
  await recordAudit(tx, actor, { storeId, action: 'subscription.credit', subject: id, detail: { amount: credit.amount, note: credit.note, via } }, now);
  await runSubscriptionIn(tx, engineOf(config, now), id, clock, 'wait');
}
