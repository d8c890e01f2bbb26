// The checkout's two languages. English unless Accept-Language prefers Russian; `?lang=` overrides.

export const LANGUAGES = ['en', 'ru'] as const;
export type Lang = (typeof LANGUAGES)[number];

const isLang = (value: unknown): value is Lang => typeof value === 'string' && (LANGUAGES as readonly string[]).includes(value);

/** `?lang=ru` wins; otherwise the supported language with the highest q in Accept-Language; else English. */
export function negotiateLang(queryLang: unknown, acceptLanguage: string | undefined): Lang {
  if (isLang(queryLang)) return queryLang;
  let best: { lang: Lang; q: number; order: number } | null = null;
  (acceptLanguage ?? '').split(',').forEach((part, order) => {
    const [tag = '', ...params] = part.trim().split(';');
    const primary = tag.trim().toLowerCase().split('-')[0];
    let q = 1;
    for (const param of params) {
      const match = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(param);
      if (match) q = Number(match[1]);
    }
    if (!isLang(primary) || q <= 0) return;
    if (!best || q > best.q || (q === best.q && order < best.order)) best = { lang: primary, q, order };
  });
  return (best as { lang: Lang } | null)?.lang ?? 'en';
}

const en = {
  pageTitle: 'Payment to {store}',
  payTo: 'Payment to',
  amount: 'Amount',
  timeLeft: 'Time left',
  timeUp: 'Time is up',
  language: 'Language',
  status_created: 'Choose how to pay',
  status_pending: 'Waiting for your payment',
  status_completed: 'Paid',
  status_expired: 'Expired',
  status_cancelled: 'Cancelled',
  chooseMethod: 'Choose how to pay',
  chooseHint: 'The amount in each coin is fixed when you choose it.',
  payWith: 'Pay {amount} {coin}',
  coinOnChain: '{coin} on {chain}',
  methodUnavailable: 'not available right now',
  noMethods: 'This store accepts no payment method right now. Please contact the store.',
  selecting: 'Preparing your payment address…',
  sendExactly: 'Send exactly',
  sendRest: 'Send the rest',
  toAddress: 'To this address on {chain}',
  depositAddress: 'Deposit address',
  amountToSend: 'Amount to send',
  copy: 'Copy',
  copyAddress: 'Copy the address',
  copyAmount: 'Copy the amount',
  commentLabel: 'Comment',
  commentRequired: 'The comment is required',
  commentRequiredText:
    'Write this code in the comment (memo) field of your transfer. Without it {store} cannot tell your payment from others, and it is not counted by itself.',
  commentFilled: 'The QR code and the wallet buttons fill in the comment for you.',
  copyReference: 'Copy the comment',
  copied: 'Copied',
  copyFailed: 'Copy failed: select the text and copy it',
  qrLabel: 'QR code of the payment link: scan it with your TON wallet',
  openWallet: 'Open in wallet',
  payWithApp: 'Pay with {app}',
  jettonWarning: 'Send {coin} on the TON network only. Other coins are not counted toward this payment.',
  nativeWarning:
    'Send Gram (GRAM), the TON network’s own coin (formerly Toncoin), only. The jetton also called GRAM is a different coin: it is not counted toward this payment, nor are other coins.',
  coinGram: 'Gram (GRAM), formerly Toncoin',
  received: 'Received so far',
  remaining: 'Still to send',
  waiting: 'Waiting for your transfer. This page updates by itself as soon as it arrives.',
  timeUpText: 'The time to pay is over. If you have already sent the money, wait here: it is being checked.',
  paidTitle: 'Paid',
  paidText: 'Thank you! {store} has received your payment.',
  paidAmount: 'Received',
  transactions: 'Transaction hash',
  transactionsMany: 'Transaction hashes',
  expiredTitle: 'This payment has expired',
  expiredText: 'It can no longer be paid. Ask {store} for a new payment link.',
  cancelledTitle: 'This payment was cancelled',
  cancelledText: 'It can no longer be paid. Ask {store} if you still want to pay.',
  sentAnyway: 'Sent money to this address anyway? It is not lost: every transfer is recorded. Contact {store} to get it back or counted.',
  returnToStore: 'Back to {store}',
  notFoundTitle: 'Payment not found',
  notFoundText: 'There is no payment at this address. Check the link you were given, or ask the store for a new one.',
  errorTitle: 'Something went wrong',
  errorText: 'The payment page cannot be shown right now. Please try again in a minute.',
  tooManyTitle: 'Too many requests',
  tooManyText: 'Please wait a few seconds, then reload the page.',
  linkNotFoundTitle: 'Payment link not found',
  linkNotFoundText: 'There is no payment link at this address. Check the link you were given, or ask the shop for a new one.',
  linkClosedTitle: 'This payment link is closed',
  linkExpiredText: 'It was open until a set date, which has passed. Ask the shop for a new link.',
  linkUsedUpText: 'It has already been paid as many times as the shop allowed. Ask the shop for a new link.',
  linkDeactivatedText: 'The shop has switched it off. Ask the shop for a new link.',
  linkFullTitle: 'This payment link is busy',
  linkFullText:
    'Every payment the shop allows through it is being paid right now. Try again in a few minutes: a payment left unpaid frees its place when its time is up.',
  linkAmountTitle: 'How much do you want to pay?',
  linkAmountLabel: 'Amount in {currency}',
  linkAmountFrom: 'At least {min}.',
  linkAmountTo: 'At most {max}.',
  linkAmountBetween: 'From {min} to {max}.',
  linkAmountInvalid: 'Enter an amount such as 10.50.',
  linkAmountBelow: 'The amount must be at least {min}.',
  linkAmountAbove: 'The amount must be at most {max}.',
  linkAmountDecimals: 'The amount has too many digits after the decimal point.',
  linkAmountLong: 'The amount is too long: at most {max} characters.',
  linkContinue: 'Continue to payment',
  err_method_already_selected: 'A payment method was already chosen for this payment. Showing it now…',
  err_payment_expired: 'This payment has expired.',
  err_payment_not_open: 'This payment is no longer open.',
  err_payment_method_not_found: 'This payment method is not accepted for this payment.',
  err_unsupported_payment_method: 'This payment method cannot be used for this payment.',
  err_rate_unavailable: 'No exchange rate is available right now. Please try again in a minute.',
  err_rate_limit_exceeded: 'Too many requests. Please wait a few seconds and try again.',
  err_network: 'The server could not be reached. Check your connection and try again.',
  err_generic: 'Something went wrong. Please try again.',
  noscript: 'Turn on JavaScript to choose a payment method and to see the status update live.',
  footer: 'Secure payment page. Kassa never asks for your seed phrase or keys.',
  payConnected: 'Pay with a connected wallet',
  payWithWallet: 'Pay with {wallet}',
  connectedAs: 'Connected: {wallet}, {address}',
  disconnect: 'Disconnect',
  orManually: 'Or pay from any wallet: scan the QR code, or send the exact amount to the address below.',
  sentShort: 'Sent, confirming…',
  sentConfirming: 'Sent from your wallet. Confirming on the network: this page updates by itself.',
  walletRejected: 'The wallet did not send the payment. You can try again, or pay another way below.',
  tonConnectFailed: 'The wallet could not be asked to pay. Try again, or pay another way below.',
  jettonGas:
    'Your wallet also needs a little Gram (about 0.05 GRAM), the TON network’s own coin, for the network fee of a {coin} transfer; most of it comes back.',
  exchangeRate: 'Exchange rate',
  reference: 'Payment reference',
  expiresSoon: 'Less than 5 minutes left to pay.',
  minutesLeft: '{minutes} minutes left to pay.',
  oneMinuteLeft: '1 minute left to pay.',
  backToStore: 'Back to {store} without paying',
  paidAt: 'Paid at',
  viewOn: 'View on {explorer}',
};

