// The dashboard's pages, rendered on the server (they work without JavaScript): the layout (shell)
// and its helpers, sign-in, an invitation, the store chooser, the payments list, the team, the audit
// log, and the message pages (403, 404, 429, 500). A payment's page is paymentPage.ts; Money and
// Webhooks are moneyPage.ts and webhooksPage.ts. Every value is escaped by the `html` tag.
import { shownCoinName } from '../money.ts';
import { html, raw, type Html } from '../web/html.ts';
import { pageDocument } from '../web/page.ts';
import { dashboardPaths } from './paths.ts';
import { ANOMALIES } from '../payments/anomalies.ts';
import { PAYMENT_STATUSES } from '../payments/transitions.ts';
import { saleRefunded } from '../payments/view.ts';
import type { AuditRow } from './audit.ts';
import type { ListedPayment, PaymentFilters } from './payments.ts';
import { TOKEN_NAME_MAX, type TokenListing } from '../auth/tokens.ts';
import { SCOPE_LABELS, TOKEN_SCOPES, type TokenScope } from '../auth/scopes.ts';
import { TOKEN_LIFETIMES } from './tokens.ts';
import type { InvitationRow, InvitationTaker, OpenInvitation } from './invitations.ts';
import type { Membership, MemberRow } from './memberships.ts';
import type { Role } from './roles.ts';
import { PASSWORD_MIN_LENGTH } from './passwords.ts';
import { dashboardAsset } from './static.ts';
import { can } from './policy.ts';
import { ANOMALY_WORDS, amount, auditWords, term } from './words.ts';

export interface StoreContext {
  id: string;
  name: string;
  role: Role;
}

export interface Viewer {
  email: string;
  memberships: readonly Membership[];
}

interface Shell {
  /** The dashboard's root path, e.g. "/dashboard". */
  root: string;
  title: string;
  body: Html;
  viewer?: Viewer | null;
  store?: StoreContext | null;
  current?: 'home' | 'payments' | 'links' | 'subscriptions' | 'money' | 'unmatched' | 'webhooks' | 'notifications' | 'tokens' | 'team' | 'audit' | 'settings';
  live?: boolean;
  /** More stylesheets of this origin (a page's own, after dashboard.css). */
  styles?: readonly { href: string; id: string }[];
  /** Scripts of the page beside dashboard.js (passkeys.js: the sign-in page and the Passkeys page; TON Connect's: a treasury refund to sign). */
  scripts?: readonly ('passkeys.js' | 'tonconnect-ui.js' | 'walletConnect.js' | 'treasury.js' | 'refundFees.js')[];
  /** This response's CSP style nonce: TON Connect's UI writes its styles into the <style id="_goober"> it finds. */
  styleNonce?: string;
}

export const dateTime = (date: Date): string => `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** An audit entry's detail as plain "name: value" pairs (nested names joined by a dot, lists by commas): never JSON. */
function auditDetail(detail: Readonly<Record<string, unknown>>): string {
  const pairs: string[] = [];
  const walk = (prefix: string, value: unknown): void => {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [key, inner] of Object.entries(value)) walk(prefix ? `${prefix}.${key}` : key, inner);
    } else if (Array.isArray(value)) {
      pairs.push(`${prefix}: ${value.map((item) => (item !== null && typeof item === 'object' ? Object.values(item).join(' ') : String(item))).join(', ')}`);
    } else {
      pairs.push(`${prefix}: ${value === null ? 'none' : String(value)}`);
    }
  };
  walk('', detail);
  return pairs.length ? pairs.join('; ') : '—';
}

/**
 * The dashboard's referrer policy: same-origin, not no-referrer (under no-referrer a browser sends
 * `Origin: null` with a form, which the same-origin check would refuse; other sites get none).
 */
export const DASHBOARD_REFERRER = 'same-origin';

export function shell({ root, title, body, viewer, store, current, styles, scripts = [], styleNonce }: Shell): string {
  const paths = dashboardPaths(root);
  const at = store ? paths.store(store.id) : null;
  const link = (href: string, label: string, name: Shell['current']) =>
    html`<li><a href="${href}"${current === name ? raw(' aria-current="page"') : ''}>${label}</a></li>`;
  const nav =
    store && at
      ? html`<nav aria-label="Store"><ul>
