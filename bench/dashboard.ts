// The dashboard's payments page with a big store (issue 24, "well under a second with 100,000
// payments"): prints numbers, asserts nothing. A fresh `kassa_bench_dashboard` database (the server
// of DATABASE_URL when set, else the embedded PostgreSQL) gets one store with N payments (default
// 100,000) spread over 90 days — a third completed in TON with a deposit address and a transfer, a
// third expired, a third created; one completed payment in 300 overpaid by a second transfer, one
// in 600 with a late transfer — and a second store of the same size beside it. Then each query
// the page makes (the list with each filter and search, the next page, the CSV, the live
// fingerprint) runs R times (default 20) and its median and worst times are printed, with the
// ratio of the median to a baseline measured in the same run on the same pool: reading one
// payment by its primary key (what the cheapest page read costs on this machine now). Measured,
// not timed: nothing is asserted, the ratios are what to compare between runs and machines.
//
//   node bench/dashboard.ts [--payments 100000] [--runs 20] [--keep]
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { openBenchDatabase } from './lib/database.ts';
import { openPool, sql, z } from '../src/db/pool.ts';
import { createStore, parseMethodList } from '../src/stores/stores.ts';
import { CSV_MAX_ROWS, filtersOf, type PaymentFilters, listFingerprints, listStorePayments, paymentsCsv } from '../src/dashboard/payments.ts';

