// The Unmatched money page (issue 43, CONTRACT §12): money that reached the store's treasury without
// a payment's reference, open first, each with what it carried, why it matched nothing in plain words
// and the payments it may belong to; owners assign it to a suggested (or typed) payment or keep it
// with a note, or give it back from the treasury — to its sender or an address they type — signed
// with their wallet through TON Connect exactly as a payment's refund from the treasury
// (treasurySigning.ts, static/treasury.js); every member sees it.
import type { TonNetwork } from '../config.ts';
import { shownTicker } from '../money.ts';
import { formatReference } from '../payments/reference.ts';
import { html, type Html } from '../web/html.ts';
import { dateTime, describedBy, problemFor, shell, statusLabel, type StoreContext, type Viewer } from './pages.ts';
import { dashboardPaths, type StorePaths } from './paths.ts';
import { can } from './policy.ts';
import type { OutgoingRow } from '../treasury/outgoing.ts';
import { treasurySigning, treasurySigningSection } from './treasurySigning.ts';
import type { SuggestedPayment, UnmatchedTransfer } from './unmatched.ts';
import { address, amount, SUGGESTION_WORDS, term, UNMATCHED_REASON_WORDS, UNMATCHED_STATE_WORDS } from './words.ts';

/** What the notice after a redirect says (`?notice=`). */
export const UNMATCHED_NOTICES = {
  assigned: 'Assigned: the money is booked on the payment, as if it had carried its reference.',
  kept: 'Kept: the money stays in your treasury, booked on no payment, with your note.',
  refund_asked: 'Refund asked: approve it with your treasury’s wallet below (once). It is done when the network carries it.',
} as const;
export type UnmatchedNotice = keyof typeof UNMATCHED_NOTICES;

/** A refusal shown on the transfer it concerns: its form's field (paymentID, note, address, else form) → sentence. */
export interface UnmatchedProblem {
  id: string;
  problems: Record<string, string>;
  values: Record<string, string>;
}

/** A payment as the page names it: its reference (or id), price and status. */
function paymentName(payment: SuggestedPayment | undefined, id: string, paths: StorePaths): Html {
  if (!payment) return html`<a class="mono" href="${paths.payment(id)}">${id}</a>`;
  const coin =
    payment.coin_amount && payment.coin_symbol && payment.coin_symbol !== payment.currency
      ? ` (${payment.coin_amount} ${shownTicker(payment.coin_symbol)})`
      : '';
  return html`<a href="${paths.payment(id)}"><span class="mono">${payment.reference ? formatReference(payment.reference) : id}</span></a> · ${payment.amount} ${shownTicker(payment.currency)}${coin} · ${statusLabel(payment.status)}${payment.description ? html` · ${payment.description}` : ''}`;
}

