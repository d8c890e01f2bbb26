// Where prices come from. A provider answers one question: what is one unit of each asset (coin
// symbols and the fiat codes USD, EUR, RUB) worth in US dollars? Rates between any two assets are
// derived from those prices in rates.ts. Prices are decimal strings, never floats.
import { Address } from '@ton/core';
import { divideDecimal, isPositiveDecimalString, plainDecimal } from '../money.ts';

/** A coin of the catalogue, with its jetton master on the configured network (null: none, or native). */
export interface CoinInfo {
  symbol: string;
  kind: string;
  /** Raw form (`0:…`), from jetton_masters for the network; null for the native coin or when unknown. */
  masterAddress: string | null;
  /** coins.coingecko_id: the coin's id at the second source; null when it has none. */
  coingeckoId: string | null;
}

/** USD value of one unit, keyed by coin symbol or fiat code. Assets it cannot price are absent. */
export type UsdPrices = Map<string, string>;

export interface RateProvider {
  /** Stored as exchange_rates.source (or confirming_source). `fixed` rows never go stale. */
  readonly name: string;
  fetchUsdPrices(coins: readonly CoinInfo[]): Promise<UsdPrices>;
}

/**
 * The sandbox's rate table. SANDBOX FICTION: round numbers so that sandbox payments are easy to
 * follow, not market prices. Config refuses RATES_PROVIDER=fixed on mainnet.
 */
const SANDBOX_USD_PRICES: Readonly<Record<string, string>> = Object.freeze({
  USD: '1',
  EUR: '1.08',
  RUB: '0.011',
  TON: '5',
  USDT: '1',
  XAUt0: '2000',
  NOT: '0.005',
  DOGS: '0.0005',
  BUILD: '0.05',
  BLUM: '0.02',
  DUST: '0.001',
  DYOR: '0.0002',
  STON: '3',
});

/** The fixed table (name `fixed`): no network, never stale. */
export function fixedProvider(table: Readonly<Record<string, string>> = SANDBOX_USD_PRICES): RateProvider {
  for (const [asset, price] of Object.entries(table)) {
    if (!isPositiveDecimalString(price)) throw new RangeError(`fixed rate table: price of ${asset} must be a positive decimal, got ${JSON.stringify(price)}`);
  }
  return {
    name: 'fixed',
    async fetchUsdPrices() {
      return new Map(Object.entries(table));
    },
  };
}