${link(at.home(), 'Home', 'home')}
${link(at.payments(), 'Payments', 'payments')}
${link(at.links(), 'Payment links', 'links')}
${link(at.subscriptions(), 'Subscriptions', 'subscriptions')}
${link(at.money(), 'Money', 'money')}
${link(at.unmatched(), 'Unmatched money', 'unmatched')}
${link(at.webhooks(), 'Webhooks', 'webhooks')}
${link(at.notifications(), 'Notifications', 'notifications')}
${can(store.role, 'tokens.manage') ? link(at.tokens(), 'API tokens', 'tokens') : ''}
${can(store.role, 'team.manage') ? link(at.team(), 'Team', 'team') : ''}
${can(store.role, 'audit.read') ? link(at.audit(), 'Audit log', 'audit') : ''}
${link(at.settings(), 'Settings', 'settings')}
${viewer && viewer.memberships.length > 1 ? html`<li><a href="${paths.home}">Stores</a></li>` : ''}
${viewer?.memberships.some((m) => can(m.role, 'store.create')) ? html`<li><a href="${paths.newStore()}">New store</a></li>` : ''}
</ul></nav>`
      : '';
  const who = viewer
    ? html`<div class="who"><span>${viewer.email}${store ? html` · ${store.name} (${store.role})` : ''}</span>
<a href="${paths.passwordPage()}">Password</a>
<a href="${paths.passkeys()}">Passkeys</a>
<form method="post" action="${paths.signOut()}"><button class="quiet" type="submit">Sign out</button></form>
<form method="post" action="${paths.signOutEverywhere()}"><button class="quiet" type="submit">Sign out everywhere</button></form></div>`
    : '';
  return pageDocument({
    lang: 'en',
    title: `${title} · Kassa dashboard`,
    referrer: DASHBOARD_REFERRER,
    stylesheets: [dashboardAsset(root, 'dashboard.css'), ...(styles ?? [])],
    // TON Connect's UI writes its styles into the <style id="_goober"> it finds (a treasury refund to sign).
    ...(styleNonce ? { nonceStyles: { nonce: styleNonce, styles: [{ id: '_goober', css: html` ` }] } } : {}),
    scripts: [dashboardAsset(root, 'dashboard.js'), ...scripts.map((name) => dashboardAsset(root, name))],
    // On a phone (below 600 px) dashboard.js folds the navigation and the account's links behind the
    // menu button (a disclosure: aria-expanded, Escape closes); without JavaScript they stay shown.
    body: html`<header class="top"><a class="brand" href="${paths.home}">Kassa dashboard</a>${
      nav || who
        ? html`<button type="button" class="menu-button quiet" aria-expanded="true" aria-controls="menu" hidden>Menu</button>
<div class="menu" id="menu">${nav}${who}</div>`
        : ''
    }</header>
<main>
${body}
</main>`,
  });
}

/**
 * An id (a payment's, a token's) as a phone shows it: shortened by the stylesheet below 600 px (the
 * whole id stays in the page, for reading aloud, searching and selecting) with a copy button that
 * dashboard.js shows where the clipboard is available.
 */
export function copyableId(id: string, what: string, href?: string): Html {
  const text = href ? html`<a href="${href}" class="mono">${id}</a>` : html`<span class="mono">${id}</span>`;
  return html`<span class="copyable">${text}<button type="button" class="copy quiet" data-copy-text="${id}" aria-label="Copy the ${what}" hidden>Copy</button></span>`;
}

export const problemFor = (problems: Record<string, string>, field: string): Html | '' =>
  problems[field] ? html`<p class="problem" id="${field}-problem">${problems[field]}</p>` : '';
export const describedBy = (problems: Record<string, string>, field: string): Html | '' =>
  problems[field] ? html` aria-describedby="${field}-problem" aria-invalid="true"` : '';

export function signInPage(input: { root: string; email?: string; problem?: string; next?: string; notice?: string; canEmail?: boolean }): string {
  const paths = dashboardPaths(input.root);
  const body = html`<div class="card narrow">
