// A payment's page (issue 24): its summary, its timeline (created, method chosen, each transfer in,
// completed / expired / cancelled, each sweep and refund, with explorer links), its money per coin
// (deposit_money: received, counted, refunded, swept, fees, refundable), the refund form with its
// server-side confirm step (the first post shows what is sent, the fee and what arrives; the second
// does it) for owners, the webhook deliveries with redeliver, and the books. The sections stand in
// the order an owner reads them (issue 32): what happened, the money, what they can do, then the
// books; on a phone the actions begin within two screens (test/browser/dashboard-phone.test.ts).
import { telegramPaymentUrl } from '../telegram/telegramUrls.ts';
import { shownCoinName, shownTicker } from '../money.ts';
import { html, raw, type Html } from '../web/html.ts';
import { explorerLinks } from '../checkout/facts.ts';
import type { RefundPreview } from './money.ts';
import type { PaymentPage } from './payments.ts';
import { refundedAmount } from '../payments/view.ts';
import { dashboardPaths } from './paths.ts';
import { copyableId, dateTime, describedBy, problemFor, saleStatusLabel, shell, type StoreContext, type Viewer } from './pages.ts';
import { can } from './policy.ts';
import { treasurySigning, treasurySigningSection } from './treasurySigning.ts';
import type { OutgoingRow } from '../treasury/outgoing.ts';
import { address, addressText, amount, ANOMALY_WORDS, coinWithFiat, EFFECT_WORDS, OUTGOING_STATE_WORDS, OUTGOING_WORDS, term, waitingWords } from './words.ts';

const NOTICES = {
  refund_created: 'Refund planned: it is sent from the deposit wallet within a minute and confirmed on chain.',
  treasury_refund_asked: 'Refund asked: sign it with your wallet below (once). It is done when the network carries it.',
  redelivery_queued: 'Webhook redelivery queued: it is signed afresh and sent now.',
} as const;
type Notice = keyof typeof NOTICES;
export const isNotice = (value: unknown): value is Notice => typeof value === 'string' && Object.hasOwn(NOTICES, value);

function hashCell(network: PaymentPage['network'], hash: string | null): Html | string {
  if (!hash) return '—';
  const links = explorerLinks(network, hash);
  return html`${copyableId(hash, 'transaction hash')}${links.map((l) => html` <a href="${l.url}" rel="noopener noreferrer">${l.name}</a>`)}`;
}

export interface RefundFormState {
  /** "treasury": the form of a refund from the store's own wallet (the sale moved there). */
  from?: string;
  coin?: string;
  amount?: string;
  address?: string;
  problems?: Record<string, string>;
}