interface TonapiOptions {
  /** For example https://tonapi.io (no trailing slash needed). */
  baseUrl: string;
  apiKey: string | null;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

/** Raw address form of anything tonapi may use as a key (raw or user-friendly); null if it is not an address. */
function rawAddress(value: string): string | null {
  try {
    return Address.parse(value).toRawString().toLowerCase();
  } catch {
    return null;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses JSON keeping every number as the exact text it was written with ("5.10", "1.2e-7"), so
 * that a price never passes through a float (JSON.parse source text access, Node ≥ 21).
 */
function parseJsonExact(text: string): unknown {
  const reviver = (_key: string, value: unknown, context?: { source?: string }) => (typeof value === 'number' ? (context?.source ?? String(value)) : value);
  return JSON.parse(text, reviver as (key: string, value: unknown) => unknown);
}

/**
 * GET `url` and parse its JSON exactly; every failure is one Error naming the source (`name`): no
 * answer within `timeoutMs`, the request failing, a non-2xx status (with the start of its body), not JSON.
 */
async function getJson(name: string, doFetch: typeof fetch, url: string, headers: Record<string, string>, timeoutMs: number): Promise<unknown> {
  let text: string;
  let status: number;
  try {
    const response = await doFetch(url, { headers, redirect: 'error', signal: AbortSignal.timeout(timeoutMs) });
    status = response.status;
    text = await response.text();
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    throw new Error(timedOut ? `${name} rates: no answer within ${timeoutMs} ms` : `${name} rates: request failed: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (status < 200 || status > 299) {
    throw new Error(`${name} rates: HTTP ${status}: ${text.slice(0, 200)}`);
  }
  try {
    return parseJsonExact(text);
  } catch (error) {
    throw new Error(`${name} rates: malformed response: not JSON`, { cause: error });
  }
}

/** A positive price from a tonapi `prices` object, as a plain decimal string; null when absent or zero. */
function priceOf(prices: Record<string, unknown>, currency: string): string | null {
  const raw = prices[currency];
  if (typeof raw !== 'string') return null;
  let value: string;
  try {
    value = plainDecimal(raw);
  } catch {
    throw new Error(`tonapi rates: malformed response: price ${JSON.stringify(raw)} is not a number`);
  }
  // tonapi answers 0 for a token it has no price for: that is "unknown", not "free".
  return isPositiveDecimalString(value) ? value : null;
}

/**
 * tonapi.io's public rates endpoint (name `tonapi`):
 * `GET {baseUrl}/v2/rates?tokens=ton,<jetton masters>&currencies=usd,eur,rub`, answered with
 * `{"rates": {"TON": {"prices": {"USD": 5.1, "EUR": 4.7, "RUB": 480}, "diff_24h": …},
 * "0:b113…": {"prices": {"USD": 1.0, …}}}}`. Keys are `TON` and the masters in raw form (or
 * user-friendly when friendly addresses were sent); both are accepted. A price of 0 means unknown.
 * Fiat values are derived from TON's prices: one EUR is worth price_USD / price_EUR dollars.
 * The native coin is asked for as `ton`, tonapi's name for it (not a ticker: jettons are asked by
 * master address); since the coin's rename to Gram (GRAM, June 2026, CONTRACT §12) its answer may be
 * keyed `GRAM` rather than `TON`, and either is read as the native coin (docs/OPERATIONS.md, Exchange
 * rates). A jetton called GRAM cannot be taken for it: jettons are keyed by their master's address.
 */
/** The keys tonapi may answer the native coin's prices under: its name before and after the rename. */
const NATIVE_KEYS: ReadonlySet<string> = new Set(['TON', 'GRAM']);

export function tonapiProvider(options: TonapiOptions): RateProvider {
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  return {
    name: 'tonapi',
    async fetchUsdPrices(coins) {
      const jettons = new Map<string, string>(); // raw master → coin symbol
      for (const coin of coins) {
        if (coin.kind !== 'jetton' || coin.masterAddress === null) continue;
        const raw = rawAddress(coin.masterAddress);
        if (raw !== null) jettons.set(raw, coin.symbol);
      }
      const natives = coins.filter((coin) => coin.kind === 'native').map((coin) => coin.symbol);
      const tokens = ['ton', ...jettons.keys()].map(encodeURIComponent).join(',');
      const url = `${baseUrl}/v2/rates?tokens=${tokens}&currencies=usd,eur,rub`;
      const headers: Record<string, string> = { accept: 'application/json' };
      if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;

      const body = await getJson('tonapi', doFetch, url, headers, timeoutMs);
      if (!isObject(body) || !isObject(body.rates)) {
        throw new Error('tonapi rates: malformed response: no "rates" object');
      }

      const prices: UsdPrices = new Map();
      let ton: Record<string, unknown> | null = null;
      for (const [key, entry] of Object.entries(body.rates)) {
        if (!isObject(entry) || !isObject(entry.prices)) {
          throw new Error(`tonapi rates: malformed response: rates[${JSON.stringify(key)}] has no "prices" object`);
        }
        if (NATIVE_KEYS.has(key.toUpperCase())) {
          ton = entry.prices;
          continue;
        }
        const raw = rawAddress(key);
        const symbol = raw === null ? undefined : jettons.get(raw);
        if (symbol === undefined) continue;
        const usd = priceOf(entry.prices, 'USD');
        if (usd !== null) prices.set(symbol, usd);
      }
      const tonUsd = ton === null ? null : priceOf(ton, 'USD');
      if (ton === null || tonUsd === null) {
        throw new Error('tonapi rates: malformed response: no USD price for TON');
      }
      for (const symbol of natives) prices.set(symbol, tonUsd);
      prices.set('USD', '1');
      for (const fiat of ['EUR', 'RUB'] as const) {
        const tonInFiat = priceOf(ton, fiat);
        if (tonInFiat !== null) prices.set(fiat, divideDecimal(tonUsd, tonInFiat));
      }
      return prices;
    },
  };
}

interface CoingeckoOptions {
  /** The API root, for example https://api.coingecko.com/api/v3 (the path `/simple/price` is added). */
  baseUrl: string;
  apiKey: string | null;
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** The clock `last_updated_at` is judged by (the caller's). */
  now: () => Date;
  /** A price the source itself last updated longer ago than this is no price (default 10 minutes). */
  maxAgeMs?: number;
}

/** A positive price from a CoinGecko coin object (`{"usd": 5.1, …}`); null when absent or zero. */
function geckoPrice(entry: Record<string, unknown>, currency: string, id: string): string | null {
  const raw = entry[currency];
  if (raw === undefined || raw === null) return null;
  let value: string;
  try {
    value = plainDecimal(String(raw));
  } catch {
    throw new Error(`coingecko rates: malformed response: ${id}.${currency} ${JSON.stringify(raw)} is not a number`);
  }
  return isPositiveDecimalString(value) ? value : null;
}

/**
 * A CoinGecko-compatible `simple/price` API (name `coingecko`, https://docs.coingecko.com/reference/simple-price):
 * `GET {baseUrl}/simple/price?ids=<coins.coingecko_id…>&vs_currencies=usd,eur,rub&include_last_updated_at=true`,
 * answered with `{"the-open-network": {"usd": 5.1, "eur": 4.7, "rub": 480, "last_updated_at": 1711356300}, …}`.
 * Coins are asked by their catalogue id (coins without one are not priced). A price whose
 * `last_updated_at` is older than `maxAgeMs` is not fresh and is left out; so is a price of 0.
 * Fiat values are derived from the native coin's prices, as for tonapi. The key, when set, goes in
 * `x-cg-pro-api-key` for pro-api.coingecko.com and in `x-cg-demo-api-key` otherwise.
 */
export function coingeckoProvider(options: CoingeckoOptions): RateProvider {
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxAgeMs = options.maxAgeMs ?? 10 * 60 * 1000;
  const { now } = options;
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  return {
    name: 'coingecko',
    async fetchUsdPrices(coins) {
      const byId = new Map<string, string[]>(); // id → coin symbols
      for (const coin of coins) {
        if (coin.coingeckoId === null) continue;
        byId.set(coin.coingeckoId, [...(byId.get(coin.coingeckoId) ?? []), coin.symbol]);
      }
      const native = coins.find((coin) => coin.kind === 'native' && coin.coingeckoId !== null);
      const prices: UsdPrices = new Map([['USD', '1']]);
      if (byId.size === 0) return prices;
      const ids = [...byId.keys()].sort().map(encodeURIComponent).join(',');
      const url = `${baseUrl}/simple/price?ids=${ids}&vs_currencies=usd,eur,rub&include_last_updated_at=true`;
      const headers: Record<string, string> = { accept: 'application/json' };
      if (options.apiKey) headers[new URL(baseUrl).hostname === 'pro-api.coingecko.com' ? 'x-cg-pro-api-key' : 'x-cg-demo-api-key'] = options.apiKey;
      const body = await getJson('coingecko', doFetch, url, headers, timeoutMs);
      if (!isObject(body)) throw new Error('coingecko rates: malformed response: not an object of coins');
      const oldest = now().getTime() - maxAgeMs;
      let nativeEntry: Record<string, unknown> | null = null;
      for (const [id, entry] of Object.entries(body)) {
        const symbols = byId.get(id);
        if (symbols === undefined) continue;
        if (!isObject(entry)) throw new Error(`coingecko rates: malformed response: ${JSON.stringify(id)} is not an object`);
        const updated = entry.last_updated_at;
        if (updated !== undefined && updated !== null) {
          if (typeof updated !== 'string' || !/^\d{1,12}$/.test(updated)) {
            throw new Error(`coingecko rates: malformed response: ${id}.last_updated_at ${JSON.stringify(updated)} is not a unix time`);
          }
          if (Number(updated) * 1000 < oldest) continue; // the source's own price is stale
        }
        const usd = geckoPrice(entry, 'usd', id);
        if (usd === null) continue;
        for (const symbol of symbols) prices.set(symbol, usd);
        if (native && id === native.coingeckoId) nativeEntry = entry;
      }
      const nativeUsd = native ? prices.get(native.symbol) : undefined;
      if (nativeEntry !== null && nativeUsd !== undefined) {
        for (const fiat of ['EUR', 'RUB'] as const) {
          const inFiat = geckoPrice(nativeEntry, fiat.toLowerCase(), native!.coingeckoId!);
          if (inFiat !== null) prices.set(fiat, divideDecimal(nativeUsd, inFiat));
        }
      }
      return prices;
    },
  };
}
