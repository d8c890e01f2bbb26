// Where a store's Telegram Mini App lives (docs/OPERATIONS.md, Telegram): the URL registered with
// BotFather, and the t.me link that opens a payment's checkout there (`telegramURL` of a payment, and
// of a subscription for its open renewal).

/** The Mini App's URL, as registered with BotFather (`/newapp`): `{checkout_base_url}/tg`. */
export function telegramMiniAppUrl(checkoutBaseUrl: string): string {
  return `${checkoutBaseUrl}/tg`;
}

/**
 * `https://t.me/<bot>/<app>?startapp=<payment id>` (CONTRACT §11): Telegram opens the Mini App with
 * the payment id as its start parameter (signed into the init data as `start_param`). `miniApp` is
 * "<bot>/<app>" when the store has both, else null (then no link).
 */
export function telegramPaymentUrl(miniApp: string | null, paymentId: string): string | null {
  return miniApp === null ? null : `https://t.me/${miniApp}?startapp=${paymentId}`;
}
