// Prices two sources agree on: tonapi and a CoinGecko-compatible simple/price, both imitated on
// loopback, against real Postgres and the real app. A live rate prices a payment only when both
// sources' rates are fresh and agree within RATES_MAX_DIVERGENCE_PERCENT; otherwise rate_unavailable
// and kassa_rate_refusals_total.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { JobHelpers } from 'graphile-worker';
import refreshTask from '../../tasks/rates__refresh.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { sql, z } from '../../src/db/pool.ts';
import { createLogger } from '../../src/log.ts';
import {
  coingeckoProvider,
  confirmationFor,
  fixedProvider,
  getRate,
  loadCoins,
  RATE_MAX_AGE_MS,
  rateVerdict,
  refreshRates,
  storedRate,
  tonapiProvider,
} from '../../src/rates/rates.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { assertError } from '../helpers/payments.ts';
import { LoopbackCoingecko, LoopbackTonapi, sendJson } from '../helpers/priceSources.ts';

const log = createLogger('silent');
const T0 = new Date('2026-03-01T12:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const USDT = '0:b113a994b5024a16719f69139328eb759596c38a25f59028b146fecdc3621dfe';
const NOT = '0:2f956143c461769579baef2e32cc2d7bc18283f40d20bb03e432cd603ac33ffc';
const policy = (maxDivergencePercent = '2') => ({ maxDivergencePercent });

/** Both sources, 1 % apart on TON, equal on USDT and NOT. */
function agreeingPrices(tonapi: LoopbackTonapi, gecko: LoopbackCoingecko): void {
  tonapi.prices = new Map([
    ['TON', { usd: '5', eur: '4', rub: '400' }],
    [USDT, { usd: '1' }],
    [NOT, { usd: '0.005' }],
  ]);
  gecko.prices = new Map([
    ['the-open-network', { usd: '5.05', eur: '4.04', rub: '404' }],
    ['tether', { usd: '1.0' }],
    ['notcoin', { usd: '5e-3' }],
  ]);
}

describe('prices two sources agree on', () => {
  let db: TestDatabase;
  const tonapi = new LoopbackTonapi();
  const gecko = new LoopbackCoingecko();
  const primary = () => tonapiProvider({ baseUrl: tonapi.url, apiKey: null });
  const confirm = (maxDivergencePercent = '2', now = () => T0) => ({
    source: coingeckoProvider({ baseUrl: `${gecko.url}/api/v3`, apiKey: null, now }),
    maxDivergencePercent,
  });

  before(async () => {
    db = await createTestDatabase();
    await tonapi.start();
    await gecko.start();
  });
  after(async () => {
    await tonapi.stop();
    await gecko.stop();
    await db.drop();
  });
  beforeEach(async () => {
    await db.pool.query(sql.typeAlias('void')`delete from exchange_rates`);
    agreeingPrices(tonapi, gecko);
    for (const source of [tonapi, gecko]) {
      source.seen = [];
      source.reply = null;
    }
    gecko.lastUpdatedAt = null;
  });

  describe('the CoinGecko-compatible source', () => {
    it('asks simple/price for the catalogue’s coin ids in USD, EUR and RUB, with the key in its header', async () => {
      const coins = await loadCoins(db.pool, 'mainnet');
      const prices = await coingeckoProvider({ baseUrl: `${gecko.url}/api/v3/`, apiKey: 'demo-key', now: () => new Date() }).fetchUsdPrices(coins);
      assert.equal(gecko.seen.length, 1);
      const { url, headers } = gecko.seen[0]!;
      assert.equal(url.pathname, '/api/v3/simple/price');
      assert.deepEqual(url.searchParams.get('ids')?.split(','), [
        'blum',
        'dogs-2',
        'notcoin',
        'scaleton',
        'ston-2',
        'tether',
        'tether-gold',
        'the-open-network',
      ]);
      assert.equal(url.searchParams.get('vs_currencies'), 'usd,eur,rub');
      assert.equal(url.searchParams.get('include_last_updated_at'), 'true');
      assert.equal(headers['x-cg-demo-api-key'], 'demo-key');
      assert.equal(headers.authorization, undefined);
      assert.deepEqual(Object.fromEntries([...prices].sort()), { EUR: '1.25', NOT: '0.005', RUB: '0.0125', TON: '5.05', USD: '1', USDT: '1' });

      await coingeckoProvider({ baseUrl: `${gecko.url}/api/v3`, apiKey: null, now: () => new Date() }).fetchUsdPrices(coins);
      assert.equal(gecko.seen[1]!.headers['x-cg-demo-api-key'], undefined, 'no key, no key header');
    });

    it('leaves out a price the source itself last updated more than 10 minutes ago', async () => {
      const coins = await loadCoins(db.pool, 'mainnet');
      const provider = coingeckoProvider({ baseUrl: `${gecko.url}/api/v3`, apiKey: null, now: () => T0 });
      gecko.lastUpdatedAt = T0.getTime() / 1000 - 60;
      assert.equal((await provider.fetchUsdPrices(coins)).get('TON'), '5.05');
      gecko.lastUpdatedAt = (T0.getTime() - RATE_MAX_AGE_MS) / 1000 - 1;
      assert.deepEqual([...(await provider.fetchUsdPrices(coins)).keys()], ['USD']);
    });

    it('fails clearly on an error status or a malformed answer', async () => {
      const coins = await loadCoins(db.pool, 'mainnet');
      const provider = coingeckoProvider({ baseUrl: `${gecko.url}/api/v3`, apiKey: null, now: () => new Date() });
      gecko.reply = (_req, res) => sendJson(res, 429, '{"status":{"error_code":429}}');
      await assert.rejects(provider.fetchUsdPrices(coins), /coingecko rates: HTTP 429/);
      gecko.reply = (_req, res) => sendJson(res, 200, '[1]');
      await assert.rejects(provider.fetchUsdPrices(coins), /coingecko rates: malformed response: not an object of coins/);
      gecko.reply = (_req, res) => sendJson(res, 200, '{"tether":{"usd":"one"}}');
      await assert.rejects(provider.fetchUsdPrices(coins), /tether\.usd "one" is not a number/);
      gecko.reply = (_req, res) => {
        res.writeHead(302, { location: 'http://169.254.169.254/' });
        res.end();
      };
      await assert.rejects(provider.fetchUsdPrices(coins), /coingecko rates: request failed/, 'a redirect is never followed');
    });
  });

  it('prices a pair both sources agree on, recording both, with the primary’s rate', async () => {
    assert.equal(await refreshRates(db.pool, primary(), 'mainnet', T0, log, confirm()), 6 * 3 - 3);
    assert.deepEqual(await getRate(db.pool, 'USD', 'TON', T0, policy()), { rate: '0.2', source: 'tonapi+coingecko', fetchedAt: T0 });
    assert.deepEqual(await getRate(db.pool, 'EUR', 'USDT', T0, policy()), { rate: '1.25', source: 'tonapi+coingecko', fetchedAt: T0 });
    const row = await storedRate(db.pool, 'USD', 'TON');
    assert.equal(row?.source, 'tonapi');
    assert.equal(row?.confirming_source, 'coingecko');
    assert.equal(row?.confirming_rate, '0.19801980198019801980198019802');
    assert.equal(row?.confirming_fetched_at?.getTime(), T0.getTime());
  });

  it('prices nothing the second source contradicts beyond the bound; the bound is configurable', async () => {
    gecko.prices.set('the-open-network', { usd: '5.16', eur: '4.128', rub: '412.8' }); // TON 3.2 % above tonapi's
    await refreshRates(db.pool, primary(), 'mainnet', T0, log, confirm());
    assert.equal(await getRate(db.pool, 'USD', 'TON', T0, policy()), null);
    assert.equal(await getRate(db.pool, 'TON', 'USDT', T0, policy()), null);
    assert.deepEqual(rateVerdict((await storedRate(db.pool, 'USD', 'TON'))!, T0, policy()), { refused: 'disagree' });
    assert.equal((await getRate(db.pool, 'USD', 'USDT', T0, policy()))?.rate, '1', 'pairs they agree on are still priced');
    assert.equal((await getRate(db.pool, 'USD', 'TON', T0, policy('5')))?.rate, '0.2', 'within 5 %');
    assert.equal((await getRate(db.pool, 'USD', 'TON', T0, policy('3.2')))?.rate, '0.2', 'exactly 3.2 % apart (of the lower) agrees at 3.2');
    assert.equal(await getRate(db.pool, 'USD', 'TON', T0, policy('3.19')), null);
  });

  it('prices nothing the second source does not price', async () => {
    gecko.prices.delete('notcoin');
    await refreshRates(db.pool, primary(), 'mainnet', T0, log, confirm());
    assert.equal(await getRate(db.pool, 'USD', 'NOT', T0, policy()), null);
    assert.deepEqual(rateVerdict((await storedRate(db.pool, 'USD', 'NOT'))!, T0, policy()), { refused: 'unconfirmed' });
    assert.equal((await getRate(db.pool, 'USD', 'TON', T0, policy()))?.rate, '0.2');
  });

  it('with the second source down, prices only while its last rates are fresh', async () => {
    await refreshRates(db.pool, primary(), 'mainnet', T0, log, confirm());
    gecko.reply = (_req, res) => sendJson(res, 503, '{"error":"down"}');
    assert.equal(
      await refreshRates(
        db.pool,
        primary(),
        'mainnet',
        at(5 * 60_000),
        log,
        confirm('2', () => at(5 * 60_000)),
      ),
      15,
      'the primary is refreshed',
    );
    const row = await storedRate(db.pool, 'USD', 'TON');
    assert.equal(row?.fetched_at.getTime(), at(5 * 60_000).getTime());
    assert.equal(row?.confirming_fetched_at?.getTime(), T0.getTime());
    assert.deepEqual(await getRate(db.pool, 'USD', 'TON', at(6 * 60_000), policy()), { rate: '0.2', source: 'tonapi+coingecko', fetchedAt: T0 });
    await refreshRates(
      db.pool,
      primary(),
      'mainnet',
      at(RATE_MAX_AGE_MS),
      log,
      confirm('2', () => at(RATE_MAX_AGE_MS)),
    );
    assert.equal((await getRate(db.pool, 'USD', 'TON', at(RATE_MAX_AGE_MS), policy()))?.rate, '0.2', 'exactly 10 minutes old is still fresh');
    assert.equal(await getRate(db.pool, 'USD', 'TON', at(RATE_MAX_AGE_MS + 1), policy()), null, 'the primary alone never prices');
    assert.deepEqual(rateVerdict((await storedRate(db.pool, 'USD', 'TON'))!, at(RATE_MAX_AGE_MS + 1), policy()), { refused: 'unconfirmed' });
  });

  it('a failing primary changes nothing, whatever the second source says', async () => {
    await refreshRates(db.pool, primary(), 'mainnet', T0, log, confirm());
    tonapi.reply = (_req, res) => sendJson(res, 500, '{"error":"internal"}');
    await assert.rejects(
      refreshRates(
        db.pool,
        primary(),
        'mainnet',
        at(60_000),
        log,
        confirm('2', () => at(60_000)),
      ),
      /tonapi rates: HTTP 500/,
    );
    const row = await storedRate(db.pool, 'USD', 'TON');
    assert.equal(row?.fetched_at.getTime(), T0.getTime());
    assert.equal(row?.confirming_fetched_at?.getTime(), T0.getTime());
  });

  it('a live rate without any second source never prices; the sandbox’s fixed table needs none', async () => {
    await refreshRates(db.pool, primary(), 'mainnet', T0, log);
    assert.equal(await getRate(db.pool, 'USD', 'TON', T0, policy()), null);
    await refreshRates(db.pool, fixedProvider(), 'sandbox', T0, log, null);
    assert.deepEqual(await getRate(db.pool, 'USD', 'TON', at(3600_000), policy()), { rate: '0.2', source: 'fixed', fetchedAt: T0 });
  });

  it('the configuration: no second source with the fixed table (offline sandbox), CoinGecko and 2 % by default otherwise', () => {
    assert.equal(confirmationFor(loadConfig({}), { now: () => T0 }), null);
    const mainnet = { TON_NETWORK: 'mainnet', KASSA_MASTER_KEY: 'ab'.repeat(32), BASE_URL: 'https://pay.example.com' };
    const live = confirmationFor(loadConfig(mainnet), { now: () => T0 });
    assert.equal(live?.source.name, 'coingecko');
    assert.equal(live?.maxDivergencePercent, '2');
    assert.equal(loadConfig(mainnet).ratesConfirmApiUrl, 'https://api.coingecko.com/api/v3');
    assert.equal(confirmationFor(loadConfig({ ...mainnet, RATES_MAX_DIVERGENCE_PERCENT: '0.5' }), { now: () => T0 })?.maxDivergencePercent, '0.5');
    for (const bad of ['0', '51', 'two', '-1', '1e1', '2%'])
      assert.throws(
        () => loadConfig({ RATES_MAX_DIVERGENCE_PERCENT: bad }),
        (error: unknown) => error instanceof ConfigError && /RATES_MAX_DIVERGENCE_PERCENT/.test(error.message),
      );
    assert.throws(() => loadConfig({ RATES_CONFIRM_API_URL: 'ftp://x' }), /RATES_CONFIRM_API_URL must be an absolute http\(s\) URL/);
  });

  describe('through the API', () => {
    let app: TestApp;
    const helpers = { job: { id: '1' } } as unknown as JobHelpers;
    before(async () => {
      app = await startTestApp({
        env: {
          TON_NETWORK: 'mainnet',
          KASSA_MASTER_KEY: 'ab'.repeat(32),
          BASE_URL: 'https://pay.example.com',
          RATES_API_URL: tonapi.url,
          RATES_CONFIRM_API_URL: `${gecko.url}/api/v3`,
        },
      });
    });
    after(async () => app.close());

    const refusals = async (reason: string): Promise<number> => {
      const text = await (await fetch(`${app.url}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith(`kassa_rate_refusals_total{reason="${reason}"}`));
      return line ? Number(line.split(' ')[1]) : 0;
    };

    it('prices a fiat payment when both agree, answers rate_unavailable and counts it when they do not', async () => {
      const refresh = refreshTask({ config: app.config, pool: app.pool, log, now: app.clock.now });
      await refresh({}, helpers);
      const shop = await app.store({ name: 'Two sources', methods: 'TON/TON' });
      const body = { amount: '10', currency: 'USD', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } };
      const priced = await app.request('POST', '/v1/payments', { token: shop.token, body });
      assert.equal(priced.status, 201, priced.text);
      assert.equal(priced.json.coinAmount ?? priced.json.coin_amount ?? '2', '2');
      const stored = await app.pool.one(
        sql.type(z.object({ exchange_rate: z.string(), exchange_rate_source: z.string() }))`
          select exchange_rate::text as exchange_rate, exchange_rate_source from payments where id = ${priced.json.id}`,
      );
      assert.deepEqual(stored, { exchange_rate: '0.2', exchange_rate_source: 'tonapi+coingecko' });

      gecko.prices.set('the-open-network', { usd: '5.5', eur: '4.4', rub: '440' });
      await refresh({}, helpers);
      const before = await refusals('disagree');
      assertError(await app.request('POST', '/v1/payments', { token: shop.token, body }), 503, 'api_error', 'rate_unavailable');
      assert.equal(await refusals('disagree'), before + 1);

      gecko.prices.set('the-open-network', { usd: '5', eur: '4', rub: '400' });
      await refresh({}, helpers);
      assert.equal((await app.request('POST', '/v1/payments', { token: shop.token, body })).status, 201, 'priced again once they agree');
    });
  });
});
