// What a refund request asks (the API's and the dashboard's body, read by refunds.ts for the deposit
// and treasuryRefunds.ts for the treasury): its fields, the payer it may name, and its amount in the
// coin when it is asked in the payment's currency.
import { sql, z, type Db } from '../db/pool.ts';
import { fieldBreaksRule, rateUnavailable, unusableDestination } from '../errors.ts';
import { coinAmountFor } from '../money.ts';
import { IS_CREDITED } from '../payments/counted.ts';
import { getRate, type RatePolicy } from '../rates/rates.ts';
import type { RequestedAmount } from './outgoing.ts';

export interface RefundRequest {
  coin: string;
  /** In `currency` when given, else in the coin. */
  amount: string;
  address: string;
  /** The payment's own currency (e.g. USD) when the amount is in it; absent (or the coin): the amount is in the coin. */
  currency?: string;
  /** Which rate converts it: the payment's own (the default), or the day's. */
  rate?: 'payment' | 'current';
  /** Where it is paid from: the payment's deposit (the default, Kassa's signer), or the store's treasury (signed by the merchant, treasuryRefunds.ts). */
  from?: 'deposit' | 'treasury';
}

/** `address` naming the payer instead of an address. */
export const PAYER = 'payer';

/**
 * The one address that paid the payment `coin` (the incoming message's source for TON, the sender
 * in the jetton `internal_transfer` for a jetton), as booked; invalid_address when none or several.
 */
export async function payerOf(tx: Db, paymentId: string, coin: string): Promise<string> {
  const senders = await tx.anyFirst(sql.type(z.object({ sender: z.string() }))`
    select distinct t.sender from transfers t
    where t.payment_id = ${paymentId} and t.coin_symbol = ${coin} and t.sender is not null and ${IS_CREDITED}
    order by sender
  `);
  if (senders.length === 0) throw unusableDestination(`no payer of ${coin} is known for this payment: name an address`);
  if (senders.length > 1) throw unusableDestination(`the payment's ${coin} came from ${senders.length} addresses: name the one to refund`);
  return senders[0]!;
}

/**
 * A refund asked in the payment's currency (fiat): its amount in the coin, converted by the pricing
 * rule (money.ts coinAmountFor: amount × rate, rounded up to the coin's decimals — so the whole
 * price refunded at the payment's own rate is exactly what it asked of the customer), at the
 * payment's own rate (its coin only) or the day's (the rates policy: rate_unavailable when there
 * is none). Null when the amount is in the coin.
 */
export async function requestedAmount(
  tx: Db,
  payment: { currency: string; coin_symbol: string | null; exchange_rate: string | null },
  coin: { symbol: string; decimals: number },
  request: RefundRequest,
  now: Date,
  policy: RatePolicy | null,
): Promise<{ coinAmount: string; requested: RequestedAmount } | null> {
  const currency = request.currency?.trim();
  if (currency === undefined || currency === coin.symbol) {
    // A rate converts an amount in another currency; with none it would be silently ignored.
    if (request.rate !== undefined) throw fieldBreaksRule('rate', `is given only with \`currency\` (the payment's currency, ${payment.currency})`);
    return null;
  }
  if (currency !== payment.currency) throw fieldBreaksRule('currency', `must be the payment's currency (${payment.currency}) or the coin (${coin.symbol})`);
  let rate: { rate: string; source: string };
  if ((request.rate ?? 'payment') === 'payment') {
    if (payment.coin_symbol !== coin.symbol || payment.exchange_rate === null)
      throw fieldBreaksRule(
        'rate',
        `must be "current" (today's rate) here: the payment was not priced in ${coin.symbol}, so it has no ${payment.currency}/${coin.symbol} rate of its own`,
      );
    rate = { rate: payment.exchange_rate, source: 'payment' };
  } else {
    const today = policy === null ? null : await getRate(tx, currency, coin.symbol, now, policy);
    if (today === null) throw rateUnavailable(currency, coin.symbol);
    rate = { rate: today.rate, source: today.source };
  }
  const coinAmount = coinAmountFor(request.amount, rate.rate, coin.decimals);
  return { coinAmount, requested: { amount: request.amount, currency, rate: rate.rate, rateSource: rate.source } };
}
