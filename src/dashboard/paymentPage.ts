// A payment's page (issue 24): its summary, its timeline (created, method chosen, each transfer in,
// completed / expired / cancelled, each sweep and refund, with explorer links), its money per coin
// (deposit_money: received, counted, refunded, swept, fees, refundable), the books, the refund form
// with its server-side confirm step (the first post shows what is sent, the fee and what arrives;
// the second does it) for owners, and the webhook deliveries with redeliver.
import { html, raw, type Html } from '../web/html.ts';
import { explorerLinks } from '../checkout/facts.ts';
import type { RefundPreview } from './money.ts';
import type { PaymentPage } from './payments.ts';
import { dashboardPaths } from './paths.ts';
import { dateTime, describedBy, problemFor, shell, statusLabel, type StoreContext, type Viewer } from './pages.ts';
import { can } from './policy.ts';

const NOTICES = {
  refund_created: 'Refund planned: it is sent from the deposit wallet within a minute and confirmed on chain.',
  redelivery_queued: 'Webhook redelivery queued: it is signed afresh and sent now.',
} as const;
export type Notice = keyof typeof NOTICES;
export const isNotice = (value: unknown): value is Notice => typeof value === 'string' && Object.hasOwn(NOTICES, value);

function hashCell(network: PaymentPage['network'], hash: string | null): Html | string {
  if (!hash) return '—';
  const links = explorerLinks(network, hash);
  return html`<span class="mono">${hash}</span>${links.map((l) => html` <a href="${l.url}" rel="noopener noreferrer">${l.name}</a>`)}`;
}

export interface RefundFormState {
  coin?: string;
  amount?: string;
  address?: string;
  problems?: Record<string, string>;
}

