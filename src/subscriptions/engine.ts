// The billing engine (issue 45; docs/API.md, Subscriptions): what payment expiry is for payments,
// for subscriptions. On a schedule (the recurring task subscriptions__bill, every minute, batch
// after batch for up to 50 s) one statement locks a batch of the subscriptions due by the billing
// clock (subscriptions.next_run_at, indexed; rows another run holds are skipped). Each follows the
// steps of calendar.ts's `nextStep` until none is left — charge a period from credit when it covers
// the price (ledger `charge`, subscription.renewed), else past_due with ONE open renewal payment for
// what is missing (reused while it can be paid, subscription.payment_due when a new one is opened),
// expired after the grace, cancelled at the period's end when asked, the reminder once per period.
// The common case, a subscription whose steps are only charges from credit, is written for the
// whole batch at once in that transaction (`chargeFromCredit`: the steps still computed by
// calendar.ts, row by row); every other one then runs in its own transaction under its row lock
// (`runSubscriptionIn`). Each change and its events are written in one transaction. A completed
// payment of a subscription adds its counted money as ledger `credit` in the booking transaction and
// enqueues the subscription's own run (`creditFromPayment`).
//
// Two clocks: the billing clock (`billingNow`: the database's, plus the sandbox's offset, which
// POST /sandbox/v1/clock/advance moves) decides periods; payments are created and expire by the
// wall clock as every payment.
import crypto from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Config, TonNetwork } from '../config.ts';
import { sql, z, type DatabasePool, type Db } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { addDecimal } from '../money.ts';
import { createPayment } from '../payments/commands.ts';
import { IS_COUNTED } from '../payments/counted.ts';
import { draftFromPayment } from '../payments/drafts.ts';
import type { CommandConfig } from '../payments/methodChoice.ts';
import { emitEvents, type EventType } from '../webhooks/events.ts';
import { addJobCall } from '../worker/enqueue.ts';
import { type BillingState, nextRunAt, nextStatus, nextStep, type Step, type SubscriptionEvent } from './calendar.ts';
import { appendLedger, dueSubscriptionsLocked, intervalOf, type PlanRow, planRow, plansById, type SubscriptionRow, subscriptionById } from './records.ts';

export type EngineConfig = CommandConfig & Pick<Config, 'checkoutBaseUrl'>;

export interface EngineDeps {
  pool: DatabasePool;
  config: EngineConfig;
  /** The wall clock payments are created and expire by. */
  now: () => Date;
  /** Where a subscription that could not be billed is told (the worker's logger). */
  log?: Pick<Logger, 'error'>;
  /** The subscription as its events carry it (the API's shape: src/presenters/subscription.ts, given by the caller). */
  present: (row: SubscriptionRow) => unknown;
}

/** The billing engine's actor in the ledger. */
const ENGINE_ACTOR = 'kassa';

/** A renewal payment's time to be paid: the most a payment may have; a new one is opened after it while past_due. */
export const RENEWAL_TTL_SECONDS = 43_200;

/** The most steps one run takes for a subscription (a clock moved years ahead charges at most this many periods at once). */
const MAX_STEPS = 1000;

const BILL_TASK = 'subscriptions__bill';

/**
 * The clock subscriptions bill by: the database's clock, plus, in the sandbox only, how far
 * POST /sandbox/v1/clock/advance moved it (billing_clock). Production bills by the database's clock.
 */
export async function billingNow(db: Db, network: TonNetwork): Promise<Date> {
  if (network !== 'sandbox') return db.oneFirst(sql.type(z.object({ now: z.date() }))`select now() as now`);
  return db.oneFirst(sql.type(z.object({ now: z.date() }))`select ${NOW_WITH_SANDBOX_OFFSET} as now`);
}

/**
 * The database's clock plus the sandbox clock's offset: billing_clock has a row only where
 * POST /sandbox/v1/clock/advance moved it, a route mounted only on the sandbox network, so elsewhere
 * this is the database's clock (for a writer that does not know the network: money out's).
 */
