// Plans, subscriptions and their ledger as stored (issue 45; docs/API.md, Subscriptions): the rows,
// their reads, and the writes beneath the merchant's commands (a plan made, archived or repriced, a
// subscription made, a portal token issued again, a ledger row appended); the commands themselves —
// subscribe, cancel, a manual credit, with their events — are commands.ts's. The billing engine
// (engine.ts) moves a subscription through its periods; this module never charges.
import crypto from 'node:crypto';
import type { TonNetwork } from '../config.ts';
import { sql, z, type Db } from '../db/pool.ts';
import { KassaError } from '../errors.ts';
import { addDecimal, compareDecimal } from '../money.ts';
import { checkPriceTerms } from '../payments/drafts.ts';
import { addPeriods, INTERVAL_UNITS, type Interval, SUBSCRIPTION_STATUSES } from './calendar.ts';

export const planRow = z.object({
  id: z.string(),
  store_id: z.string(),
  name: z.string(),
  currency: z.string(),
  amount: z.string(),
  interval_unit: z.enum(INTERVAL_UNITS),
  interval_count: z.number(),
  trial_days: z.number(),
  grace_days: z.number(),
  reminder_days: z.number(),
  /** Whether subscribers may cancel (at the period's end) from the customer's portal (absent from the engine's read: true). */
  customer_may_cancel: z.boolean().default(true),
  created_at: z.date(),
  archived_at: z.date().nullable(),
});
export type PlanRow = z.infer<typeof planRow>;

const PLAN_SELECT = sql.fragment`
  select id, store_id, name, currency, amount::text as amount, interval_unit, interval_count, trial_days, grace_days, reminder_days,
         customer_may_cancel, created_at, archived_at
  from plans
`;

export const intervalOf = (plan: Pick<PlanRow, 'interval_unit' | 'interval_count'>): Interval => ({ unit: plan.interval_unit, count: plan.interval_count });

export const subscriptionRow = z.object({
  id: z.string(),
  store_id: z.string(),
  plan_id: z.string(),
  customer_reference: z.string(),
  customer_email: z.string().nullable(),
  customer_telegram_user_id: z.string().nullable(),
  status: z.enum(SUBSCRIPTION_STATUSES),
  anchor_at: z.date(),
  periods_charged: z.number(),
  current_period_end: z.date(),
  credit: z.string(),
  cancel_at_period_end: z.boolean(),
  renewal_payment_id: z.string().nullable(),
  reminded_for: z.date().nullable(),
  next_run_at: z.date().nullable(),
  created_at: z.date(),
  cancelled_at: z.date().nullable(),
  expired_at: z.date().nullable(),
  /** The open renewal payment (created or pending, before its expiry), else null. */
  open_payment_id: z.string().nullable(),
  /** The store's Telegram Mini App ("<bot>/<app>"), for the renewal's telegramURL. */
  telegram_mini_app: z.string().nullable(),
});
export type SubscriptionRow = z.infer<typeof subscriptionRow>;

/** `now`: the wall clock payments expire by (an open renewal is one before its expiresAt). */
const subscriptionSelect = (now: Date) => sql.fragment`
  select s.id, s.store_id, s.plan_id, s.customer_reference, s.customer_email, s.customer_telegram_user_id::text as customer_telegram_user_id,
         s.status, s.anchor_at, s.periods_charged, s.current_period_end, trim_scale(s.credit)::text as credit, s.cancel_at_period_end,
         s.renewal_payment_id, s.reminded_for, s.next_run_at, s.created_at, s.cancelled_at, s.expired_at,
         (select p.id from payments p where p.id = s.renewal_payment_id and p.status in ('created', 'pending') and p.expires_at > ${sql.timestamp(now)}) as open_payment_id,
         (select st.telegram_bot || '/' || st.telegram_app from stores st where st.id = s.store_id) as telegram_mini_app
  from subscriptions s
`;

export const ledgerRow = z.object({
  id: z.string(),
  kind: z.enum(['credit', 'charge', 'adjustment', 'refund']),
  amount: z.string(),
  currency: z.string(),
  balance_after: z.string(),
  period_start: z.date().nullable(),
  period_end: z.date().nullable(),
  payment_id: z.string().nullable(),
  actor: z.string(),
  note: z.string().nullable(),
  created_at: z.date(),
});
export type LedgerRow = z.infer<typeof ledgerRow>;

