// Exchange rates: refreshed by the rates__refresh task from two independent sources — the primary
// (tonapi) and a confirming one (a CoinGecko-compatible simple/price) — and read when a payment's
// coinAmount is fixed. exchange_rates.rate is coins per ONE unit of currency.
// A live rate prices a payment only when both sources' rates of the pair are fresh and agree within
// the configured bound (the primary's rate is used). A missing, stale, unconfirmed or contradicted
// rate never gives a price: the verdict says why and the caller says rate_unavailable.
import type { Config, TonNetwork } from '../config.ts';
import { prepared, sql, z, type DatabasePool, type Db } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { ratesUnconfirmed } from '../metrics.ts';
import { divideDecimal, withinPercent } from '../money.ts';
import { FIAT_CURRENCIES } from './fiat.ts';
import { coingeckoProvider, fixedProvider, tonapiProvider, type CoinInfo, type RateProvider, type UsdPrices } from './providers.ts';

export { coingeckoProvider, fixedProvider, tonapiProvider };
export type { RateProvider };

/** A rate older than this is not used (the task refreshes every minute). `fixed` rows never go stale. */
export const RATE_MAX_AGE_MS = 10 * 60 * 1000;

export interface ExchangeRate {
  /** Coins per one unit of currency, a plain decimal string. */
  rate: string;
  /**
   * Who gave it: `primary+confirming` (for example `tonapi+coingecko`) for a live rate both sources
   * agreed on, `fixed`, or `identity` when the currency is the coin itself.
   */
  source: string;
  /** When it was fetched; for a confirmed rate, the older of the two fetches. */
  fetchedAt: Date;
}

/** Why a stored rate gives no price (the `reason` label of kassa_rate_refusals_total). */
type RateRefusal = 'missing' | 'stale' | 'unconfirmed' | 'disagree';

interface RateRow {
  currency: string;
  coin: string;
  rate: string;
}

const coinRow = z.object({ symbol: z.string(), kind: z.string(), master_address: z.string().nullable(), coingecko_id: z.string().nullable() });

/** The catalogue's coins with their jetton master on `network` (null when it has none). */
export async function loadCoins(db: Db, network: TonNetwork): Promise<CoinInfo[]> {
  const rows = await db.any(sql.type(coinRow)`
    select c.symbol, c.kind, jm.master_address, c.coingecko_id
    from coins c
    left join jetton_masters jm on jm.coin_symbol = c.symbol and jm.network = ${network}
    order by c.symbol
  `);
  return rows.map((row) => ({ symbol: row.symbol, kind: row.kind, masterAddress: row.master_address, coingeckoId: row.coingecko_id }));
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
 * Fetches prices from `provider` and, when given, from the `confirming` source (both outside any
 * transaction, at once), then in one transaction: upserts every pair the provider could compute
 * with source = provider.name and fetched_at = now, records the confirming source's rate of each
 * pair beside it (confirming_*), and removes rows left by another provider (a `fixed` row must not
 * outlive a switch to a live provider). Pairs a source could not price this time keep their last
 * value, which goes stale. A failing provider fails the refresh and changes nothing; a failing
 * confirming source is logged and leaves its last prices to go stale (so live pricing stops within
 * RATE_MAX_AGE_MS, never uses one source alone). Safe to run twice or concurrently: runs are
 * serialized by an advisory lock and a value is never overwritten by an older fetch. Returns the
 * number of rows the provider wrote.
 */
export async function refreshRates(
  pool: DatabasePool,
  provider: RateProvider,
  network: TonNetwork,
  now: Date,
  log: Logger,
  confirmation: { source: RateProvider; maxDivergencePercent: string } | null = null,
): Promise<number> {
  const coins = await loadCoins(pool, network);
  const [primary, second] = await Promise.allSettled([
    provider.fetchUsdPrices(coins),
    confirmation ? confirmation.source.fetchUsdPrices(coins) : Promise.resolve(null),
  ]);
  if (primary.status === 'rejected') throw primary.reason;
  const prices = primary.value;
  const symbols = coins.map((coin) => coin.symbol);
  const rows = computeRates(prices, symbols);
  const unpriced = [...FIAT_CURRENCIES, ...symbols].filter((asset) => !prices.has(asset));
  if (unpriced.length > 0) log.warn({ provider: provider.name, unpriced }, 'rates: provider gave no price for some assets; their rates will go stale');
  let confirming: RateRow[] = [];
  if (second.status === 'rejected') {
    log.warn(
      { err: second.reason, source: confirmation?.source.name },
      'rates: the confirming source failed; live rates stop pricing payments once its last prices are stale',
    );
  } else if (second.value !== null) {
    confirming = computeRates(second.value, symbols);
  }

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
    if (confirming.length > 0 && confirmation) {
      await tx.query(sql.typeAlias('void')`
        update exchange_rates e
        set confirming_source = ${confirmation.source.name}, confirming_rate = r.rate, confirming_fetched_at = ${sql.timestamp(now)}
        from ${sql.unnest(
          confirming.map((row) => [row.currency, row.coin, row.rate]),
          ['text', 'text', 'numeric'],
        )} as r (currency, coin_symbol, rate)
        where e.currency = r.currency and e.coin_symbol = r.coin_symbol
          and (e.confirming_fetched_at is null or e.confirming_fetched_at <= ${sql.timestamp(now)})
      `);
    }
    return result.rowCount;
  });
  if (confirmation) {
    // What this refresh leaves unpriceable, for the log and kassa_rates_unconfirmed_pairs.
    const confirmed = new Map(confirming.map((row) => [`${row.currency}/${row.coin}`, row.rate]));
    let disagree = 0;
    let unconfirmed = 0;
    const examples: string[] = [];
    for (const row of rows) {
      const other = confirmed.get(`${row.currency}/${row.coin}`);
      if (other === undefined) unconfirmed += 1;
      else if (!withinPercent(row.rate, other, confirmation.maxDivergencePercent)) {
        disagree += 1;
        if (examples.length < 5) examples.push(`${row.currency}/${row.coin} ${row.rate} vs ${other}`);
      }
    }
    ratesUnconfirmed.set({ reason: 'disagree' }, disagree);
    ratesUnconfirmed.set({ reason: 'unconfirmed' }, unconfirmed);
    if (disagree > 0) {
      log.warn(
        { provider: provider.name, confirming: confirmation.source.name, disagree, examples, maxDivergencePercent: confirmation.maxDivergencePercent },
        'rates: the two sources disagree on some pairs; those pairs price no payment (rate_unavailable) until they agree',
      );
    }
  }
  log.info({ provider: provider.name, confirming: confirmation?.source.name ?? null, written }, 'rates: refreshed');
  return written;
}