const NOW_WITH_SANDBOX_OFFSET = sql.fragment`now() + make_interval(secs => coalesce((select offset_seconds from billing_clock), 0))`;

/** Moves the sandbox's billing clock `seconds` ahead; returns the billing clock after it. */
export async function advanceBillingClock(db: Db, seconds: number): Promise<Date> {
  return db.oneFirst(sql.type(z.object({ now: z.date() }))`
    with moved as (
      insert into billing_clock (id, offset_seconds) values (true, ${seconds})
      on conflict (id) do update set offset_seconds = billing_clock.offset_seconds + excluded.offset_seconds
      returning offset_seconds
    )
    select now() + make_interval(secs => (select offset_seconds from moved)) as now
  `);
}

/** The job that runs one subscription's engine at once (enqueued in the transaction that credits it). */
const billJobCall = (subscriptionId: string) =>
  addJobCall({ task: BILL_TASK, payload: { subscriptionId }, jobKey: `${BILL_TASK}:${subscriptionId}`, queueName: `subscription:${subscriptionId}` });

/** How many due subscriptions one scheduled run takes at most (one batch, one transaction for the common case). */
export const BATCH_SIZE = 200;
/** After each batch of the tick the engine waits this many times as long as the batch took (it has the machine at most 1 / (1 + this) of the time). */
const ENGINE_YIELD = 3;

/**
 * The scheduled run: one batch of the subscriptions due by the billing clock (at most `limit`, the
 * longest-waiting first), locked in one transaction (one that another run holds is skipped: that
 * run does its work). The common case — the credit covers every period due, and nothing else is
 * due (no reminder, no cancel) — is written for the whole batch at once (`chargeFromCredit`: a
 * statement each for the ledger rows, the subscriptions and the events); every other one runs
 * after it on its own, under its row lock in its own transaction (`runSubscriptionIn`). Returns
 * how many changed, and how many were due in the batch.
 */
async function runDueBatch(deps: EngineDeps, limit: number): Promise<{ due: number; changed: number }> {
  const clock = await billingNow(deps.pool, deps.config.tonNetwork);
  const { due, charged, others } = await deps.pool.transaction((tx) => chargeFromCredit(tx, deps, clock, limit));
  let changed = charged;
  for (const id of others) {
    try {
      if (await deps.pool.transaction((tx) => runSubscriptionIn(tx, deps, id, clock, 'skip'))) changed += 1;
    } catch (error) {
      // One subscription that cannot be billed (its renewal payment cannot be made) never holds up the
      // others: it is logged and looked at again in an hour.
      deps.log?.error({ err: error, subscriptionId: id }, 'a subscription could not be billed; tried again in an hour');
      await deps.pool.query(sql.unsafe`
        update subscriptions set next_run_at = ${sql.timestamp(clock)}::timestamptz + interval '1 hour' where id = ${id} and next_run_at is not null
      `);
    }
  }
  return { due, changed };
}

/** One scheduled run (one batch: `runDueBatch`). Returns how many subscriptions changed. */
export async function runDueSubscriptions(deps: EngineDeps, options: { limit?: number } = {}): Promise<number> {
  return (await runDueBatch(deps, options.limit ?? BATCH_SIZE)).changed;
}

/**
 * The worker's tick (subscriptions__bill, every minute): batch after batch while a batch was full
 * (more may be due) and `budgetMs` is not spent, so that 100,000 subscriptions due at once are
 * billed within minutes, not 500 a minute. After each batch it waits three times as long as the
 * batch took: the engine has the database and the process (which also serves the API in the default
 * mode) at most a quarter of the time, so that payments made meanwhile are not held up — at half the
 * time, payment creates ran at 0.78× while 100,000 were billed (docs/PERFORMANCE.md,
 * "Subscriptions"). Returns how many changed.
 */
export async function runDueSubscriptionsFor(deps: EngineDeps, budgetMs: number): Promise<number> {
  const started = performance.now();
  let changed = 0;
  for (;;) {
    const batchStarted = performance.now();
    const batch = await runDueBatch(deps, BATCH_SIZE);
    changed += batch.changed;
    const took = performance.now() - batchStarted;
    if (batch.due < BATCH_SIZE || performance.now() - started + took >= budgetMs) return changed;
    await new Promise((resolve) => setTimeout(resolve, ENGINE_YIELD * took));
  }
}