export interface PlanInput {
  name: string;
  currency: string;
  amount: string;
  interval: Interval['unit'];
  intervalCount?: number;
  trialDays?: number;
  graceDays?: number;
  reminderDays?: number;
  customerMayCancel?: boolean;
}

export async function createPlan(tx: Db, network: TonNetwork, storeId: string, input: PlanInput, now: Date): Promise<PlanRow> {
  // The price as a payment's: a known currency, within its precision.
  await checkPriceTerms(tx, storeId, { currency: input.currency, amounts: [[input.amount, 'amount']], method: undefined }, { network });
  const id = crypto.randomUUID();
  await tx.query(sql.unsafe`
    insert into plans (id, store_id, name, currency, amount, interval_unit, interval_count, trial_days, grace_days, reminder_days, customer_may_cancel, created_at)
    values (${id}, ${storeId}, ${input.name}, ${input.currency}, ${input.amount}, ${input.interval}, ${input.intervalCount ?? 1},
            ${input.trialDays ?? 0}, ${input.graceDays ?? 3}, ${input.reminderDays ?? 3}, ${input.customerMayCancel ?? true}, ${sql.timestamp(now)})
  `);
  return (await findPlan(tx, storeId, id))!;
}

/** The store's plan, or null (another store's is not found). */
export async function findPlan(db: Db, storeId: string, id: string): Promise<PlanRow | null> {
  return db.maybeOne(sql.type(planRow)`${PLAN_SELECT} where id = ${id} and store_id = ${storeId}`);
}

export async function listPlans(db: Db, storeId: string): Promise<readonly PlanRow[]> {
  return db.any(sql.type(planRow)`${PLAN_SELECT} where store_id = ${storeId} order by created_at desc, id desc`);
}

/** Archives the plan (once: a second call keeps the first time); its subscribers go on. */
export async function archivePlan(db: Db, storeId: string, id: string, now: Date): Promise<PlanRow | null> {
  await db.query(sql.unsafe`update plans set archived_at = coalesce(archived_at, ${sql.timestamp(now)}) where id = ${id} and store_id = ${storeId}`);
  return findPlan(db, storeId, id);
}

/**
 * A new price for the plan (POST /v1/plans/{id} {amount}), in its currency: it applies from the next
 * period. A period is charged once, at its start, at the price then (a ledger `charge` row), so the
 * period running keeps what it was charged; every period charged after the change costs the new
 * price (a renewal payment already open keeps its amount; what it leaves missing is asked by the
 * next). An archived plan's price may change too (its subscribers go on). Null: no such plan.
 */
export async function updatePlanPrice(tx: Db, network: TonNetwork, storeId: string, id: string, amount: string): Promise<PlanRow | null> {
  const plan = await tx.maybeOne(sql.type(planRow)`${PLAN_SELECT} where id = ${id} and store_id = ${storeId} for update`);
  if (!plan) return null;
  await checkPriceTerms(tx, storeId, { currency: plan.currency, amounts: [[amount, 'amount']], method: undefined }, { network });
  await tx.query(sql.unsafe`update plans set amount = ${amount} where id = ${id}`);
  return findPlan(tx, storeId, id);
}

export async function findSubscription(db: Db, storeId: string, id: string, now: Date): Promise<SubscriptionRow | null> {
  return db.maybeOne(sql.type(subscriptionRow)`${subscriptionSelect(now)} where s.id = ${id} and s.store_id = ${storeId}`);
}

/** A portal token's shape (newPortalToken): anything else is not looked up. */
const PORTAL_TOKEN = /^[A-Za-z0-9_-]{32}$/;

/** SHA-256 of a portal token as sent: all Kassa keeps of it (subscriptions.portal_token_hash). */
export const portalTokenHash = (token: string): Buffer => crypto.createHash('sha256').update(token, 'utf8').digest();

/**
 * The subscription whose customer's portal `token` opens, or null. Kassa keeps only the SHA-256 of
 * each token: the row is found by the hash of the token sent (an index: the lookup's time says
 * nothing of how much of a guessed token is right), and the hash kept is then compared with it in
 * constant time. `lock`: the portal's commands hold the row.
 */
