// The store's Money page (issue 24): per coin, what its deposits received, what counted, what was
// refunded and swept, the fees, what the deposits still hold and what is refundable (the sums of
// deposit_money, reporting.store_money); the reconciliation's differences between the books and
// the chain (reporting.deposit_differences); and the store's treasury.
import type { TonNetwork } from '../chain/addresses.ts';
import { fromBaseUnits, shownCoinName, toBaseUnits } from '../money.ts';
import { html, raw, type Html } from '../web/html.ts';
import type { RefundFees, TopUpRequest } from '../treasury/refundFees.ts';
import type { StoreMoney } from './money.ts';
import { copyableId, dateTime, problemFor, shell, type StoreContext, type Viewer } from './pages.ts';
import { dashboardPaths, type StorePaths } from './paths.ts';
import { can } from './policy.ts';
import { address, amount, asOfWords, term } from './words.ts';
import type { AsOf } from '../db/reporting.ts';

/** What the Money page says of the refund fee balance, and the top-ups the owner may send (those asked and not arrived yet). */
export interface RefundFeesView {
  fees: RefundFees;
  /** The request of each top-up that has not arrived, by id (owners only; none for viewers). */
  requests: ReadonlyMap<string, TopUpRequest>;
  /** The amount field as typed, and why it was refused. */
  typed?: string;
  problem?: string | null;
  /** The top-up just asked (its row is the one to send). */
  asked?: string | null;
}

/** How many refunds a suggested top-up pays for (the form's hint). */
const SUGGESTED_REFUNDS = [10, 25] as const;

const times = (perRefund: string, refunds: number): string => fromBaseUnits(toBaseUnits(perRefund, 9) * BigInt(refunds), 9);
const fromNano = (units: string): string => fromBaseUnits(BigInt(units), 9);