/**
 * The common case of a batch, set-based, in the caller's transaction: locks the due subscriptions
 * (skipping those another run holds), and for each one whose steps by calendar.ts (`nextStep`, the
 * one definition of them) are only charges from credit — one or more — then nothing, writes every
 * charge as the one-by-one path would (a ledger `charge` per period with the balance after it, the
 * period moved, subscription.renewed with the subscription as it is after that charge, next_run_at by
 * `nextRunAt`) in three statements for the whole batch. Returns how many were due, how many it
 * charged, and the others (a reminder, a shortfall, a cancel, an expiry, or nothing but a stale
 * next_run_at), for the one-by-one path.
 */
export async function chargeFromCredit(
  tx: Db,
  deps: Omit<EngineDeps, 'pool'>,
  clock: Date,
  limit: number,
): Promise<{ due: number; charged: number; others: string[] }> {
  const wall = deps.now();
  const rows = await dueSubscriptionsLocked(tx, clock, wall, limit);
  if (rows.length === 0) return { due: 0, charged: 0, others: [] };
  const plans = await plansById(tx, [...new Set(rows.map((row) => row.plan_id))]);
  const others: string[] = [];
  const ledger: Array<[string, string, string, string, string, string, string, string, string]> = [];
  const moved: Array<[string, string, number, string, string, string | null]> = [];
  const events: Array<[string, string | null, string]> = [];
  for (const row of rows) {
    const plan = plans.get(row.plan_id)!;
    let after = row;
    const charges: Array<{ start: Date; end: Date; row: SubscriptionRow }> = [];
    let step = nextStep(stateOf(after, plan), clock);
    for (let n = 0; step.kind === 'charge' && n < MAX_STEPS; n += 1) {
      after = {
        ...after,
        status: move(after, 'charge'),
        periods_charged: after.periods_charged + 1,
        current_period_end: step.periodEnd,
        credit: addDecimal(after.credit, `-${plan.amount}`),
      };
      charges.push({ start: step.periodStart, end: step.periodEnd, row: after });
      step = nextStep(stateOf(after, plan), clock);
    }
    if (charges.length === 0 || step.kind !== 'none') {
      others.push(row.id);
      continue;
    }
    for (const charge of charges) {
      ledger.push([
        crypto.randomUUID(),
        row.id,
        row.store_id,
        `-${plan.amount}`,
        plan.currency,
        charge.row.credit,
        charge.start.toISOString(),
        charge.end.toISOString(),
        `${plan.name}: one period`,
      ]);
      const payload = {
        subscription: deps.present(charge.row),
        periodStart: charge.start.toISOString(),
        periodEnd: charge.end.toISOString(),
        amount: plan.amount,
      };
      events.push([row.store_id, row.open_payment_id, JSON.stringify(payload)]);
    }
    const next = nextRunAt(stateOf(after, plan), clock);
    moved.push([row.id, after.status, after.periods_charged, after.current_period_end.toISOString(), after.credit, next ? next.toISOString() : null]);
  }
  if (moved.length > 0) {
    await tx.query(sql.unsafe`
      insert into subscription_ledger (id, subscription_id, store_id, kind, amount, currency, balance_after, period_start, period_end, actor, note, created_at)
      select c.id, c.subscription_id, c.store_id, 'charge', c.amount, c.currency, c.balance_after, c.period_start, c.period_end, ${ENGINE_ACTOR}, c.note,
             ${sql.timestamp(clock)}
      from ${sql.unnest(ledger, ['uuid', 'uuid', 'uuid', 'numeric', 'text', 'numeric', 'timestamptz', 'timestamptz', 'text'])}
        with ordinality as c (id, subscription_id, store_id, amount, currency, balance_after, period_start, period_end, note, n)
      order by c.n
    `);
    await tx.query(sql.unsafe`
      update subscriptions s set status = m.status, periods_charged = m.periods_charged, current_period_end = m.current_period_end,
             credit = m.credit, next_run_at = m.next_run_at
      from ${sql.unnest(moved, ['uuid', 'text', 'int4', 'timestamptz', 'numeric', 'timestamptz'])}
        as m (id, status, periods_charged, current_period_end, credit, next_run_at)
      where s.id = m.id
    `);
    await emitEvents(
      tx,
      sql.fragment`
        select e.store_id, e.payment_id, 'subscription.renewed'::text as type, e.payload
        from ${sql.unnest(events, ['uuid', 'uuid', 'jsonb'])} with ordinality as e (store_id, payment_id, payload, n)
        order by e.n
      `,
      wall,
    );
  }
  return { due: rows.length, charged: moved.length, others };
}

