// The customer's portal of a subscription ({checkout_base_url}/s/{token}; docs/API.md, Subscriptions),
// in the checkout's shell, styles, languages and CSP (nothing inline): the plan, the status, the next
// date, the credit, the history; "Pay the next period" (or "Top up one period" when the credit
// already covers it, or "Continue to your payment" while one is open) and "Cancel at the end of the
// period" when the plan lets subscribers do it — both POST forms, so a link preview does nothing.
// Inside the Telegram Mini App ({checkout_base_url}/tg/s/{token}) the same page with Telegram's glue.
import { shownTicker } from '../money.ts';
import type { LedgerRow } from '../subscriptions/records.ts';
import { mayCancel, mayPay, payKind, type PortalView } from '../subscriptions/portal.ts';
import { html } from '../web/html.ts';
import { t, type Lang, type MessageKey } from './i18n.ts';
import { shell } from './page.ts';
import { type TelegramPage, telegramData } from './telegram.ts';

interface PortalPageInput {
  lang: Lang;
  prefix: string;
  token: string;
  view: PortalView;
  /** The language was asked in the address (?lang=): the forms keep it. */
  langAsked: boolean;
  /** The portal's last command was refused: the plan does not let subscribers cancel. */
  refused?: 'not_allowed';
  /** Inside the Telegram Mini App: its glue, and the forms go on inside it. */
  telegram?: TelegramPage | null;
}

const dateOf = (lang: Lang, at: Date): string => new Intl.DateTimeFormat(lang === 'ru' ? 'ru-RU' : 'en-GB', { dateStyle: 'long', timeZone: 'UTC' }).format(at);

const money = (amount: string, currency: string): string => `${amount} ${shownTicker(currency)}`;

function priceText(lang: Lang, view: PortalView): string {
  const { plan } = view;
  const amount = money(plan.amount, plan.currency);
  const one = plan.interval_count === 1;
  const key = `portal_per_${plan.interval_unit}${one ? '' : 's'}` as MessageKey;
  return t(lang, key, { amount, count: String(plan.interval_count) });
}

function entryRow(lang: Lang, entry: LedgerRow) {
  const positive = !entry.amount.startsWith('-');
  // A positive refund entry gives back what a refund that failed had taken.
  const what = entry.kind === 'refund' && positive && entry.amount !== '0' ? 'portal_entry_refund_back' : `portal_entry_${entry.kind}`;
  return html`<li class="entry"><span class="entry-what">${t(lang, what as MessageKey)}<span class="entry-when">${dateOf(lang, entry.created_at)}</span></span><span class="entry-amount">${positive ? '+' : ''}${money(entry.amount, entry.currency)}</span></li>`;
}