export async function subscriptionByPortalToken(db: Db, token: string, now: Date, lock: 'none' | 'wait' = 'none'): Promise<SubscriptionRow | null> {
  if (!PORTAL_TOKEN.test(token)) return null;
  const given = portalTokenHash(token);
  const found = await db.maybeOne(sql.type(z.object({ id: z.string(), hash: z.string() }))`
    select id, encode(portal_token_hash, 'hex') as hash from subscriptions where portal_token_hash = ${sql.binary(given)}
  `);
  if (!found || !crypto.timingSafeEqual(Buffer.from(found.hash, 'hex'), given)) return null;
  return subscriptionById(db, found.id, now, lock);
}

/**
 * A new secret for the store's subscription's portal (the old URL stops working at once): the new
 * token, shown to whoever asked and never kept (only its hash); null: not the store's.
 */
export async function reissuePortalToken(db: Db, storeId: string, id: string): Promise<string | null> {
  const token = newPortalToken();
  const moved = await db.query(sql.unsafe`
    update subscriptions set portal_token_hash = ${sql.binary(portalTokenHash(token))} where id = ${id} and store_id = ${storeId}
  `);
  return moved.rowCount === 1 ? token : null;
}

/**
 * The subscriptions due by the billing clock `clock` (next_run_at, indexed), at most `limit`, the
 * longest-waiting first, each locked (one another run holds is skipped): the engine's batch.
 */
export async function dueSubscriptionsLocked(db: Db, clock: Date, now: Date, limit: number): Promise<readonly SubscriptionRow[]> {
  return db.any(sql.type(subscriptionRow)`
    ${subscriptionSelect(now)} where s.next_run_at <= ${sql.timestamp(clock)} order by s.next_run_at limit ${limit} for update of s skip locked
  `);
}

/** The plans of these ids, by id (the engine's read: customer_may_cancel left out). */
export async function plansById(db: Db, ids: readonly string[]): Promise<Map<string, PlanRow>> {
  const rows = await db.any(sql.type(planRow)`
    select id, store_id, name, currency, amount::text as amount, interval_unit, interval_count, trial_days, grace_days, reminder_days, created_at, archived_at
    from plans where id = any(${sql.array([...ids], 'uuid')})
  `);
  return new Map(rows.map((row) => [row.id, row]));
}

/** The subscription by id alone (the engine, under its lock). */
export async function subscriptionById(db: Db, id: string, now: Date, lock: 'none' | 'wait' | 'skip' = 'none'): Promise<SubscriptionRow | null> {
  const locking = lock === 'wait' ? sql.fragment`for update of s` : lock === 'skip' ? sql.fragment`for update of s skip locked` : sql.fragment``;
  return db.maybeOne(sql.type(subscriptionRow)`${subscriptionSelect(now)} where s.id = ${id} ${locking}`);
}

export async function listSubscriptions(
  db: Db,
  storeId: string,
  filter: { status?: string; customerReference?: string },
  now: Date,
): Promise<readonly SubscriptionRow[]> {
  return db.any(sql.type(subscriptionRow)`
    ${subscriptionSelect(now)}
    where s.store_id = ${storeId}
      and ${filter.status !== undefined ? sql.fragment`s.status = ${filter.status}` : sql.fragment`true`}
      and ${filter.customerReference !== undefined ? sql.fragment`s.customer_reference = ${filter.customerReference}` : sql.fragment`true`}
    order by s.created_at desc, s.id desc limit 1000
  `);
}

/** A subscription's ledger, oldest first, in the order it was written (inLedgerOrder). */
export async function listLedger(db: Db, subscriptionId: string): Promise<readonly LedgerRow[]> {
  const rows = await db.any(sql.type(ledgerRow)`
    select id, kind, trim_scale(amount)::text as amount, currency, trim_scale(balance_after)::text as balance_after, period_start, period_end,
           payment_id, actor, note, created_at
    from subscription_ledger where subscription_id = ${subscriptionId} order by position
  `);
  return inLedgerOrder(rows);
}

/**
 * Rows by time in the order they were written: rows of one transaction share their time (the
 * billing clock is the transaction's), and a random id does not order them, so within one time the
 * balances chain them — each row starts from the balance the one before it left.
 */