/** The refund fee balance (issue 47 item 3): what is left, what it buys, a top-up from the owner's wallet. */
function refundFeesSection(paths: StorePaths, glossary: string, store: StoreContext, view: RefundFeesView): Html {
  const f = view.fees;
  const owner = can(store.role, 'refund_fees.top_up');
  const suggested = times(f.perRefund, SUGGESTED_REFUNDS[0]);
  const problems: Record<string, string> = view.problem ? { amount: view.problem } : {};
  const form = owner
    ? html`<form method="post" action="${paths.refundFees()}" id="refund-fees-form" class="stack">
<label for="amount">Amount to add (GRAM)</label>
<input id="amount" name="amount" inputmode="decimal" autocomplete="off" value="${view.typed ?? suggested}" aria-describedby="amount-hint${problems.amount ? ' amount-problem' : ''}"${problems.amount ? raw(' aria-invalid="true"') : ''}>
<p class="muted" id="amount-hint">${suggested} GRAM pays for about ${SUGGESTED_REFUNDS[0]} refunds in ${f.token}; ${times(f.perRefund, SUGGESTED_REFUNDS[1])} GRAM for about ${SUGGESTED_REFUNDS[1]}. Your wallet sends it to Kassa's fee wallet; it is added here once the network shows it (about a minute).</p>
${problemFor(problems, 'amount')}
<p><button type="submit">Add money for refund fees</button></p>
</form>`
    : html`<p class="muted">An owner of the store can add to it from their wallet.</p>`;
  const topUps = f.topUps.length
    ? html`<h3 id="top-ups-heading">Added from a wallet</h3>
<ul id="refund-fee-top-ups" class="treasury-list" aria-labelledby="top-ups-heading">${f.topUps.map((t) => {
        const asked = html`${amount(fromNano(t.amount_base_units), 'TON')} asked by ${t.asked_by} ${dateTime(t.asked_at)}`;
        const arrived = t.arrivals.length
          ? html`<ul class="arrivals">${t.arrivals.map((a) => html`<li class="arrival">${amount(a.amount, 'TON')} arrived ${dateTime(a.at)}</li>`)}</ul>`
          : '';
        const request = view.requests.get(t.id);
        const send = request
          ? html`<p><button type="button" class="send-top-up" data-request="${JSON.stringify(request.tonconnect)}">Send ${fromNano(t.amount_base_units)} GRAM from your wallet</button></p>
<p class="sign-status" role="status"></p>
<details><summary>No TON Connect? Use a link</summary><p>Send ${fromNano(t.amount_base_units)} GRAM to <span class="mono">${request.to}</span> with the comment <span class="mono">${t.reference}</span> (the link fills both in). <a href="${request.link}">Open in a wallet app</a></p></details>`
          : '';
        const state = t.arrivals.length
          ? t.arrivals.length === 1
            ? 'It arrived:'
            : `It arrived ${t.arrivals.length} times (each is added):`
          : 'Not arrived yet.';
        return html`<li class="top-up" id="top-up-${t.id}" data-arrivals="${t.arrivals.length}"><p>${asked}. <span class="muted">Comment: <span class="mono">${t.reference}</span></span></p>
<p class="top-up-state">${state}</p>${arrived}${send}</li>`;
      })}</ul>`
    : '';
  const covers =
    f.refundsCovered === 0
      ? html`not enough for a refund in ${f.token} (each uses about ${f.perRefund} GRAM)`
      : html`enough for about <strong id="refunds-covered">${f.refundsCovered}</strong> ${f.refundsCovered === 1 ? 'refund' : 'refunds'} in ${f.token} (each uses about ${f.perRefund} GRAM)`;
  return html`<section class="card" id="refund-fees" aria-labelledby="refund-fees-heading"><h2 id="refund-fees-heading">Money for refund fees</h2>
${view.asked ? html`<p class="success" role="status">Top-up asked: send it from your wallet below.</p>` : ''}
<p id="refund-fees-balance">${amount(f.available, 'TON', 'refund-fees-available')} left: ${covers}.</p>
<p class="muted">A refund in a token such as ${f.token} pays its network fee in Gram from this ${term(glossary, 'refund_gas', 'refund fee balance')}; a refund in Gram pays its own. ${
    f.takesToken ? '' : 'The store accepts no token now, so it needs none yet.'
  }</p>
${form}
${topUps}
</section>`;
}

