// The Payment links pages (issue 30): ask a customer for money without code. The list of the store's
// links with the forms that make a link or a one-off payment (owners); a link's page (its URL to copy,
// its QR code, its terms, its payments; switching it off); and a one-off payment's page to share.
// QR codes are the checkout's own (checkout/walletLinks.ts qrSvg: inline SVG, presentation attributes only).
import { html, raw, type Html } from '../web/html.ts';
import { linkState, type LinkState, type PaymentLinkRow } from '../paymentLinks/links.ts';
import { dateTime, describedBy, problemFor, shell, statusLabel, type StoreContext, type Viewer } from './pages.ts';
import { dashboardPaths } from './paths.ts';
import { can } from './policy.ts';
import type { ListedPayment } from './payments.ts';
import { LINK_EXPIRY_LABELS, type LinkExpiry, PAYMENT_EXPIRY_LABELS, type PaymentExpiry } from './paymentLinks.ts';
import { dashboardAsset } from './static.ts';
import { shownCoinName, shownTicker } from '../money.ts';

/** What the notice after a redirect says (`?notice=`). */
export const LINK_NOTICES = {
  link_created: 'Link made. Share it, or its QR code: each customer who opens it gets a payment of their own.',
  link_deactivated: 'Link switched off: it makes no more payments, and its unpaid payments expired now (money sent before counts; money sent after does not).',
} as const;
export type LinkNotice = keyof typeof LINK_NOTICES;

const STATE_TEXT: Record<LinkState, string> = {
  open: 'active',
  deactivated: 'switched off',
  expired: 'expired',
  used_up: 'used up',
};

/** A form as posted back with its problems (field → sentence). */
export interface LinkFormState {
  values: Record<string, string>;
  problems: Record<string, string>;
}

const styles = (root: string) => [{ href: dashboardAsset(root, 'links.css'), id: 'links-style' }];

const priceOf = (link: Pick<PaymentLinkRow, 'amount' | 'min_amount' | 'max_amount' | 'currency'>): string =>
  link.amount !== null
    ? `${link.amount} ${shownTicker(link.currency)}`
    : link.min_amount !== null && link.max_amount !== null
      ? `${link.min_amount} to ${link.max_amount} ${shownTicker(link.currency)}, typed by the customer`
      : link.min_amount !== null
        ? `from ${link.min_amount} ${shownTicker(link.currency)}, typed by the customer`
        : link.max_amount !== null
          ? `up to ${link.max_amount} ${shownTicker(link.currency)}, typed by the customer`
          : `typed by the customer, in ${shownTicker(link.currency)}`;

function currencySelect(id: string, currencies: readonly string[], chosen: string | undefined, problems: Record<string, string>): Html {
  return html`<label for="${id}">Currency</label>
<select id="${id}" name="currency"${describedBy(problems, 'currency')}>${currencies.map(
    (c) => html`<option value="${c}"${c === (chosen ?? currencies[0]) ? raw(' selected') : ''}>${shownCoinName(c)}</option>`,
  )}</select>
${problemFor(problems, 'currency')}`;
}

function options<K extends string>(labels: Record<K, string>, chosen: string | undefined): Html[] {
  return (Object.keys(labels) as K[]).map((value) => html`<option value="${value}"${value === chosen ? raw(' selected') : ''}>${labels[value]}</option>`);
}

/** A field's problem, shown only under the form that was posted. */
const scoped = (form: LinkFormState | undefined) => form?.problems ?? {};