const rateRow = z.object({
  rate: z.string(),
  source: z.string(),
  fetched_at: z.date(),
  confirming_source: z.string().nullable(),
  confirming_rate: z.string().nullable(),
  confirming_fetched_at: z.date().nullable(),
});
/** A stored exchange_rates row (rates as text). */
export type StoredRate = z.infer<typeof rateRow>;

/** What pricing needs to know of the rates policy (config RATES_MAX_DIVERGENCE_PERCENT). */
export interface RatePolicy {
  maxDivergencePercent: string;
}

/**
 * The verdict on a stored rate at `now` (pure): a price's rate, or why there is none. A `fixed` row
 * (the sandbox table) is always usable. Any other row is usable only when its rate and its
 * confirming rate were both fetched at most RATE_MAX_AGE_MS ago and are at most
 * `maxDivergencePercent` % apart (of the lower); the primary's rate is the price.
 */
export function rateVerdict(row: StoredRate, now: Date, policy: RatePolicy): { rate: ExchangeRate } | { refused: RateRefusal } {
  if (row.source === 'fixed') return { rate: { rate: row.rate, source: row.source, fetchedAt: row.fetched_at } };
  const fresh = (at: Date) => now.getTime() - at.getTime() <= RATE_MAX_AGE_MS;
  if (!fresh(row.fetched_at)) return { refused: 'stale' };
  if (row.confirming_rate === null || row.confirming_fetched_at === null || row.confirming_source === null || !fresh(row.confirming_fetched_at)) {
    return { refused: 'unconfirmed' };
  }
  if (!withinPercent(row.rate, row.confirming_rate, policy.maxDivergencePercent)) return { refused: 'disagree' };
  const fetchedAt = row.confirming_fetched_at < row.fetched_at ? row.confirming_fetched_at : row.fetched_at;
  return { rate: { rate: row.rate, source: `${row.source}+${row.confirming_source}`, fetchedAt } };
}

/** A stored rate as a price's rate at `now`, or null when it gives none (see `rateVerdict`). */
function usableRate(row: StoredRate, now: Date, policy: RatePolicy): ExchangeRate | null {
  const verdict = rateVerdict(row, now, policy);
  return 'rate' in verdict ? verdict.rate : null;
}

/** The stored row of a pair, or null. */
export async function storedRate(db: Db, currency: string, coin: string): Promise<StoredRate | null> {
  return db.maybeOne(
    prepared(sql.type(rateRow)`
    select rate::text as rate, source, fetched_at, confirming_source, confirming_rate::text as confirming_rate, confirming_fetched_at
    from exchange_rates where currency = ${currency} and coin_symbol = ${coin}
  `),
  );
}

/**
 * The rate to price `currency` in `coin` at `now`: identity ('1') when they are the same; null when
 * the pair has no row or its row gives no price (`rateVerdict`). Null must never become a price.
 */
export async function getRate(db: Db, currency: string, coin: string, now: Date, policy: RatePolicy): Promise<ExchangeRate | null> {
  if (currency === coin) return { rate: '1', source: 'identity', fetchedAt: now };
  const row = await storedRate(db, currency, coin);
  return row === null ? null : usableRate(row, now, policy);
}

/** The rates policy of a configuration. */
export const ratePolicy = (config: Pick<Config, 'ratesMaxDivergencePercent'>): RatePolicy => ({ maxDivergencePercent: config.ratesMaxDivergencePercent });

/**
 * The confirming source and bound the configuration asks for: none with the `fixed` table (sandbox,
 * offline), a CoinGecko-compatible simple/price API (RATES_CONFIRM_API_URL) with a live provider.
 */
export function confirmationFor(
  config: Pick<Config, 'ratesProvider' | 'ratesConfirmApiUrl' | 'ratesConfirmApiKey' | 'ratesMaxDivergencePercent'>,
  options: { fetch?: typeof fetch; now: () => Date },
): { source: RateProvider; maxDivergencePercent: string } | null {
  if (config.ratesProvider === 'fixed') return null;
  return {
    source: coingeckoProvider({
      baseUrl: config.ratesConfirmApiUrl,
      apiKey: config.ratesConfirmApiKey,
      maxAgeMs: RATE_MAX_AGE_MS,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      now: options.now,
    }),
    maxDivergencePercent: config.ratesMaxDivergencePercent,
  };
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
