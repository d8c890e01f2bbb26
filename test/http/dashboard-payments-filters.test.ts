// The payments page's filters and search, each one also in the CSV of the filtered list (issue 24:
// "CSV export of the filtered list"): status, every anomaly, coin, a date range, and a search by
// payment id, order id, deposit address and transaction hash; filters combine. The list's own
// paging and live updates are in test/http/dashboard.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from '../../src/db/pool.ts';
import type { TestApp } from '../helpers/app.ts';
import { member } from '../helpers/dashboard.ts';
import { buildPayment } from '../helpers/factories.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;
before(async () => {
  app = await startPaymentsApp();
});
after(() => app.close());

describe('dashboard: every filter and search, on the page and in its CSV', () => {
  it('status, anomalies, coin, dates and the four searches each select the same payments in the list and the CSV', async () => {
    const store = await app.store({ name: 'Filter shop' });
    const other = await app.store({ name: 'Filter neighbour' });
    const owner = await member(app.url, app.pool, store.id, 'filters@example.com', 'owner');
    const ton = (effect: string, baseUnits = 1n) => ({ baseUnits, amount: (Number(baseUnits) / 1e9).toFixed(9), effect });
    const paid = await buildPayment(app, store, { status: 'completed', body: { order_id: 'F-1' }, transfers: [ton('completed')] });
    const over = await buildPayment(app, store, { status: 'completed', body: { order_id: 'F-2' }, transfers: [ton('completed'), ton('after_completion')] });
    const late = await buildPayment(app, store, { status: 'expired', body: { order_id: 'F-3' }, transfers: [ton('after_expiry')] });
    const cancelled = await buildPayment(app, store, { status: 'cancelled', body: { order_id: 'F-4' }, transfers: [ton('after_cancel')] });
    const wrong = await buildPayment(app, store, {
      body: { order_id: 'F-5' },
      transfers: [{ coin: 'USDT', baseUnits: 1n, amount: '0.000001', effect: 'wrong_coin' }],
    });
    const part = await buildPayment(app, store, { body: { order_id: 'F-6' }, transfers: [ton('partial')] });
    const usdt = await buildPayment(app, store, { status: 'created', method: { coin: 'USDT', chain: 'TON' }, body: { order_id: 'F-7' } });
    const old = await buildPayment(app, store, { status: 'created', body: { order_id: 'F-8' } });
    await app.pool.query(sql.unsafe`update payments set created_at = '2026-01-15T12:00:00Z' where id = ${old.id}`);
    // The neighbour's payments match the same filters and never show.
    await buildPayment(app, other, { status: 'completed', body: { order_id: 'F-1' }, transfers: [ton('completed'), ton('overpaid')] });

    const list = `/dashboard/stores/${store.id}/payments`;
    const csv = `/dashboard/stores/${store.id}/payments.csv`;
    const listed = async (query: string) =>
      [...(await owner.get(`${list}?${query}`)).text.matchAll(/payments\/([0-9a-f-]{36})" class="mono"/g)].map((m) => m[1]);
    const exported = async (query: string) => {
      const response = await owner.get(`${csv}?${query}`);
      assert.equal(response.status, 200, query);
      return response.text
        .trimEnd()
        .split('\r\n')
        .slice(1)
        .map((line) => line.split(',')[0]);
    };
    for (const [query, expected] of [
      ['status=completed', [over.id, paid.id]],
      ['status=expired', [late.id]],
      ['status=cancelled', [cancelled.id]],
      ['anomaly=overpaid', [over.id]],
      ['anomaly=paid_late', [late.id]],
      ['anomaly=paid_after_cancel', [cancelled.id]],
      ['anomaly=wrong_coin', [wrong.id]],
      ['anomaly=partially_paid', [part.id]],
      ['coin=USDT', [usdt.id]],
      ['from=2026-01-01&to=2026-01-31', [old.id]],
      ['to=2026-01-14', []],
      [`q=${paid.id}`, [paid.id]],
      ['q=F-3', [late.id]],
      [`q=${encodeURIComponent(paid.created.paymentDetails.address)}`, [paid.id]],
      [`q=${over.transferHashes[1]}`, [over.id]],
      ['status=completed&anomaly=overpaid&coin=TON', [over.id]],
      ['status=pending&coin=USDT&from=2026-01-01', [usdt.id]],
      ['status=created&to=2026-06-01', [old.id]],
    ] as const) {
      assert.deepEqual(await listed(query), expected, `list ${query}`);
      assert.deepEqual(await exported(query), expected, `csv ${query}`);
    }
  });
});

describe('dashboard: the CSV starts no formula, whatever separator a spreadsheet splits on', () => {
  it('an order id with = + - @ after , ; tab or | becomes no cell that starts a formula, split on any of them', async () => {
    const store = await app.store({ name: 'Formula shop' });
    const owner = await member(app.url, app.pool, store.id, 'formula@example.com', 'owner');
    const hostile = ['x;=1+1;', 'a|@SUM(1)|', 'b\t-2+3', 'c, =1', 'd;"+1"', 'e\n=2', '=HYPERLINK("x")'];
    for (const orderId of hostile) await buildPayment(app, store, { status: 'created', body: { order_id: orderId } });
    const csv = await owner.get(`/dashboard/stores/${store.id}/payments.csv`);
    assert.equal(csv.status, 200);
    for (const separator of [',', ';', '\t', '|']) {
      // A spreadsheet that splits on this separator (and on line breaks, quotes or not) sees these cells.
      const cells = csv.text.split(/\r\n|\r|\n/).flatMap((line) => line.split(separator));
      const formulas = cells.filter((cell) => /^[\s"]*[=+\-@]/.test(cell));
      assert.deepEqual(formulas, [], `split on ${JSON.stringify(separator)}`);
    }
    // The order ids are all there, each shown as text ('x;'=1+1;').
    assert.match(csv.text, /,x;'=1\+1;,/);
    assert.match(csv.text, /,"'=HYPERLINK\(""x""\)",/);
  });
});
