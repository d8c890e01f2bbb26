// The checkout as the store's Telegram Mini App (docs/API.md, Telegram Mini App): what the server
// gives the page's Telegram glue (static/telegram.js, over Telegram's own telegram-web-app.js) —
// where it sends the init data, the t.me link TON Connect returns to —, the Mini App route's CSP
// beyond the checkout's, the page the Mini App's own URL ({checkout_base_url}/tg) shows before it
// knows the payment (and {checkout_base_url}/tg/{id} before the launch is checked), and the page that
// refuses a payment of another store than the launching bot's.
import crypto from 'node:crypto';
import type { CspOptions } from '../web/csp.ts';
import { html, jsonForScript, type Html } from '../web/html.ts';
import type { Lang } from './i18n.ts';

/**
 * What the Mini App route's CSP allows beyond the checkout's: to be framed by Telegram's web clients
 * (TELEGRAM_WEB_ORIGINS, nobody else: so the parent frame Telegram's script posts to, with target
 * `*`, and hears is one of them), and in that frame the one <style> element Telegram's script
 * appends, empty, for CSS a web client may send (`set_custom_style`, its scrollbars): allowed by the
 * hash of its exact text, the empty string. No other inline style is: static/telegram.js takes that
 * element out of the document, so what a web client writes into it is never applied (checkout.css
 * styles the scrollbars in Telegram itself).
 */
export function telegramCsp(webOrigins: readonly string[]): Pick<CspOptions, 'frameAncestors' | 'styleHashes'> {
  return { frameAncestors: webOrigins, styleHashes: [EMPTY_STYLE_HASH] };
}
const EMPTY_STYLE_HASH = `sha256-${crypto.createHash('sha256').update('').digest('base64')}`;

export interface TelegramPage {
  /** The payment's t.me link (tonconnect-ui's twaReturnUrl), null when the store has none. */
  returnUrl: string | null;
  /** POST {initData} here (the payment's …/telegram); absent on the boot page. */
  initDataEndpoint?: string;
  /** The Mini App route's path ({prefix}/tg): the boot page goes on to {bootPath}/{payment id}. */
  bootPath: string;
  lang: Lang;
  /** The boot page at {bootPath}/{id} (no launch checked yet): the payment to go on to. */
  paymentId?: string;
  /** The checkout's own page of that payment, where the boot page goes outside Telegram. */
  checkoutPath?: string;
  /** The boot page at {bootPath}/s/{token}: the subscription's portal to go on to (checkoutPath: its page outside Telegram). */
  portalToken?: string;
}

export const TELEGRAM_TEXTS = {
  en: {
    close: 'Close',
    openingTitle: 'Opening the payment…',
    openingText: 'This is the store’s payment page in Telegram. If nothing happens, open the payment link the store sent you again.',
    otherShopTitle: 'This payment cannot be opened in this bot',
    otherShopText:
      'It was not made by the shop this bot belongs to. Pay a shop only through the link it gave you; if someone else sent you this one, do not pay it.',
  },
  ru: {
    close: 'Закрыть',
    openingTitle: 'Открываем платёж…',
    openingText: 'Это страница оплаты магазина в Telegram. Если ничего не происходит, откройте ссылку на платёж от магазина ещё раз.',
    otherShopTitle: 'Этот платёж нельзя открыть в этом боте',
    otherShopText:
      'Его создал не тот магазин, которому принадлежит бот. Платите магазину только по ссылке, которую он вам дал; если эту ссылку прислал кто-то другой, не платите.',
  },
} as const satisfies Record<Lang, Record<string, string>>;

/** The script's settings: a JSON element (the CSP allows no inline script), read by static/telegram.js. */
export function telegramData(page: TelegramPage): Html {
  return html`<script type="application/json" id="kassa-telegram">${jsonForScript({
    bootPath: page.bootPath,
    ...(page.initDataEndpoint ? { initDataEndpoint: page.initDataEndpoint } : {}),
    ...(page.paymentId ? { paymentId: page.paymentId, checkoutPath: page.checkoutPath } : {}),
    ...(page.portalToken ? { portalToken: page.portalToken, checkoutPath: page.checkoutPath } : {}),
    messages: TELEGRAM_TEXTS[page.lang],
  })}</script>`;
}