export function paymentPage(input: {
  root: string;
  viewer: Viewer;
  store: StoreContext;
  page: PaymentPage;
  checkoutUrl: string;
  notice?: Notice | null;
  refund?: RefundFormState;
  /** The refund the owner is asked to confirm (the first post of the refund form). */
  preview?: RefundPreview | null;
  /** The confirmation's one-time key (a double-submitted confirmation plans one refund). */
  confirmKey?: string;
  actionProblem?: string | null;
}): string {
  const { root, store, page } = input;
  const p = page.payment;
  const at = dashboardPaths(root).store(store.id);
  const mayRefund = can(store.role, 'refund.create');
  const mayRedeliver = can(store.role, 'webhook.redeliver');
  const refund = input.refund ?? {};
  const problems = refund.problems ?? {};
  const facts = html`<dl class="facts">
<dt>Status</dt><dd>${statusLabel(p.status)}</dd>
<dt>Anomalies</dt><dd>${page.anomalies.length ? page.anomalies.join(', ') : 'none'}</dd>
<dt>Amount</dt><dd>${p.amount} ${p.currency}</dd>
<dt>Coin amount</dt><dd>${p.coin_amount && p.coin_symbol ? `${p.coin_amount} ${p.coin_symbol}` : '— (no method chosen yet)'}</dd>
<dt>Received (counted)</dt><dd>${p.coin_symbol ? `${page.received} ${p.coin_symbol}` : '—'}</dd>
<dt>Order id</dt><dd>${p.order_id ?? '—'}</dd>
<dt>Description</dt><dd>${p.description ?? '—'}</dd>
<dt>Deposit address</dt><dd class="mono">${p.address_friendly ?? '—'}</dd>
<dt>Created</dt><dd>${dateTime(p.created_at)}</dd>
<dt>Expires</dt><dd>${dateTime(p.expires_at)}</dd>
<dt>Paid</dt><dd>${p.paid_at ? dateTime(p.paid_at) : '—'}</dd>
<dt>Checkout</dt><dd><a href="${input.checkoutUrl}">${input.checkoutUrl}</a></dd>
<dt>Webhook URL</dt><dd class="mono">${p.webhook_url ?? '—'}</dd>
</dl>`;
  const incoming = page.transfers.length
    ? html`<div class="table-wrap" tabindex="0"><table id="transfers-in"><caption class="muted">Transfers in (the books, in chain order)</caption>
<thead><tr><th scope="col">When</th><th scope="col">Amount</th><th scope="col">Effect</th><th scope="col">From</th><th scope="col">Transaction</th></tr></thead>
<tbody>${page.transfers.map(
        (
          t,
        ) => html`<tr><td class="num">${dateTime(t.chain_time)}</td><td class="num">${t.amount ?? t.amount_base_units} ${t.coin_symbol ?? '(unknown token)'}</td>
<td>${t.effect.replace(/_/g, ' ')}</td><td class="mono">${t.sender ?? '—'}</td><td>${hashCell(page.network, t.hash)}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>No transfer has reached the deposit address.</p>`;
  const outgoing = page.outgoing.length
    ? html`<div class="table-wrap" tabindex="0"><table id="transfers-out"><caption class="muted">Transfers out (refunds and sweeps)</caption>
<thead><tr><th scope="col">Planned</th><th scope="col">Kind</th><th scope="col">Amount</th><th scope="col">Fee</th><th scope="col">To</th><th scope="col">State</th><th scope="col">Transaction</th></tr></thead>
<tbody>${page.outgoing.map(
        (o) => html`<tr class="out-${o.kind}"><td class="num">${dateTime(o.created_at)}</td><td>${o.kind}</td><td class="num">${o.amount} ${o.coin_symbol}</td>
<td class="num">${o.fee ?? '—'}</td><td class="mono">${o.to_address_given ?? o.to_address}</td><td class="state">${o.state}</td><td>${hashCell(page.network, o.transaction_hash)}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>Nothing has left the deposit wallet.</p>`;
  const held = page.money.filter((m) => m.held !== '0');
  const money = page.money.length
    ? html`<div class="table-wrap" tabindex="0"><table id="money"><caption class="muted">Per coin, from the books (deposit_money); fees are network fees in TON paid or set aside for receiving the coin and moving it out${
        held.length ? `; held for the open payment: ${held.map((m) => `${m.held} ${m.coin}`).join(', ')}` : ''
      }</caption>
<thead><tr><th scope="col">Coin</th><th scope="col">Received</th><th scope="col">Counted</th><th scope="col">Refunded</th><th scope="col">Swept</th><th scope="col">Fees (TON)</th><th scope="col">Refundable</th></tr></thead>
<tbody>${page.money.map(
        (m) =>
          html`<tr><th scope="row">${m.coin}</th><td class="num">${m.received}</td><td class="num">${m.counted}</td><td class="num">${m.refunded}</td><td class="num">${m.swept}</td><td class="num">${m.feesTon}</td><td class="num">${m.refundable}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>No money has reached the deposit.</p>`;
  const timeline = html`<ol id="timeline" class="timeline">${page.timeline.map(
    (e) =>
      html`<li class="event-${e.kind}"><time datetime="${e.at.toISOString()}">${dateTime(e.at)}</time> <span class="what">${e.text}</span>${
        e.hash ? html`<br><span class="tx">${hashCell(page.network, e.hash)}</span>` : ''
      }</li>`,
  )}</ol>`;
  const deliveries = page.deliveries.length
    ? html`<div class="table-wrap" tabindex="0"><table id="deliveries"><caption class="muted">Webhook deliveries, oldest first</caption>
<thead><tr><th scope="col">Created</th><th scope="col">Reason</th><th scope="col">Status</th><th scope="col">Attempts</th></tr></thead>
<tbody>${page.deliveries.map(
        (d) => html`<tr><td class="num">${dateTime(d.created_at)}</td><td>${d.reason}</td><td class="delivery-status">${d.status}</td>
<td>${d.attempts.length ? html`<ul>${d.attempts.map((a) => html`<li>#${a.attempt} ${dateTime(a.started_at)}: ${a.http_status ? `HTTP ${a.http_status}` : (a.error ?? 'no answer yet')}${a.duration_ms !== null ? `, ${a.duration_ms} ms` : ''}</li>`)}</ul>` : 'none yet'}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>No webhook delivery.</p>`;
  const redeliver =
    mayRedeliver && p.status === 'completed' && p.webhook_url
      ? html`<form method="post" action="${at.redeliver(p.id)}"><button type="submit">Redeliver the webhook</button></form>`
      : '';
  const refundable = page.refundable.length
    ? html`<ul id="refundable">${page.refundable.map((r) => html`<li>${r.amount} ${r.coin}</li>`)}</ul>`
    : html`<p id="refundable">Nothing is refundable.</p>`;
  const refundForm =
    mayRefund && page.refundable.length
      ? html`<form method="post" action="${at.refunds(p.id)}" aria-labelledby="refund-heading">
${problems.form ? html`<p class="problem" role="alert">${problems.form}</p>` : ''}
<label for="refund-coin">Coin</label>
<select id="refund-coin" name="coin">${page.refundable.map((r) => html`<option value="${r.coin}"${refund.coin === r.coin ? raw(' selected') : ''}>${r.coin} (up to ${r.amount})</option>`)}</select>
<label for="refund-amount">Amount</label>
<input id="refund-amount" name="amount" type="text" inputmode="decimal" required value="${refund.amount ?? ''}"${describedBy(problems, 'amount')}>
${problemFor(problems, 'amount')}
<label for="refund-address">To address</label>
<input id="refund-address" name="address" type="text" required spellcheck="false" autocomplete="off" value="${refund.address ?? ''}"${describedBy(problems, 'address')}>
${problemFor(problems, 'address')}
<p class="muted">The next step shows the network fee and what arrives at the address, and asks you to confirm. Nothing is sent before that.</p>
<button type="submit">Review the refund</button>
</form>`
      : '';
  const preview = input.preview;
  const confirm =
    mayRefund && preview
      ? html`<section class="card confirm" id="refund-confirm" aria-labelledby="confirm-heading">
<h2 id="confirm-heading">Confirm the refund</h2>
<dl class="facts">
<dt>You send</dt><dd id="confirm-send">${preview.amount} ${preview.coin}</dd>
<dt>Network fee</dt><dd id="confirm-fee">${preview.fee} TON <span class="muted">(${preview.arrives === preview.amount ? 'set aside from the deposit; the real fee, usually less, is known once the chain confirms' : 'taken from what is sent: this refund empties the deposit'})</span></dd>
<dt>Arrives</dt><dd id="confirm-arrives">${preview.arrives === preview.amount ? '' : 'about '}${preview.arrives} ${preview.coin}</dd>
<dt>At</dt><dd class="mono" id="confirm-address">${preview.destination}</dd>
</dl>
<p>A refund cannot be undone: check the address.</p>
<form method="post" action="${at.refunds(p.id)}">
<input type="hidden" name="coin" value="${preview.coin}">
<input type="hidden" name="amount" value="${preview.amount}">
<input type="hidden" name="address" value="${preview.address}">
<input type="hidden" name="confirmed" value="yes">
<input type="hidden" name="key" value="${input.confirmKey ?? ''}">
<button type="submit">Confirm: send ${preview.amount} ${preview.coin}</button>
</form>
<p><a href="${at.payment(p.id)}">Change or cancel</a></p>
</section>`
      : '';
  const body = html`<p><a href="${at.payments()}">← Payments</a></p>
<h1>Payment <span class="mono">${p.id}</span></h1>
${input.notice ? html`<p class="success" role="status">${NOTICES[input.notice]}</p>` : ''}
${input.actionProblem ? html`<p class="problem" role="alert">${input.actionProblem}</p>` : ''}
${confirm}
<section class="card" aria-labelledby="facts-heading"><h2 id="facts-heading">Summary</h2>${facts}</section>
<section class="card" aria-labelledby="timeline-heading"><h2 id="timeline-heading">Timeline</h2>${timeline}</section>
<section class="card" aria-labelledby="money-heading"><h2 id="money-heading">Money</h2>${money}</section>
<section class="card" aria-labelledby="books-heading"><h2 id="books-heading">The books</h2>${incoming}${outgoing}</section>
<section class="card" aria-labelledby="refund-heading"><h2 id="refund-heading">Refund</h2>${refundable}${refundForm}${
    !mayRefund ? html`<p class="muted">Only the store's owners can refund.</p>` : ''
  }</section>
<section class="card" aria-labelledby="webhooks-heading"><h2 id="webhooks-heading">Webhook deliveries</h2>${deliveries}${redeliver}</section>`;
  return shell({ root, title: `Payment ${p.id.slice(0, 8)}`, body, viewer: input.viewer, store, current: 'payments' });
}
