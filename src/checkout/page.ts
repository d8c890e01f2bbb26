// The hosted checkout page, rendered on the server: one renderer for every state, used both for the
// first load and for the script's in-place refreshes (it fetches the page again and swaps #checkout).
import type { TonNetwork } from '../config.ts';
import { html, jsonForScript, raw, type Html } from '../web/html.ts';
import { type CspOptions, strictCsp } from '../web/csp.ts';
import { pageDocument } from '../web/page.ts';
import { clientMessages, LANGUAGES, t, type Lang, type MessageKey } from './i18n.ts';
import type { TransferLinks } from './walletLinks.ts';
import { assetPath } from './static.ts';
import { explorerLinks, exchangeRateText, formatPaidAt, paymentReference } from './facts.ts';
import { TON_CONNECT_BRIDGE_ORIGINS, tonConnectManifestPath, tonConnectWalletsPath } from './tonconnect.ts';
import { isFinal } from '../payments/transitions.ts';
import type { CheckoutView } from '../presenters/checkout.ts';
import { amounts, type CheckoutRow, type MethodOffer } from './view.ts';
import { fromBaseUnits, shownTicker } from '../money.ts';
import { isHostName } from '../net/addresses.ts';
import { formatReference } from '../payments/reference.ts';
import { TELEGRAM_TEXTS, telegramData, type TelegramPage } from './telegram.ts';

/**
 * A payment page's policy: the same, plus only what this page needs: <style> elements carrying
 * this response's nonce (TON Connect's UI fills one; the store's colour is another), connections
 * to the bridges of the wallets the page offers while the payment is open, and the store's logo;
 * in the Telegram Mini App, what Telegram needs (telegramCsp, src/checkout/telegram.ts).
 */
export function paymentPageCsp(
  row: Pick<CheckoutRow, 'status' | 'store_logo_url'>,
  styleNonce: string,
  telegram: Pick<CspOptions, 'frameAncestors' | 'styleHashes'> = {},
): string {
  const logo = storeLogo(row);
  return strictCsp({
    styleNonce,
    connectOrigins: isFinal(row.status) ? [] : TON_CONNECT_BRIDGE_ORIGINS,
    imageOrigin: logo ? logo.origin : null,
    ...telegram,
  });
}

/**
 * The store's logo when it is an https URL whose host is a host name: a logo stored before
 * `kassa store update` checked that (a host such as `cdn.example.com;script-src`) is not shown,
 * and its origin never reaches the page's Content-Security-Policy.
 */
function storeLogo(row: Pick<CheckoutRow, 'store_logo_url'>): URL | null {
  if (!row.store_logo_url) return null;
  try {
    const url = new URL(row.store_logo_url);
    return url.protocol === 'https:' && isHostName(url.hostname) ? url : null;
  } catch {
    return null;
  }
}