<h1>Sign in</h1>
${input.notice ? html`<p class="success" role="status">${input.notice}</p>` : ''}
${input.problem ? html`<p class="problem" role="alert" id="sign-in-problem">${input.problem}</p>` : ''}
<form method="post" action="${paths.signIn()}">
${input.next ? html`<input type="hidden" name="next" value="${input.next}">` : ''}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${input.email ?? ''}"${input.problem ? raw(' aria-describedby="sign-in-problem"') : ''}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
${input.canEmail ? html`<p><a href="${paths.forgotPassword()}" id="forgot-password">Forgot your password?</a></p>` : ''}
<form method="post" action="${paths.signInPasskey()}" data-passkey="sign-in" data-options="${paths.signInPasskeyOptions()}" class="passkey">
${input.next ? html`<input type="hidden" name="next" value="${input.next}">` : ''}
<input type="hidden" name="credential" value="">
<p class="muted">Or, with a passkey added to your account (this needs JavaScript):</p>
<button type="submit" class="quiet" id="passkey-sign-in">Sign in with a passkey</button>
<p class="problem" role="alert" data-passkey-problem hidden></p>
</form>
</div>`;
  return shell({ root: input.root, title: 'Sign in', body, scripts: ['passkeys.js'] });
}

/** Forgotten password: the address to send a reset link to; `sent`: the same answer for every address. */
export function forgotPasswordPage(input: { root: string; sent?: boolean; problem?: string }): string {
  const paths = dashboardPaths(input.root);
  const body = html`<div class="card narrow">
<h1>Forgot your password?</h1>
${
  input.sent
    ? html`<p class="success" role="status" id="reset-sent">If an account has that address, a link to set a new password is on its way. It works once, for one hour. Nothing came? Check the spam folder, or ask again in a minute.</p>`
    : ''
}
${input.problem ? html`<p class="problem" role="alert" id="forgot-problem">${input.problem}</p>` : ''}
<form method="post" action="${paths.forgotPassword()}">
<label for="email">Your account's email</label>
<input id="email" name="email" type="email" autocomplete="username" required${input.problem ? raw(' aria-describedby="forgot-problem"') : ''}>
<button type="submit">Email me a link</button>
</form>
<p><a href="${paths.signIn()}">Back to sign in</a></p>
</div>`;
  return shell({ root: input.root, title: 'Forgot your password?', body });
}

export function invitationPage(input: {
  root: string;
  token: string;
  invitation: OpenInvitation;
  /** Who may take it (invitations.ts invitationTaker), given who is signed in. */
  taker: InvitationTaker;
  problems?: Record<string, string>;
}): string {
  const { invitation, root } = input;
  const problems = input.problems ?? {};
  const paths = dashboardPaths(root);
  const here = paths.invitation(input.token);
  const newPassword = html`<input type="hidden" name="username" value="${invitation.email}" autocomplete="username">
<label for="password">Choose a${invitation.resets_password ? ' new' : ''} password</label>
<p class="muted" id="password-hint">At least ${PASSWORD_MIN_LENGTH} characters.</p>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" aria-describedby="password-hint${problems.password ? ' password-problem' : ''}"${problems.password ? raw(' aria-invalid="true"') : ''}>
${problemFor(problems, 'password')}
<label for="confirm">Repeat the password</label>
<input id="confirm" name="confirm" type="password" autocomplete="new-password" required${describedBy(problems, 'confirm')}>
${problemFor(problems, 'confirm')}`;
  const action = {
    set_password: html`<form method="post" action="${here}">${newPassword}
<button type="submit">${invitation.resets_password ? 'Set the new password and sign in' : 'Set password and sign in'}</button></form>`,
    join: html`<form method="post" action="${here}"><button type="submit">Join ${invitation.store_name}</button></form>`,
    sign_in_first: html`<p>You already have a dashboard account. Sign in as <strong>${invitation.email}</strong>, then accept here.</p>
<p><a href="${paths.signIn(`next=${encodeURIComponent(here)}`)}">Sign in to accept</a></p>`,
    other_account: html`<p>You are signed in with another email. Sign out, then sign in as <strong>${invitation.email}</strong> to accept.</p>`,
  }[input.taker];
  const title = invitation.resets_password ? 'Reset your password' : `Join ${invitation.store_name}`;
  const body = html`<div class="card narrow">