/** One subscription's run now (its job, after a credit): waits for its row lock. Returns whether anything changed. */
export async function runSubscription(deps: EngineDeps, id: string): Promise<boolean> {
  return deps.pool.transaction(async (tx) => runSubscriptionIn(tx, deps, id, await billingNow(tx, deps.config.tonNetwork), 'wait'));
}

const stateOf = (row: SubscriptionRow, plan: PlanRow): BillingState => ({
  status: row.status,
  anchorAt: row.anchor_at,
  periodsCharged: row.periods_charged,
  currentPeriodEnd: row.current_period_end,
  credit: row.credit,
  cancelAtPeriodEnd: row.cancel_at_period_end,
  remindedFor: row.reminded_for,
  price: plan.amount,
  interval: intervalOf(plan),
  graceDays: plan.grace_days,
  reminderDays: plan.reminder_days,
});

/**
 * The engine for one subscription in the caller's transaction, at `clock` (the billing clock):
 * locks its row (`lock`: wait for it, or skip it when held), applies the due steps, keeps an open
 * renewal payment while past_due, and sets when it next runs. Returns whether anything changed.
 */
export async function runSubscriptionIn(tx: Db, deps: Omit<EngineDeps, 'pool'>, id: string, clock: Date, lock: 'wait' | 'skip'): Promise<boolean> {
  const wall = deps.now();
  let row = await subscriptionById(tx, id, wall, lock);
  if (!row) return false;
  const plan = await tx.one(sql.type(planRow)`
    select id, store_id, name, currency, amount::text as amount, interval_unit, interval_count, trial_days, grace_days, reminder_days, created_at, archived_at
    from plans where id = ${row.plan_id}
  `);
  let changed = false;
  for (let n = 0; n < MAX_STEPS; n += 1) {
    const step = nextStep(stateOf(row, plan), clock);
    if (step.kind === 'none') break;
    if (step.kind === 'await_payment') {
      if (row.open_payment_id === null) {
        await openRenewal(tx, deps, row, plan, wall);
        changed = true;
      }
      break;
    }
    await applyStep(tx, deps, row, plan, step, clock, wall);
    changed = true;
    row = (await subscriptionById(tx, id, wall))!;
  }
  const next = nextRunAt(stateOf(row, plan), clock);
  // While past_due, the next run opens a new renewal payment when this one's time is up (or expires the subscription).
  const renewalCheck = row.status === 'past_due' ? new Date(clock.getTime() + RENEWAL_TTL_SECONDS * 1000) : null;
  const at = next !== null && renewalCheck !== null && renewalCheck < next ? renewalCheck : next;
  await tx.query(sql.unsafe`update subscriptions set next_run_at = ${at ? sql.timestamp(at) : null} where id = ${id}`);
  return changed;
}

/** The move a step makes, or throws: status only moves forward (calendar.ts). */
function move(row: SubscriptionRow, event: SubscriptionEvent) {
  const to = nextStatus(row.status, event);
  if (to === null) throw new Error(`subscription ${row.id}: ${event} refused from ${row.status}`);
  return to;
}

