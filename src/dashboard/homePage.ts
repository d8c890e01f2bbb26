// A store's home page (issue 32), its landing page: what needs attention, sales today / 7 / 30 days
// per price currency and per coin, a chart of daily sales (an SVG drawn here, on the server: no
// script, no library), the last 30 days' payments by status, and the money waiting. Figures come
// from home.ts homeFigures; every amount is rounded for reading with its exact value kept (words.ts).
import { maxDecimal, shareForDrawing, shownCoinName, shownTicker } from '../money.ts';
import { html, type Html } from '../web/html.ts';
import { dayStart, type HomeFigures, SALES_WINDOWS, type SalesLine, type SalesTotal } from './home.ts';
import { dashboardPaths } from './paths.ts';
import { shell, statusLabel, type StoreContext, type Viewer } from './pages.ts';
import { amount, asOfWords, readable, term } from './words.ts';
import type { AsOf } from '../db/reporting.ts';
import { can } from './policy.ts';

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function salesTable(id: string, caption: string, rows: readonly SalesLine[]): Html {
  return html`<div class="table-wrap" tabindex="0"><table id="${id}"><caption class="muted">${caption}</caption>
<thead><tr><th scope="col">Currency</th>${SALES_WINDOWS.map((w) => html`<th scope="col">${w.label}</th>`)}</tr></thead>
<tbody>${rows.map(
    (line) =>
      html`<tr data-currency="${line.currency}"><th scope="row">${shownCoinName(line.currency)}</th>${SALES_WINDOWS.map(
        (w) =>
          html`<td class="num" data-window="${w.key}" data-payments="${line.windows[w.key].payments}">${amount(line.windows[w.key].amount, line.currency)}<br><span class="muted">${plural(line.windows[w.key].payments, 'sale')}</span></td>`,
      )}</tr>`,
  )}</tbody></table></div>`;
}

/** Daily sales as bars (an SVG with a title per bar), and the same figures as a table for screen readers and copying. */
function salesChart(chart: NonNullable<HomeFigures['chart']>): Html {
  const width = 600;
  const height = 180;
  const top = 16;
  const bottom = 22;
  const slot = width / chart.days.length;
  const max = maxDecimal(chart.days.map((d) => d.amount));
  const bars = chart.days.map((d, i) => {
    const h = Math.round(shareForDrawing(d.amount, max) * (height - top - bottom) * 10) / 10;
    const y = height - bottom - h;
    return html`<rect class="bar" x="${(i * slot + 2).toFixed(1)}" y="${y.toFixed(1)}" width="${(slot - 4).toFixed(1)}" height="${Math.max(h, d.amount === '0' ? 0 : 1).toFixed(1)}" fill="currentColor"><title>${d.day}: ${readable(d.amount, chart.currency)} ${shownTicker(chart.currency)} (${plural(d.payments, 'sale')})</title></rect>`;
  });
  const first = chart.days[0]!.day;
  const last = chart.days.at(-1)!.day;
  return html`<figure class="chart">
<svg id="sales-chart" viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-labelledby="sales-chart-title sales-chart-desc" focusable="false">
<title id="sales-chart-title">Daily sales in ${shownTicker(chart.currency)}, last 30 days</title>
<desc id="sales-chart-desc">From ${first} to ${last}; the highest day is ${readable(max, chart.currency)} ${shownTicker(chart.currency)}.</desc>
<line x1="0" y1="${height - bottom + 0.5}" x2="${width}" y2="${height - bottom + 0.5}" stroke="currentColor" stroke-opacity="0.4"></line>
${bars}
<text x="0" y="${height - 6}" font-size="12" fill="currentColor">${first}</text>
<text x="${width}" y="${height - 6}" font-size="12" fill="currentColor" text-anchor="end">${last}</text>
<text x="0" y="12" font-size="12" fill="currentColor">${readable(max, chart.currency)} ${shownTicker(chart.currency)}</text>
</svg>
<figcaption class="muted">Sales per day (UTC) in ${shownTicker(chart.currency)}${chart.days.some((d) => d.payments > 0) ? '' : ': none in the last 30 days'}.</figcaption>
</figure>
<details><summary>The figures per day</summary>
<div class="table-wrap" tabindex="0"><table id="sales-days"><thead><tr><th scope="col">Day</th><th scope="col">Sales</th><th scope="col">Amount</th></tr></thead>
<tbody>${chart.days
    .filter((d) => d.payments > 0)
    .reverse()
    .map(
      (d) => html`<tr><td class="num">${d.day}</td><td class="num">${d.payments}</td><td class="num">${amount(d.amount, chart.currency)}</td></tr>`,
    )}</tbody></table></div>
</details>`;
}