type Messages = typeof en;
export type MessageKey = keyof Messages;

const ru: Messages = {
  pageTitle: 'Оплата: {store}',
  payTo: 'Оплата для',
  amount: 'Сумма',
  timeLeft: 'Осталось времени',
  timeUp: 'Время вышло',
  language: 'Язык',
  status_created: 'Выберите способ оплаты',
  status_pending: 'Ожидаем оплату',
  status_completed: 'Оплачено',
  status_expired: 'Срок истёк',
  status_cancelled: 'Отменён',
  chooseMethod: 'Выберите способ оплаты',
  chooseHint: 'Сумма в монете фиксируется, когда вы выбираете способ.',
  payWith: 'Оплатить {amount} {coin}',
  coinOnChain: '{coin} в сети {chain}',
  methodUnavailable: 'сейчас недоступно',
  noMethods: 'Сейчас магазин не принимает ни одного способа оплаты. Свяжитесь с магазином.',
  selecting: 'Готовим адрес для оплаты…',
  sendExactly: 'Отправьте ровно',
  sendRest: 'Отправьте остаток',
  toAddress: 'На этот адрес в сети {chain}',
  depositAddress: 'Адрес для оплаты',
  amountToSend: 'Сумма к отправке',
  copy: 'Копировать',
  copyAddress: 'Копировать адрес',
  copyAmount: 'Копировать сумму',
  commentLabel: 'Комментарий',
  commentRequired: 'Комментарий обязателен',
  commentRequiredText:
    'Впишите этот код в поле комментария (memo) перевода. Без него магазин «{store}» не отличит ваш платёж от других, и он не будет засчитан сам.',
  commentFilled: 'QR-код и кнопки кошельков подставят комментарий сами.',
  copyReference: 'Копировать комментарий',
  copied: 'Скопировано',
  copyFailed: 'Не удалось скопировать: выделите текст и скопируйте его',
  qrLabel: 'QR-код ссылки на оплату: отсканируйте его кошельком TON',
  openWallet: 'Открыть в кошельке',
  payWithApp: 'Оплатить в {app}',
  jettonWarning: 'Отправляйте только {coin} в сети TON. Другие монеты не засчитываются в этот платёж.',
  nativeWarning:
    'Отправляйте только Gram (GRAM) — собственную монету сети TON (прежде Toncoin). Жетон, который тоже называется GRAM, — другая монета: он не засчитывается в этот платёж, как и другие монеты.',
  coinGram: 'Gram (GRAM), прежде Toncoin',
  received: 'Уже получено',
  remaining: 'Осталось отправить',
  waiting: 'Ждём ваш перевод. Страница обновится сама, как только он придёт.',
  timeUpText: 'Время на оплату вышло. Если вы уже отправили деньги, подождите на этой странице: перевод проверяется.',
  paidTitle: 'Оплачено',
  paidText: 'Спасибо! Магазин «{store}» получил ваш платёж.',
  paidAmount: 'Получено',
  transactions: 'Хеш транзакции',
  transactionsMany: 'Хеши транзакций',
  expiredTitle: 'Срок оплаты истёк',
  expiredText: 'Этот платёж больше нельзя оплатить. Попросите у магазина «{store}» новую ссылку на оплату.',
  cancelledTitle: 'Платёж отменён',
  cancelledText: 'Этот платёж больше нельзя оплатить. Если вы всё ещё хотите заплатить, обратитесь в магазин «{store}».',
  sentAnyway:
    'Всё же отправили деньги на этот адрес? Они не потеряны: каждый перевод записан. Свяжитесь с магазином «{store}», чтобы его вернуть или засчитать.',
  returnToStore: 'Вернуться в магазин «{store}»',
  notFoundTitle: 'Платёж не найден',
  notFoundText: 'По этому адресу нет платежа. Проверьте ссылку или попросите у магазина новую.',
  errorTitle: 'Что-то пошло не так',
  errorText: 'Страницу оплаты сейчас нельзя показать. Попробуйте ещё раз через минуту.',
  tooManyTitle: 'Слишком много запросов',
  tooManyText: 'Подождите несколько секунд и обновите страницу.',
  linkNotFoundTitle: 'Ссылка на оплату не найдена',
  linkNotFoundText: 'По этому адресу нет ссылки на оплату. Проверьте ссылку или попросите у магазина новую.',
  linkClosedTitle: 'Эта ссылка на оплату закрыта',
  linkExpiredText: 'Она действовала до определённой даты, и эта дата прошла. Попросите у магазина новую ссылку.',
  linkUsedUpText: 'По ней уже заплатили столько раз, сколько разрешил магазин. Попросите у магазина новую ссылку.',
  linkDeactivatedText: 'Магазин её отключил. Попросите у магазина новую ссылку.',
  linkFullTitle: 'Эта ссылка на оплату сейчас занята',
  linkFullText:
    'Все оплаты, которые разрешил магазин, сейчас уже идут. Попробуйте через несколько минут: неоплаченная оплата освобождает место, когда её время выходит.',
  linkAmountTitle: 'Сколько вы хотите заплатить?',
  linkAmountLabel: 'Сумма в {currency}',
  linkAmountFrom: 'Не меньше {min}.',
  linkAmountTo: 'Не больше {max}.',
  linkAmountBetween: 'От {min} до {max}.',
  linkAmountInvalid: 'Введите сумму, например 10,50.',
  linkAmountBelow: 'Сумма должна быть не меньше {min}.',
  linkAmountAbove: 'Сумма должна быть не больше {max}.',
  linkAmountDecimals: 'В сумме слишком много знаков после запятой.',
  linkAmountLong: 'Сумма слишком длинная: не больше {max} символов.',
  linkContinue: 'Перейти к оплате',
  err_method_already_selected: 'Способ оплаты для этого платежа уже выбран. Показываем его…',
  err_payment_expired: 'Срок оплаты этого платежа истёк.',
  err_payment_not_open: 'Этот платёж больше не ждёт оплаты.',
  err_payment_method_not_found: 'Этот способ оплаты не принимается для этого платежа.',
  err_unsupported_payment_method: 'Этим способом нельзя оплатить этот платёж.',
  err_rate_unavailable: 'Сейчас нет курса обмена. Попробуйте ещё раз через минуту.',
  err_rate_limit_exceeded: 'Слишком много запросов. Подождите несколько секунд и попробуйте снова.',
  err_network: 'Не удалось связаться с сервером. Проверьте подключение и попробуйте снова.',
  err_generic: 'Что-то пошло не так. Попробуйте ещё раз.',
  noscript: 'Включите JavaScript, чтобы выбрать способ оплаты и видеть статус без перезагрузки.',
  footer: 'Защищённая страница оплаты. Kassa никогда не спрашивает seed-фразу или ключи.',
  payConnected: 'Оплатить подключённым кошельком',
  payWithWallet: 'Оплатить в {wallet}',
  connectedAs: 'Подключён: {wallet}, {address}',
  disconnect: 'Отключить',
  orManually: 'Или оплатите из любого кошелька: отсканируйте QR-код или отправьте точную сумму на адрес ниже.',
  sentShort: 'Отправлено, подтверждаем…',
  sentConfirming: 'Отправлено из кошелька. Ждём подтверждения в сети: страница обновится сама.',
  walletRejected: 'Кошелёк не отправил платёж. Попробуйте ещё раз или оплатите другим способом ниже.',
  tonConnectFailed: 'Не удалось отправить запрос в кошелёк. Попробуйте ещё раз или оплатите другим способом ниже.',
  jettonGas: 'Для перевода {coin} кошельку нужно немного Gram, собственной монеты сети TON, на комиссию сети (около 0,05 GRAM); бо́льшая часть вернётся.',
  exchangeRate: 'Курс обмена',
  reference: 'Номер платежа',
  expiresSoon: 'На оплату осталось меньше 5 минут.',
  minutesLeft: 'На оплату осталось минут: {minutes}.',
  oneMinuteLeft: 'На оплату осталась 1 минута.',
  backToStore: 'Вернуться в магазин «{store}» без оплаты',
  paidAt: 'Оплачено',
  viewOn: 'Открыть в {explorer}',
};

export const MESSAGES: Record<Lang, Messages> = { en, ru };

/** The message with {placeholders} filled in (plain text: escape it where it goes into HTML). */
export function t(lang: Lang, key: MessageKey, values: Record<string, string> = {}): string {
  return MESSAGES[lang][key].replace(/\{(\w+)\}/g, (whole, name: string) => values[name] ?? whole);
}

/** The messages the page script needs, for the JSON data block. */
export function clientMessages(lang: Lang): Record<string, string> {
  const keys = Object.keys(en).filter(
    (key) =>
      key.startsWith('err_') ||
      [
        'copied',
        'copyFailed',
        'timeUp',
        'selecting',
        'payConnected',
        'payWithWallet',
        'connectedAs',
        'sentShort',
        'sentConfirming',
        'walletRejected',
        'tonConnectFailed',
        'expiresSoon',
        'minutesLeft',
        'oneMinuteLeft',
      ].includes(key),
  ) as MessageKey[];
  return Object.fromEntries(keys.map((key) => [key, MESSAGES[lang][key]]));
}
