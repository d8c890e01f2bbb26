// The customer's portal of a subscription ({checkout_base_url}/s/{token}; docs/API.md, Subscriptions):
// what it shows (the status, the next date, the credit, the history) and what the customer can do
// there — pay the next period or top up (an ordinary payment of the subscription, so its checkout,
// TON Connect, the QR code and the Mini App work as for any payment; never two open at once), and
// cancel at the period's end when the plan lets subscribers do it. The page itself is
// src/checkout/portalPage.ts; the routes are in src/http/routes/checkoutPortal.ts (and checkoutTelegram.ts in the Mini App).
import { sql, z, type Db } from '../db/pool.ts';
import { createPayment } from '../payments/commands.ts';
import { draftFromPayment } from '../payments/drafts.ts';
import { isEnded } from './calendar.ts';
import { billingNow, type EngineDeps, openRenewal, RENEWAL_TTL_SECONDS, runSubscriptionIn } from './engine.ts';
import { type LedgerRow, listLedger, type PlanRow, planRow, type SubscriptionRow, subscriptionByPortalToken } from './records.ts';

/** The Telegram Mini App's start parameter that opens a subscription's portal: `s_<token>` (t.me/<bot>/<app>?startapp=s_<token>). */
export const PORTAL_START_PREFIX = 's_';

/** The audit log's actor of what a customer does in the portal. */
export const PORTAL_ACTOR = 'customer portal';

export interface PortalView {
  row: SubscriptionRow;
  plan: PlanRow;
  storeName: string;
  /** The open payment of the subscription (its renewal, or a top-up), else null. */
  openPaymentId: string | null;
  ledger: readonly LedgerRow[];
}

/** The subscription's open payment: its renewal, else the newest payment of it still payable. */
async function openPaymentOf(db: Db, row: SubscriptionRow, now: Date): Promise<string | null> {
  if (row.open_payment_id !== null) return row.open_payment_id;
  return db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    select id from payments
    where subscription_id = ${row.id} and status in ('created', 'pending') and expires_at > ${sql.timestamp(now)}
    order by created_at desc limit 1
  `);
}

async function planOf(db: Db, row: SubscriptionRow): Promise<PlanRow> {
  return db.one(sql.type(planRow)`
    select id, store_id, name, currency, amount::text as amount, interval_unit, interval_count, trial_days, grace_days, reminder_days,
           customer_may_cancel, created_at, archived_at
    from plans where id = ${row.plan_id}
  `);
}

/** What the portal shows for `token`, or null (no such portal: an unknown, mistyped or re-issued token alike). */
export async function portalView(db: Db, token: string, now: Date): Promise<PortalView | null> {
  const row = await subscriptionByPortalToken(db, token, now);
  if (!row) return null;
  const storeName = await db.oneFirst(sql.type(z.object({ name: z.string() }))`select name from stores where id = ${row.store_id}`);
  return { row, plan: await planOf(db, row), storeName, openPaymentId: await openPaymentOf(db, row, now), ledger: await listLedger(db, row.id) };
}

/** Whether the customer may cancel from the portal now: the plan allows it, and it is neither ended nor already set to end. */
export const mayCancel = (view: Pick<PortalView, 'row' | 'plan'>): boolean =>
  view.plan.customer_may_cancel && !isEnded(view.row.status) && !view.row.cancel_at_period_end;

/** Whether the portal offers a payment: not ended, not cancelling at the period's end. */
export const mayPay = (row: SubscriptionRow): boolean => !isEnded(row.status) && !row.cancel_at_period_end;

/** The next period's payment is for what the credit lacks; with credit enough for it, a top-up of one period. */
export const payKind = (row: SubscriptionRow, plan: PlanRow): 'next_period' | 'top_up' => (Number(row.credit) < Number(plan.amount) ? 'next_period' : 'top_up');

type PortalResult<T> = { ok: T } | { refused: 'not_found' | 'ended' | 'not_allowed' };

/**
 * "Pay the next period" / "Top up", under the subscription's row lock: the open payment of the
 * subscription when it has one (never two at once), else the next period's (the engine's renewal:
 * what the credit lacks, subscription.payment_due) or, with credit enough for it, one period's price
 * as a top-up. Returns the payment's id.
 */
export async function portalPayment(tx: Db, deps: Omit<EngineDeps, 'pool'>, token: string, wall: Date): Promise<PortalResult<string>> {
  const row = await subscriptionByPortalToken(tx, token, wall, 'wait');
  if (!row) return { refused: 'not_found' };
  if (!mayPay(row)) return { refused: 'ended' };
  const open = await openPaymentOf(tx, row, wall);
  if (open !== null) return { ok: open };
  const plan = await planOf(tx, row);
  if (payKind(row, plan) === 'next_period') {
    await openRenewal(tx, deps, row, plan, wall);
    return { ok: (await subscriptionByPortalToken(tx, token, wall))!.renewal_payment_id! };
  }
  const draft = await draftFromPayment(
    tx,
    row.store_id,
    { amount: plan.amount, currency: plan.currency, description: plan.name, ttl: RENEWAL_TTL_SECONDS, metadata: { subscriptionID: row.id, purpose: 'top_up' } },
    { network: deps.config.tonNetwork },
  );
  const view = await createPayment(tx, deps.config, row.store_id, { ...draft, createdVia: 'subscription', subscriptionId: row.id }, wall);
  return { ok: view.id };
}

/**
 * The customer cancels at the period's end (the engine cancels it then; no renewal meanwhile), when
 * the plan allows it. `changed`: it was not set before (the caller writes the audit row, actor
 * PORTAL_ACTOR, in the same transaction).
 */
export async function portalCancel(
  tx: Db,
  deps: Omit<EngineDeps, 'pool'>,
  token: string,
  wall: Date,
): Promise<PortalResult<{ row: SubscriptionRow; changed: boolean }>> {
  const row = await subscriptionByPortalToken(tx, token, wall, 'wait');
  if (!row) return { refused: 'not_found' };
  if (row.cancel_at_period_end) return { ok: { row, changed: false } };
  if (isEnded(row.status)) return { refused: 'ended' };
  const plan = await planOf(tx, row);
  if (!plan.customer_may_cancel) return { refused: 'not_allowed' };
  await tx.query(sql.unsafe`update subscriptions set cancel_at_period_end = true, next_run_at = current_period_end where id = ${row.id}`);
  await runSubscriptionIn(tx, deps, row.id, await billingNow(tx, deps.config.tonNetwork), 'wait');
  return { ok: { row: (await subscriptionByPortalToken(tx, token, wall))!, changed: true } };
}