function openTransfer(
  u: UnmatchedTransfer,
  input: { root: string; store: StoreContext; network: TonNetwork; payments: Map<string, SuggestedPayment>; problem: UnmatchedProblem | null },
): Html {
  const paths = dashboardPaths(input.root).store(input.store.id);
  const owner = can(input.store.role, 'unmatched.resolve');
  const mine = input.problem?.id === u.id ? input.problem : null;
  const problems = mine?.problems ?? {};
  const values = mine?.values ?? {};
  const prefix = `u-${u.id.slice(0, 8)}`;
  const suggestions = u.suggestions.length
    ? html`<h3 id="${prefix}-suggestions">It may be for</h3>
<ul class="suggestions" aria-labelledby="${prefix}-suggestions">${u.suggestions.map(
        (s) => html`<li class="suggestion" data-payment-id="${s.paymentID}"><p>${paymentName(input.payments.get(s.paymentID), s.paymentID, paths)}</p>
<p class="muted">Why: ${SUGGESTION_WORDS[s.why] ?? s.why}.</p>
${
  owner
    ? html`<form method="post" action="${paths.assignUnmatched(u.id)}"><input type="hidden" name="paymentID" value="${s.paymentID}">
<button type="submit">Assign to this payment</button></form>`
    : ''
}</li>`,
      )}</ul>`
    : html`<p class="muted">Kassa found no payment it may be for.</p>`;
  const actions = owner
    ? html`<form method="post" action="${paths.assignUnmatched(u.id)}" class="assign-typed">
<label for="${prefix}-payment">Or assign it to another payment: its id</label>
<input id="${prefix}-payment" name="paymentID" type="text" class="mono" autocomplete="off" spellcheck="false" maxlength="36" value="${values.paymentID ?? ''}"${describedBy(problems, 'paymentID')}>
${problemFor(problems, 'paymentID')}
<button type="submit" class="secondary">Assign</button>
</form>
<form method="post" action="${paths.keepUnmatched(u.id)}" class="keep">
<label for="${prefix}-note">Or keep it in your treasury, with a note (a gift, your own top-up, settled another way)</label>
<input id="${prefix}-note" name="note" type="text" maxlength="500" autocomplete="off" value="${values.note ?? ''}"${describedBy(problems, 'note')}>
${problemFor(problems, 'note')}
<button type="submit" class="secondary">Keep it</button>
</form>
<form method="post" action="${paths.refundUnmatched(u.id)}" class="refund-unmatched">
<label for="${prefix}-address">Or give it back, all of it, from your treasury: ${u.sender ? 'to the wallet that sent it, or to another address you type here' : 'Kassa does not know who sent it, so type the address to send it to'}</label>
<input id="${prefix}-address" name="address" type="text" class="mono" autocomplete="off" spellcheck="false" maxlength="200" value="${values.address ?? ''}"${describedBy(problems, 'address')}>
${problemFor(problems, 'address')}
<button type="submit" class="secondary">Give it back</button>
</form>`
    : html`<p class="muted">Only the store’s owners can assign, keep or give back this money.</p>`;
  return html`<article class="card unmatched" id="unmatched-${u.id}" aria-labelledby="${prefix}-title">
<h3 id="${prefix}-title">${amount(u.amount, shownTicker(u.coin))} · ${dateTime(new Date(u.receivedAt))}</h3>
${problemFor(problems, 'form')}
<dl class="facts">
<dt>From</dt><dd>${u.sender ? address(u.sender, input.network, 'the sender’s address') : 'unknown'}</dd>
<dt>Its comment</dt><dd>${u.reference ? html`<span class="mono unmatched-reference">${u.reference}</span>` : 'no reference'}</dd>
<dt>Why it matched no payment</dt><dd class="unmatched-reason">${UNMATCHED_REASON_WORDS[u.reason]}</dd>
<dt>Transaction</dt><dd><span class="mono">${u.transactionHash}</span></dd>
</dl>
${suggestions}
${actions}
</article>`;
}

function refundingRow(u: UnmatchedTransfer, refund: OutgoingRow | undefined, network: TonNetwork): Html {
  const to = refund ? html` to ${address(refund.to_address_given ?? refund.to_address, network, 'the address it goes back to')}` : '';
  return html`<li class="refunding" id="unmatched-${u.id}">${amount(u.amount, shownTicker(u.coin))} · ${dateTime(new Date(u.receivedAt))} — being given back${to}: waiting for your treasury’s wallet to approve it. If nobody approves it in time, it waits for you here again.</li>`;
}

function resolvedRow(u: UnmatchedTransfer, input: { root: string; store: StoreContext; payments: Map<string, SuggestedPayment> }): Html {
  const paths = dashboardPaths(input.root).store(input.store.id);
  const outcome =
    u.state === 'assigned' && u.paymentID
      ? html`assigned to ${paymentName(input.payments.get(u.paymentID), u.paymentID, paths)}`
      : u.state === 'kept'
        ? html`kept: “${u.note ?? ''}”`
        : UNMATCHED_STATE_WORDS[u.state];
  return html`<li class="resolved" id="unmatched-${u.id}">${amount(u.amount, shownTicker(u.coin))} · ${dateTime(new Date(u.receivedAt))} — ${outcome}</li>`;
}