export function inLedgerOrder(rows: readonly LedgerRow[]): LedgerRow[] {
  const ordered: LedgerRow[] = [];
  let balance = '0';
  for (let start = 0; start < rows.length; ) {
    let end = start;
    while (end < rows.length && rows[end]!.created_at.getTime() === rows[start]!.created_at.getTime()) end += 1;
    const group = rows.slice(start, end);
    while (group.length > 0) {
      const next = group.findIndex((row) => compareDecimal(addDecimal(row.balance_after, negated(row.amount)), balance) === 0);
      const [row] = group.splice(Math.max(next, 0), 1);
      ordered.push(row!);
      balance = row!.balance_after;
    }
    start = end;
  }
  return ordered;
}

const negated = (value: string): string => (value.startsWith('-') ? value.slice(1) : `-${value}`);

export interface SubscriptionInput {
  planID: string;
  customer: { reference: string; email?: string; telegramUserID?: number };
  trialDays?: number;
}

/**
 * A new subscription to the store's open plan: trialing until its trial ends (the subscription's
 * trialDays, else the plan's); without a trial, past_due from the start: its first period is due at
 * once (the engine, run by the caller in the same transaction, opens its first payment), and it
 * expires unpaid after the plan's grace days. Periods are counted from the
 * trial's end (anchor_at). `clock`: the billing clock. Returns its id and its portal's token, which
 * is not kept (only its hash): the caller shows it once.
 */
export async function createSubscription(tx: Db, storeId: string, input: SubscriptionInput, clock: Date): Promise<{ id: string; portalToken: string }> {
  const plan = await findPlan(tx, storeId, input.planID);
  if (!plan) throw new KassaError('plan_not_found', { param: 'planID' });
  if (plan.archived_at !== null) throw new KassaError('plan_archived', { param: 'planID' });
  const trialDays = input.trialDays ?? plan.trial_days;
  const anchor = addPeriods(clock, { unit: 'day', count: trialDays }, 1);
  const id = crypto.randomUUID();
  const portalToken = newPortalToken();
  await tx.query(sql.unsafe`
    insert into subscriptions (id, store_id, plan_id, customer_reference, customer_email, customer_telegram_user_id, status,
                               anchor_at, current_period_end, next_run_at, portal_token_hash, created_at)
    values (${id}, ${storeId}, ${plan.id}, ${input.customer.reference}, ${input.customer.email ?? null}, ${input.customer.telegramUserID ?? null},
            ${trialDays > 0 ? 'trialing' : 'past_due'}, ${sql.timestamp(anchor)}, ${sql.timestamp(anchor)}, ${sql.timestamp(clock)},
            ${sql.binary(portalTokenHash(portalToken))}, ${sql.timestamp(clock)})
  `);
  return { id, portalToken };
}

/** A new secret of a customer's portal: 24 random bytes, base64url (32 characters of [A-Za-z0-9_-], fit for a Telegram start parameter). */
export const newPortalToken = (): string => crypto.randomBytes(24).toString('base64url');

/** One ledger row, and the subscription's credit moved by it (the caller holds the subscription's row lock). */
export async function appendLedger(
  tx: Db,
  subscriptionId: string,
  entry: {
    kind: LedgerRow['kind'];
    amount: string;
    actor: string;
    note?: string | null;
    paymentId?: string | null;
    /** A refund row: the refund (outgoing transfer) it is of. */
    refundId?: string | null;
    period?: { start: Date; end: Date };
  },
  clock: Date,
): Promise<void> {
  await tx.query(sql.unsafe`
    with moved as (
      update subscriptions set credit = credit + ${entry.amount}::numeric where id = ${subscriptionId}
      returning id, store_id, credit, (select currency from plans where plans.id = subscriptions.plan_id) as currency
    )
    insert into subscription_ledger (id, subscription_id, store_id, kind, amount, currency, balance_after, period_start, period_end, payment_id, refund_id, actor, note, created_at)
    select ${crypto.randomUUID()}, moved.id, moved.store_id, ${entry.kind}, ${entry.amount}::numeric, moved.currency, moved.credit,
           ${entry.period ? sql.timestamp(entry.period.start) : null}, ${entry.period ? sql.timestamp(entry.period.end) : null},
           ${entry.paymentId ?? null}, ${entry.refundId ?? null}, ${entry.actor}, ${entry.note ?? null}, ${sql.timestamp(clock)}
    from moved
  `);
}
