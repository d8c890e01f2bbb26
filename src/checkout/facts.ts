// Facts a customer asks for on the checkout page, as plain functions: the short payment reference,
// the exchange rate used, block-explorer links for a transaction, and a paid time.
import type { TonNetwork } from '../config.ts';
import { divideDecimal, shownTicker } from '../money.ts';
import { isFiatCurrency } from '../rates/fiat.ts';
import type { Lang } from './i18n.ts';

/** The first 8 hex digits of the payment id, as "3F2A-9C1B": short enough to read out, and a prefix the store can search. */
export function paymentReference(paymentId: string): string {
  const head = paymentId.replace(/-/g, '').slice(0, 8).toUpperCase();
  return `${head.slice(0, 4)}-${head.slice(4)}`;
}

/**
 * "1 TON = 5.00 USD" from the rate stored with the payment (coins per one unit of currency), when
 * the payment is priced in something else than the coin; null otherwise.
 */
export function exchangeRateText(input: { currency: string; coinSymbol: string | null; exchangeRate: string | null }): string | null {
  const { currency, coinSymbol, exchangeRate } = input;
  if (coinSymbol === null || exchangeRate === null || currency === coinSymbol) return null;
  const perCoin = divideDecimal('1', exchangeRate);
  // Fiat to the cent; a coin to 9 significant digits.
  const value = Number(perCoin);
  const shown = isFiatCurrency(currency) ? value.toFixed(2) : String(Number(value.toPrecision(9)));
  return `1 ${shownTicker(coinSymbol)} = ${shown} ${shownTicker(currency)}`;
}

interface ExplorerLink {
  name: string;
  url: string;
}

const EXPLORERS: Record<TonNetwork, ExplorerLink[]> = {
  mainnet: [
    { name: 'Tonviewer', url: 'https://tonviewer.com/transaction/' },
    { name: 'Tonscan', url: 'https://tonscan.org/tx/' },
  ],
  testnet: [
    { name: 'Tonviewer', url: 'https://testnet.tonviewer.com/transaction/' },
    { name: 'Tonscan', url: 'https://testnet.tonscan.org/tx/' },
  ],
  sandbox: [],
};

/** Links to a transaction (hash in hex) on the block explorers of the payment's network; none in the sandbox. */
export function explorerLinks(network: TonNetwork, hash: string): ExplorerLink[] {
  if (!/^[0-9a-f]{64}$/i.test(hash)) return [];
  return EXPLORERS[network].map((explorer) => ({ name: explorer.name, url: `${explorer.url}${hash.toLowerCase()}` }));
}

/** "23 Nov 2026, 19:34 UTC" / "23 нояб. 2026 г., 19:34 UTC" (the page script shows it in local time). */
export function formatPaidAt(date: Date, lang: Lang): string {
  return `${new Intl.DateTimeFormat(lang === 'ru' ? 'ru-RU' : 'en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(date)} UTC`;
}