async function applyStep(tx: Db, deps: Omit<EngineDeps, 'pool'>, row: SubscriptionRow, plan: PlanRow, step: Step, clock: Date, wall: Date): Promise<void> {
  const at = sql.timestamp(clock);
  switch (step.kind) {
    case 'charge': {
      const to = move(row, 'charge');
      await appendLedger(
        tx,
        row.id,
        {
          kind: 'charge',
          amount: `-${plan.amount}`,
          actor: ENGINE_ACTOR,
          note: `${plan.name}: one period`,
          period: { start: step.periodStart, end: step.periodEnd },
        },
        clock,
      );
      await tx.query(sql.unsafe`
        update subscriptions set status = ${to}, periods_charged = periods_charged + 1, current_period_end = ${sql.timestamp(step.periodEnd)}
        where id = ${row.id}
      `);
      await emit(tx, deps, row.id, 'subscription.renewed', wall, {
        periodStart: step.periodStart.toISOString(),
        periodEnd: step.periodEnd.toISOString(),
        amount: plan.amount,
      });
      return;
    }
    case 'shortfall': {
      const to = move(row, 'shortfall');
      await tx.query(sql.unsafe`update subscriptions set status = ${to} where id = ${row.id}`);
      await emit(tx, deps, row.id, 'subscription.past_due', wall);
      // The customer may have opened the period's payment early (the portal's "pay the next period"): that one stays the renewal.
      if (row.open_payment_id === null) await openRenewal(tx, deps, { ...row, status: to }, plan, wall);
      else {
        // The open one is the renewal (never two): the store is told it is due, as when it is opened.
        const open = await tx.one(sql.type(z.object({ amount: z.string(), currency: z.string() }))`
          select amount::text as amount, currency from payments where id = ${row.open_payment_id}
        `);
        await emit(tx, deps, row.id, 'subscription.payment_due', wall, { paymentID: row.open_payment_id, amount: open.amount, currency: open.currency });
      }
      return;
    }
    case 'expire': {
      const to = move(row, 'grace_over');
      await tx.query(sql.unsafe`update subscriptions set status = ${to}, expired_at = ${at}, next_run_at = null where id = ${row.id}`);
      await emit(tx, deps, row.id, 'subscription.expired', wall);
      return;
    }
    case 'cancel': {
      const to = move(row, 'cancel');
      await tx.query(sql.unsafe`update subscriptions set status = ${to}, cancelled_at = ${at}, next_run_at = null where id = ${row.id}`);
      await emit(tx, deps, row.id, 'subscription.cancelled', wall);
      return;
    }
    case 'remind': {
      // Once per period: reminded_for is written with the event, under the row lock.
      await tx.query(sql.unsafe`update subscriptions set reminded_for = ${sql.timestamp(step.periodEnd)} where id = ${row.id}`);
      await emit(tx, deps, row.id, 'subscription.renewal_upcoming', wall, {
        amount: plan.amount,
        currency: plan.currency,
        dueAt: step.periodEnd.toISOString(),
      });
      return;
    }
    default:
      return;
  }
}

/**
 * Opens the renewal payment for what the credit lacks of the price (rounded up to the currency's
 * precision: two places for fiat), through the API's create command, with subscription_id, and
 * tells the store (subscription.payment_due, with its checkout and Telegram URLs). Called only when
 * the subscription has no open one: never two at once (the caller holds the subscription's row lock;
 * the customer's portal opens the next period's payment early through it too).
 */
export async function openRenewal(tx: Db, deps: Omit<EngineDeps, 'pool'>, row: SubscriptionRow, plan: PlanRow, wall: Date): Promise<void> {
  const amount = await tx.oneFirst(sql.type(z.object({ amount: z.string() }))`
    select trim_scale(ceil((${plan.amount}::numeric - ${row.credit}::numeric) * power(10::numeric, d)) / power(10::numeric, d))::text as amount
    from (select coalesce((select decimals from coins where symbol = ${plan.currency}), 2) as d) as precision
  `);
  const draft = await draftFromPayment(
    tx,
    row.store_id,
    { amount, currency: plan.currency, description: plan.name, ttl: RENEWAL_TTL_SECONDS, metadata: { subscriptionID: row.id } },
    { network: deps.config.tonNetwork },
  );
  const view = await createPayment(tx, deps.config, row.store_id, { ...draft, createdVia: 'subscription', subscriptionId: row.id }, wall);
  await tx.query(sql.unsafe`update subscriptions set renewal_payment_id = ${view.id} where id = ${row.id}`);
  await emit(tx, deps, row.id, 'subscription.payment_due', wall, { paymentID: view.id, amount, currency: plan.currency });
}

