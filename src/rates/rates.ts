// Exchange rates: refreshed from the configured provider by the rates__refresh task, read when a
// payment's coinAmount is fixed. exchange_rates.rate is coins per ONE unit of currency.
// A missing or stale rate never gives a price: getRate answers null and the caller says rate_unavailable.
import type { Config, TonNetwork } from '../config.ts';
import { prepared, sql, z, type DatabasePool, type Db } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { divideDecimal } from '../money.ts';
import { FIAT_CURRENCIES } from './fiat.ts';
import { fixedProvider, tonapiProvider, type CoinInfo, type RateProvider, type UsdPrices } from './providers.ts';

export { fixedProvider, tonapiProvider };
export type { CoinInfo, RateProvider, UsdPrices };

/** A rate older than this is not used (the task refreshes every minute). `fixed` rows never go stale. */
export const RATE_MAX_AGE_MS = 10 * 60 * 1000;

export interface ExchangeRate {
  /** Coins per one unit of currency, a plain decimal string. */
  rate: string;
  /** The provider's name, `fixed`, or `identity` when the currency is the coin itself. */
  source: string;
  fetchedAt: Date;
}

export interface RateRow {
  currency: string;
  coin: string;
  rate: string;
}

const coinRow = z.object({ symbol: z.string(), kind: z.string(), master_address: z.string().nullable() });

/** The catalogue's coins with their jetton master on `network` (null when it has none). */
export async function loadCoins(db: Db, network: TonNetwork): Promise<CoinInfo[]> {
  const rows = await db.any(sql.type(coinRow)`
    select c.symbol, c.kind, jm.master_address
    from coins c
    left join jetton_masters jm on jm.coin_symbol = c.symbol and jm.network = ${network}
    order by c.symbol
  `);
  return rows.map((row) => ({ symbol: row.symbol, kind: row.kind, masterAddress: row.master_address }));
}

/**
 * Every pair (currency ∈ fiat ∪ coins) × (coin ∈ coins), currency ≠ coin, whose two prices are
 * known: rate = usd(currency) / usd(coin), 30 significant digits, rounded up. Sorted by currency, coin.
 */
export function computeRates(prices: UsdPrices, coins: readonly string[]): RateRow[] {
  const currencies = [...new Set<string>([...FIAT_CURRENCIES, ...coins])];
  const rows: RateRow[] = [];
  for (const currency of currencies) {
    const currencyUsd = prices.get(currency);
    if (currencyUsd === undefined) continue;
    for (const coin of coins) {
      const coinUsd = prices.get(coin);
      if (coin === currency || coinUsd === undefined) continue;
      rows.push({ currency, coin, rate: divideDecimal(currencyUsd, coinUsd) });
    }
  }
  return rows.sort((a, b) => (a.currency === b.currency ? cmp(a.coin, b.coin) : cmp(a.currency, b.currency)));
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Fetches prices from `provider` (outside any transaction), then in one transaction replaces the
 * rates: upserts every pair it could compute with source = provider.name and fetched_at = now, and
 * removes rows left by another provider (a `fixed` row must not outlive a switch to a live
 * provider). Pairs the provider could not price this time keep their last row, which goes stale.
 * Safe to run twice or concurrently: runs are serialized by an advisory lock and a row is never
 * overwritten by an older fetch. Returns the number of rows written.
 */
export async function refreshRates(pool: DatabasePool, provider: RateProvider, network: TonNetwork, now: Date, log: Logger): Promise<number> {
  const coins = await loadCoins(pool, network);
  const prices = await provider.fetchUsdPrices(coins);
  const symbols = coins.map((coin) => coin.symbol);
  const rows = computeRates(prices, symbols);
  const unpriced = [...FIAT_CURRENCIES, ...symbols].filter((asset) => !prices.has(asset));
  if (unpriced.length > 0) log.warn({ provider: provider.name, unpriced }, 'rates: provider gave no price for some assets; their rates will go stale');

  const written = await pool.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`select from pg_advisory_xact_lock(hashtext('kassa.rates__refresh'))`);
    await tx.query(sql.typeAlias('void')`delete from exchange_rates where source <> ${provider.name}`);
    if (rows.length === 0) return 0;
    const result = await tx.query(sql.typeAlias('void')`
      insert into exchange_rates (currency, coin_symbol, rate, source, fetched_at)
      select r.currency, r.coin_symbol, r.rate, ${provider.name}, ${sql.timestamp(now)}
      from ${sql.unnest(
        rows.map((row) => [row.currency, row.coin, row.rate]),
        ['text', 'text', 'numeric'],
      )} as r (currency, coin_symbol, rate)
      order by r.currency, r.coin_symbol
      on conflict (currency, coin_symbol) do update
        set rate = excluded.rate, source = excluded.source, fetched_at = excluded.fetched_at
        where exchange_rates.fetched_at <= excluded.fetched_at
    `);
    return result.rowCount;
  });
  log.info({ provider: provider.name, written }, 'rates: refreshed');
  return written;
}

const rateRow = z.object({ rate: z.string(), source: z.string(), fetched_at: z.date() });
/** A stored exchange_rates row (rate as text). */
export type StoredRate = z.infer<typeof rateRow>;

/** A stored rate as a price's rate at `now`, or null when it is stale (see `getRate`). */
export function usableRate(row: StoredRate, now: Date): ExchangeRate | null {
  if (row.source !== 'fixed' && now.getTime() - row.fetched_at.getTime() > RATE_MAX_AGE_MS) return null;
  return { rate: row.rate, source: row.source, fetchedAt: row.fetched_at };
}

/**
 * The rate to price `currency` in `coin` at `now`: identity ('1') when they are the same; null when
 * the pair has no row or its row is older than RATE_MAX_AGE_MS (rows with source `fixed` never go
 * stale). Null must never become a price.
 */
export async function getRate(db: Db, currency: string, coin: string, now: Date): Promise<ExchangeRate | null> {
  if (currency === coin) return { rate: '1', source: 'identity', fetchedAt: now };
  const row = await db.maybeOne(
    prepared(sql.type(rateRow)`
    select rate::text as rate, source, fetched_at from exchange_rates where currency = ${currency} and coin_symbol = ${coin}
  `),
  );
  return row === null ? null : usableRate(row, now);
}

/** The provider the configuration asks for. */
export function providerFor(config: Pick<Config, 'ratesProvider' | 'ratesApiUrl' | 'ratesApiKey'>, options: { fetch?: typeof fetch } = {}): RateProvider {
  switch (config.ratesProvider) {
    case 'fixed':
      return fixedProvider();
    case 'tonapi':
      return tonapiProvider({ baseUrl: config.ratesApiUrl, apiKey: config.ratesApiKey, ...(options.fetch ? { fetch: options.fetch } : {}) });
    default:
      throw new Error(`unknown rates provider ${JSON.stringify(config.ratesProvider satisfies never)}`);
  }
}
