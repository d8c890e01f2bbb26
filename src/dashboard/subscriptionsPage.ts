// The Subscriptions pages (issue 45): the store's subscriptions with their filters and the form that
// subscribes a customer (owners); the plans with the form that makes one and a button that archives
// one (owners); and a subscription's page — its status and period, its credit, its history (the
// ledger in words), its payments, the customer's portal link to copy, and (owners) adding credit
// with a note and cancelling it, now or at the period's end. Amounts are words.ts `amount`.
import { html, raw, type Html } from '../web/html.ts';
import { shownCoinName } from '../money.ts';
import type { IntervalUnit, SubscriptionStatus } from '../subscriptions/calendar.ts';
import { SUBSCRIPTION_STATUSES } from '../subscriptions/calendar.ts';
import type { LedgerRow, PlanRow, SubscriptionRow } from '../subscriptions/records.ts';
import { INTERVAL_UNITS } from '../subscriptions/calendar.ts';
import { dateTime, describedBy, problemFor, shell, statusLabel, type StoreContext, type Viewer } from './pages.ts';
import { dashboardPaths } from './paths.ts';
import type { ListedPayment } from './payments.ts';
import { can } from './policy.ts';
import { dashboardAsset } from './static.ts';
import { amount, term } from './words.ts';

/** What the notice after a redirect says (`?notice=`). */
export const SUBSCRIPTION_NOTICES = {
  plan_created: 'Plan made. Subscribe a customer to it from Subscriptions.',
  plan_archived: 'Plan archived: it takes no new subscriptions; its subscribers go on as they are.',
  subscription_created: 'Subscription made. Send the customer its portal link below: they pay and follow it there.',
  portal_reissued: 'A new portal link: the old one stopped working. Send the customer this one.',
  credit_added: 'Credit added. It is written in the history with your note.',
  cancelled: 'Subscription cancelled.',
  cancel_at_period_end: 'The subscription ends when its current period ends; nothing more is charged.',
} as const;
export type SubscriptionNotice = keyof typeof SUBSCRIPTION_NOTICES;

/** A subscription's status in the shop's words. */
const STATUS_WORDS: Record<SubscriptionStatus, string> = {
  trialing: 'Free trial',
  active: 'Paid',
  past_due: 'Waiting for payment',
  expired: 'Ended unpaid',
  cancelled: 'Cancelled',
};

const UNIT_WORDS: Record<IntervalUnit, [string, string]> = {
  day: ['day', 'days'],
  week: ['week', 'weeks'],
  month: ['month', 'months'],
  year: ['year', 'years'],
};

/** "every month", "every 3 months". */
const everyWords = (plan: Pick<PlanRow, 'interval_unit' | 'interval_count'>): string =>
  plan.interval_count === 1 ? `every ${UNIT_WORDS[plan.interval_unit][0]}` : `every ${plan.interval_count} ${UNIT_WORDS[plan.interval_unit][1]}`;

const daysWords = (n: number): string => (n === 1 ? '1 day' : `${n} days`);

/** A form as posted back with its problems (field → sentence). */
export interface SubscriptionFormState {
  values: Record<string, string>;
  problems: Record<string, string>;
}

const styles = (root: string) => [{ href: dashboardAsset(root, 'links.css'), id: 'links-style' }];

const selected = (on: boolean) => (on ? raw(' selected') : '');

/** The section's own links: the subscriptions and the plans. */
function sectionNav(root: string, store: StoreContext, here: 'subscriptions' | 'plans'): Html {
  const paths = dashboardPaths(root).store(store.id);
  const item = (href: string, label: string, name: typeof here) =>
    html`<li><a href="${href}"${here === name ? raw(' aria-current="page"') : ''}>${label}</a></li>`;
  return html`<nav aria-label="Subscriptions" class="section-nav"><ul>${item(paths.subscriptions(), 'Subscriptions', 'subscriptions')}${item(paths.plans(), 'Plans', 'plans')}</ul></nav>`;
}