/** Every coin's sales together in the main fiat, at today's rates; or which coin has no rate now. */
function totalLine(total: SalesTotal | null): Html | string {
  if (total === null) return '';
  if (total.windows === null)
    return html`<p id="sales-total" class="muted">No total in ${total.currency}: no rate for ${total.unpriced.map(shownTicker).join(', ')} now.</p>`;
  const windows = total.windows;
  return html`<p id="sales-total">In all, every coin in ${total.currency} at today's rates: ${SALES_WINDOWS.map(
    (w, i) =>
      html`${i ? ' · ' : ''}${w.label.toLowerCase()} ${html`<data data-window="${w.key}" value="${windows[w.key]}">${windows[w.key]} ${total.currency}</data>`}`,
  )}.</p>`;
}

export function homePage(input: {
  root: string;
  viewer: Viewer;
  store: StoreContext;
  figures: HomeFigures;
  total?: SalesTotal | null;
  now: Date;
  asOf?: AsOf;
}): string {
  const { root, store, figures: f } = input;
  const paths = dashboardPaths(root).store(store.id);
  const glossary = paths.glossary();
  const since = dayStart(input.now, 29).toISOString().slice(0, 10);
  const a = f.attention;
  const attention = [
    a.failedWebhooks
      ? html`<li id="attention-webhooks"><a href="${paths.webhooks()}">${plural(a.failedWebhooks, 'webhook')} failed</a> in the last 30 days: the shop's server did not accept ${a.failedWebhooks === 1 ? 'it' : 'them'} for 12 hours.</li>`
      : '',
    a.failedRefunds
      ? html`<li id="attention-refunds">${plural(a.failedRefunds, 'refund')} failed: the money is still at the payment address. ${term(glossary, 'failed_transfer', 'What a failed transfer is')}.</li>`
      : '',
    a.failedSweeps
      ? html`<li id="attention-sweeps">${plural(a.failedSweeps, 'move')} to your wallet failed: the money is still at the payment address. ${term(glossary, 'failed_transfer', 'What a failed transfer is')}.</li>`
      : '',
    a.differences
      ? html`<li id="attention-differences"><a href="${paths.money()}">${plural(a.differences, 'payment address', 'payment addresses')}</a> ${a.differences === 1 ? 'holds' : 'hold'} a different amount on the network than the books say (${term(glossary, 'reconciliation', 'check against the network')}).</li>`
      : '',
    a.refundGasLow
      ? html`<li id="attention-gas">The ${term(glossary, 'refund_gas', 'money for refund fees')} is low: ${a.refundGasLow.available} GRAM left, a refund in ${a.refundGasLow.token} needs ${a.refundGasLow.needed} GRAM. Refunds in ${a.refundGasLow.token} are refused until ${
          can(store.role, 'refund_fees.top_up')
            ? html`you <a href="${paths.money()}#refund-fees">add some from your wallet</a>`
            : 'an owner of the store adds some from their wallet (Money page)'
        }.</li>`
      : '',
  ].filter((item) => item !== '');
  const sales = f.byPrice.length
    ? html`${salesTable('sales-by-price', 'Completed sales at the price they were created with, less what was refunded (UTC days; today included)', f.byPrice)}
${salesTable('sales-by-coin', 'The same sales by the coin the customer paid with, less what was refunded', f.byCoin)}
${totalLine(input.total ?? null)}`
    : html`<p id="sales-none">No sale in the last 30 days.</p>`;
  const statuses = html`<ul id="statuses" class="statuses">${f.statuses.map(
    (s) =>
      html`<li data-status="${s.status}">${statusLabel(s.status)} <a class="count" href="${paths.payments(`status=${s.status}&from=${since}`)}" aria-label="${plural(s.payments, `${s.status} payment`)}">${s.payments}</a></li>`,
  )}</ul>`;
  const waiting = f.waiting.length
    ? html`<div class="table-wrap" tabindex="0"><table id="waiting" class="keep-table"><caption class="muted">Per coin, over every payment address of the store</caption>
<thead><tr><th scope="col">Coin</th><th scope="col">${term(glossary, 'refundable', 'Can be refunded now')}</th><th scope="col">${term(glossary, 'in_deposits')}</th></tr></thead>
<tbody>${f.waiting.map(
        (w) =>
          html`<tr data-coin="${w.coin}"><th scope="row">${shownCoinName(w.coin)}</th><td class="num" data-figure="refundable">${amount(w.refundable, w.coin)}</td><td class="num" data-figure="in-deposits">${amount(w.inDeposits, w.coin)}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p id="waiting">No money is waiting at the store's payment addresses.</p>`;
  const failed = f.failed.length
    ? html`<ul id="failed-transfers">${f.failed.map(
        (x) =>
          html`<li data-kind="${x.kind}" data-coin="${x.coin}">${plural(x.transfers, x.kind === 'refund' ? 'refund' : 'move to your wallet', x.kind === 'refund' ? 'refunds' : 'moves to your wallet')} of ${amount(x.amount, x.coin)} failed</li>`,
      )}</ul>`
    : html`<p id="failed-transfers">No ${term(glossary, 'failed_transfer', 'transfer out has failed')}.</p>`;
  // Said first: until the store has its own wallet, no sale reaches the owner.
  const noTreasury = a.noTreasury
    ? html`<section class="card notice" id="no-treasury" aria-labelledby="no-treasury-heading"><h2 id="no-treasury-heading">Your sales stay in Kassa's wallets</h2>
<p>Until you set your own wallet, every sale stays in Kassa's wallets (one per payment). ${
        can(store.role, 'settings.change')
          ? html`<a href="${paths.settings()}#treasury-heading">Set your wallet in Settings</a>.`
          : 'An owner of the store can set it in Settings.'
      }</p></section>`
    : '';
  const body = html`<h1>${store.name}</h1>
${asOfWords(input.asOf)}
${noTreasury}
<section class="card" aria-labelledby="attention-heading"><h2 id="attention-heading">Needs attention</h2>
${attention.length ? html`<ul id="attention">${attention}</ul>` : html`<p id="attention">Nothing needs attention.</p>`}
</section>
<section class="card" aria-labelledby="sales-heading"><h2 id="sales-heading">${term(glossary, 'sales')}</h2>
${sales}
${f.chart ? salesChart(f.chart) : ''}
</section>
<section class="card" aria-labelledby="statuses-heading"><h2 id="statuses-heading">Payments in the last 30 days</h2>
<p class="muted">By status; each opens the list of them.</p>
${statuses}
</section>
<section class="card" aria-labelledby="waiting-heading"><h2 id="waiting-heading">Money waiting</h2>
${waiting}
${failed}
<p><a href="${paths.money()}">All the money, per coin</a> · <a href="${glossary}">What the words mean</a></p>
</section>`;
  return shell({ root, title: store.name, body, viewer: input.viewer, store, current: 'home' });
}
