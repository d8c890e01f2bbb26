// The customer's pages of a payment link ({checkout_base_url}/l/{id}) that are not a payment's
// checkout: the open amount's form, and why a link takes no payment (not found, expired, used up,
// deactivated). The checkout's shell, styles and CSP (CHECKOUT_CSP: nothing inline).
import { html } from '../web/html.ts';
import { t, type Lang, type MessageKey } from './i18n.ts';
import { shell } from './page.ts';
import type { LinkState } from '../paymentLinks/links.ts';

/** Why the amount the customer typed was refused (`openAmountProblem`, or the coin's precision). */
export type AmountProblem = 'invalid' | 'below' | 'above' | 'decimals';

const CLOSED_TEXT: Record<Exclude<LinkState, 'open'>, MessageKey> = {
  expired: 'linkExpiredText',
  used_up: 'linkUsedUpText',
  deactivated: 'linkDeactivatedText',
};

/** A link that takes no payment: not found, or closed (and why). */
export function renderLinkMessagePage(lang: Lang, prefix: string, state: Exclude<LinkState, 'open'> | 'not_found', embed = false): string {
  const title = t(lang, state === 'not_found' ? 'linkNotFoundTitle' : 'linkClosedTitle');
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

export interface AmountForm {
  lang: Lang;
  prefix: string;
  linkId: string;
  currency: string;
  description: string | null;
  min: string | null;
  max: string | null;
  /** What the customer typed, shown again with the problem. */
  typed?: string;
  problem?: AmountProblem;
  /** Framed by <kassa-pay>: the host page's origin, kept through the form (src/checkout/embed.ts). */
  embed?: string;
}

/** An open amount: a form (GET, so that its answer is the same visit of the link) asking how much. */
export function renderAmountPage(form: AmountForm): string {
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
          : t(lang, form.problem === 'decimals' ? 'linkAmountDecimals' : 'linkAmountInvalid');
  const describedBy = [range ? 'amount-range' : '', problemText ? 'amount-problem' : ''].filter(Boolean).join(' ');
  return shell({
    lang,
    prefix: form.prefix,
    title: t(lang, 'linkAmountTitle'),
    embed: form.embed !== undefined,
    body: html`<div class="wrap"><main id="checkout" class="card">
<h1>${t(lang, 'linkAmountTitle')}</h1>
${form.description ? html`<p class="description">${form.description}</p>` : ''}
<form method="get" action="${form.prefix}/l/${form.linkId}" class="link-amount" novalidate>
<input type="hidden" name="lang" value="${lang}">
${form.embed !== undefined ? html`<input type="hidden" name="embed" value="${form.embed}">` : ''}
<div class="field">
<label class="field-label" for="amount">${t(lang, 'linkAmountLabel', { currency: form.currency })}</label>
<input class="value amount-input" id="amount" name="amount" type="text" inputmode="decimal" autocomplete="off" required maxlength="40" value="${form.typed ?? ''}"${describedBy ? html` aria-describedby="${describedBy}"` : ''}${problemText ? html` aria-invalid="true"` : ''}>
${range ? html`<p class="hint" id="amount-range">${range}</p>` : ''}
${problemText ? html`<p class="problem" id="amount-problem" role="alert">${problemText}</p>` : ''}
</div>
<button class="button primary" type="submit">${t(lang, 'linkContinue')}</button>
</form>
</main></div>`,
  });
}