/** The portal's page. */
export function renderPortalPage(input: PortalPageInput): string {
  const { lang, view, prefix } = input;
  const { row, plan } = view;
  const store = view.storeName;
  const query = new URLSearchParams();
  if (input.langAsked) query.set('lang', lang);
  if (input.telegram) query.set('tg', '1');
  const action = (what: 'pay' | 'cancel') => `${prefix}/s/${input.token}/${what}${query.size > 0 ? `?${query.toString()}` : ''}`;
  const periodEnd = dateOf(lang, row.current_period_end);
  const graceEnd = new Date(row.current_period_end.getTime() + plan.grace_days * 86_400_000);
  const ended = row.status === 'expired' || row.status === 'cancelled';
  const dateFact: [MessageKey, Date] | null = ended
    ? ['portalEndedOn', (row.status === 'expired' ? row.expired_at : row.cancelled_at) ?? row.current_period_end]
    : row.cancel_at_period_end
      ? ['portalEndsOn', row.current_period_end]
      : row.status === 'trialing'
        ? ['portalTrialEnds', row.current_period_end]
        : ['portalNextDate', row.current_period_end];
  const notice = ended
    ? t(lang, 'portalEndedText', { store })
    : row.cancel_at_period_end
      ? t(lang, 'portalCancellingText', { date: periodEnd })
      : row.status === 'past_due'
        ? t(lang, 'portalPastDueText', { date: dateOf(lang, graceEnd) })
        : '';
  const payLabel = view.openPaymentId !== null ? 'portalContinue' : payKind(row, plan) === 'next_period' ? 'portalPayNext' : 'portalTopUp';
  const history = [...view.ledger].reverse();
  const title = t(lang, 'portalTitle', { store });
  return shell({
    lang,
    prefix,
    title,
    telegram: input.telegram != null,
    body: html`<div class="wrap"><main id="checkout" class="card portal" data-subscription-status="${row.status}"${ended ? html` data-ended="true"` : ''}>
<section class="summary" aria-labelledby="portal-title">
<p class="eyebrow">${t(lang, 'portalEyebrow')}</p>
<h1 id="portal-title">${store}</h1>
<dl class="facts">
<div><dt>${t(lang, 'portalPlan')}</dt><dd id="portal-plan">${plan.name}</dd></div>
<div><dt>${t(lang, 'portalStatus')}</dt><dd id="portal-status">${t(lang, `portal_status_${row.status}` as MessageKey)}</dd></div>
<div><dt>${t(lang, 'portalPrice')}</dt><dd id="portal-price">${priceText(lang, view)}</dd></div>
${dateFact ? html`<div><dt>${t(lang, dateFact[0])}</dt><dd id="portal-date">${dateOf(lang, dateFact[1])}</dd></div>` : ''}
<div><dt>${t(lang, 'portalCredit')}</dt><dd class="amount" id="portal-credit" aria-describedby="portal-credit-hint">${money(row.credit, plan.currency)}</dd></div>
</dl>
<p class="hint" id="portal-credit-hint">${t(lang, 'portalCreditHint')}</p>
${notice ? html`<p class="portal-notice" id="portal-notice" role="status">${notice}</p>` : ''}
${input.refused === 'not_allowed' ? html`<p class="problem" id="portal-refused" role="alert">${t(lang, 'portalCancelRefused', { store })}</p>` : ''}
</section>
${
  mayPay(row)
    ? html`<form method="post" action="${action('pay')}" class="portal-pay">
<button class="button primary" id="portal-pay" type="submit">${t(lang, payLabel)}</button>
<p class="hint">${t(lang, 'portalPayHint')}</p>
</form>`
    : ''
}
<section class="portal-history" aria-labelledby="history-title">
<h2 class="small-title" id="history-title">${t(lang, 'portalHistory')}</h2>
${history.length > 0 ? html`<ul class="entries" id="portal-history">${history.map((entry) => entryRow(lang, entry))}</ul>` : html`<p class="hint">${t(lang, 'portalNoHistory')}</p>`}
</section>
${
  mayCancel(view)
    ? html`<details class="portal-cancel"><summary>${t(lang, 'portalCancel')}</summary>
<form method="post" action="${action('cancel')}">
<p>${t(lang, 'portalCancelText', { date: periodEnd })}</p>
<button class="button" id="portal-cancel" type="submit">${t(lang, 'portalCancelConfirm')}</button>
</form></details>`
    : ''
}
</main></div>${input.telegram ? telegramData(input.telegram) : ''}`,
  });
}

/** No portal at this address (unknown, mistyped or re-issued: the same page, nothing said of which). */
export function renderPortalNotFoundPage(lang: Lang, prefix: string): string {
  const title = t(lang, 'portalNotFoundTitle');
  return shell({
    lang,
    prefix,
    title,
    body: html`<div class="wrap"><main id="checkout" class="card message-page">
<section class="state" aria-labelledby="state-title"><div class="result ended"><h1 id="state-title">${title}</h1></div>
<p>${t(lang, 'portalNotFoundText')}</p></section>
</main></div>`,
  });
}