/**
 * Records a subscription event for the store's endpoints in the caller's transaction: the
 * subscription as it now is (with its open renewal's checkoutURL and telegramURL), and `extra`.
 */
async function emit(tx: Db, deps: Omit<EngineDeps, 'pool'>, id: string, type: EventType, wall: Date, extra: Record<string, string> = {}): Promise<void> {
  const row = (await subscriptionById(tx, id, wall))!;
  await emitSubscriptionEvent(tx, row, deps.present(row), type, wall, extra);
}

export async function emitSubscriptionEvent(
  tx: Db,
  row: SubscriptionRow,
  presented: unknown,
  type: EventType,
  wall: Date,
  extra: Record<string, string> = {},
): Promise<void> {
  const payload = JSON.stringify({ subscription: presented, ...extra });
  await emitEvents(
    tx,
    sql.fragment`select ${row.store_id}::uuid as store_id, ${row.open_payment_id}::uuid as payment_id, ${type}::text as type, ${payload}::jsonb as payload`,
    wall,
  );
}

/** The transfer effects whose money, of the payment's coin, is the subscriber's: counted, and late (after completion, expiry or cancel). */
const SUBSCRIBER_MONEY = sql.fragment`(${IS_COUNTED} or t.effect in ('after_completion', 'after_expiry', 'after_cancel'))`;

/**
 * "A payment of a subscription got money": what completion (the complete command's `onCompleted`
 * hook) and money arriving after it (`onLateMoney`: after completion, after expiry) set going, in
 * the booking transaction — the chain reader's deposit and treasury booking and a person's
 * assignment of unmatched money all call it (`subscriptionMoneyHooks`). Once the payment is no
 * longer open (completed, expired or cancelled, or money came after its expiry), all its money of its coin — counted, overpaid,
 * late — in the plan's currency at the payment's own rate (its amount × received ÷ required), less
 * what the ledger already credited for it, becomes ledger `credit` (so each coin is credited once,
 * however often this runs), and the subscription's engine run is enqueued. Under the subscription's
 * row lock. Returns whether it credited.
 */
export async function creditFromPayment(tx: Db, network: TonNetwork, paymentId: string): Promise<boolean> {
  const found = await tx.maybeOne(sql.type(z.object({ subscription_id: z.string(), status: z.string() }))`
    select p.subscription_id, p.status from payments p
    join subscriptions s on s.id = p.subscription_id
    join plans pl on pl.id = s.plan_id and pl.currency = p.currency
    where p.id = ${paymentId} and p.subscription_id is not null
      and (p.status in ('completed', 'expired', 'cancelled')
           -- Money after its expiry (by the chain's time) before the expiry task marked it expired: no longer open either.
           or exists (select 1 from transfers t where t.payment_id = p.id and t.effect in ('after_expiry', 'after_cancel')))
  `);
  if (!found) return false;
  // The subscription's row lock: the credit and its engine run one after the other, never beside a run.
  await tx.query(sql.unsafe`select id from subscriptions where id = ${found.subscription_id} for update`);
  const owed = await tx.maybeOne(sql.type(z.object({ amount: z.string(), first: z.boolean() }))`
    select trim_scale(received.total - credited.total)::text as amount, credited.n = 0 as first
    from payments p
    cross join lateral (
      select coalesce(round(p.amount * sum(t.amount_base_units) / nullif(p.coin_amount_base_units, 0), 9), 0) as total
      from transfers t where t.payment_id = p.id and t.coin_symbol = p.coin_symbol and ${SUBSCRIBER_MONEY}
    ) as received
    cross join lateral (
      select coalesce(sum(l.amount), 0) as total, count(*) as n from subscription_ledger l where l.payment_id = p.id and l.kind = 'credit'
    ) as credited
    where p.id = ${paymentId} and received.total > credited.total
  `);
  if (!owed) return false;
  const clock = await billingNow(tx, network);
  const note =
    found.status !== 'completed' ? 'money of a payment after its expiry or cancel' : owed.first ? 'payment completed' : 'money after the payment had completed';
  await appendLedger(tx, found.subscription_id, { kind: 'credit', amount: owed.amount, actor: ENGINE_ACTOR, note, paymentId }, clock);
  // Its run at once (a job), and due for the scheduled run too should the job fail.
  await tx.query(sql.unsafe`
    update subscriptions set next_run_at = least(next_run_at, ${sql.timestamp(clock)}) where id = ${found.subscription_id} and next_run_at is not null
  `);
  await tx.query(sql.unsafe`select ${billJobCall(found.subscription_id)}`);
  return true;
}

