// The customer's pages of a payment link ({checkout_base_url}/l/{id}) that are not a payment's
// checkout: the link's own page (the store, what it sells, the price or a field for an open amount,
// and the button that asks for the payment: a POST, so that a link preview makes none), and why a
// link takes no payment now (not found, expired, used up, deactivated, every place held). The
// checkout's shell, styles and CSP (CHECKOUT_CSP: nothing inline).
import { html } from '../web/html.ts';
import { t, type Lang, type MessageKey } from './i18n.ts';
import { shell } from './page.ts';
import { AMOUNT_MAX_LENGTH, shownTicker } from '../money.ts';
import type { LinkState } from '../paymentLinks/links.ts';

/** Why the amount the customer typed was refused (`openAmountProblem`: the API's amount rule and the link's range; or the coin's precision). */
type AmountProblem = 'invalid' | 'long' | 'below' | 'above' | 'decimals';

const CLOSED_TEXT: Record<Exclude<LinkState, 'open'> | 'full', MessageKey> = {
  expired: 'linkExpiredText',
  used_up: 'linkUsedUpText',
  deactivated: 'linkDeactivatedText',
  full: 'linkFullText',
};

/** A link that takes no payment now: not found, closed (and why), or every place held by a payment being paid. */
export function renderLinkMessagePage(lang: Lang, prefix: string, state: Exclude<LinkState, 'open'> | 'full' | 'not_found', embed = false): string {
  const title = t(lang, state === 'not_found' ? 'linkNotFoundTitle' : state === 'full' ? 'linkFullTitle' : 'linkClosedTitle');
  const text = t(lang, state === 'not_found' ? 'linkNotFoundText' : CLOSED_TEXT[state]);
  return shell({
    lang,
    prefix,
    title,
    embed,
    body: html`<div class="wrap"><main id="checkout" class="card message-page">
<section class="state" aria-labelledby="state-title"><div class="result ended"><h1 id="state-title">${title}</h1></div>
<p>${text}</p></section>
</main></div>`,
  });
}

interface LinkPageInput {
  lang: Lang;
  prefix: string;
  linkId: string;
  storeName: string;
  currency: string;
  description: string | null;
  /** The link's own price; null: an open amount the customer types (within min and max). */
  amount: string | null;
  min: string | null;
  max: string | null;
  /** What the customer typed, shown again (with the problem, when refused). */
  typed?: string;
  problem?: AmountProblem;
  /** Framed by <kassa-pay>: the host page's origin, kept through the form (src/checkout/embed.ts). */
  embed?: string;
  /** The language was asked in the address (?lang=): the form keeps it (else the browser's own decides again). */
  langAsked?: boolean;
}

/**
 * The link's page: the store's name, the description, and either the price with the button that
 * asks for the payment or the amount's field. The form is a POST to the link itself (its query keeps
 * the language and the frame's origin): a visit (GET, HEAD) never makes a payment.
 */
export function renderLinkPage(form: LinkPageInput): string {
  const { lang, min, max } = form;
  const range =
    min !== null && max !== null
      ? t(lang, 'linkAmountBetween', { min, max })
      : min !== null
        ? t(lang, 'linkAmountFrom', { min })
        : max !== null
          ? t(lang, 'linkAmountTo', { max })
          : '';
  const problemText =
    form.problem === undefined
      ? ''
      : form.problem === 'below'
        ? t(lang, 'linkAmountBelow', { min: min ?? '' })
        : form.problem === 'above'
          ? t(lang, 'linkAmountAbove', { max: max ?? '' })
          : form.problem === 'long'
            ? t(lang, 'linkAmountLong', { max: String(AMOUNT_MAX_LENGTH) })
            : t(lang, form.problem === 'decimals' ? 'linkAmountDecimals' : 'linkAmountInvalid');
  const describedBy = [range ? 'amount-range' : '', problemText ? 'amount-problem' : ''].filter(Boolean).join(' ');
  const query = new URLSearchParams();
  if (form.langAsked) query.set('lang', lang);
  if (form.embed !== undefined) query.set('embed', form.embed);
  const title = t(lang, 'pageTitle', { store: form.storeName });
  return shell({
    lang,
    prefix: form.prefix,
    title,
    embed: form.embed !== undefined,
    body: html`<div class="wrap"><main id="checkout" class="card">
<section class="summary" aria-labelledby="store-name">
<p class="eyebrow">${t(lang, 'payTo')}</p>
<h1 id="store-name">${form.storeName}</h1>
${form.amount === null ? html`<h2 class="small-title">${t(lang, 'linkAmountTitle')}</h2>` : ''}
${form.description ? html`<p class="description">${form.description}</p>` : ''}
${form.amount !== null ? html`<dl class="facts"><div><dt>${t(lang, 'amount')}</dt><dd class="amount" id="amount">${form.amount} ${shownTicker(form.currency)}</dd></div></dl>` : ''}
</section>
<form method="post" action="${form.prefix}/l/${form.linkId}${query.size > 0 ? `?${query.toString()}` : ''}" class="link-amount" novalidate>
${
  form.amount === null
    ? html`<div class="field">
<label class="field-label" for="amount">${t(lang, 'linkAmountLabel', { currency: shownTicker(form.currency) })}</label>
<input class="value amount-input" id="amount" name="amount" type="text" inputmode="decimal" autocomplete="off" required maxlength="${AMOUNT_MAX_LENGTH}" value="${form.typed ?? ''}"${describedBy ? html` aria-describedby="${describedBy}"` : ''}${problemText ? html` aria-invalid="true"` : ''}>
${range ? html`<p class="hint" id="amount-range">${range}</p>` : ''}
${problemText ? html`<p class="problem" id="amount-problem" role="alert">${problemText}</p>` : ''}
</div>`
    : ''
}
<button class="button primary" type="submit">${t(lang, 'linkContinue')}</button>
</form>
</main></div>`,
  });
}
