// The checkout as the store's Telegram Mini App (docs/API.md, Telegram Mini App): what the server
// gives the page's Telegram script (static/telegram.js) — the origins of Telegram's web clients it
// may talk to, where it sends the init data, the t.me link TON Connect returns to — and the page
// the Mini App's own URL ({checkout_base_url}/tg) shows before it knows the payment.
import { html, jsonForScript, type Html } from '../web/html.ts';
import type { Lang } from './i18n.ts';

export interface TelegramPage {
  /** Origins of Telegram's web clients (TELEGRAM_WEB_ORIGINS): the only frames the page answers and posts to. */
  origins: readonly string[];
  /** The payment's t.me link (tonconnect-ui's twaReturnUrl), null when the store has none. */
  returnUrl: string | null;
  /** POST {initData} here (the payment's …/telegram); absent on the boot page. */
  initDataEndpoint?: string;
  /** The Mini App route's path ({prefix}/tg): the boot page goes on to {bootPath}/{payment id}. */
  bootPath: string;
  lang: Lang;
}

export const TELEGRAM_TEXTS = {
  en: {
    close: 'Close',
    openingTitle: 'Opening the payment…',
    openingText: 'This is the store’s payment page in Telegram. If nothing happens, open the payment link the store sent you again.',
  },
  ru: {
    close: 'Закрыть',
    openingTitle: 'Открываем платёж…',
    openingText: 'Это страница оплаты магазина в Telegram. Если ничего не происходит, откройте ссылку на платёж от магазина ещё раз.',
  },
} as const satisfies Record<Lang, Record<string, string>>;

/** The script's settings: a JSON element (the CSP allows no inline script), read by static/telegram.js. */
export function telegramData(page: TelegramPage): Html {
  return html`<script type="application/json" id="kassa-telegram">${jsonForScript({
    origins: page.origins,
    bootPath: page.bootPath,
    ...(page.initDataEndpoint ? { initDataEndpoint: page.initDataEndpoint } : {}),
    messages: TELEGRAM_TEXTS[page.lang],
  })}</script>`;
}