/** The text colour with the better contrast on `background` (#rrggbb): white or near-black. */
export function textColourOn(background: string): string {
  const channel = (hex: string) => {
    const c = parseInt(hex, 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(background.slice(1, 3)) + 0.7152 * channel(background.slice(3, 5)) + 0.0722 * channel(background.slice(5, 7));
  const contrastWhite = 1.05 / (luminance + 0.05);
  const contrastDark = (luminance + 0.05) / (0.0116 + 0.05); // #111111
  return contrastWhite >= contrastDark ? '#ffffff' : '#111111';
}

/** Less time left than this: the page warns the customer. */
const EXPIRY_WARNING_MS = 5 * 60_000;

const LANGUAGE_NAMES: Record<Lang, string> = { en: 'English', ru: 'Русский' };

/** The key the page script compares with each live view to know when to re-render. */
const stateKey = (view: CheckoutView): string => `${view.status}|${view.paymentDetails?.receivedAmount ?? '0'}|${view.paymentDetails?.address ?? ''}`;

/** 3725000 ms → "1:02:05"; 65000 → "01:05". */
function formatCountdown(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  const two = (n: number) => String(n).padStart(2, '0');
  return hours > 0 ? `${hours}:${two(minutes)}:${two(seconds)}` : `${two(minutes)}:${two(seconds)}`;
}

/** Safe to link to: http(s) only (returnURL is validated at creation; this is defence in depth). */
function safeHttpUrl(value: string | undefined): string | null {
  if (!value) return null;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.toString() : null;
  } catch {
    return null;
  }
}

interface Shell {
  lang: Lang;
  prefix: string;
  title: string;
  /** The page's own path (for the language switch and the script's refreshes). */
  body: Html;
  data?: Record<string, unknown>;
  /** Without JavaScript, an open payment's page reloads itself now and then to show its status. */
  noscriptRefresh?: boolean;
  /** This response's CSP style nonce (payment pages only). */
  styleNonce?: string;
  /** Load TON Connect's UI (an open payment). */
  tonConnect?: boolean;
  /** The store's colour (#rrggbb) for the main button and the card's top edge. */
  accent?: string | null;
  /** The Telegram Mini App's scripts (src/checkout/telegram.ts), after the page's own: Telegram's telegram-web-app.js, then Kassa's glue. */
  telegram?: boolean;
  /** Framed by <kassa-pay> on a shop's page (src/checkout/embed.ts): embed.js tells the element its size and payment. */
  embed?: boolean;
}

export function shell({ lang, prefix, title, body, data, noscriptRefresh, styleNonce, tonConnect, accent, telegram, embed }: Shell): string {
  const switcher = html`<nav class="langs" aria-label="${t(lang, 'language')}"><ul>${LANGUAGES.map(
    (code) =>
      html`<li><a href="?lang=${code}" lang="${code}" hreflang="${code}"${code === lang ? raw(' aria-current="true"') : ''}>${LANGUAGE_NAMES[code]}</a></li>`,
  )}</ul></nav>`;
  const accentStyle =
    accent && /^#[0-9a-f]{6}$/.test(accent)
      ? [{ css: html`:root{--brand:${accent};--brand-text:${textColourOn(accent)}}.card{border-top:4px solid ${accent}}` }]
      : [];
  return pageDocument({
    lang,
    title,
    referrer: 'no-referrer',
    noscriptRefreshSeconds: noscriptRefresh ? 20 : undefined,
    stylesheets: [assetPath(prefix, 'checkout.css')],
    // TON Connect's UI writes its styles into the <style id="_goober"> it finds (goober), which the nonce allows.
    nonceStyles: styleNonce ? { nonce: styleNonce, styles: [...accentStyle, ...(tonConnect ? [{ css: html` `, id: '_goober' }] : [])] } : undefined,
    scripts: [
      ...(styleNonce && tonConnect ? [assetPath(prefix, 'tonconnect-ui.js')] : []),
      ...(data ? [assetPath(prefix, 'checkout.js')] : []),
      ...(telegram ? [assetPath(prefix, 'telegram-web-app.js'), assetPath(prefix, 'telegram.js')] : []),
      ...(embed ? [assetPath(prefix, 'embed.js')] : []),
    ],
    body: html`<div class="page">
<header class="top"><span class="brand" aria-hidden="true">Kassa</span>${switcher}</header>
${body}
<footer class="foot"><p>${t(lang, 'footer')}</p></footer>
</div>
${data ? html`<script type="application/json" id="kassa-data">${jsonForScript(data)}</script>` : ''}`,
  });
}

interface PageInput {
  lang: Lang;
  prefix: string;
  network: TonNetwork;
  row: CheckoutRow;
  view: CheckoutView;
  /** The store's methods with their prices now: only for a `created` payment. */
  offers: MethodOffer[] | null;
  links: TransferLinks | null;
  /** Inline SVG of the ton:// link. */
  qr: string | null;
  now: Date;
}

/** An amount as people read it: TON's ticker is GRAM (money.ts shownTicker). */
const coinText = (amount: string, symbol: string) => `${amount} ${shownTicker(symbol)}`;

function createdSection(input: PageInput): Html {
  const { lang, prefix, offers } = input;
  const list = offers ?? [];
  return html`<section class="state state-created" aria-labelledby="state-title">
<h2 id="state-title" tabindex="-1">${t(lang, 'chooseMethod')}</h2>
${
  list.length === 0
    ? html`<p class="note">${t(lang, 'noMethods')}</p>`
    : html`<p class="hint">${t(lang, 'chooseHint')}</p>
<ul class="methods" role="list">${list.map(({ method, coinAmount }) => {
        // Where the customer chooses: the native coin by its new name, and its old one (CONTRACT §12).
        const name = t(lang, 'coinOnChain', { coin: method.coin_symbol === 'TON' ? t(lang, 'coinGram') : method.coin_name, chain: method.chain_name });
        const label =
          coinAmount === null
            ? `${shownTicker(method.coin_symbol)}: ${t(lang, 'methodUnavailable')}`
            : `${t(lang, 'payWith', { amount: coinAmount, coin: shownTicker(method.coin_symbol) })}, ${name}`;
        return html`<li><button type="button" class="method" data-method-id="${method.id}" data-coin="${method.coin_symbol}" aria-label="${label}"${coinAmount === null ? raw(' disabled data-unavailable="true"') : ''}>
<img src="${prefix}/assets/coins/${encodeURIComponent(method.coin_symbol)}.svg" alt="" width="36" height="36">
<span class="method-text"><span class="method-amount">${coinAmount === null ? shownTicker(method.coin_symbol) : coinText(coinAmount, method.coin_symbol)}</span> <span class="method-name">${coinAmount === null ? t(lang, 'methodUnavailable') : name}</span></span>
<span class="chevron" aria-hidden="true">›</span>
</button></li>`;
      })}</ul>`
}
<noscript><p class="note">${t(lang, 'noscript')}</p></noscript>
</section>`;
}

/**
 * A payment settled to the store's treasury (CONTRACT §12): the reference, in large type, that the
 * customer must send as the transfer's comment — what tells the payment apart in the shop's wallet.
 */
function referenceBlock(input: PageInput, reference: string, linked: boolean): Html {
  const { lang, row } = input;
  return html`<div class="reference-box" id="reference-box" role="group" aria-labelledby="reference-label">
<p class="reference-required" id="reference-label"><strong>${t(lang, 'commentRequired')}</strong></p>
<div class="copy-row"><code class="value reference-value" id="reference-value" aria-label="${t(lang, 'commentLabel')}">${formatReference(reference)}</code>
<button type="button" class="copy" data-copy="reference-value" aria-label="${t(lang, 'copyReference')}">${t(lang, 'copy')}</button></div>
<p class="reference-text">${t(lang, 'commentRequiredText', { store: row.store_name })}${linked ? html` ${t(lang, 'commentFilled')}` : ''}</p>
</div>`;
}

function pendingSection(input: PageInput): Html {
  const { lang, row, view, links, qr } = input;
  const details = view.paymentDetails!;
  const parts = amounts(row)!;
  const symbol = details.coin.symbol;
  const toSend = fromBaseUnits(parts.remaining, parts.decimals);
  const underpaid = parts.received > 0n && parts.remaining > 0n;
  const chain = details.chain.name;
  return html`<section class="state state-pending" aria-labelledby="state-title">
<h2 id="state-title" tabindex="-1">${t(lang, 'status_pending')}</h2>
<p class="send-line"><span class="send-label">${t(lang, underpaid ? 'sendRest' : 'sendExactly')}</span>
<strong class="send-amount" id="send-amount">${coinText(toSend, symbol)}</strong></p>
${
  underpaid
    ? html`<dl class="progress">
<div><dt>${t(lang, 'received')}</dt><dd id="received-amount">${coinText(details.receivedAmount, symbol)}</dd></div>
<div><dt>${t(lang, 'remaining')}</dt><dd id="remaining-amount">${coinText(toSend, symbol)}</dd></div>
</dl>`
    : ''
}
${
  links
    ? html`<div class="tonconnect" id="tonconnect" hidden>
<button type="button" class="button primary" id="tonconnect-pay">${t(lang, 'payConnected')}</button>
<p class="hint" id="tonconnect-account" hidden><span id="tonconnect-account-text"></span> <button type="button" class="linklike" id="tonconnect-disconnect">${t(lang, 'disconnect')}</button></p>
<p class="hint or">${t(lang, 'orManually')}</p>
</div>`
    : ''
}
${row.reference !== null ? referenceBlock(input, row.reference, links !== null) : ''}
${row.coin_kind === 'jetton' ? html`<p class="gas-note" id="gas-note">${t(lang, 'jettonGas', { coin: symbol })}</p>` : ''}
${qr ? html`<div class="qr-box">${raw(qr)}</div>` : ''}
<div class="field" role="group" aria-labelledby="amount-label">
<span class="field-label" id="amount-label">${t(lang, 'amountToSend')} (${shownTicker(symbol)})</span>
<div class="copy-row"><code class="value" id="amount-value">${toSend}</code>
<button type="button" class="copy" data-copy="amount-value" aria-label="${t(lang, 'copyAmount')}">${t(lang, 'copy')}</button></div>
</div>
<div class="field" role="group" aria-labelledby="address-label">
<span class="field-label" id="address-label">${t(lang, 'toAddress', { chain })}</span>
<div class="copy-row"><code class="value address" id="address-value">${details.address ?? ''}</code>
<button type="button" class="copy" data-copy="address-value" aria-label="${t(lang, 'copyAddress')}">${t(lang, 'copy')}</button></div>
</div>
${
  links
    ? html`<div class="wallets">
<a class="button primary" id="wallet-link" href="${links.ton}">${t(lang, 'openWallet')}</a>
<a class="button" id="tonkeeper-link" href="${links.tonkeeper}" rel="noreferrer noopener" target="_blank">${t(lang, 'payWithApp', { app: 'Tonkeeper' })}</a>
<a class="button" id="mytonwallet-link" href="${links.mytonwallet}" rel="noreferrer noopener" target="_blank">${t(lang, 'payWithApp', { app: 'MyTonWallet' })}</a>
</div>`
    : ''
}
<p class="warning">${row.coin_kind === 'jetton' ? t(lang, 'jettonWarning', { coin: symbol }) : t(lang, 'nativeWarning')}</p>
<p class="waiting"><span class="spinner" aria-hidden="true"></span>${t(lang, 'waiting')}</p>
</section>`;
}

function timeUpSection(input: PageInput): Html {
  const { lang } = input;
  return html`<section class="state state-timeup" aria-labelledby="state-title">
<h2 id="state-title" tabindex="-1">${t(lang, 'timeUp')}</h2>
<p>${t(lang, 'timeUpText')}</p>
<p class="waiting"><span class="spinner" aria-hidden="true"></span></p>
</section>`;
}

function returnLink(input: PageInput): Html | '' {
  const url = safeHttpUrl(input.view.returnURL);
  return url
    ? html`<a class="button primary return" id="return-link" href="${url}" rel="noreferrer">${t(input.lang, 'returnToStore', { store: input.row.store_name })}</a>`
    : '';
}

function completedSection(input: PageInput): Html {
  const { lang, row, view } = input;
  const details = view.paymentDetails;
  const hashes = details?.transactionSignatures ?? [];
  return html`<section class="state state-completed" aria-labelledby="state-title">
<div class="result ok"><svg class="result-icon" viewBox="0 0 24 24" width="40" height="40" aria-hidden="true" focusable="false"><circle cx="12" cy="12" r="12" fill="currentColor"/><path d="M6.5 12.5l3.5 3.5 7.5-8" fill="none" stroke="#fff" stroke-width="2.4" stroke-linecap="round" stroke-linejoin="round"/></svg>
<h2 id="state-title" tabindex="-1">${t(lang, 'paidTitle')}</h2></div>
<p>${t(lang, 'paidText', { store: row.store_name })}</p>
${
  details
    ? html`<dl class="progress"><div><dt>${t(lang, 'paidAmount')}</dt><dd id="paid-amount">${coinText(details.receivedAmount, details.coin.symbol)}</dd></div>
${row.paid_at ? html`<div><dt>${t(lang, 'paidAt')}</dt><dd><time id="paid-at" datetime="${row.paid_at.toISOString()}">${formatPaidAt(row.paid_at, lang)}</time></dd></div>` : ''}</dl>`
    : ''
}
${
  hashes.length > 0
    ? html`<h3 class="small-title">${t(lang, hashes.length > 1 ? 'transactionsMany' : 'transactions')}</h3>
<ul class="hashes" role="list">${hashes.map(
        (hash) =>
          html`<li><code>${hash}</code>${explorerLinks(input.network, hash).map(
            (link) => html` <a class="explorer" href="${link.url}" rel="noreferrer noopener" target="_blank">${t(lang, 'viewOn', { explorer: link.name })}</a>`,
          )}</li>`,
      )}</ul>`
    : ''
}
${returnLink(input)}
</section>`;
}

function endedSection(input: PageInput, kind: 'expired' | 'cancelled'): Html {
  const { lang, row } = input;
  const hadAddress = row.address_friendly !== null;
  return html`<section class="state state-${kind}" aria-labelledby="state-title">
<div class="result ended"><svg class="result-icon" viewBox="0 0 24 24" width="40" height="40" aria-hidden="true" focusable="false"><circle cx="12" cy="12" r="12" fill="currentColor"/><path d="M8 8l8 8M16 8l-8 8" fill="none" stroke="#fff" stroke-width="2.4" stroke-linecap="round"/></svg>
<h2 id="state-title" tabindex="-1">${t(lang, kind === 'expired' ? 'expiredTitle' : 'cancelledTitle')}</h2></div>
<p>${t(lang, kind === 'expired' ? 'expiredText' : 'cancelledText', { store: row.store_name })}</p>
${
  hadAddress
    ? html`<p class="note" id="sent-anyway">${t(lang, 'sentAnyway', { store: row.store_name })}</p>
<div class="field" role="group" aria-labelledby="address-label"><span class="field-label" id="address-label">${t(lang, 'depositAddress')}</span><code class="value address">${row.address_friendly}</code></div>`
    : ''
}
${returnLink(input)}
</section>`;
}

function stateSection(input: PageInput): Html {
  const { row, now } = input;
  const open = row.status === 'created' || row.status === 'pending';
  if (open && now.getTime() >= row.expires_at.getTime()) return timeUpSection(input);
  switch (row.status) {
    case 'created':
      return createdSection(input);
    case 'pending':
      return pendingSection(input);
    case 'completed':
      return completedSection(input);
    case 'expired':
      return endedSection(input, 'expired');
    case 'cancelled':
      return endedSection(input, 'cancelled');
  }
}

/** The #checkout element alone: what the script swaps in when the payment changes. */
function checkoutMain(input: PageInput): Html {
  const { lang, row, view, now } = input;
  const open = !isFinal(row.status) && now.getTime() < row.expires_at.getTime();
  const left = row.expires_at.getTime() - now.getTime();
  const rate = exchangeRateText({ currency: row.currency, coinSymbol: row.coin_symbol, exchangeRate: row.exchange_rate });
  const returnUrl = safeHttpUrl(row.return_url ?? undefined);
  return html`<main id="checkout" class="card" data-status="${row.status}" data-key="${stateKey(view)}" data-ended="${isFinal(row.status) ? 'true' : 'false'}">
<section class="summary" aria-labelledby="store-name">
${storeLogo(row) ? html`<img class="logo" id="store-logo" src="${row.store_logo_url}" alt="" width="56" height="56">` : ''}
<p class="eyebrow">${t(lang, 'payTo')}</p>
<h1 id="store-name">${row.store_name}</h1>
${row.description !== null ? html`<p class="description" id="description">${row.description}</p>` : ''}
<dl class="facts">
<div><dt>${t(lang, 'amount')}</dt><dd class="amount" id="amount">${row.amount} ${shownTicker(row.currency)}</dd></div>
${
  open
    ? html`<div><dt id="countdown-label">${t(lang, 'timeLeft')}</dt><dd><time id="countdown" role="timer" aria-labelledby="countdown-label" datetime="${row.expires_at.toISOString()}" data-expires-at="${row.expires_at.toISOString()}">${formatCountdown(left)}</time></dd></div>`
    : ''
}
${rate ? html`<div><dt>${t(lang, 'exchangeRate')}</dt><dd id="exchange-rate">${rate}</dd></div>` : ''}
<div><dt>${t(lang, 'reference')}</dt><dd><code id="reference">${row.reference !== null ? formatReference(row.reference) : paymentReference(row.id)}</code></dd></div>
</dl>
${open ? html`<p class="warning expiry-warning" id="expiry-warning"${left < EXPIRY_WARNING_MS ? '' : raw(' hidden')}>${t(lang, 'expiresSoon')}</p>` : ''}
</section>
${stateSection(input)}
${open && returnUrl ? html`<p class="back"><a id="back-link" href="${returnUrl}" rel="noreferrer">${t(lang, 'backToStore', { store: row.store_name })}</a></p>` : ''}
</main>`;
}

export function renderPaymentPage(input: PageInput & { styleNonce: string; telegram?: TelegramPage | null; embed?: boolean }): string {
  const { lang, prefix, row, view, now, styleNonce, telegram } = input;
  const base = `${prefix}/v1/checkout/payments/${row.id}`;
  const open = !isFinal(row.status);
  return shell({
    lang,
    prefix,
    title: t(lang, 'pageTitle', { store: row.store_name }),
    noscriptRefresh: open,
    styleNonce,
    tonConnect: open,
    accent: row.store_accent_color,
    telegram: !!telegram,
    embed: input.embed === true,
    body: html`<div class="wrap">
<div id="notice" class="notice" role="alert" hidden></div>
${checkoutMain(input)}
<div id="announce" class="visually-hidden" role="status" aria-live="polite"></div>
</div>${telegram ? telegramData(telegram) : ''}`,
    data: {
      paymentId: row.id,
      status: view.status,
      ended: isFinal(view.status),
      serverNow: now.getTime(),
      endpoints: { view: base, events: `${base}/events`, method: `${base}/method`, tonConnect: `${base}/ton-connect` },
      // Paths on the page's own origin (the script makes them absolute).
      tonConnect: {
        manifestPath: tonConnectManifestPath(prefix),
        walletsListPath: tonConnectWalletsPath(prefix),
        language: lang,
        // In the store's Telegram Mini App: the wallet sends the customer back to it (tonconnect-ui's twaReturnUrl).
        ...(telegram?.returnUrl ? { twaReturnUrl: telegram.returnUrl } : {}),
      },
      messages: clientMessages(lang),
    },
  });
}

/** 404 for unknown or malformed ids, 429 and any other error: a plain page in the customer's language. */
export function renderMessagePage(lang: Lang, prefix: string, kind: 'notFound' | 'tooMany' | 'error'): string {
  const titleKey: MessageKey = kind === 'notFound' ? 'notFoundTitle' : kind === 'tooMany' ? 'tooManyTitle' : 'errorTitle';
  const textKey: MessageKey = kind === 'notFound' ? 'notFoundText' : kind === 'tooMany' ? 'tooManyText' : 'errorText';
  return shell({
    lang,
    prefix,
    title: t(lang, titleKey),
    body: html`<div class="wrap"><main id="checkout" class="card message-page">
<section class="state" aria-labelledby="state-title"><div class="result ended"><h1 id="state-title">${t(lang, titleKey)}</h1></div>
<p>${t(lang, textKey)}</p></section>
</main></div>`,
  });
}

/**
 * {checkout_base_url}/tg without a payment: Telegram opened the Mini App with the payment id in its
 * launch parameters (the URL's fragment, which only the page sees); its script goes on to
 * {checkout_base_url}/tg/{id}. Outside Telegram, or launched without one, it says so.
 */
export function renderTelegramBootPage(page: TelegramPage): string {
  const texts = TELEGRAM_TEXTS[page.lang];
  return shell({
    lang: page.lang,
    prefix: page.bootPath.replace(/\/tg$/, ''),
    title: texts.openingTitle,
    telegram: true,
    body: html`<div class="wrap"><main id="checkout" class="card message-page" data-telegram-boot="true">
<section class="state" aria-labelledby="state-title"><h1 id="state-title">${texts.openingTitle}</h1>
<p>${texts.openingText}</p></section>
</main></div>${telegramData(page)}`,
  });
}

/**
 * {checkout_base_url}/tg/{id} launched by a bot that is not the payment's store's (or a store with no
 * bot), or a subscription's portal ({checkout_base_url}/tg/s/{token}, `of: 'portal'`) launched by a
 * bot not its store's: nothing of the payment or the subscription — no amount, no address, no store
 * name — only why, in the Mini App's frame, in the words of what was opened.
 */
export function renderTelegramRefusalPage(page: TelegramPage, of: 'payment' | 'portal' = 'payment'): string {
  const texts = TELEGRAM_TEXTS[page.lang];
  const title = of === 'portal' ? t(page.lang, 'portalOtherBotTitle') : texts.otherShopTitle;
  const text = of === 'portal' ? t(page.lang, 'portalOtherBotText') : texts.otherShopText;
  return shell({
    lang: page.lang,
    prefix: page.bootPath.replace(/\/tg$/, ''),
    title,
    telegram: true,
    body: html`<div class="wrap"><main id="checkout" class="card message-page" data-telegram-refused="${of}" data-ended="true">
<section class="state" aria-labelledby="state-title"><div class="result ended"><h1 id="state-title">${title}</h1></div>
<p>${text}</p></section>
</main></div>${telegramData(page)}`,
  });
}