const { values } = parseArgs({
  options: { payments: { type: 'string', default: '100000' }, runs: { type: 'string', default: '20' }, keep: { type: 'boolean' } },
});
const count = Number(values.payments);
const runs = Number(values.runs);
const log = pino({ level: 'warn' });
const bench = await openBenchDatabase('kassa_bench_dashboard', process.cwd(), log);
await bench.fresh();
const pool = await openPool(bench.url, { maxPoolSize: 2 });
try {
  const methods = parseMethodList('TON/TON,USDT/TON');
  const stores = [await createStore(pool, 'Big store', methods), await createStore(pool, 'Its neighbour', methods)];
  const started = performance.now();
  for (const store of stores) {
    const method = store.methods.find((m) => m.coin === 'TON')!.id;
    await pool.query(sql.unsafe`
      insert into payments (store_id, status, amount, currency, order_id, created_via, payment_method_id, coin_symbol, coin_amount, coin_amount_base_units,
                            created_at, expires_at, method_selected_at, paid_at, expired_at)
      select ${store.id}, case i % 3 when 0 then 'completed' when 1 then 'expired' else 'created' end, 10, 'USD', 'order-' || i, 'payments',
             case when i % 3 = 0 then ${method}::uuid end, case when i % 3 = 0 then 'TON' end, case when i % 3 = 0 then 2 end, case when i % 3 = 0 then 2000000000 end,
             now() - (i * interval '77 seconds'), now() - (i * interval '77 seconds') + interval '1 hour',
             case when i % 3 = 0 then now() - (i * interval '77 seconds') end, case when i % 3 = 0 then now() - (i * interval '77 seconds') + interval '1 minute' end,
             case when i % 3 = 1 then now() - (i * interval '77 seconds') + interval '1 hour' end
      from generate_series(1, ${count}) as i
    `);
  }
  await pool.query(sql.unsafe`
    insert into deposit_addresses (payment_id, derivation_index, network, address, address_friendly, derivation)
    select id, row_number() over (), 'sandbox', '0:' || encode(sha256(id::text::bytea), 'hex'), 'friendly-' || id, 'v5r1-1'
    from payments where status = 'completed'
  `);
  await pool.query(sql.unsafe`
    insert into transfers (account, lt, hash, payment_id, deposit_address, coin_symbol, amount_base_units, amount, chain_time, effect)
    select d.address, 1, encode(sha256(('tx' || d.payment_id::text)::bytea), 'hex'), d.payment_id, d.address, 'TON', 2000000000, 2, now(), 'completed'
    from deposit_addresses d
  `);
  // The anomalies: a second transfer on one completed payment in 300 (overpaid) and in 600 (after expiry: paid late).
  await pool.query(sql.unsafe`
    insert into transfers (account, lt, hash, payment_id, deposit_address, coin_symbol, amount_base_units, amount, chain_time, effect)
    select d.address, 2, encode(sha256(('tx2' || d.payment_id::text)::bytea), 'hex'), d.payment_id, d.address, 'TON', 1000000000, 1, now(),
           case when n % 600 = 0 then 'after_expiry' else 'overpaid' end
    from (select *, row_number() over (order by derivation_index) as n from deposit_addresses) d where d.n % 300 = 0
  `);
  await pool.query(sql.unsafe`analyze`);
  const fill = (performance.now() - started) / 1000;
  const store = stores[0]!;
  const sample = await pool.one(sql.type(z.object({ id: z.string(), order_id: z.string(), address: z.string(), hash: z.string() }))`
    select p.id, p.order_id, d.address, t.hash from payments p join deposit_addresses d on d.payment_id = p.id join transfers t on t.payment_id = p.id
    where p.store_id = ${store.id} order by p.created_at limit 1
  `);
  const middle = await pool.oneFirst(sql.type(z.object({ id: z.string() }))`
    select id from payments where store_id = ${store.id} order by created_at desc offset ${Math.floor(count / 2)} limit 1
  `);
  const day = new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10);
  const cases: Array<[string, PaymentFilters]> = [
    ['newest first', {}],
    ['status=completed', { status: 'completed' }],
    ['status=pending (none)', { status: 'pending' }],
    ['coin=TON', { coin: 'TON' }],
    ['one day', { from: day, to: day }],
    ['anomaly=overpaid (1 in 900)', { anomaly: 'overpaid' }],
    ['anomaly=paid_late (1 in 1800)', { anomaly: 'paid_late' }],
    ['anomaly=wrong_coin (none)', { anomaly: 'wrong_coin' }],
    ['anomaly=partially_paid (none)', { anomaly: 'partially_paid' }],
    ['q=order id (oldest)', { q: sample.order_id }],
    ['q=payment id', { q: sample.id }],
    ['q=deposit address', { q: sample.address }],
    ['q=transaction hash', { q: sample.hash }],
    ['q=nothing matches', { q: 'no-such-order' }],
    ['page in the middle', { after: middle }],
    ['status + coin + days + page', { status: 'completed', coin: 'TON', from: '2000-01-01', to: '2100-01-01', after: middle }],
  ];
  const time = async (work: () => Promise<unknown>) => {
    const times: number[] = [];
    for (let i = 0; i < runs; i += 1) {
      const t0 = performance.now();
      await work();
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    return { median: times[Math.floor(times.length / 2)]!, worst: times.at(-1)! };
  };
  process.stdout.write(
    `dashboard payments page, ${count} payments in the store (and as many in another), ${bench.source} PostgreSQL; filled in ${fill.toFixed(1)} s; ${runs} runs each\n`,
  );
  // The baseline: one payment by its primary key, through the same pool and sql tag.
  const baseline = await time(() => pool.one(sql.unsafe`select * from payments where id = ${sample.id}`));
  const line = (name: string, rows: string, { median, worst }: { median: number; worst: number }) =>
    process.stdout.write(
      `${name.padEnd(32)} ${rows.padStart(6)} ${median.toFixed(2).padStart(10)} ${worst.toFixed(2).padStart(10)} ${`${(median / baseline.median).toFixed(1)}×`.padStart(10)}\n`,
    );
  process.stdout.write(`${'query'.padEnd(32)} ${'rows'.padStart(6)} ${'median ms'.padStart(10)} ${'worst ms'.padStart(10)} ${'× baseline'.padStart(10)}\n`);
  line('baseline: one payment by id', '1', baseline);
  for (const [name, query] of cases) {
    const filters = filtersOf(query);
    const { rows } = await listStorePayments(pool, store.id, filters);
    line(name, String(rows.length), await time(() => listStorePayments(pool, store.id, filters)));
  }
  line('live fingerprint (per tick)', '-', await time(() => listFingerprints(pool, [store.id])));
  // The CSV of a filtered list, as the route makes it (at most CSV_MAX_ROWS rows).
  const csvFilters = filtersOf({ status: 'completed' });
  const csvRows = (await listStorePayments(pool, store.id, csvFilters, CSV_MAX_ROWS)).rows.length;
  line('CSV status=completed', String(csvRows), await time(async () => paymentsCsv((await listStorePayments(pool, store.id, csvFilters, CSV_MAX_ROWS)).rows)));
} finally {
  await pool.end();
  await bench.close(values.keep === true);
}
