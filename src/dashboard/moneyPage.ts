// The store's Money page (issue 24): per coin, what its deposits received, what counted, what was
// refunded and swept, the fees, what the deposits still hold and what is refundable (the sums of
// deposit_money, reporting.store_money); the reconciliation's differences between the books and
// the chain (reporting.deposit_differences); and the store's treasury.
import { html } from '../web/html.ts';
import type { StoreMoney } from './money.ts';
import { dashboardPaths } from './paths.ts';
import { dateTime, shell, type StoreContext, type Viewer } from './pages.ts';

export function moneyPage(input: { root: string; viewer: Viewer; store: StoreContext; money: StoreMoney }): string {
  const { root, store, money } = input;
  const at = dashboardPaths(root).store(store.id);
  const coins = money.coins.length
    ? html`<div class="table-wrap" tabindex="0"><table id="store-money"><caption class="muted">Per coin, summed over the store's payments from each deposit's books (deposit_money)</caption>
<thead><tr><th scope="col">Coin</th><th scope="col">Received</th><th scope="col">Counted</th><th scope="col">Refunded</th><th scope="col">Swept</th><th scope="col">Fees (TON)</th><th scope="col">Still in deposits</th><th scope="col">Refundable</th></tr></thead>
<tbody>${money.coins.map(
        (c) =>
          html`<tr><th scope="row">${c.coin}</th><td class="num">${c.received}</td><td class="num">${c.counted}</td><td class="num">${c.refunded}</td><td class="num">${c.swept}</td><td class="num">${c.feesTon}</td><td class="num">${c.inDeposits}</td><td class="num">${c.refundable}</td></tr>`,
      )}</tbody></table></div>
<dl class="facts" id="money-totals">
<dt>Paid in fees</dt><dd>${money.feesTon} TON (network fees of every coin's transfers in and out, paid in TON)</dd>
${money.gasTon !== '0' ? html`<dt>Gas in deposits</dt><dd>${money.gasTon} TON of Kassa's own, for jetton transfers (not the store's)</dd>` : ''}
</dl>
<p class="muted">Received: every credited transfer. Counted: completed payments' amounts (the store's money). Still in deposits: counted money not swept yet, customers' refundable money, and money held for payments still open.</p>`
    : html`<p>No money has reached the store's deposits yet.</p>`;
  const treasury = money.treasury
    ? html`<p>Swept to <span class="mono" id="treasury">${money.treasury}</span>.</p>`
    : html`<p id="treasury">None: the money stays in each payment's deposit wallet until the store has a treasury.</p>`;
  const reconciled = money.lastReconciledAt
    ? html`<p class="muted">Last compared with the chain ${dateTime(money.lastReconciledAt)}.</p>`
    : html`<p class="muted">No deposit of this store has been compared with the chain yet.</p>`;
  const differences = money.differences.length
    ? html`<div class="table-wrap" tabindex="0"><table id="differences"><caption class="muted">Deposits whose balance on chain differs from their books (positive: the chain holds more)</caption>
<thead><tr><th scope="col">Payment</th><th scope="col">Coin</th><th scope="col">Books</th><th scope="col">On chain</th><th scope="col">Difference</th><th scope="col">Checked</th></tr></thead>
<tbody>${money.differences.map(
        (d) =>
          html`<tr><td><a class="mono" href="${at.payment(d.paymentId)}">${d.paymentId}</a></td><td>${d.coin}</td><td class="num">${d.booked}</td><td class="num">${d.onChain}</td><td class="num">${d.difference}</td><td class="num">${dateTime(d.checkedAt)}</td></tr>`,
      )}</tbody></table></div>`
    : money.lastReconciledAt
      ? html`<p id="differences">No differences: every deposit compared holds what its books say.</p>`
      : '';
  const body = html`<h1>Money</h1>
<section class="card" aria-labelledby="coins-heading"><h2 id="coins-heading">Per coin</h2>${coins}</section>
<section class="card" aria-labelledby="treasury-heading"><h2 id="treasury-heading">Treasury</h2>${treasury}</section>
<section class="card" aria-labelledby="reconciliation-heading"><h2 id="reconciliation-heading">Reconciliation</h2>${reconciled}${differences}</section>`;
  return shell({ root, title: 'Money', body, viewer: input.viewer, store, current: 'money' });
}