const CREDIT_TASK = 'subscriptions__credit';

/**
 * Payment expiry's and cancel's hook (payments/commands.ts `expireDuePayments`, `expirePayment` and
 * `cancelPayment`, `OnEnded`): for each payment of a subscription just expired or cancelled (a
 * renewal or a top-up; cancelled by the merchant through the API, or with its subscription) that
 * had got money — counted, a part of its amount — a subscriptions__credit job that credits it
 * (`creditFromPayment`, which enqueues the subscription's run), added by the ending statement
 * itself. Without it, the part paid would wait for more money to arrive, and the next renewal would
 * ask for all of it again.
 */
export const CREDIT_PART_PAID = sql.fragment`
  select ${addJobCall({
    task: CREDIT_TASK,
    payload: sql.fragment`json_build_object('paymentId', due.id)`,
    jobKey: sql.fragment`${CREDIT_TASK} || ':' || due.id`,
    queueName: sql.fragment`'subscription:' || due.subscription_id`,
  })}
  from due
  where due.subscription_id is not null and exists (select 1 from transfers t where t.payment_id = due.id and ${IS_COUNTED})
`;

/** The subscriptions__credit job: a payment's money not yet credited, credited (`creditFromPayment`) in one transaction. */
export async function creditPaymentNow(pool: DatabasePool, network: TonNetwork, paymentId: string): Promise<boolean> {
  return pool.transaction((tx) => creditFromPayment(tx, network, paymentId));
}

/** The booking hooks that credit a subscription's payment's money (completion and late money), for recordTransfer, bookTreasuryTransfer and assignUnmatched. */
export const subscriptionMoneyHooks = (network: TonNetwork) => {
  const credit = (tx: Db, paymentId: string) => creditFromPayment(tx, network, paymentId);
  return { onCompleted: credit, onLateMoney: credit };
};

/**
 * A refund of a subscription's payment (any: deposit or treasury, of a renewal or a top-up), in the
 * refund's transaction: one ledger `refund` row. The refund's value in the plan's currency (the
 * payment's rate; a refund of another coin than the payment's is of money never credited: 0) is
 * taken from the credit as far as the credit goes; the period already charged stays (it is never
 * ended by a refund), and what the credit did not cover is said in the row's note. Does nothing for
 * a payment of no subscription. Written when the refund is made (asked), naming the refund; a refund
 * that later fails gives it back (`settleRefundLedger`).
 */
