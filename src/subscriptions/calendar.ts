// The billing engine's pure parts (issue 45; docs/API.md, Subscriptions): period arithmetic by the
// calendar, the status transitions (forward only), and what a subscription's next step is at a
// moment. src/subscriptions/engine.ts applies them to the database, a subscription under a row lock.
import { compareDecimal } from '../money.ts';

export const INTERVAL_UNITS = ['day', 'week', 'month', 'year'] as const;
export type IntervalUnit = (typeof INTERVAL_UNITS)[number];

export const SUBSCRIPTION_STATUSES = ['trialing', 'active', 'past_due', 'expired', 'cancelled'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export interface Interval {
  unit: IntervalUnit;
  count: number;
}

const DAY_MS = 86_400_000;

const daysInMonth = (year: number, month: number): number => new Date(Date.UTC(year, month + 1, 0)).getUTCDate();

/**
 * The end of `periods` periods after `anchor`, by the calendar (UTC): always counted from the anchor,
 * never from a previous end, so a month after Jan 31 is the last day of February and the next is
 * Mar 31 (not Mar 28). A month or year whose day does not exist ends on its last day; the time of
 * day is the anchor's.
 */
export function addPeriods(anchor: Date, interval: Interval, periods: number): Date {
  const n = interval.count * periods;
  if (interval.unit === 'day' || interval.unit === 'week') return new Date(anchor.getTime() + n * (interval.unit === 'week' ? 7 : 1) * DAY_MS);
  const months = interval.unit === 'year' ? 12 * n : n;
  const total = anchor.getUTCFullYear() * 12 + anchor.getUTCMonth() + months;
  const year = Math.floor(total / 12);
  const month = total - year * 12;
  const day = Math.min(anchor.getUTCDate(), daysInMonth(year, month));
  return new Date(Date.UTC(year, month, day, anchor.getUTCHours(), anchor.getUTCMinutes(), anchor.getUTCSeconds(), anchor.getUTCMilliseconds()));
}

/** What moves a subscription's status. */
export type SubscriptionEvent = 'charge' | 'shortfall' | 'grace_over' | 'cancel';

/**
 * The allowed moves: a charge makes it active (from a trial, a paid period, or past due); a
 * shortfall makes it past_due; past_due ends expired after its grace; cancel ends any open one.
 * expired and cancelled are final: nothing moves them.
 */
const MOVES: Record<SubscriptionStatus, Partial<Record<SubscriptionEvent, SubscriptionStatus>>> = {
  trialing: { charge: 'active', shortfall: 'past_due', cancel: 'cancelled' },
  active: { charge: 'active', shortfall: 'past_due', cancel: 'cancelled' },
  past_due: { charge: 'active', grace_over: 'expired', cancel: 'cancelled' },
  expired: {},
  cancelled: {},
};

export function nextStatus(from: SubscriptionStatus, event: SubscriptionEvent): SubscriptionStatus | null {
  return MOVES[from][event] ?? null;
}

export const isEnded = (status: SubscriptionStatus): boolean => status === 'expired' || status === 'cancelled';

/** What the engine knows of a subscription and its plan at a step. */
export interface BillingState {
  status: SubscriptionStatus;
  anchorAt: Date;
  periodsCharged: number;
  currentPeriodEnd: Date;
  credit: string;
  cancelAtPeriodEnd: boolean;
  remindedFor: Date | null;
  price: string;
  interval: Interval;
  graceDays: number;
  reminderDays: number;
}

export type Step =
  | { kind: 'none' }
  | { kind: 'cancel' }
  | { kind: 'charge'; periodStart: Date; periodEnd: Date }
  | { kind: 'shortfall' }
  | { kind: 'await_payment' }
  | { kind: 'expire' }
  | { kind: 'remind'; periodEnd: Date };

/** When the reminder of the current period is due (null: the plan sends none). */
function reminderAt(state: Pick<BillingState, 'currentPeriodEnd' | 'reminderDays'>): Date | null {
  return state.reminderDays > 0 ? new Date(state.currentPeriodEnd.getTime() - state.reminderDays * DAY_MS) : null;
}

/** The end of past_due's grace. */
const graceEnd = (state: Pick<BillingState, 'currentPeriodEnd' | 'graceDays'>): Date => new Date(state.currentPeriodEnd.getTime() + state.graceDays * DAY_MS);

/**
 * The subscription's next step at `now` (the billing clock). At or after its period's end: cancel
 * when asked at the period's end; else charge the next period when the credit covers the price;
 * else past_due (a shortfall), and once past_due, wait for the renewal payment until the grace
 * ends, then expire. Before the end: the reminder once per period, when the credit will not cover
 * the next period. The engine applies steps until `none` or `await_payment`.
 */
export function nextStep(state: BillingState, now: Date): Step {
  if (isEnded(state.status)) return { kind: 'none' };
  const t = now.getTime();
  if (t >= state.currentPeriodEnd.getTime()) {
    if (state.cancelAtPeriodEnd) return { kind: 'cancel' };
    if (compareDecimal(state.credit, state.price) >= 0) {
      return { kind: 'charge', periodStart: state.currentPeriodEnd, periodEnd: addPeriods(state.anchorAt, state.interval, state.periodsCharged + 1) };
    }
    if (state.status !== 'past_due') return { kind: 'shortfall' };
    return t >= graceEnd(state).getTime() ? { kind: 'expire' } : { kind: 'await_payment' };
  }
  const remind = reminderAt(state);
  if (
    remind !== null &&
    t >= remind.getTime() &&
    !state.cancelAtPeriodEnd &&
    compareDecimal(state.credit, state.price) < 0 &&
    state.remindedFor?.getTime() !== state.currentPeriodEnd.getTime()
  ) {
    return { kind: 'remind', periodEnd: state.currentPeriodEnd };
  }
  return { kind: 'none' };
}

/**
 * When the engine next has something to do after a run at `now` (by the billing clock), null once
 * the subscription ended: the grace's end while past_due, else the period's reminder while it is
 * ahead and not sent, else the period's end.
 */
export function nextRunAt(state: BillingState, now: Date): Date | null {
  if (isEnded(state.status)) return null;
  if (state.status === 'past_due') return graceEnd(state);
  const remind = reminderAt(state);
  if (remind !== null && remind > now && !state.cancelAtPeriodEnd && state.remindedFor?.getTime() !== state.currentPeriodEnd.getTime()) return remind;
  return state.currentPeriodEnd;
}
