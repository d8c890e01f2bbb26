// Fixing coinAmount when a method is chosen (docs/API.md, Money and rates): the amount itself when the currency is
// the coin, otherwise amount × rate rounded up to the coin's decimals. A missing or stale rate never
// gives a price.
import { sql, type Db } from '../db/pool.ts';
import { KassaError } from '../errors.ts';
import { coinAmountFor, toBaseUnits } from '../money.ts';
import { isFiatCurrency } from '../rates/fiat.ts';
import { getRate, usableRate, type ExchangeRate, type StoredRate } from '../rates/rates.ts';
import type { MethodRow } from './methods.ts';

export interface Price {
  coinAmount: string;
  /** coinAmount in the coin's base units (money.ts): payments.coin_amount_base_units. */
  coinAmountBaseUnits: string;
  rate: string;
  source: string;
  at: Date;
}

export const rateUnavailable = (currency: string, coin: string): KassaError =>
  new KassaError('rate_unavailable', `No fresh ${currency}/${coin} exchange rate is available right now; retry shortly.`);

export const unsupportedMethod = (currency: string, method: MethodRow, param = 'payment_options.methods'): KassaError =>
  new KassaError('unsupported_payment_method', `A payment in ${currency} cannot be paid in ${method.coin_symbol} on ${method.chain_symbol}.`, { param });

export async function priceFor(db: Db, amount: string, currency: string, method: MethodRow, now: Date, param?: string): Promise<Price> {
  const rate = await getRate(db, currency, method.coin_symbol, now);
  if (rate) return priced(amount, method, rate);
  const known = await db.exists(sql.unsafe`select 1 from exchange_rates where currency = ${currency} and coin_symbol = ${method.coin_symbol}`);
  return noPrice(currency, method, known, param);
}

/** `priceFor` with the pair's exchange_rates row already read (null: the pair has no row). */
export function priceFromRow(amount: string, currency: string, method: MethodRow, now: Date, row: StoredRate | null, param?: string): Price {
  const rate = currency === method.coin_symbol ? { rate: '1', source: 'identity', fetchedAt: now } : row && usableRate(row, now);
  if (rate) return priced(amount, method, rate);
  return noPrice(currency, method, row !== null, param);
}

function priced(amount: string, method: MethodRow, rate: ExchangeRate): Price {
  const coinAmount = coinAmountFor(amount, rate.rate, method.coin_decimals);
  return {
    coinAmount,
    coinAmountBaseUnits: toBaseUnits(coinAmount, method.coin_decimals).toString(),
    rate: rate.rate,
    source: rate.source,
    at: rate.fetchedAt,
  };
}

function noPrice(currency: string, method: MethodRow, known: boolean, param?: string): never {
  if (known || isFiatCurrency(currency)) throw rateUnavailable(currency, method.coin_symbol);
  throw unsupportedMethod(currency, method, param);
}
