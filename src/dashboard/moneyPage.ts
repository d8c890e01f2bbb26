// The store's Money page (issue 24): per coin, what its deposits received, what counted, what was
// refunded and swept, the fees, what the deposits still hold and what is refundable (the sums of
// deposit_money, reporting.store_money); the reconciliation's differences between the books and
// the chain (reporting.deposit_differences); and the store's treasury.
import type { TonNetwork } from '../chain/addresses.ts';
import { shownCoinName } from '../money.ts';
import { html } from '../web/html.ts';
import type { StoreMoney } from './money.ts';
import { copyableId, dateTime, shell, type StoreContext, type Viewer } from './pages.ts';
import { dashboardPaths } from './paths.ts';
import { address, amount, term } from './words.ts';

export function moneyPage(input: { root: string; viewer: Viewer; store: StoreContext; money: StoreMoney; network: TonNetwork }): string {
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
<section class="card" aria-labelledby="coins-heading"><h2 id="coins-heading">Per coin</h2>${coins}</section>
<section class="card" aria-labelledby="treasury-heading"><h2 id="treasury-heading">${term(glossary, 'treasury')}</h2>${treasury}</section>
<section class="card" aria-labelledby="reconciliation-heading"><h2 id="reconciliation-heading">${term(glossary, 'reconciliation')}</h2>${reconciled}${differences}</section>`;
  return shell({ root, title: 'Money', body, viewer: input.viewer, store, current: 'money' });
}
