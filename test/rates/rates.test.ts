// Exchange rates against real Postgres: the fixed table, freshness, the tonapi provider against a
// real local HTTP server, and the rates__refresh task.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Address } from '@ton/core';
import type { JobHelpers } from 'graphile-worker';
import refreshTask from '../../tasks/rates__refresh.ts';
import { loadConfig } from '../../src/config.ts';
import { sql, z } from '../../src/db/pool.ts';
import { createLogger } from '../../src/log.ts';
import {
  computeRates,
  fixedProvider,
  getRate,
  loadCoins,
  providerFor,
  RATE_MAX_AGE_MS,
  refreshRates,
  tonapiProvider,
  type RateProvider,
} from '../../src/rates/rates.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

const log = createLogger('silent');
const POLICY = { maxDivergencePercent: '2' };
/** A second source that says what `provider` says (named `check`), so live rates are confirmed. */
const echo = (provider: RateProvider) => ({ source: { name: 'check', fetchUsdPrices: provider.fetchUsdPrices }, maxDivergencePercent: '2' });
const T0 = new Date('2026-03-01T12:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

const USDT = '0:b113a994b5024a16719f69139328eb759596c38a25f59028b146fecdc3621dfe';
const NOT = '0:2f956143c461769579baef2e32cc2d7bc18283f40d20bb03e432cd603ac33ffc';
const DOGS = '0:afc49cb8786f21c87045b19ede78fc6b46c51048513f8e9a6d44060199c1bf0c';
const STON = '0:3690254dc15b2297610cda60744a45f2b710aa4234b89adb630e99d79b01bd4f';
/** Every mainnet master of the catalogue (000001 and 000013). */
const MAINNET_MASTERS = {
  USDT,
  NOT,
  DOGS,
  STON,
  BUILD: '0:589d4ac897006b5aaa7fae5f95c5e481bd34765664df0b831a9d0eb9ee7fc150',
  BLUM: '0:808f9a22451ad7a2462c83f07e7b4286f71330879ba9af923c1d0cc4ae6d3f04',
  DUST: '0:65aac9b5e380eae928db3c8e238d9bc0d61a9320fdc2bc7a2f6c87d6fedf9208',
  DYOR: '0:906697a57af1cdb1bc39214b7049ae02b3c92a5b0c342ac61e0eb8bd9304b5f1',
  XAUt0: '0:3547f2ee4022c794c80ea354b81bb63b5b571dd05ac091b035d19abbadd74ac6',
};

/**
 * A tonapi-shaped answer, written as raw text so the numbers are exactly these literals: NOT keyed
 * by its user-friendly address, a price in exponent form, a price with more digits than a float
 * holds, DOGS priced 0 (tonapi's "unknown") and a token Kassa does not know.
 */
const TONAPI_BODY = `{"rates":{
  "TON":{"prices":{"USD":5,"EUR":4,"RUB":400},"diff_24h":{"USD":"+1.00%"}},
  "${USDT}":{"prices":{"USD":1.0,"EUR":0.8,"RUB":80},"diff_24h":{"USD":"0.00%"}},
  "${Address.parse(NOT).toString()}":{"prices":{"USD":5e-3,"EUR":0.004,"RUB":0.4}},
  "${DOGS}":{"prices":{"USD":0,"EUR":0,"RUB":0}},
  "${STON}":{"prices":{"USD":3.00000000000000000001,"EUR":2.4,"RUB":240}},
  "0:0000000000000000000000000000000000000000000000000000000000000001":{"prices":{"USD":42}}
}}`;

interface Seen {
  url: string;
  authorization: string | undefined;
}

/** A local stand-in for tonapi.io; each test sets `reply`. */
class FakeTonapi {
  server = http.createServer((req, res) => {
    this.seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
    this.reply(req, res);
  });
  seen: Seen[] = [];
  reply: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_req, res) => json(res, 200, TONAPI_BODY);
  url = '';
  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function json(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(body);
}

const rateRow = z.object({ currency: z.string(), coin_symbol: z.string(), rate: z.string(), source: z.string(), fetched_at: z.date() });

describe('exchange rates', () => {
  let db: TestDatabase;
  const tonapi = new FakeTonapi();

  before(async () => {
    db = await createTestDatabase();
    await tonapi.start();
  });
  after(async () => {
    await tonapi.stop();
    await db.drop();
  });
  beforeEach(async () => {
    await db.pool.query(sql.typeAlias('void')`delete from exchange_rates`);
    tonapi.seen = [];
    tonapi.reply = (_req, res) => json(res, 200, TONAPI_BODY);
  });

  const rows = () =>
    db.pool.any(sql.type(rateRow)`select currency, coin_symbol, rate::text as rate, source, fetched_at from exchange_rates order by currency, coin_symbol`);
  const rateOf = async (currency: string, coin: string) =>
    (await db.pool.maybeOne(
      sql.type(
        rateRow,
      )`select currency, coin_symbol, rate::text as rate, source, fetched_at from exchange_rates where currency = ${currency} and coin_symbol = ${coin}`,
    )) ?? null;

  describe('the fixed provider', () => {
    it('writes every pair of the sandbox table', async () => {
      const written = await refreshRates(db.pool, fixedProvider(), 'sandbox', T0, log);
      // (USD, EUR, RUB + 10 coins) × 10 coins, minus each coin against itself.
      assert.equal(written, 13 * 10 - 10);
      const all = await rows();
      assert.equal(all.length, 120);
      assert.ok(all.every((row) => row.source === 'fixed' && row.fetched_at.getTime() === T0.getTime()));
      assert.ok(all.every((row) => row.currency !== row.coin_symbol));
      assert.equal((await rateOf('USD', 'TON'))?.rate, '0.2');
      assert.equal((await rateOf('TON', 'USDT'))?.rate, '5');
      assert.equal((await rateOf('EUR', 'USDT'))?.rate, '1.08');
      assert.equal((await rateOf('RUB', 'TON'))?.rate, '0.0022');
      assert.equal((await rateOf('USDT', 'TON'))?.rate, '0.2');
      assert.equal((await rateOf('TON', 'XAUt0'))?.rate, '0.0025');
      assert.equal((await rateOf('USD', 'DYOR'))?.rate, '5000');
      assert.equal((await rateOf('USD', 'STON'))?.rate, '0.333333333333333333333333333334', 'rounded up at 30 significant digits');
      assert.equal(await rateOf('TON', 'TON'), null);
      assert.equal(await rateOf('USDT', 'USD'), null, 'fiat is never the coin');
    });

    it('is safe to run twice, and an older run never overwrites a newer one', async () => {
      assert.equal(await refreshRates(db.pool, fixedProvider(), 'sandbox', at(60_000), log), 120);
      assert.equal(await refreshRates(db.pool, fixedProvider(), 'sandbox', at(60_000), log), 120);
      assert.equal(await refreshRates(db.pool, fixedProvider(), 'sandbox', T0, log), 0, 'the older fetch loses');
      assert.equal((await rateOf('USD', 'TON'))?.fetched_at.getTime(), at(60_000).getTime());
      const [a, b] = await Promise.all([
        refreshRates(db.pool, fixedProvider(), 'sandbox', at(120_000), log),
        refreshRates(db.pool, fixedProvider(), 'sandbox', at(120_000), log),
      ]);
      assert.deepEqual([a, b], [120, 120]);
      assert.equal((await rows()).length, 120);
    });
  });

  describe('getRate', () => {
    it('is the identity when the currency is the coin', async () => {
      assert.deepEqual(await getRate(db.pool, 'TON', 'TON', T0, POLICY), { rate: '1', source: 'identity', fetchedAt: T0 });
      assert.deepEqual(await getRate(db.pool, 'USDT', 'USDT', T0, POLICY), { rate: '1', source: 'identity', fetchedAt: T0 });
    });

    it('answers a fresh rate and refuses a stale one', async () => {
      const live: RateProvider = {
        name: 'live',
        fetchUsdPrices: async () =>
          new Map([
            ['USD', '1'],
            ['TON', '4'],
            ['USDT', '1'],
          ]),
      };
      assert.equal(await refreshRates(db.pool, live, 'sandbox', T0, log, echo(live)), 4); // USD→TON, USD→USDT, TON→USDT, USDT→TON
      assert.deepEqual(await getRate(db.pool, 'USD', 'TON', T0, POLICY), { rate: '0.25', source: 'live+check', fetchedAt: T0 });
      assert.equal((await getRate(db.pool, 'USD', 'TON', at(9 * 60_000), POLICY))?.rate, '0.25');
      assert.equal((await getRate(db.pool, 'USD', 'TON', at(RATE_MAX_AGE_MS), POLICY))?.rate, '0.25', 'exactly 10 minutes old is still fresh');
      assert.equal(await getRate(db.pool, 'USD', 'TON', at(RATE_MAX_AGE_MS + 1), POLICY), null, 'older than 10 minutes is stale');
      assert.equal(await getRate(db.pool, 'TON', 'USDT', at(60 * 60_000), POLICY), null);
    });

    it('never lets fixed rates go stale', async () => {
      await refreshRates(db.pool, fixedProvider(), 'sandbox', T0, log);
      assert.deepEqual(await getRate(db.pool, 'USD', 'TON', at(365 * 24 * 3600_000), POLICY), { rate: '0.2', source: 'fixed', fetchedAt: T0 });
    });

    it('answers null for a pair without a rate', async () => {
      await refreshRates(db.pool, fixedProvider(), 'sandbox', T0, log);
      assert.equal(await getRate(db.pool, 'GBP', 'TON', T0, POLICY), null);
      assert.equal(await getRate(db.pool, 'USD', 'NOPE', T0, POLICY), null);
      assert.equal(await getRate(db.pool, 'TON', 'USD', T0, POLICY), null);
    });

    it('answers null for a pair the provider stopped pricing, once its row is stale', async () => {
      const provider = (ton: boolean): RateProvider => ({
        name: 'live',
        fetchUsdPrices: async () =>
          new Map(
            ton
              ? [
                  ['USD', '1'],
                  ['TON', '4'],
                  ['USDT', '1'],
                ]
              : [
                  ['USD', '1'],
                  ['USDT', '1'],
                ],
          ),
      });
      await refreshRates(db.pool, provider(true), 'sandbox', T0, log, echo(provider(true)));
      await refreshRates(db.pool, provider(false), 'sandbox', at(5 * 60_000), log, echo(provider(false)));
      assert.equal((await getRate(db.pool, 'USD', 'USDT', at(12 * 60_000), POLICY))?.rate, '1');
      assert.equal(await getRate(db.pool, 'USD', 'TON', at(12 * 60_000), POLICY), null);
    });
  });

  it('removes rows of another provider, so fixed rates do not outlive a switch', async () => {
    await refreshRates(db.pool, fixedProvider(), 'sandbox', T0, log);
    const live: RateProvider = {
      name: 'tonapi',
      fetchUsdPrices: async () =>
        new Map([
          ['USD', '1'],
          ['TON', '4'],
        ]),
    };
    assert.equal(await refreshRates(db.pool, live, 'mainnet', at(1000), log), 1);
    assert.deepEqual(
      (await rows()).map((row) => [row.currency, row.coin_symbol, row.rate, row.source]),
      [['USD', 'TON', '0.25', 'tonapi']],
    );
  });

  it('computes pairs only where both prices are known', () => {
    const pairs = computeRates(
      new Map([
        ['USD', '1'],
        ['EUR', '1.25'],
        ['TON', '5'],
      ]),
      ['TON', 'USDT'],
    );
    assert.deepEqual(pairs, [
      { currency: 'EUR', coin: 'TON', rate: '0.25' },
      { currency: 'USD', coin: 'TON', rate: '0.2' },
    ]);
  });

  describe('the tonapi provider', () => {
    const provider = (apiKey: string | null = 'secret-key', timeoutMs?: number) =>
      tonapiProvider({ baseUrl: `${tonapi.url}/`, apiKey, ...(timeoutMs ? { timeoutMs } : {}) });

    it('asks for TON and the network’s jetton masters in USD, EUR and RUB', async () => {
      const coins = await loadCoins(db.pool, 'mainnet');
      await provider().fetchUsdPrices(coins);
      assert.equal(tonapi.seen.length, 1);
      const url = new URL(tonapi.seen[0]!.url, tonapi.url);
      assert.equal(url.pathname, '/v2/rates');
      assert.deepEqual(url.searchParams.get('tokens')?.split(',').sort(), ['ton', ...Object.values(MAINNET_MASTERS)].sort());
      assert.equal(url.searchParams.get('currencies'), 'usd,eur,rub');
      assert.equal(tonapi.seen[0]!.authorization, 'Bearer secret-key');

      await provider(null).fetchUsdPrices(await loadCoins(db.pool, 'testnet'));
      assert.equal(tonapi.seen[1]!.authorization, undefined, 'no key, no Authorization header');
      assert.equal(new URL(tonapi.seen[1]!.url, tonapi.url).searchParams.get('tokens'), 'ton', 'no jetton masters on testnet yet');
    });

    it('reads USD prices exactly and derives fiat from TON', async () => {
      const prices = await provider().fetchUsdPrices(await loadCoins(db.pool, 'mainnet'));
      assert.deepEqual(Object.fromEntries([...prices].sort()), {
        EUR: '1.25',
        NOT: '0.005',
        RUB: '0.0125',
        STON: '3.00000000000000000001',
        TON: '5',
        USD: '1',
        USDT: '1',
      });
    });

    it('reads the native coin keyed GRAM (its name since June 2026) as it reads TON', async () => {
      tonapi.reply = (_req, res) => json(res, 200, TONAPI_BODY.replace('"TON":', '"GRAM":'));
      try {
        assert.notEqual(TONAPI_BODY.replace('"TON":', '"GRAM":'), TONAPI_BODY);
        const prices = await provider().fetchUsdPrices(await loadCoins(db.pool, 'mainnet'));
        assert.equal(prices.get('TON'), '5');
        assert.equal(prices.get('EUR'), '1.25');
        assert.equal(new URL(tonapi.seen.at(-1)!.url, tonapi.url).searchParams.get('tokens')?.split(',')[0], 'ton', 'asked for as tonapi names it');
      } finally {
        tonapi.reply = (_req, res) => json(res, 200, TONAPI_BODY);
      }
    });

    it('refreshes every pair it can price', async () => {
      const written = await refreshRates(db.pool, provider(), 'mainnet', T0, log);
      // Currencies USD, EUR, RUB, TON, USDT, NOT, STON (7) × coins TON, USDT, NOT, STON (4) − 4.
      assert.equal(written, 7 * 4 - 4);
      assert.equal((await rateOf('USD', 'TON'))?.rate, '0.2');
      assert.equal((await rateOf('EUR', 'TON'))?.rate, '0.25');
      assert.equal((await rateOf('RUB', 'TON'))?.rate, '0.0025');
      assert.equal((await rateOf('TON', 'USDT'))?.rate, '5');
      assert.equal((await rateOf('EUR', 'USDT'))?.rate, '1.25');
      assert.equal((await rateOf('USD', 'NOT'))?.rate, '200');
      assert.equal((await rateOf('USD', 'STON'))?.rate, '0.333333333333333333332222222223');
      assert.equal((await rateOf('USD', 'TON'))?.source, 'tonapi');
      assert.equal(await rateOf('USD', 'DOGS'), null, 'a price of 0 is no price');
      assert.equal(await rateOf('USD', 'BLUM'), null, 'not in the answer, no price');
      assert.equal(await getRate(db.pool, 'USD', 'TON', T0, POLICY), null, 'tonapi alone never prices a payment (test/rates/agreement.test.ts)');
    });

    const refuses = async (reply: FakeTonapi['reply'], pattern: RegExp, timeoutMs?: number) => {
      await refreshRates(db.pool, fixedProvider(), 'sandbox', T0, log);
      tonapi.reply = reply;
      await assert.rejects(refreshRates(db.pool, provider('secret-key', timeoutMs), 'mainnet', at(1000), log), pattern);
      assert.equal((await rows()).length, 120, 'a failed refresh changes nothing');
    };

    it('fails clearly on an error status', async () => {
      await refuses((_req, res) => json(res, 500, '{"error":"internal"}'), /tonapi rates: HTTP 500: \{"error":"internal"\}/);
      await refuses((_req, res) => json(res, 429, '{"error":"rate limit"}'), /tonapi rates: HTTP 429/);
      await refuses((_req, res) => json(res, 401, '{"error":"bad key"}'), /tonapi rates: HTTP 401/);
    });

    it('fails clearly on malformed JSON', async () => {
      await refuses((_req, res) => json(res, 200, '{"rates": {"TON": '), /tonapi rates: malformed response: not JSON/);
      await refuses((_req, res) => json(res, 200, '<html>hello</html>'), /malformed response: not JSON/);
      await refuses((_req, res) => json(res, 200, '{"error":"x"}'), /malformed response: no "rates" object/);
      await refuses((_req, res) => json(res, 200, '{"rates":{"TON":{"prices":"5"}}}'), /rates\["TON"\] has no "prices" object/);
      await refuses((_req, res) => json(res, 200, '{"rates":{"TON":{"prices":{"USD":"five"}}}}'), /price "five" is not a number/);
      await refuses((_req, res) => json(res, 200, `{"rates":{"${USDT}":{"prices":{"USD":1}}}}`), /no USD price for TON/);
      await refuses((_req, res) => json(res, 200, '{"rates":{"TON":{"prices":{"USD":0}}}}'), /no USD price for TON/);
    });

    it('gives up after its timeout', async () => {
      await refuses(() => {}, /tonapi rates: no answer within 200 ms/, 200);
    });

    it('fails clearly when nothing listens', async () => {
      const closed = http.createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      await assert.rejects(tonapiProvider({ baseUrl: `http://127.0.0.1:${port}`, apiKey: null }).fetchUsdPrices([]), /tonapi rates: request failed/);
    });
  });

  it('providerFor follows the configuration', () => {
    assert.equal(providerFor(loadConfig({})).name, 'fixed');
    assert.equal(providerFor(loadConfig({ TON_NETWORK: 'mainnet', KASSA_MASTER_KEY: 'ab'.repeat(32), BASE_URL: 'https://pay.example.com' })).name, 'tonapi');
    assert.equal(providerFor(loadConfig({ RATES_PROVIDER: 'tonapi' })).name, 'tonapi');
  });

  describe('the rates__refresh task', () => {
    const helpers = { job: { id: '1' } } as unknown as JobHelpers;

    it('refreshes the sandbox table, twice without harm', async () => {
      let now = T0;
      const task = refreshTask({ config: loadConfig({ DATABASE_URL: db.url }), pool: db.pool, log, now: () => now });
      await task({}, helpers);
      assert.equal((await rows()).length, 120);
      now = at(60_000);
      await task({ _cron: { ts: now.toISOString(), backfilled: false } }, helpers);
      await task(null, helpers);
      const all = await rows();
      assert.equal(all.length, 120);
      assert.ok(all.every((row) => row.fetched_at.getTime() === now.getTime() && row.source === 'fixed'));
      assert.deepEqual(await getRate(db.pool, 'USD', 'TON', now, POLICY), { rate: '0.2', source: 'fixed', fetchedAt: now });
    });

    it('uses tonapi with the mainnet masters when configured', async () => {
      const config = loadConfig({
        DATABASE_URL: db.url,
        TON_NETWORK: 'mainnet',
        KASSA_MASTER_KEY: 'ab'.repeat(32),
        BASE_URL: 'https://pay.example.com',
        RATES_API_URL: tonapi.url,
        RATES_API_KEY: 'k',
        RATES_CONFIRM_API_URL: 'http://127.0.0.1:9', // nothing listens: the second source fails, tonapi's rates are still stored
      });
      const task = refreshTask({ config, pool: db.pool, log, now: () => T0 });
      await task({}, helpers);
      assert.equal(tonapi.seen[0]?.authorization, 'Bearer k');
      assert.equal((await rows()).length, 24);
      assert.deepEqual(await rateOf('EUR', 'USDT'), { currency: 'EUR', coin_symbol: 'USDT', rate: '1.25', source: 'tonapi', fetched_at: T0 });
      assert.equal(await getRate(db.pool, 'EUR', 'USDT', T0, POLICY), null, 'unconfirmed: no price');
    });
  });
});