<h1>${title}</h1>
${
  invitation.resets_password
    ? html`<p>An owner of ${invitation.store_name} made this link to reset the password of <strong>${invitation.email}</strong>. Setting a new one signs you out everywhere else.</p>`
    : html`<p>You are invited as <strong>${invitation.role}</strong> with the email <strong>${invitation.email}</strong>.</p>`
}
${problems.form ? html`<p class="problem" role="alert">${problems.form}</p>` : ''}
${action}
</div>`;
  return shell({ root, title, body });
}

export function messagePage(input: {
  root: string;
  title: string;
  text: string;
  viewer?: Viewer | null;
  store?: StoreContext | null;
  signIn?: boolean;
}): string {
  const paths = dashboardPaths(input.root);
  const body = html`<div class="card narrow"><h1>${input.title}</h1><p>${input.text}</p>
${input.signIn ? html`<p><a href="${paths.signIn()}">Sign in</a></p>` : html`<p><a href="${paths.home}">Back to the dashboard</a></p>`}</div>`;
  return shell({ root: input.root, title: input.title, body, viewer: input.viewer ?? null, store: input.store ?? null });
}

export function storesPage(input: { root: string; viewer: Viewer }): string {
  const paths = dashboardPaths(input.root);
  const body = input.viewer.memberships.length
    ? html`<h1>Your stores</h1><ul>${input.viewer.memberships.map(
        (m) => html`<li><a href="${paths.store(m.storeId).home()}">${m.storeName}</a> <span class="muted">(${m.role})</span></li>`,
      )}</ul>${input.viewer.memberships.some((m) => can(m.role, 'store.create')) ? html`<p><a href="${paths.newStore()}">Make another store</a></p>` : ''}`
    : html`<h1>No store yet</h1><p>Your account is not a member of any store. Ask an owner for an invitation.</p>`;
  return shell({ root: input.root, title: 'Stores', body, viewer: input.viewer });
}

export const statusLabel = (status: string): Html => html`<span class="status status-${status}">${status}</span>`;

/** A completed payment's status with what of its sale was refunded beside it ("completed · refunded in part"): the API's status stays the seed's. */
export const saleStatusLabel = (payment: Parameters<typeof saleRefunded>[0]): Html => {
  const refunded = saleRefunded(payment);
  return refunded === 'none'
    ? statusLabel(payment.status)
    : html`${statusLabel(payment.status)} <span class="status status-refunded" data-refunded="${refunded}">refunded ${refunded === 'full' ? 'in full' : 'in part'}</span>`;
};

function pageQuery(filters: PaymentFilters, after?: string): string {
  const params = new URLSearchParams();
  for (const key of ['status', 'anomaly', 'coin', 'from', 'to', 'q'] as const) if (filters[key]) params.set(key, filters[key]!);
  if (after) params.set('after', after);
  return params.toString();
}

export function paymentsPage(input: {
  root: string;
  viewer: Viewer;
  store: StoreContext;
  filters: PaymentFilters;
  coins: readonly string[];
  rows: readonly ListedPayment[];
  hasMore: boolean;
  /** The store's fingerprint when the page was made (the live stream tells of changes after it). */
  since: string;
}): string {
  const { root, store, filters } = input;
  const at = dashboardPaths(root).store(store.id);
  // The filters beyond the search fold away on a phone unless one is on (dashboard.js opens them on a wide screen).
  const folded = !(filters.status || filters.anomaly || filters.coin || filters.from || filters.to);
  const option = (value: string, label: string, selected: boolean) => html`<option value="${value}"${selected ? raw(' selected') : ''}>${label}</option>`;
  const rows = input.rows.map(
    (p) => html`<tr>
<td>${copyableId(p.id, 'payment id', at.payment(p.id))}</td>
<td>${saleStatusLabel(p)}</td>
<td class="description">${p.description ?? '—'}</td>
<td class="num">${amount(p.amount, p.currency)}</td>
<td class="num">${p.coin_amount && p.coin_symbol ? amount(p.coin_amount, p.coin_symbol) : '—'}</td>
<td>${p.order_id ?? '—'}</td>
<td class="num">${dateTime(p.created_at)}</td>
</tr>`,
  );
  const last = input.rows.at(-1);
  const body = html`<h1>Payments</h1>