export function moneyPage(input: {
  root: string;
  viewer: Viewer;
  store: StoreContext;
  money: StoreMoney;
  /** How current `money` is (read on the replica or not: db/reporting.ts). */
  asOf?: AsOf;
  network: TonNetwork;
  refundFees: RefundFeesView;
  styleNonce?: string;
}): string {
  const { root, store, money } = input;
  const paths = dashboardPaths(root).store(store.id);
  const glossary = paths.glossary();
  const coins = money.coins.length
    ? html`<div class="table-wrap" tabindex="0"><table id="store-money"><caption class="muted">Per coin, summed over all the store's payments</caption>
<thead><tr><th scope="col">Coin</th><th scope="col">${term(glossary, 'received')}</th><th scope="col">${term(glossary, 'counted', 'Your sales')}</th><th scope="col">Refunded</th><th scope="col">${term(glossary, 'swept')}</th><th scope="col">${term(glossary, 'fees', 'Network fees')}</th><th scope="col">${term(glossary, 'in_deposits')}</th><th scope="col">${term(glossary, 'refundable', 'Customers’ money to refund')}</th></tr></thead>
<tbody>${money.coins.map(
        (c) =>
          html`<tr data-coin="${c.coin}"><th scope="row">${shownCoinName(c.coin)}</th><td class="num">${amount(c.received, c.coin)}</td><td class="num">${amount(c.counted, c.coin)}</td><td class="num">${amount(c.refunded, c.coin)}</td><td class="num">${amount(c.swept, c.coin)}</td><td class="num">${amount(c.feesTon, 'TON')}</td><td class="num">${amount(c.inDeposits, c.coin)}</td><td class="num">${amount(c.refundable, c.coin)}</td></tr>`,
      )}</tbody></table></div>
<dl class="facts" id="money-totals">
<dt>${term(glossary, 'fees', 'Network fees paid')}</dt><dd>${amount(money.feesTon, 'TON', 'fees-total')}: what the TON network charged to receive every coin at the payment addresses and to move it out. Kassa itself charges nothing.</dd>
${money.gasTon !== '0' ? html`<dt>${term(glossary, 'gas')} at payment addresses</dt><dd>${amount(money.gasTon, 'TON', 'gas-total')}: Gram of Kassa's own, sent so tokens can be moved (not the store's money).</dd>` : ''}
</dl>
<p class="muted">Received: everything customers sent. Your sales: what completed payments cost (the shop's money). Still at payment addresses: sales not moved to your wallet yet, customers' money to refund, and money of payments still open. Customers' money to refund here leaves out sales inside their refund window; the home page and each payment count those too.</p>`
    : html`<p>No money has reached the store's payment addresses yet.</p>`;
  const treasury = money.treasury
    ? html`<p id="treasury">Sales move to your wallet: ${address(money.treasury, input.network, 'your wallet address')}</p>`
    : html`<p id="treasury">None yet: the money stays at each payment's address until the store has a wallet to move it to (Settings).</p>`;
  const reconciled = money.lastReconciledAt
    ? html`<p class="muted">Last compared with the network ${dateTime(money.lastReconciledAt)}.</p>`
    : html`<p class="muted">No payment address of this store has been compared with the network yet.</p>`;
  const differences = money.differences.length
    ? html`<div class="table-wrap" tabindex="0"><table id="differences"><caption class="muted">Payment addresses holding a different amount on the network than the books say (positive: the network holds more)</caption>
<thead><tr><th scope="col">Payment</th><th scope="col">Coin</th><th scope="col">Books</th><th scope="col">On the network</th><th scope="col">Difference</th><th scope="col">Checked</th></tr></thead>
<tbody>${money.differences.map(
        (d) =>
          html`<tr><td>${copyableId(d.paymentId, 'payment id', paths.payment(d.paymentId))}</td><td>${shownCoinName(d.coin)}</td><td class="num">${amount(d.booked, d.coin)}</td><td class="num">${amount(d.onChain, d.coin)}</td><td class="num">${amount(d.difference, d.coin)}</td><td class="num">${dateTime(d.checkedAt)}</td></tr>`,
      )}</tbody></table></div>`
    : money.lastReconciledAt
      ? html`<p id="differences">No differences: every payment address compared holds what its books say.</p>`
      : '';
  const body = html`<h1>Money</h1>
${asOfWords(input.asOf)}
<section class="card" aria-labelledby="coins-heading"><h2 id="coins-heading">Per coin</h2>${coins}</section>
<section class="card" aria-labelledby="treasury-heading"><h2 id="treasury-heading">${term(glossary, 'treasury')}</h2>${treasury}</section>
${refundFeesSection(paths, glossary, store, input.refundFees)}
<section class="card" aria-labelledby="reconciliation-heading"><h2 id="reconciliation-heading">${term(glossary, 'reconciliation')}</h2>${reconciled}${differences}</section>`;
  const sending = input.refundFees.requests.size > 0 && input.styleNonce;
  const withScripts = sending
    ? html`<div id="refund-fees-wallet" hidden data-manifest="${dashboardPaths(root).tonConnectManifest()}" data-wallets="${dashboardPaths(root).tonConnectWallets()}"></div>${body}`
    : body;
  return shell({
    root,
    title: 'Money',
    body: withScripts,
    viewer: input.viewer,
    store,
    current: 'money',
    ...(sending ? { scripts: ['tonconnect-ui.js', 'walletConnect.js', 'refundFees.js'] as const, styleNonce: input.styleNonce } : {}),
  });
}