/** Where a subscription stands in time, in words. */
function periodWords(row: Pick<SubscriptionRow, 'status' | 'current_period_end' | 'cancel_at_period_end' | 'cancelled_at' | 'expired_at'>): string {
  const end = dateTime(row.current_period_end);
  switch (row.status) {
    case 'trialing':
      return row.cancel_at_period_end ? `Trial until ${end}, then it ends` : `Trial until ${end}`;
    case 'active':
      return row.cancel_at_period_end ? `Paid until ${end}, then it ends` : `Paid until ${end}`;
    case 'past_due':
      return `Due since ${end}`;
    case 'expired':
      return row.expired_at ? `Ended ${dateTime(row.expired_at)}` : 'Ended';
    case 'cancelled':
      return row.cancelled_at ? `Cancelled ${dateTime(row.cancelled_at)}` : 'Cancelled';
  }
}

export function subscriptionsPage(input: {
  root: string;
  viewer: Viewer;
  store: StoreContext;
  subscriptions: readonly SubscriptionRow[];
  plans: readonly PlanRow[];
  filters: { status?: string; customer?: string };
  filterProblems?: Record<string, string>;
  form?: SubscriptionFormState;
  notice?: string | null;
}): string {
  const { root, store } = input;
  const paths = dashboardPaths(root).store(store.id);
  const glossary = paths.glossary();
  const planOf = new Map(input.plans.map((p) => [p.id, p]));
  const open = input.plans.filter((p) => p.archived_at === null);
  const fp = input.filterProblems ?? {};
  const problems = input.form?.problems ?? {};
  const values = input.form?.values ?? {};
  const owner = can(store.role, 'subscriptions.manage');
  const create = !owner
    ? html`<p class="card muted">Only the store's owners can subscribe customers.</p>`
    : open.length === 0
      ? html`<p class="card" id="no-plans">Make a plan first: <a href="${paths.plans()}">Plans</a>.</p>`
      : html`<section class="card" aria-labelledby="new-subscription-heading"><h2 id="new-subscription-heading">Subscribe a customer</h2>
<p class="muted">The customer gets a portal link to pay each period; without a free trial the first period is asked for at once.</p>
<form method="post" action="${paths.newSubscription()}" id="new-subscription">
${problemFor(problems, 'form')}
<label for="planID">Plan</label>
<select id="planID" name="planID"${describedBy(problems, 'planID')}>${open.map(
          (p) =>
            html`<option value="${p.id}"${selected(p.id === values.planID)}>${p.name} · ${p.amount} ${shownCoinName(p.currency)} ${everyWords(p)}</option>`,
        )}</select>
${problemFor(problems, 'planID')}
<label for="reference">Customer reference (your own: an account, an order, a Telegram handle)</label>
<input id="reference" name="reference" type="text" maxlength="200" autocomplete="off" required value="${values.reference ?? ''}"${describedBy(problems, 'reference')}>
${problemFor(problems, 'reference')}
<label for="email">Customer’s email (optional)</label>
<input id="email" name="email" type="email" maxlength="254" autocomplete="off" value="${values.email ?? ''}"${describedBy(problems, 'email')}>
${problemFor(problems, 'email')}
<label for="telegramUserID">Customer’s Telegram user number (optional)</label>
<input id="telegramUserID" name="telegramUserID" type="text" inputmode="numeric" maxlength="16" autocomplete="off" value="${values.telegramUserID ?? ''}"${describedBy(problems, 'telegramUserID')}>
${problemFor(problems, 'telegramUserID')}
<label for="sub-trialDays">Free days (leave empty for the plan’s)</label>
<input id="sub-trialDays" name="trialDays" type="text" inputmode="numeric" maxlength="9" autocomplete="off" value="${values.trialDays ?? ''}"${describedBy(problems, 'trialDays')}>
${problemFor(problems, 'trialDays')}
<button type="submit">Subscribe</button>
</form></section>`;
  const filters = html`<form method="get" action="${paths.subscriptions()}" class="filters" id="subscription-filters">
<label for="status">Status</label>
<select id="status" name="status"${describedBy(fp, 'status')}><option value="">Any</option>${SUBSCRIPTION_STATUSES.map(
    (s) => html`<option value="${s}"${selected(s === input.filters.status)}>${STATUS_WORDS[s]}</option>`,
  )}</select>
${problemFor(fp, 'status')}
<label for="customer">Customer reference</label>
<input id="customer" name="customer" type="search" maxlength="200" autocomplete="off" value="${input.filters.customer ?? ''}"${describedBy(fp, 'customer')}>
${problemFor(fp, 'customer')}
<button type="submit" class="secondary">Show</button>
</form>`;
  const list = input.subscriptions.length
    ? html`<div class="table-wrap" tabindex="0"><table id="subscriptions"><caption class="muted">Newest first</caption>
<thead><tr><th scope="col">Customer</th><th scope="col">Plan</th><th scope="col">${term(glossary, 'subscription_status', 'Status')}</th><th scope="col">When</th><th scope="col">${term(glossary, 'subscription_credit')}</th></tr></thead>
<tbody>${input.subscriptions.map((s) => {
        const plan = planOf.get(s.plan_id);
        return html`<tr><td><a href="${paths.subscription(s.id)}">${s.customer_reference}</a></td><td>${plan?.name ?? '—'}</td><td>${STATUS_WORDS[s.status]}</td>
<td>${periodWords(s)}</td><td class="num">${plan ? amount(s.credit, plan.currency) : s.credit}</td></tr>`;
      })}</tbody></table></div>`
    : html`<p id="no-subscriptions">${input.filters.status || input.filters.customer ? 'No subscription matches.' : 'No subscription yet.'}</p>`;
  const body = html`<h1>Subscriptions</h1>
${sectionNav(root, store, 'subscriptions')}
${input.notice ? html`<p class="success" role="status">${input.notice}</p>` : ''}
${create}
<section class="card" aria-labelledby="subscriptions-heading"><h2 id="subscriptions-heading">Subscribers</h2>
${filters}
${list}</section>`;
  return shell({ root, title: 'Subscriptions', body, viewer: input.viewer, store, current: 'subscriptions', styles: styles(root) });
}