<form class="card filters" method="get" action="${at.payments()}" role="search" aria-label="Find payments">
<div class="search"><label for="q">Search</label><input id="q" name="q" type="search" value="${filters.q ?? ''}" placeholder="Payment id, order id, description, address, tx hash"></div>
<details class="more-filters"${folded ? '' : raw(' open')} data-open-wide><summary>Filters${folded ? '' : ' (on)'}</summary><div class="filter-fields">
<div><label for="status">Status</label><select id="status" name="status">${option('', 'Any', !filters.status)}${PAYMENT_STATUSES.map((s) => option(s, s, filters.status === s))}</select></div>
<div><label for="anomaly">Something unusual</label><select id="anomaly" name="anomaly">${option('', 'Any', !filters.anomaly)}${ANOMALIES.map((a) => option(a, ANOMALY_WORDS[a], filters.anomaly === a))}</select></div>
<div><label for="coin">Coin</label><select id="coin" name="coin">${option('', 'Any', !filters.coin)}${input.coins.map((c) => option(c, shownCoinName(c), filters.coin === c))}</select></div>
<div><label for="from">Created from</label><input id="from" name="from" type="date" value="${filters.from ?? ''}"></div>
<div><label for="to">Created until</label><input id="to" name="to" type="date" value="${filters.to ?? ''}"></div>
</div></details>
<div class="apply"><button type="submit">Apply</button></div>
</form>
<div id="payments" data-live="${at.paymentEvents(input.since)}" aria-live="polite">
${
  input.rows.length === 0
    ? html`<p class="card">No payment matches.</p>`
    : html`<div class="table-wrap card" tabindex="0"><table>
<caption class="muted">Newest first</caption>
<thead><tr><th scope="col">Payment</th><th scope="col">Status</th><th scope="col">Description</th><th scope="col">Price</th><th scope="col">In the coin</th><th scope="col">Order id</th><th scope="col">Created</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`
}
</div>
<nav class="pager" aria-label="Pages">
<a href="${at.paymentsCsv(pageQuery(filters))}" download>Export CSV</a>
${filters.after ? html`<a href="${at.payments(pageQuery(filters))}">Newest</a>` : ''}
${input.hasMore && last ? html`<a href="${at.payments(pageQuery(filters, last.id))}">Older payments</a>` : ''}
</nav>`;
  return shell({ root, title: 'Payments', body, viewer: input.viewer, store, current: 'payments' });
}

export function auditPage(input: { root: string; viewer: Viewer; store: StoreContext; rows: readonly AuditRow[]; hasMore: boolean }): string {
  const at = dashboardPaths(input.root).store(input.store.id);
  const last = input.rows.at(-1);
  const body = html`<h1>Audit log</h1>
${
  input.rows.length
    ? html`<div class="table-wrap card" tabindex="0"><table id="audit"><caption class="muted">Newest first</caption>
<thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">${term(at.glossary(), 'audit_actions', 'What')}</th><th scope="col">Subject</th><th scope="col">Detail</th><th scope="col">From</th></tr></thead>
<tbody>${input.rows.map(
        (
          r,
        ) => html`<tr><td class="num">${dateTime(r.at)}</td><td>${r.actor}</td><td class="action" data-action="${r.action}"><span title="${r.action}">${auditWords(r.action)}</span></td><td class="mono">${r.subject ?? '—'}</td>
<td class="detail">${auditDetail(r.detail)}</td><td>${r.client_address ?? '—'}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p class="card">Nothing yet.</p>`
}
${input.hasMore && last ? html`<nav class="pager" aria-label="Pages"><a href="${at.audit(`before=${last.id}`)}">Older entries</a></nav>` : ''}`;
  return shell({ root: input.root, title: 'Audit log', body, viewer: input.viewer, store: input.store, current: 'audit' });
}

/** Why a link died before its expiry (dashboard_invitations.revoked_because), as the Team page says it. */
const REVOKED_BECAUSE: Record<string, string> = {
  superseded: 'a newer link replaced it',
  password_changed: 'the password changed',
  maker_left: 'its maker left or stopped owning the store',
  member_changed: "the person's role changed or they were removed",
  rights_changed: 'its maker may no longer give it',
  revoked_by_owner: 'revoked by an owner',
};

