// Fixing coinAmount when a method is chosen (docs/API.md, Money and rates): the amount itself when the currency is
// the coin, otherwise amount × rate rounded up to the coin's decimals. A missing or stale rate, or a
// live rate the second source does not confirm, never gives a price (rate_unavailable, counted by reason).
import type { Db } from '../db/pool.ts';
import { type KassaError, noRateBetween, rateUnavailable } from '../errors.ts';
import { rateRefusals } from '../metrics.ts';
import { coinAmountFor, toBaseUnits } from '../money.ts';
import { isFiatCurrency } from '../rates/fiat.ts';
import { rateVerdict, storedRate, type ExchangeRate, type RatePolicy, type StoredRate } from '../rates/rates.ts';
import type { MethodRow } from './methods.ts';

export interface Price {
  coinAmount: string;
  /** coinAmount in the coin's base units (money.ts): payments.coin_amount_base_units. */
  coinAmountBaseUnits: string;
  rate: string;
  source: string;
  at: Date;
}

const unsupportedMethod = (currency: string, method: MethodRow, param = 'payment_options.methods'): KassaError =>
  noRateBetween(currency, method.coin_symbol, method.chain_symbol, param);

export async function priceFor(db: Db, amount: string, currency: string, method: MethodRow, now: Date, policy: RatePolicy, param?: string): Promise<Price> {
  const row = currency === method.coin_symbol ? null : await storedRate(db, currency, method.coin_symbol);
  return priceFromRow(amount, currency, method, now, row, policy, param);
}

/** `priceFor` with the pair's exchange_rates row already read (null: the pair has no row). */
export function priceFromRow(
  amount: string,
  currency: string,
  method: MethodRow,
  now: Date,
  row: StoredRate | null,
  policy: RatePolicy,
  param?: string,
): Price {
  if (currency === method.coin_symbol) return priced(amount, method, { rate: '1', source: 'identity', fetchedAt: now });
  if (row === null) return noPrice(currency, method, 'missing', param);
  const verdict = rateVerdict(row, now, policy);
  if ('rate' in verdict) return priced(amount, method, verdict.rate);
  return noPrice(currency, method, verdict.refused, param);
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

/** A pair with a row, or a fiat currency, is priceable in principle: rate_unavailable; anything else can never be priced. */
function noPrice(currency: string, method: MethodRow, reason: 'missing' | 'stale' | 'unconfirmed' | 'disagree', param?: string): never {
  if (reason !== 'missing' || isFiatCurrency(currency)) {
    rateRefusals.inc({ reason });
    throw rateUnavailable(currency, method.coin_symbol);
  }
  throw unsupportedMethod(currency, method, param);
}