export function plansPage(input: {
  root: string;
  viewer: Viewer;
  store: StoreContext;
  plans: readonly PlanRow[];
  currencies: readonly string[];
  form?: SubscriptionFormState;
  notice?: string | null;
}): string {
  const { root, store } = input;
  const paths = dashboardPaths(root).store(store.id);
  const owner = can(store.role, 'subscriptions.manage');
  const problems = input.form?.problems ?? {};
  const values = input.form?.values ?? {};
  const field = (name: string, label: string, attributes: Html, fallback = '') =>
    html`<label for="${name}">${label}</label>
<input id="${name}" name="${name}" ${attributes} value="${values[name] ?? fallback}"${describedBy(problems, name)}>
${problemFor(problems, name)}`;
  const numeric = raw('type="text" inputmode="numeric" maxlength="9" autocomplete="off"');
  const create = owner
    ? html`<section class="card" aria-labelledby="new-plan-heading"><h2 id="new-plan-heading">Make a plan</h2>
<p class="muted">What a subscriber pays each period. A later change of price applies from the next period.</p>
<form method="post" action="${paths.newPlan()}" id="new-plan">
${problemFor(problems, 'form')}
${field('name', 'Name (customers see it)', raw('type="text" maxlength="200" autocomplete="off" required'))}
${field('amount', 'Price of one period', raw('type="text" inputmode="decimal" maxlength="40" autocomplete="off" required'))}
<label for="currency">Currency</label>
<select id="currency" name="currency"${describedBy(problems, 'currency')}>${input.currencies.map(
        (c) => html`<option value="${c}"${selected(c === (values.currency ?? input.currencies[0]))}>${shownCoinName(c)}</option>`,
      )}</select>
${problemFor(problems, 'currency')}
<fieldset><legend>Period</legend>
${field('intervalCount', 'How many', numeric, '1')}
<label for="interval">Of</label>
<select id="interval" name="interval"${describedBy(problems, 'interval')}>${INTERVAL_UNITS.map(
        (u) => html`<option value="${u}"${selected(u === (values.interval ?? 'month'))}>${UNIT_WORDS[u][1]}</option>`,
      )}</select>
${problemFor(problems, 'interval')}
</fieldset>
${field('trialDays', 'Free trial, in days', numeric, '0')}
${field('graceDays', 'Days to pay after a period is due, before it ends', numeric, '3')}
${field('reminderDays', 'Remind this many days before a period ends when the credit will not cover it (0: never)', numeric, '3')}
<button type="submit">Make the plan</button>
</form></section>`
    : html`<p class="card muted">Only the store's owners can make and archive plans.</p>`;
  const rows = input.plans.map(
    (p) => html`<tr><td>${p.name}</td><td class="num">${amount(p.amount, p.currency)}</td><td>${everyWords(p)}</td>
<td>${daysWords(p.trial_days)} free · ${daysWords(p.grace_days)} to pay · reminder ${p.reminder_days === 0 ? 'none' : `${daysWords(p.reminder_days)} before`}</td>
<td>${p.archived_at === null ? 'open' : `archived ${dateTime(p.archived_at)}`}</td>
<td>${
      owner && p.archived_at === null
        ? html`<form method="post" action="${paths.archivePlan(p.id)}" data-confirm="Archive this plan? It takes no new subscriptions; its subscribers go on as they are.">
<button type="submit" class="secondary" aria-label="Archive the plan ${p.name}">Archive</button></form>`
        : ''
    }</td></tr>`,
  );
  const list = rows.length
    ? html`<div class="table-wrap" tabindex="0"><table id="plans"><caption class="muted">Newest first</caption>
<thead><tr><th scope="col">Plan</th><th scope="col">Price</th><th scope="col">Period</th><th scope="col">Days</th><th scope="col">State</th><th scope="col">Archive</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
    : html`<p id="no-plans-yet">No plan yet.</p>`;
  const body = html`<h1>Plans</h1>
${sectionNav(root, store, 'plans')}
${input.notice ? html`<p class="success" role="status">${input.notice}</p>` : ''}
${create}
<section class="card" aria-labelledby="plans-heading"><h2 id="plans-heading">Plans</h2>${list}</section>`;
  return shell({ root, title: 'Plans', body, viewer: input.viewer, store, current: 'subscriptions', styles: styles(root) });
}

/** Who wrote a ledger row, in words: Kassa, a member (their email), or an API token. */
function byWhom(actor: string): string {
  if (actor === 'kassa') return 'Kassa';
  if (actor.includes('@')) return actor;
  return `an API token (${actor})`;
}

/** A ledger row as a line of history. */
function ledgerWords(row: LedgerRow, paymentHref: (id: string) => string): Html {
  switch (row.kind) {
    case 'credit':
      return row.payment_id ? html`Payment received (<a href="${paymentHref(row.payment_id)}">the payment</a>)` : html`Payment received`;
    case 'charge':
      return row.period_start && row.period_end ? html`Period charged: ${dateTime(row.period_start)} to ${dateTime(row.period_end)}` : html`Period charged`;
    case 'adjustment':
      return html`Credit added by ${byWhom(row.actor)}`;
    case 'refund':
      // A positive refund row gives back what a refund that failed (or expired unsigned) had taken.
      return row.amount.startsWith('-') || row.amount === '0' ? html`Refund` : html`Refund failed: given back to the credit`;
  }
}

export function subscriptionPage(input: {
  root: string;
  viewer: Viewer;
  store: StoreContext;
  subscription: SubscriptionRow;
  plan: PlanRow;
  ledger: readonly LedgerRow[];
  payments: readonly ListedPayment[];
  /** The portal's link just made or re-issued (shown this once: Kassa keeps only its fingerprint), else null. */
  portalUrl: string | null;
  checkoutUrl: string | null;
  creditForm?: SubscriptionFormState;
  cancelProblems?: Record<string, string>;
  notice?: string | null;
}): string {
  const { root, store, subscription: s, plan } = input;
  const paths = dashboardPaths(root).store(store.id);
  const glossary = paths.glossary();
  const owner = can(store.role, 'subscriptions.manage');
  const ended = s.status === 'expired' || s.status === 'cancelled';
  const cp = input.creditForm?.problems ?? {};
  const cv = input.creditForm?.values ?? {};
  const xp = input.cancelProblems ?? {};
  const history = input.ledger.length
    ? html`<div class="table-wrap" tabindex="0"><table id="subscription-history"><caption class="muted">Oldest first</caption>
<thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Change</th><th scope="col">${term(glossary, 'subscription_credit', 'Credit after')}</th></tr></thead>
<tbody>${input.ledger.map(
        (
          row,
        ) => html`<tr><td>${dateTime(row.created_at)}</td><td>${ledgerWords(row, (id) => paths.payment(id))}${row.note && row.kind !== 'charge' ? html`<br><span class="muted">${row.note}</span>` : ''}</td>
<td class="num">${row.amount.startsWith('-') ? '−' : '+'}${amount(row.amount.replace(/^-/, ''), row.currency)}</td><td class="num">${amount(row.balance_after, row.currency)}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p id="no-history">Nothing yet: the history begins with the first payment, charge or credit.</p>`;
  const payments = input.payments.length
    ? html`<div class="table-wrap" tabindex="0"><table id="subscription-payments"><caption class="muted">Newest first</caption>
<thead><tr><th scope="col">Payment</th><th scope="col">Status</th><th scope="col">Amount</th><th scope="col">Created</th></tr></thead>
<tbody>${input.payments.map(
        (p) =>
          html`<tr><td><a href="${paths.payment(p.id)}">${p.description ?? 'Payment'}</a></td><td>${statusLabel(p.status)}</td><td class="num">${amount(p.amount, p.currency)}</td><td>${dateTime(p.created_at)}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p id="no-subscription-payments">No payment yet.</p>`;
  const actions =
    owner && !ended
      ? html`<section class="card" aria-labelledby="credit-heading"><h2 id="credit-heading">Add credit</h2>
<p class="muted">Money the customer paid you another way, or a goodwill gesture, in ${shownCoinName(plan.currency)}. It is written in the history with your note, and pays the next periods.</p>
<form method="post" action="${paths.subscriptionCredit(s.id)}" id="add-credit">
${problemFor(cp, 'form')}
<label for="amount">Amount in ${shownCoinName(plan.currency)}</label>
<input id="amount" name="amount" type="text" inputmode="decimal" maxlength="40" autocomplete="off" required value="${cv.amount ?? ''}"${describedBy(cp, 'amount')}>
${problemFor(cp, 'amount')}
<label for="note">Why (kept in the history and the audit log)</label>
<input id="note" name="note" type="text" maxlength="500" autocomplete="off" required value="${cv.note ?? ''}"${describedBy(cp, 'note')}>
${problemFor(cp, 'note')}
<button type="submit">Add the credit</button>
</form></section>
<section class="card" aria-labelledby="cancel-heading"><h2 id="cancel-heading">Cancel</h2>
<form method="post" action="${paths.cancelSubscription(s.id)}" id="cancel-subscription" data-confirm="Cancel this subscription?">
${problemFor(xp, 'form')}
<fieldset${describedBy(xp, 'when')}><legend>When</legend>
<label class="check" for="when-period-end"><input type="radio" id="when-period-end" name="when" value="period_end"${s.cancel_at_period_end ? raw(' disabled') : raw(' checked')}> When the current period ends (${dateTime(s.current_period_end)}): nothing more is charged</label>
<label class="check" for="when-now"><input type="radio" id="when-now" name="when" value="now"${s.cancel_at_period_end ? raw(' checked') : ''}> Now</label>
</fieldset>
${problemFor(xp, 'when')}
<button type="submit" class="secondary">Cancel the subscription</button>
</form></section>`
      : '';
  const body = html`<h1>Subscription of ${s.customer_reference}</h1>
${sectionNav(root, store, 'subscriptions')}
${input.notice ? html`<p class="success" role="status">${input.notice}</p>` : ''}
${actions ? '' : problemFor(xp, 'form')}
<section class="card" aria-labelledby="summary-heading"><h2 id="summary-heading">Where it stands</h2>
<dl class="link-terms">
<dt>${term(glossary, 'subscription_status', 'Status')}</dt><dd id="subscription-status">${STATUS_WORDS[s.status]}</dd>
<dt>Period</dt><dd id="subscription-period">${periodWords(s)}</dd>
<dt>Plan</dt><dd>${plan.name} · ${amount(plan.amount, plan.currency)} ${everyWords(plan)}${plan.archived_at ? ' (archived)' : ''}</dd>
<dt>${term(glossary, 'subscription_credit')}</dt><dd>${amount(s.credit, plan.currency, 'subscription-credit')}</dd>
<dt>Customer</dt><dd>${s.customer_reference}${s.customer_email ? html`<br>${s.customer_email}` : ''}${s.customer_telegram_user_id ? html`<br>Telegram user ${s.customer_telegram_user_id}` : ''}</dd>
<dt>Started</dt><dd>${dateTime(s.created_at)}</dd>
${s.status === 'past_due' && input.checkoutUrl && s.open_payment_id ? html`<dt>To pay now</dt><dd><a href="${paths.payment(s.open_payment_id)}">The open payment</a> · <a href="${input.checkoutUrl}">its checkout</a></dd>` : ''}
</dl></section>
<section class="card" aria-labelledby="portal-heading"><h2 id="portal-heading">The customer’s portal</h2>
${
  input.portalUrl
    ? html`<div class="share">
<label for="portal-url">Send the customer this link: they see their subscription and pay there. Keep it private, as a password. It is shown this once: Kassa keeps only a fingerprint of it.</label>
<input id="portal-url" type="text" readonly class="mono" value="${input.portalUrl}">
<div><button type="button" data-copy="portal-url" hidden>Copy the link</button> <span id="portal-url-copied" role="status"></span></div>
</div>`
    : html`<p id="portal-kept-once">The customer sees their subscription and pays at a private link, shown once when the subscription was made. Kassa keeps only a fingerprint of it, so it cannot show it again. If the customer lost it, or it leaked, give a new one: the old one stops working at once.</p>`
}
${
  owner
    ? html`<form method="post" action="${paths.reissuePortal(s.id)}" id="reissue-portal" data-confirm="Give a new link? The customer's current link stops working at once.">
<button type="submit" class="secondary">${input.portalUrl ? 'Give another new link' : 'Give a new link'}</button>
</form>`
    : ''
}</section>
${actions}
<section class="card" aria-labelledby="history-heading"><h2 id="history-heading">History</h2>${history}</section>
<section class="card" aria-labelledby="sub-payments-heading"><h2 id="sub-payments-heading">Its payments</h2>${payments}</section>
<p><a href="${paths.subscriptions()}">All subscriptions</a></p>`;
  return shell({ root, title: 'Subscription', body, viewer: input.viewer, store, current: 'subscriptions', styles: styles(root) });
}