export function teamPage(input: {
  root: string;
  viewer: Viewer;
  store: StoreContext;
  members: readonly MemberRow[];
  invitations: readonly InvitationRow[];
  now: Date;
  created?: { url: string; email: string; resetsPassword?: boolean } | null;
  form?: { email?: string; role?: string; problems?: Record<string, string> };
  memberProblem?: string | null;
  notice?: string | null;
}): string {
  const at = dashboardPaths(input.root).store(input.store.id);
  const form = input.form ?? {};
  const problems = form.problems ?? {};
  const isOpen = (i: InvitationRow) => !i.accepted_at && !i.revoked_at && i.expires_at > input.now;
  const state = (i: InvitationRow) =>
    i.accepted_at
      ? `accepted ${dateTime(i.accepted_at)}`
      : i.revoked_at
        ? `revoked ${dateTime(i.revoked_at)} (${REVOKED_BECAUSE[i.revoked_because ?? ''] ?? i.revoked_because})`
        : i.expires_at <= input.now
          ? 'expired'
          : `open until ${dateTime(i.expires_at)}`;
  const body = html`<h1>Team</h1>
${input.notice ? html`<p class="success" role="status">${input.notice}</p>` : ''}
${
  input.created
    ? html`<div class="success" role="status"><p>${input.created.resetsPassword ? 'Password reset link' : 'Invitation'} for ${input.created.email} made. Send them this link (shown once, valid ${input.created.resetsPassword ? '1 hour' : '24 hours'}, single use; a newer link for them replaces it):</p><p class="mono" id="invite-link">${input.created.url}</p></div>`
    : ''
}
<section class="card" aria-labelledby="members-heading"><h2 id="members-heading">Members</h2>
${input.memberProblem ? html`<p class="problem" role="alert">${input.memberProblem}</p>` : ''}
<div class="table-wrap" tabindex="0"><table id="members"><thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Since</th><th scope="col">Change</th></tr></thead>
<tbody>${input.members.map(
    (m) => html`<tr><td>${m.email}</td><td class="member-role">${m.role}</td><td class="num">${dateTime(m.created_at)}</td>
<td><form method="post" action="${at.memberRole(m.user_id)}"><select name="role" aria-label="Role of ${m.email}"><option value="viewer"${m.role === 'viewer' ? raw(' selected') : ''}>viewer</option><option value="owner"${m.role === 'owner' ? raw(' selected') : ''}>owner</option></select>
<button class="quiet" type="submit" aria-label="Change the role of ${m.email}">Change</button></form>
<form method="post" action="${at.memberRemove(m.user_id)}" data-confirm="Remove ${m.email} from this store?"><button class="quiet" type="submit" aria-label="Remove ${m.email}">Remove</button></form>
<form method="post" action="${at.memberResetPassword(m.user_id)}" data-confirm="Make a link that resets the password of ${m.email}? Using it signs them out everywhere."><button class="quiet" type="submit" aria-label="Reset password of ${m.email}">Reset password</button></form></td></tr>`,
  )}</tbody></table></div></section>
<section class="card" aria-labelledby="invite-heading"><h2 id="invite-heading">Invite someone</h2>
<form method="post" action="${at.invitations()}">
<label for="invite-email">Email</label>
<input id="invite-email" name="email" type="email" required value="${form.email ?? ''}"${describedBy(problems, 'email')}>
${problemFor(problems, 'email')}
<label for="invite-role">Role</label>
<select id="invite-role" name="role"><option value="viewer"${form.role !== 'owner' ? raw(' selected') : ''}>viewer (read-only)</option><option value="owner"${form.role === 'owner' ? raw(' selected') : ''}>owner</option></select>
<button type="submit">Make an invitation link</button>
</form></section>
<section class="card" aria-labelledby="invitations-heading"><h2 id="invitations-heading">Invitations and reset links</h2>
<p class="muted">An open link works until it is used, expires or is revoked. It dies by itself when a newer link is made for the same person, when their role changes or they are removed, when its maker leaves the store or stops owning it, and a reset link when the person's password changes.</p>
${
  input.invitations.length
    ? html`<div class="table-wrap" tabindex="0"><table id="invitations"><thead><tr><th scope="col">Email</th><th scope="col">Link</th><th scope="col">Made by</th><th scope="col">Made</th><th scope="col">State</th><th scope="col">Action</th></tr></thead>
<tbody>${input.invitations.map(
        (
          i,
        ) => html`<tr><td>${i.email}</td><td>${i.resets_password ? 'password reset' : `invitation (${i.role})`}</td><td>${i.invited_by_email ?? 'Kassa’s command line'}</td><td class="num">${dateTime(i.created_at)}</td><td class="invitation-state">${state(i)}</td>
<td>${isOpen(i) ? html`<form method="post" action="${at.revokeInvitation(i.id)}" data-confirm="Revoke this link for ${i.email}?"><button class="quiet" type="submit" aria-label="Revoke the link for ${i.email}">Revoke</button></form>` : ''}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>None.</p>`
}</section>`;
  return shell({ root: input.root, title: 'Team', body, viewer: input.viewer, store: input.store, current: 'team' });
}

export function tokensPage(input: {
  root: string;
  viewer: Viewer;
  store: StoreContext;
  tokens: readonly TokenListing[];
  issued?: { token: string; jti: string; scope: TokenScope; name: string | null } | null;
  notice?: string | null;
  /** The issue form's problems by field (name, lifetime, scope). */
  problems?: Record<string, string>;
}): string {
  const at = dashboardPaths(input.root).store(input.store.id);
  const glossary = at.glossary();
  const problems = input.problems ?? {};
  const when = (iso: string) => dateTime(new Date(iso));
  const state = (t: TokenListing) => (t.revokedAt ? `revoked ${when(t.revokedAt)}` : t.state);
  const body = html`<h1>API tokens</h1>
${
  input.issued
    ? html`<div class="success" role="status"><p>Token ${input.issued.name ? html`“${input.issued.name}” ` : ''}issued (${SCOPE_LABELS[input.issued.scope]}); its ${term(glossary, 'token_id', 'token id')} is <span class="mono">${input.issued.jti}</span>. Copy it now: it is shown once and Kassa does not keep it.</p>
<label for="new-token">The token</label><input id="new-token" type="text" readonly class="mono" value="${input.issued.token}">
<button type="button" data-copy="new-token" hidden>Copy the token</button> <span id="new-token-copied" role="status"></span></div>`
    : ''
}
${input.notice ? html`<p class="success" role="status">${input.notice}</p>` : ''}
<section class="card" aria-labelledby="issue-heading"><h2 id="issue-heading">Issue a token</h2>
<form method="post" action="${at.tokens()}">
<label for="token-name">Name (what uses it, e.g. shop backend)</label>
<input id="token-name" name="name" type="text" maxlength="${TOKEN_NAME_MAX}" autocomplete="off"${describedBy(problems, 'name')}>
${problemFor(problems, 'name')}
<label for="lifetime">Expires</label>
<select id="lifetime" name="lifetime"${describedBy(problems, 'lifetime')}>${Object.entries(TOKEN_LIFETIMES).map(([value, l]) => html`<option value="${value}">${l.label}</option>`)}</select>
${problemFor(problems, 'lifetime')}
<label for="scope">May</label>
<select id="scope" name="scope"${describedBy(problems, 'scope')}>${TOKEN_SCOPES.map((scope) => html`<option value="${scope}">${SCOPE_LABELS[scope]}</option>`)}</select>
${problemFor(problems, 'scope')}
${problemFor(problems, 'form')}
<button type="submit">Issue a token</button>
</form></section>
<section class="card" aria-labelledby="tokens-heading"><h2 id="tokens-heading">Tokens</h2>
${
  input.tokens.length
    ? html`<div class="table-wrap" tabindex="0"><table id="tokens"><thead><tr><th scope="col">Name</th><th scope="col">${term(glossary, 'token_id')}</th><th scope="col">Issued</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">Scope</th><th scope="col">State</th><th scope="col">Action</th></tr></thead>
<tbody>${input.tokens.map(
        (
          t,
        ) => html`<tr><td class="token-name">${t.name ?? '—'}</td><td>${copyableId(t.jti, 'token id')}</td><td class="num">${when(t.issuedAt)}</td><td class="num">${t.expiresAt ? when(t.expiresAt) : 'never'}</td><td class="num">${t.lastUsedAt ? when(t.lastUsedAt) : 'never'}</td><td class="token-scope">${SCOPE_LABELS[t.scope]}</td><td class="token-state">${state(t)}</td>
<td>${t.revokedAt ? '—' : html`<form method="post" action="${at.revokeToken(t.jti)}" data-confirm="Revoke this token? Requests with it are refused at once."><button class="quiet" type="submit" aria-label="Revoke ${t.jti}">Revoke</button></form>`}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>None.</p>`
}</section>`;
  return shell({ root: input.root, title: 'API tokens', body, viewer: input.viewer, store: input.store, current: 'tokens' });
}