/** Webhook deliveries a payment's page shows unfolded (the latest). */
const RECENT_DELIVERIES = 5;

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
  /** This response's CSP style nonce, for TON Connect's UI (a treasury refund awaits the owner's signature: treasurySigning). */
  styleNonce?: string;
}): string {
  const { root, store, page } = input;
  const p = page.payment;
  const at = dashboardPaths(root).store(store.id);
  const glossary = at.glossary();
  const network = page.network;
  const mayRefund = can(store.role, 'refund.create');
  const mayRedeliver = can(store.role, 'webhook.redeliver');
  const refund = input.refund ?? {};
  const problems = refund.problems ?? {};
  const inTelegram = telegramPaymentUrl(p.telegram_mini_app, p.id);
  const facts = html`<dl class="facts">
<dt>Status</dt><dd id="status">${saleStatusLabel(p)}</dd>
<dt>${term(glossary, 'anomaly')}</dt><dd id="anomalies">${page.anomalies.length ? page.anomalies.map((a) => ANOMALY_WORDS[a]).join(', ') : 'nothing'}</dd>
<dt>Price</dt><dd>${amount(p.amount, p.currency, 'price')}</dd>
${
  // Priced in the coin paid: the price says it already.
  p.coin_symbol !== null && p.coin_symbol === p.currency && p.coin_amount === p.amount
    ? ''
    : html`<dt>To pay in the coin</dt><dd>${p.coin_amount && p.coin_symbol ? amount(p.coin_amount, p.coin_symbol, 'coin-amount') : '— (the customer has not chosen a coin yet)'}</dd>`
}
<dt>Paid toward it</dt><dd>${p.coin_symbol ? coinWithFiat(page.received, p.coin_symbol, p) : '—'}</dd>
<dt>Order id</dt><dd>${p.order_id ?? '—'}</dd>
${p.description === null ? '' : html`<dt>Description</dt><dd>${p.description}</dd>`}
<dt>${term(glossary, 'deposit')}</dt><dd>${p.address_friendly ? address(p.address_friendly, network, 'the payment address') : '—'}</dd>
${p.status === 'completed' ? '' : html`<dt>Expires</dt><dd>${dateTime(p.expires_at)}</dd>`}
<dt>Checkout</dt><dd>${copyableId(input.checkoutUrl, 'checkout link', input.checkoutUrl)}</dd>
${inTelegram === null ? '' : html`<dt>In Telegram</dt><dd>${copyableId(inTelegram, 'Telegram link')}</dd>`}
${p.telegram_user_id === null ? '' : html`<dt>Telegram user</dt><dd id="telegram-user">${p.telegram_username ? html`@${p.telegram_username}, ` : ''}id <span class="mono">${p.telegram_user_id}</span> <span class="muted">(checked with Telegram's signature)</span></dd>`}
${p.webhook_url ? html`<dt>Webhook URL</dt><dd>${copyableId(p.webhook_url, 'webhook URL')}</dd>` : ''}
</dl>`;
  const incoming = page.transfers.length
    ? html`<div class="table-wrap" tabindex="0"><table id="transfers-in"><caption class="muted">Money that came in (the books, in the network's order)</caption>
<thead><tr><th scope="col">When</th><th scope="col">Amount</th><th scope="col">What it did</th><th scope="col">From</th><th scope="col">Transaction</th></tr></thead>
<tbody>${page.transfers.map(
        (
          t,
        ) => html`<tr><td class="num">${dateTime(t.chain_time)}</td><td class="num">${t.amount && t.coin_symbol ? amount(t.amount, t.coin_symbol) : `${t.amount_base_units} (unknown token)`}</td>
<td class="effect" data-effect="${t.effect}">${EFFECT_WORDS[t.effect]}</td><td>${t.sender ? address(t.sender, network, 'the sender') : '—'}</td><td>${hashCell(page.network, t.hash)}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>No money has reached the payment address.</p>`;
  const outgoing = page.outgoing.length
    ? html`<div class="table-wrap" tabindex="0"><table id="transfers-out"><caption class="muted">Money that went out: refunds, moves to your wallet, and ${term(glossary, 'gas', "Kassa's fee money")} for token transfers</caption>
<thead><tr><th scope="col">Planned</th><th scope="col">What</th><th scope="col">Amount</th><th scope="col">${term(glossary, 'fees', 'Network fee')}</th><th scope="col">To</th><th scope="col">State</th><th scope="col">Transaction</th></tr></thead>
<tbody>${page.outgoing.map(
        (
          o,
        ) => html`<tr class="out-${o.kind}"><td class="num">${dateTime(o.created_at)}</td><td data-kind="${o.kind}">${OUTGOING_WORDS[o.kind]}</td><td class="num">${amount(o.amount, o.coin_symbol)}</td>
<td class="num">${o.fee ? amount(o.fee, 'TON') : '—'}</td><td>${address(o.to_address_given ?? o.to_address, network, 'the destination')}</td><td class="state" data-state="${o.state}">${OUTGOING_STATE_WORDS[o.state]}${o.waiting_for === null ? '' : html`<span class="muted waiting-for" data-waiting-for="${o.waiting_for.reason}">${waitingWords(o.waiting_for)}</span>`}${treasuryFlags(o).map((flag) => html`<span class="problem treasury-flag">${flag}</span>`)}</td><td>${hashCell(page.network, o.transaction_hash)}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>Nothing has left the payment address.</p>`;
  const held = page.money.filter((m) => m.held !== '0');
  const refundableOf = (coin: string) => page.refundable.find((r) => r.coin === coin)?.amount ?? '0';
  const money = page.money.length
    ? html`<div class="table-wrap" tabindex="0"><table id="money"><caption class="muted">Per coin, from the books${
        held.length ? html`; ${term(glossary, 'held', 'waiting for the payment to complete')}: ${held.map((m) => amount(m.held, m.coin))}` : ''
      }</caption>
<thead><tr><th scope="col">Coin</th><th scope="col">${term(glossary, 'received')}</th><th scope="col">${term(glossary, 'counted')}</th><th scope="col">Refunded</th><th scope="col">${term(glossary, 'swept')}</th><th scope="col">${term(glossary, 'fees')}</th><th scope="col">${term(glossary, 'refundable')}</th></tr></thead>
<tbody>${page.money.map(
        (m) =>
          html`<tr data-coin="${m.coin}"><th scope="row">${shownCoinName(m.coin)}</th><td class="num">${coinWithFiat(m.received, m.coin, p)}</td><td class="num">${coinWithFiat(m.counted, m.coin, p)}</td><td class="num refunded">${coinWithFiat(m.coin === p.coin_symbol ? refundedAmount(p) : m.refunded, m.coin, p)}</td><td class="num">${coinWithFiat(m.swept, m.coin, p)}</td><td class="num">${amount(m.feesTon, 'TON')}</td><td class="num">${coinWithFiat(refundableOf(m.coin), m.coin, p)}</td></tr>`,
      )}</tbody></table></div>
<p class="muted" id="fees-explained">${term(glossary, 'fees')}: what the TON network charged to move this money. Kassa charges nothing.</p>`
    : html`<p>No money has reached the payment address.</p>`;
  const timeline = html`<ol id="timeline" class="timeline">${page.timeline.map(
    (e) =>
      html`<li class="event-${e.kind}"><time datetime="${e.at.toISOString()}">${dateTime(e.at)}</time> <span class="what">${e.text}</span>${
        e.hash ? html`<br><span class="tx">${hashCell(page.network, e.hash)}</span>` : ''
      }</li>`,
  )}</ol>`;
  // The latest RECENT_DELIVERIES shown; earlier ones folded (a payment redelivered many times stays a few screens tall on a phone).
  const deliveryTable = (
    list: typeof page.deliveries,
    id: string,
    caption: string,
  ) => html`<div class="table-wrap" tabindex="0"><table id="${id}"><caption class="muted">${caption}</caption>
<thead><tr><th scope="col">Created</th><th scope="col">Reason</th><th scope="col">Status</th><th scope="col">Attempts</th></tr></thead>
<tbody>${list.map(
    (d) => html`<tr><td class="num">${dateTime(d.created_at)}</td><td>${d.reason}</td><td class="delivery-status">${d.status}</td>
<td>${d.attempts.length ? html`<ul>${d.attempts.map((a) => html`<li>#${a.attempt} ${dateTime(a.started_at)}: ${a.http_status ? `HTTP ${a.http_status}` : (a.error ?? 'no answer yet')}${a.duration_ms !== null ? `, ${a.duration_ms} ms` : ''}</li>`)}</ul>` : 'none yet'}</td></tr>`,
  )}</tbody></table></div>`;
  const earlier = page.deliveries.slice(0, -RECENT_DELIVERIES);
  const deliveries = page.deliveries.length
    ? html`${
        earlier.length
          ? html`<details class="earlier-deliveries"><summary>${earlier.length} earlier ${earlier.length === 1 ? 'delivery' : 'deliveries'}</summary>${deliveryTable(earlier, 'earlier-deliveries', 'Earlier webhook deliveries, oldest first')}</details>`
          : ''
      }${deliveryTable(page.deliveries.slice(-RECENT_DELIVERIES), 'deliveries', earlier.length ? 'The latest webhook deliveries, oldest first' : 'Webhook deliveries, oldest first')}`
    : html`<p>No webhook delivery.</p>`;
  // Refunds from the treasury awaiting the merchant's signature (owners): TON Connect asks the treasury's wallet to sign each.
  const awaiting = treasurySigning(page, store.role);
  const treasury = treasurySigningSection({
    root,
    network: page.network,
    now: page.now,
    awaiting,
    heading: 'Refunds from the treasury to sign',
    record: (refundId: string) => at.treasuryRequestSent(p.id, refundId),
    declined: (refundId: string) => at.treasuryRequestDeclined(p.id, refundId),
  });
  const redeliver =
    mayRedeliver && p.status === 'completed' && p.webhook_url
      ? html`<form method="post" action="${at.redeliver(p.id)}"><button type="submit">Redeliver the webhook</button></form>`
      : '';
  const until = page.refundableUntil;
  const windowOpen = until !== null && until > page.now && page.refundable.some((r) => r.coin === p.coin_symbol);
  // The sale moved to the store's treasury (its refund window over): refundable from there, signed by the owner's wallet.
  const fromTreasury =
    page.treasuryRefundable !== null && page.treasuryRefundable !== '0' && p.coin_symbol !== null && !page.refundable.some((r) => r.coin === p.coin_symbol)
      ? { coin: p.coin_symbol, amount: page.treasuryRefundable }
      : null;
  // "Back to the sender": the one address that paid, as the owner's wallet writes it.
  const sender = page.payer === null ? '' : addressText(page.payer, network);
  const typedTreasury = refund.from === 'treasury';
  const depositTyped = typedTreasury ? {} : refund;
  const depositProblems = typedTreasury ? {} : problems;
  const treasuryProblems = typedTreasury ? problems : {};
  const senderHint = (id: string) =>
    sender ? html`<p class="muted" id="${id}">Filled in: back to the sender, the account that paid. Change it to refund elsewhere.</p>` : '';
  const refundable = page.refundable.length
    ? html`<div id="refundable"><p>${term(glossary, 'refundable')}:</p><ul>${page.refundable.map(
        (r) =>
          html`<li data-coin="${r.coin}">${coinWithFiat(r.amount, r.coin, p)}${r.largest !== r.amount ? html` <span class="muted">(the largest refund accepted now: ${amount(r.largest, r.coin)}, as the network fee is paid from the rest)</span>` : ''}</li>`,
      )}</ul>${
        until && windowOpen
          ? html`<p>That includes the sale: it can be refunded from its payment address until <time id="refundable-until" datetime="${until.toISOString()}">${dateTime(until)}</time> (the store's ${term(glossary, 'refund_window')}); then it moves to your wallet.</p>`
          : ''
      }</div>`
    : html`<div id="refundable"><p>${fromTreasury ? 'Nothing is left to refund at the payment address: the sale has moved to your wallet.' : 'Nothing can be refunded now.'}</p>${
        until
          ? html`<p class="muted">The sale's ${term(glossary, 'refund_window')} ends or ended <time id="refundable-until" datetime="${until.toISOString()}">${dateTime(until)}</time>.</p>`
          : ''
      }</div>`;
  const refundForm =
    mayRefund && page.refundable.length
      ? html`<form method="post" action="${at.refunds(p.id)}" aria-labelledby="refund-heading">
${depositProblems.form ? html`<p class="problem" role="alert">${depositProblems.form}</p>` : ''}
<label for="refund-coin">Coin</label>
<select id="refund-coin" name="coin">${page.refundable.map((r) => html`<option value="${r.coin}"${depositTyped.coin === r.coin ? raw(' selected') : ''}>${shownCoinName(r.coin)} (up to ${r.largest})</option>`)}</select>
<label for="refund-amount">Amount</label>
<input id="refund-amount" name="amount" type="text" inputmode="decimal" required value="${depositTyped.amount ?? ''}"${describedBy(depositProblems, 'amount')}>
${problemFor(depositProblems, 'amount')}
<label for="refund-address">To address</label>
<input id="refund-address" name="address" type="text" required spellcheck="false" autocomplete="off" value="${depositTyped.address ?? sender}"${describedBy(depositProblems, 'address')}>
${problemFor(depositProblems, 'address')}${senderHint('refund-sender')}
<p class="muted">The next step shows the ${term(glossary, 'network_fee', 'network fee')} and what arrives at the address, and asks you to confirm. Nothing is sent before that.</p>
<button type="submit">Review the refund</button>
</form>`
      : '';
  const treasuryForm =
    mayRefund && fromTreasury
      ? html`<form method="post" action="${at.refunds(p.id)}" id="treasury-refund-form" aria-labelledby="treasury-refund-heading">
<h3 id="treasury-refund-heading">Refund from your wallet</h3>
<p>Up to ${amount(fromTreasury.amount, fromTreasury.coin, 'treasury-refundable')} of the sale can be refunded from your wallet (the ${term(glossary, 'treasury', 'treasury')}). Your wallet signs it: Kassa holds no key of it.</p>
${treasuryProblems.form ? html`<p class="problem" role="alert">${treasuryProblems.form}</p>` : ''}
<input type="hidden" name="from" value="treasury">
<input type="hidden" name="coin" value="${fromTreasury.coin}">
<label for="treasury-amount">Amount (${shownTicker(fromTreasury.coin)})</label>
<input id="treasury-amount" name="amount" type="text" inputmode="decimal" required value="${typedTreasury ? (refund.amount ?? '') : fromTreasury.amount}"${describedBy(treasuryProblems, 'amount')}>
${problemFor(treasuryProblems, 'amount')}
<label for="treasury-address">To address</label>
<input id="treasury-address" name="address" type="text" required spellcheck="false" autocomplete="off" value="${typedTreasury ? (refund.address ?? sender) : sender}"${describedBy(treasuryProblems, 'address')}>
${problemFor(treasuryProblems, 'address')}${senderHint('treasury-sender')}
<p class="muted">The next step shows what your wallet sends and asks you to confirm; then your wallet is asked to sign.</p>
<button type="submit">Review the refund from your wallet</button>
</form>`
      : '';
  const preview = input.preview;
  const confirm =
    mayRefund && preview
      ? html`<section class="card confirm" id="refund-confirm" aria-labelledby="confirm-heading">
<h2 id="confirm-heading">Confirm the refund</h2>
<dl class="facts">
<dt>${preview.from === 'treasury' ? 'Your wallet sends' : 'You send'}</dt><dd id="confirm-send">${preview.amount} ${shownTicker(preview.coin)}</dd>
<dt>${term(glossary, 'network_fee', 'Network fee')}</dt><dd id="confirm-fee">${preview.fee} GRAM <span class="muted">(${
          preview.from === 'treasury'
            ? 'at most; paid by your wallet on top of the refund'
            : preview.coin !== 'TON'
              ? "paid from the store's refund fee balance, not from the customer's money"
              : preview.arrives === preview.amount
                ? 'set aside at the payment address; the real fee, usually less, is known once the network confirms'
                : 'taken from what is sent: this refund empties the payment address'
        })</span></dd>
<dt>Arrives</dt><dd id="confirm-arrives">${preview.arrives === preview.amount ? '' : 'about '}${preview.arrives} ${shownTicker(preview.coin)}</dd>
<dt>At</dt><dd id="confirm-address">${address(preview.destination, network, 'the refund address')}</dd>
</dl>
<p>A refund cannot be undone: check the address.</p>
<form method="post" action="${at.refunds(p.id)}">
${preview.from === 'treasury' ? html`<input type="hidden" name="from" value="treasury">` : ''}
<input type="hidden" name="coin" value="${preview.coin}">
<input type="hidden" name="amount" value="${preview.amount}">
<input type="hidden" name="address" value="${preview.address}">
<input type="hidden" name="confirmed" value="yes">
<input type="hidden" name="key" value="${input.confirmKey ?? ''}">
<button type="submit">${preview.from === 'treasury' ? 'Confirm: ask my wallet to send' : 'Confirm: send'} ${preview.amount} ${shownTicker(preview.coin)}</button>
</form>
<p><a href="${at.payment(p.id)}">Change or cancel</a></p>
</section>`
      : '';
  const body = html`<p><a href="${at.payments()}">← Payments</a></p>
<h1>Payment ${copyableId(p.id, 'payment id')}</h1>
${input.notice ? html`<p class="success" role="status">${NOTICES[input.notice]}</p>` : ''}
${input.actionProblem ? html`<p class="problem" role="alert">${input.actionProblem}</p>` : ''}
${confirm}
<section class="card" aria-labelledby="facts-heading"><h2 id="facts-heading">Summary</h2>${facts}</section>
<section class="card" aria-labelledby="timeline-heading"><h2 id="timeline-heading">Timeline</h2>${timeline}</section>
<section class="card" aria-labelledby="money-heading"><h2 id="money-heading">Money</h2>${money}</section>
<section class="card" aria-labelledby="refund-heading"><h2 id="refund-heading">Refund</h2>${refundable}${refundForm}${treasuryForm}${
    !mayRefund ? html`<p class="muted">Only the store's owners can refund.</p>` : ''
  }</section>
${treasury}
<section class="card" aria-labelledby="webhooks-heading"><h2 id="webhooks-heading">Webhook deliveries</h2>${deliveries}${redeliver}</section>
<section class="card" aria-labelledby="books-heading"><h2 id="books-heading">The books</h2>${incoming}${outgoing}</section>`;
  return shell({
    root,
    title: `Payment ${p.id.slice(0, 8)}`,
    body,
    viewer: input.viewer,
    store,
    current: 'payments',
    ...(awaiting.length && input.styleNonce ? { scripts: ['tonconnect-ui.js', 'walletConnect.js', 'treasury.js'] as const, styleNonce: input.styleNonce } : {}),
  });
}

/**
 * What the books flag on a refund from the treasury, in plain words: the merchant's wallet paid it
 * again, paid more of the sale than reached the treasury, signed another amount, or another account
 * paid it (docs/API.md, "Refund from the treasury").
 */
export function treasuryFlags(
  o: Pick<OutgoingRow, 'source' | 'coin_symbol' | 'amount' | 'paid_again' | 'beyond_sale' | 'asked_amount' | 'paid_from' | 'expired_before_paid_at'>,
): string[] {
  if (o.source !== 'treasury') return [];
  const flags: string[] = [];
  const coin = shownTicker(o.coin_symbol);
  for (const again of o.paid_again) flags.push(`Paid again: your wallet signed it twice, ${again.amount} ${coin} more left the treasury.`);
  if (o.beyond_sale !== null)
    flags.push(
      `Refunded twice: ${o.beyond_sale} ${coin} more than the sale left the treasury (an expired refund was asked again and the old one signed anyway).`,
    );
  if (o.expired_before_paid_at !== null) flags.push('Paid after it had expired: your wallet signed an old request. Check you did not refund this money again.');
  if (o.asked_amount !== null) flags.push(`Signed for ${o.amount} ${coin}, not the ${o.asked_amount} ${coin} asked.`);
  if (o.paid_from !== null) flags.push('Paid from another account than the treasury.');
  return flags;
}
