// The home page's figures (dashboard/home.ts homeFigures) and the dashboard's rounding for reading
// (money.ts readableDecimal), as plain functions over rows: no database, no browser.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { homeFigures, type HomeRows } from '../../src/dashboard/home.ts';
import { priceShare, readableDecimal } from '../../src/money.ts';

const now = new Date('2026-11-27T10:00:00Z');
const rows = (sales: HomeRows['sales'], extra: Partial<HomeRows> = {}): HomeRows => ({
  sales,
  statuses: [],
  waiting: [],
  failed: [],
  failedWebhooks: 0,
  differences: 0,
  refundGas: null,
  ...extra,
});
const sale = (day: string, currency: string, coin: string, amount: string, coinAmount: string, payments = 1) => ({
  day,
  currency,
  coin_symbol: coin,
  payments,
  amount,
  coin_amount: coinAmount,
});

describe('homeFigures', () => {
  it('sums sales per window (UTC days, today included) per price currency and per coin, exactly', () => {
    const f = homeFigures(
      rows([
        sale('2026-11-27', 'USD', 'TON', '10.10', '2.02'),
        sale('2026-11-21', 'USD', 'USDT', '0.20', '0.2'),
        sale('2026-11-20', 'EUR', 'TON', '5', '1.08', 2),
        sale('2026-10-29', 'USD', 'TON', '1', '0.2'),
        sale('2026-10-28', 'USD', 'TON', '1000', '200'),
      ]),
      now,
    );
    const usd = f.byPrice.find((l) => l.currency === 'USD')!;
    assert.deepEqual(usd.windows, { today: { amount: '10.1', payments: 1 }, '7d': { amount: '10.3', payments: 2 }, '30d': { amount: '11.3', payments: 3 } });
    const ton = f.byCoin.find((l) => l.currency === 'TON')!;
    assert.deepEqual(ton.windows, { today: { amount: '2.02', payments: 1 }, '7d': { amount: '2.02', payments: 1 }, '30d': { amount: '3.3', payments: 4 } });
    assert.equal(f.mainFiat, 'USD');
    assert.equal(f.chart?.days.length, 30);
    assert.equal(f.chart?.days[0]?.day, '2026-10-29');
    assert.equal(f.chart?.days.at(-1)?.amount, '10.1');
  });

  it('adds the sales inside their refund window to what can be refunded; says when the refund fee balance is low', () => {
    const f = homeFigures(
      rows([], {
        waiting: [{ coin_symbol: 'USDT', decimals: 6, refundable: '500000', sale_refundable: '2000000', in_deposits: '2500000' }],
        refundGas: { available: 10_000_000n, needed: 60_000_000n, token: 'USDT', likely: true },
        failed: [{ kind: 'refund', coin_symbol: 'TON', transfers: 2, amount: '1.5' }],
      }),
      now,
    );
    assert.deepEqual(f.waiting, [{ coin: 'USDT', refundable: '2.5', inDeposits: '2.5' }]);
    assert.deepEqual(f.attention.refundGasLow, { available: '0.01', needed: '0.06', token: 'USDT' });
    // No token refund waiting or likely (a new store that takes USDT): not said, however low (issue 47 item 3).
    const quiet = homeFigures(rows([], { refundGas: { available: 0n, needed: 60_000_000n, token: 'USDT', likely: false } }), now);
    assert.equal(quiet.attention.refundGasLow, null);
    assert.equal(f.attention.failedRefunds, 2);
    assert.equal(f.chart, null);
    assert.equal(f.statuses.length > 0 && f.statuses.every((s) => s.payments === 0), true);
  });
});

describe('readableDecimal and priceShare', () => {
  it('rounds for reading, half away from zero, keeping a small value visible', () => {
    assert.equal(readableDecimal('0.002345678', 4), '0.0023');
    assert.equal(readableDecimal('1.23456', 4), '1.2346');
    assert.equal(readableDecimal('0.0000123', 4), '0.000012');
    assert.equal(readableDecimal('10.5', 2, true), '10.50');
    assert.equal(readableDecimal('0', 2, true), '0.00');
    assert.equal(readableDecimal('-0.00004', 4), '-0.00004');
    assert.equal(readableDecimal('2', 4), '2');
  });
  it("gives a coin figure's worth at the payment's own rate", () => {
    assert.equal(priceShare('0.5', '10', '2', 2), '2.50');
    assert.equal(priceShare('1', '10', '3', 2), '3.33');
  });
});