export function unmatchedPage(input: {
  root: string;
  viewer: Viewer;
  store: StoreContext;
  network: TonNetwork;
  open: readonly UnmatchedTransfer[];
  refunding: readonly UnmatchedTransfer[];
  resolved: readonly UnmatchedTransfer[];
  payments: Map<string, SuggestedPayment>;
  /** The refunding ones' refunds awaiting the treasury's signature. */
  outgoing: readonly OutgoingRow[];
  /** The moment the page shows (whether a refund can still be signed). */
  now: Date;
  notice?: string | null;
  problem?: UnmatchedProblem | null;
  /** This response's CSP style nonce, for TON Connect's UI (a refund awaits the owner's signature). */
  styleNonce?: string;
}): string {
  const { root, store } = input;
  const paths = dashboardPaths(root).store(store.id);
  const awaiting = unmatchedSigning(input, store.role);
  const signing = treasurySigningSection({
    root,
    network: input.network,
    now: input.now,
    awaiting,
    heading: 'Money to give back: approve it with your wallet',
    record: (refundId) => paths.unmatchedRequestSent(refundOwner(input.outgoing, refundId), refundId),
    declined: (refundId) => paths.unmatchedRequestDeclined(refundOwner(input.outgoing, refundId), refundId),
  });
  const body = html`<h1>Unmatched money</h1>
<p>${term(paths.glossary(), 'unmatched', 'Money')} that reached your treasury without a payment’s reference in its comment, so Kassa could not tell which payment it was for. It is in your wallet and never lost: assign it to the payment it was for, keep it, or give it back.</p>
${input.notice ? html`<p class="success" role="status">${input.notice}</p>` : ''}
${signing}
${
  input.refunding.length
    ? html`<section class="card" aria-labelledby="refunding-heading"><h2 id="refunding-heading">Being given back (${input.refunding.length})</h2>
<ul class="refunding-list">${input.refunding.map((u) =>
        refundingRow(
          u,
          input.outgoing.find((o) => o.unmatched_transfer_id === u.id),
          input.network,
        ),
      )}</ul></section>`
    : ''
}
<section aria-labelledby="open-heading"><h2 id="open-heading">Waiting for you (${input.open.length})</h2>
${
  input.open.length
    ? input.open.map((u) => openTransfer(u, { root, store, network: input.network, payments: input.payments, problem: input.problem ?? null }))
    : html`<p class="card" id="no-unmatched">Nothing waits: every transfer to your treasury named its payment.</p>`
}</section>
${
  input.resolved.length
    ? html`<section class="card" aria-labelledby="resolved-heading"><h2 id="resolved-heading">Resolved</h2>
<ul class="resolved-list">${input.resolved.map((u) => resolvedRow(u, { root, store, payments: input.payments }))}</ul></section>`
    : ''
}`;
  return shell({
    root,
    title: 'Unmatched money',
    body,
    viewer: input.viewer,
    store,
    current: 'unmatched',
    ...(awaiting.length && input.styleNonce ? { scripts: ['tonconnect-ui.js', 'walletConnect.js', 'treasury.js'] as const, styleNonce: input.styleNonce } : {}),
  });
}

/** The refunds of unmatched money awaiting the treasury's signature, when `role` may refund (else none): the page then runs TON Connect. */
export function unmatchedSigning(input: { outgoing: readonly OutgoingRow[]; network: TonNetwork }, role: StoreContext['role']) {
  return treasurySigning({ outgoing: input.outgoing, network: input.network }, role);
}

/** The unmatched transfer a refund of the page sends back. */
function refundOwner(outgoing: readonly OutgoingRow[], refundId: string): string {
  return outgoing.find((o) => o.id === refundId)?.unmatched_transfer_id ?? '';
}