export async function debitForRefund(
  tx: Db,
  network: TonNetwork,
  paymentId: string,
  coin: string,
  amountBaseUnits: bigint,
  refundId: string,
): Promise<boolean> {
  const found = await tx.maybeOne(sql.type(z.object({ subscription_id: z.string(), value: z.string(), currency: z.string() }))`
    select p.subscription_id, p.currency,
           case when p.coin_symbol = ${coin} then coalesce(trim_scale(round(p.amount * ${amountBaseUnits.toString()}::numeric / nullif(p.coin_amount_base_units, 0), 9)), 0) else 0 end::text as value
    from payments p where p.id = ${paymentId} and p.subscription_id is not null
  `);
  if (!found) return false;
  const credit = await tx.oneFirst(sql.type(z.object({ credit: z.string() }))`
    select trim_scale(credit)::text as credit from subscriptions where id = ${found.subscription_id} for update
  `);
  const taken = await tx.oneFirst(sql.type(z.object({ taken: z.string() }))`
    select trim_scale(greatest(least(${found.value}::numeric, ${credit}::numeric), 0))::text as taken
  `);
  const short = await tx.oneFirst(sql.type(z.object({ short: z.string() }))`select trim_scale(${found.value}::numeric - ${taken}::numeric)::text as short`);
  const note =
    short === '0'
      ? `refund ${refundId} of ${found.value} ${found.currency}, taken from credit`
      : `refund ${refundId} of ${found.value} ${found.currency}: ${taken} taken from credit, ${short} beyond it (the period already charged stays)`;
  await appendLedger(
    tx,
    found.subscription_id,
    { kind: 'refund', amount: `-${taken}`, actor: ENGINE_ACTOR, note, paymentId, refundId },
    await billingNow(tx, network),
  );
  return true;
}

/**
 * A refund of a subscription's payment reached an end (money out's writeTransition, in the
 * transaction that writes it): `failed` (the money did not leave, or came back) or `expired` (a
 * refund from the treasury nobody signed in time) gives back to the credit what the refund's ledger
 * row took — a reversing `refund` row, positive, with who (kassa) and why; `confirmed` (it landed
 * after all, after it was given back) takes it again, as far as the credit goes. What is written is
 * what the refund's rows do not already say (their sum against the first row's take), under the
 * subscription's row lock: once, whatever retries or repeated ends happen. Does nothing for another
 * transfer, or a refund of a payment of no subscription. Returns whether it wrote a row.
 */
export async function settleRefundLedger(tx: Db, transferId: string): Promise<boolean> {
  const refund = await tx.maybeOne(sql.type(z.object({ subscription_id: z.string(), payment_id: z.string(), state: z.string() }))`
    select p.subscription_id, o.payment_id, o.state from outgoing_transfers o join payments p on p.id = o.payment_id
    where o.id = ${transferId} and o.kind = 'refund' and p.subscription_id is not null
  `);
  if (!refund || !['failed', 'expired', 'confirmed'].includes(refund.state)) return false;
  const credit = await tx.oneFirst(sql.type(z.object({ credit: z.string() }))`
    select credit::text as credit from subscriptions where id = ${refund.subscription_id} for update
  `);
  // taken: what its first row took (the refund as asked); net: what its rows have moved so far.
  const rows = await tx.maybeOne(sql.type(z.object({ taken: z.string(), net: z.string(), currency: z.string() }))`
    select trim_scale(-(array_agg(amount order by position))[1])::text as taken, trim_scale(sum(amount))::text as net,
           (array_agg(currency order by position))[1] as currency
    from subscription_ledger where refund_id = ${transferId}
  `);
  if (!rows || rows.taken === null) return false;
  const ended = refund.state !== 'confirmed';
  const amount = await tx.oneFirst(sql.type(z.object({ amount: z.string() }))`
    select trim_scale(case when ${ended} then greatest(-${rows.net}::numeric, 0)
                           else -greatest(least(${rows.taken}::numeric + ${rows.net}::numeric, ${credit}::numeric), 0) end)::text as amount
  `);
  if (amount === '0') return false;
  const why =
    refund.state === 'failed'
      ? `refund ${transferId} failed: ${amount} ${rows.currency} given back to the credit`
      : refund.state === 'expired'
        ? `refund ${transferId} from the treasury expired unsigned: ${amount} ${rows.currency} given back to the credit`
        : `refund ${transferId} left after all: ${amount.replace(/^-/, '')} ${rows.currency} taken from the credit again`;
  const clock = await tx.oneFirst(sql.type(z.object({ now: z.date() }))`select ${NOW_WITH_SANDBOX_OFFSET} as now`);
  await appendLedger(
    tx,
    refund.subscription_id,
    { kind: 'refund', amount, actor: ENGINE_ACTOR, note: why, paymentId: refund.payment_id, refundId: transferId },
    clock,
  );
  return true;
}