export function linksPage(input: {
  root: string;
  viewer: Viewer;
  store: StoreContext;
  links: readonly PaymentLinkRow[];
  currencies: readonly string[];
  now: Date;
  linkForm?: LinkFormState;
  paymentForm?: LinkFormState;
  notice?: string | null;
}): string {
  const { root, store, now } = input;
  const paths = dashboardPaths(root).store(store.id);
  const owner = can(store.role, 'links.manage');
  const lp = scoped(input.linkForm);
  const lv = input.linkForm?.values ?? {};
  const pp = scoped(input.paymentForm);
  const pv = input.paymentForm?.values ?? {};
  const forms = owner
    ? html`<section class="card" aria-labelledby="new-link-heading"><h2 id="new-link-heading">Make a payment link</h2>
<p class="muted">One link for many customers (a menu item, a donation, an invoice sent to several people): each visit makes a payment of its own at that moment's price.</p>
<form method="post" action="${paths.newLink()}" id="new-link">
${problemFor(lp, 'form')}
<label for="link-amount">Price (leave empty to let the customer type it)</label>
<input id="link-amount" name="amount" type="text" inputmode="decimal" autocomplete="off" maxlength="40" value="${lv.amount ?? ''}"${describedBy(lp, 'amount')}>
${problemFor(lp, 'amount')}
${currencySelect('link-currency', input.currencies, lv.currency, lp)}
<label for="link-description">What it is for (the customer sees it)</label>
<input id="link-description" name="description" type="text" maxlength="512" autocomplete="off" value="${lv.description ?? ''}"${describedBy(lp, 'description')}>
${problemFor(lp, 'description')}
<label for="link-max-payments">Stop after this many payments (leave empty for no limit)</label>
<input id="link-max-payments" name="maxPayments" type="number" min="1" max="1000000" step="1" inputmode="numeric" value="${lv.maxPayments ?? ''}"${describedBy(lp, 'maxPayments')}>
${problemFor(lp, 'maxPayments')}
<label for="link-expires">Expires</label>
<select id="link-expires" name="expires"${describedBy(lp, 'expires')}>${options<LinkExpiry>(LINK_EXPIRY_LABELS, lv.expires ?? 'never')}</select>
${problemFor(lp, 'expires')}
<button type="submit">Make the link</button>
</form></section>
<section class="card" aria-labelledby="new-payment-heading"><h2 id="new-payment-heading">Ask one customer for a payment</h2>
<p class="muted">A single payment for one customer: a link and a QR code to send them, payable once.</p>
<form method="post" action="${paths.newPayment()}" id="new-payment">
${problemFor(pp, 'form')}
<label for="payment-amount">Amount</label>
<input id="payment-amount" name="amount" type="text" inputmode="decimal" autocomplete="off" maxlength="40" required value="${pv.amount ?? ''}"${describedBy(pp, 'amount')}>
${problemFor(pp, 'amount')}
${currencySelect('payment-currency', input.currencies, pv.currency, pp)}
<label for="payment-description">What it is for (the customer sees it)</label>
<input id="payment-description" name="description" type="text" maxlength="512" autocomplete="off" value="${pv.description ?? ''}"${describedBy(pp, 'description')}>
${problemFor(pp, 'description')}
<label for="payment-expires">Payable until</label>
<select id="payment-expires" name="expires"${describedBy(pp, 'expires')}>${options<PaymentExpiry>(PAYMENT_EXPIRY_LABELS, pv.expires ?? '1h')}</select>
${problemFor(pp, 'expires')}
<button type="submit">Make the payment</button>
</form></section>`
    : html`<p class="card muted">Only the store's owners can make links and payments.</p>`;
  const list = input.links.length
    ? html`<div class="table-wrap" tabindex="0"><table id="links"><caption class="muted">Newest first</caption>
<thead><tr><th scope="col">Link</th><th scope="col">Price</th><th scope="col">State</th><th scope="col">Paid</th><th scope="col">Made</th></tr></thead>
<tbody>${input.links.map(
        (
          l,
        ) => html`<tr><td><a href="${paths.link(l.id)}">${l.description ?? l.id}</a></td><td>${priceOf(l)}</td><td class="link-state">${STATE_TEXT[linkState(l, now)]}</td>
<td class="num">${l.payments}${l.max_payments !== null ? ` of ${l.max_payments}` : ''} · ${l.amount_paid} ${shownTicker(l.currency)}</td><td class="num">${dateTime(l.created_at)}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p id="no-links">No link yet.</p>`;
  const body = html`<h1>Payment links</h1>
${input.notice ? html`<p class="success" role="status">${input.notice}</p>` : ''}
${forms}
<section class="card" aria-labelledby="links-heading"><h2 id="links-heading">Links</h2>${list}</section>`;
  return shell({ root, title: 'Payment links', body, viewer: input.viewer, store, current: 'links', styles: styles(root) });
}

/** A URL to share: the field to copy it from, its copy button, its QR code. */
function share(id: string, label: string, url: string, qr: string): Html {
  return html`<div class="share">
<label for="${id}">${label}</label>
<input id="${id}" type="text" readonly class="mono" value="${url}">
<div><button type="button" data-copy="${id}" hidden>Copy the link</button> <span id="${id}-copied" role="status"></span></div>
<div class="qr-box">${raw(qr)}</div>
<p><a href="${url}">Open it</a></p>
</div>`;
}

export function linkPage(input: {
  root: string;
  viewer: Viewer;
  store: StoreContext;
  link: PaymentLinkRow;
  url: string;
  qr: string;
  payments: readonly ListedPayment[];
  now: Date;
  notice?: string | null;
}): string {
  const { root, store, link, now } = input;
  const paths = dashboardPaths(root).store(store.id);
  const state = linkState(link, now);
  const rows = input.payments.map(
    (
      p,
    ) => html`<tr><td><a class="mono" href="${paths.payment(p.id)}">${p.id}</a></td><td>${statusLabel(p.status)}</td><td class="num">${p.amount} ${shownTicker(p.currency)}</td>
<td class="num">${p.coin_amount && p.coin_symbol ? `${p.coin_amount} ${p.coin_symbol}` : '—'}</td><td class="num">${dateTime(p.created_at)}</td></tr>`,
  );
  const deactivate =
    can(store.role, 'links.manage') && state === 'open'
      ? html`<form method="post" action="${paths.deactivateLink(link.id)}" data-confirm="Switch this link off? It makes no more payments, and its unpaid payments expire now: money sent after this does not pay them.">
<button type="submit" class="secondary">Switch the link off</button></form>`
      : '';
  const body = html`<h1>${link.description ?? 'Payment link'}</h1>
${input.notice ? html`<p class="success" role="status">${input.notice}</p>` : ''}
<section class="card" aria-labelledby="share-heading"><h2 id="share-heading">Share</h2>
${state === 'open' ? share('link-url', 'The link', input.url, input.qr) : html`<p>This link is ${STATE_TEXT[state]}: it makes no more payments.</p>`}
</section>
<section class="card" aria-labelledby="terms-heading"><h2 id="terms-heading">Terms</h2>
<dl class="link-terms">
<dt>State</dt><dd id="link-state">${STATE_TEXT[state]}</dd>
<dt>Price</dt><dd>${priceOf(link)}</dd>
<dt>Paid</dt><dd id="link-paid">${link.payments} payment${link.payments === 1 ? '' : 's'}, ${link.amount_paid} ${shownTicker(link.currency)}</dd>
<dt>Limit</dt><dd>${link.max_payments !== null ? `${link.max_payments} payments` : 'none'}</dd>
<dt>Expires</dt><dd>${link.expires_at ? dateTime(link.expires_at) : 'never'}</dd>
<dt>Made</dt><dd>${dateTime(link.created_at)} ${link.created_via === 'dashboard' ? 'in the dashboard' : 'through the API'}</dd>
</dl>
${deactivate}</section>
<section class="card" aria-labelledby="link-payments-heading"><h2 id="link-payments-heading">Its payments</h2>
${
  rows.length
    ? html`<div class="table-wrap" tabindex="0"><table id="link-payments"><caption class="muted">Every payment its visits made, newest first</caption>
<thead><tr><th scope="col">Payment</th><th scope="col">Status</th><th scope="col">Amount</th><th scope="col">Coin amount</th><th scope="col">Created</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
    : html`<p id="no-link-payments">No payment yet: one is made each time a customer opens the link.</p>`
}</section>
<p><a href="${paths.links()}">All payment links</a></p>`;
  return shell({ root, title: 'Payment link', body, viewer: input.viewer, store, current: 'links', styles: styles(root) });
}

export function paymentSharePage(input: {
  root: string;
  viewer: Viewer;
  store: StoreContext;
  payment: { id: string; amount: string; currency: string; description: string | null; status: string; expiresAt: Date };
  url: string;
  qr: string;
}): string {
  const { root, store, payment } = input;
  const paths = dashboardPaths(root).store(store.id);
  const open = payment.status === 'created' || payment.status === 'pending';
  const body = html`<h1>Payment of ${payment.amount} ${shownTicker(payment.currency)}</h1>
<section class="card" aria-labelledby="share-heading"><h2 id="share-heading">Send it to the customer</h2>
${payment.description ? html`<p>${payment.description}</p>` : ''}
${open ? share('payment-url', 'The payment’s link', input.url, input.qr) : html`<p>This payment is ${payment.status}: there is nothing to share.</p>`}
<p class="muted">Payable until ${dateTime(payment.expiresAt)}.</p>
<p><a href="${paths.payment(payment.id)}">Follow the payment</a></p>
</section>`;
  return shell({ root, title: 'Payment to share', body, viewer: input.viewer, store, current: 'links', styles: styles(root) });
}
