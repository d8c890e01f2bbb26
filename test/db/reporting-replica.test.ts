// Reports on a streaming replica (issue 46 item 4, DATABASE_REPORTING_URL): a real PostgreSQL 15
// primary and a replica streaming from it (test/helpers/replica.ts). With the replica's replay paused,
// a payment written on the primary is not yet in the home figures, the Money page or the CSV export
// (they read the replica, and say how far behind it is), while the payment list, the API's balance
// and the refund preview (the primary) see it at once. A report runs read-only and leaves nothing on
// its connection; the type check keeps a ReportingDb from any money path; `kassa doctor`'s check.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Address } from '@ton/core';
import { openPool, sql, z, type DatabasePool, type Db } from '../../src/db/pool.ts';
import { reportingReader, type ReportingDb } from '../../src/db/reporting.ts';
import { checkReportingReplica } from '../../src/operations/doctor.ts';
import { depositMoney } from '../../src/treasury/outgoing.ts';
import type { TestApp } from '../helpers/app.ts';
import { freshAddress } from '../helpers/chain.ts';
import { member, type DashboardClient } from '../helpers/dashboard.ts';
import { buildPayment, createTestStore } from '../helpers/factories.ts';
import { kassa } from '../helpers/cli.ts';
import { startKassaProcess } from '../helpers/kassaProcess.ts';
import { startPaymentsApp } from '../helpers/payments.ts';
import { startReplicatedPostgres, type ReplicatedPostgres } from '../helpers/replica.ts';

let pair: ReplicatedPostgres;
let replicaPool: DatabasePool;
let app: TestApp;

before(async () => {
  pair = await startReplicatedPostgres();
  // As server.ts opens it: nothing sent at connect.
  replicaPool = await openPool(pair.replicaUrl, { maxPoolSize: 4, pooled: true, preparedStatements: false });
  app = await startPaymentsApp({
    database: async () => {
      const pool = await openPool(pair.primaryUrl, { maxPoolSize: 10 });
      return { url: pair.primaryUrl, name: 'kassa', pool, drop: () => pool.end() };
    },
    reporting: (config) => reportingReader(replicaPool, { replica: true, statementTimeoutMs: config.databaseStatementTimeoutMs }),
  });
});
after(async () => {
  await app?.close();
  await replicaPool?.end();
  await pair?.stop();
});

/** A completed payment of 1 TON paid with 1.5 TON: 0.5 TON refundable. */
const overpaid = (store: { token: string }, orderId: string) =>
  buildPayment(app, store, {
    status: 'completed',
    body: { amount: '1', currency: 'TON', order_id: orderId },
    transfers: [{ baseUnits: 1_500_000_000n, amount: '1.5', effect: 'overpaid' }],
  });
const asOf = (page: string) => /<p class="muted" id="as-of">([^<]*)<\/p>/.exec(page)?.[1] ?? null;
const completedCount = (home: string) => Number(/data-status="completed">[\s\S]*?<a class="count"[^>]*>(\d+)<\/a>/.exec(home)?.[1]);
const exported = async (owner: DashboardClient, storeId: string) => {
  const csv = await owner.get(`/dashboard/stores/${storeId}/payments.csv`);
  assert.equal(csv.status, 200, csv.text);
  return {
    ids: csv.text
      .trimEnd()
      .split('\r\n')
      .slice(1)
      .map((line) => line.split(',')[0]),
    lag: csv.headers.get('x-kassa-replica-lag'),
  };
};
const received = (money: string) => /<tr data-coin="TON"><th scope="row">[^<]*<\/th><td class="num"><data class="amount"[^>]* value="([^"]*)"/.exec(money)?.[1];

describe('reports on a streaming replica', () => {
  it('the home figures, the Money page and the CSV read the replica and say how far behind it is; the list, the balance and the refund preview read the primary', async () => {
    const store = await app.store({ name: 'Replica shop' });
    const owner = await member(app.url, app.pool, store.id, 'replica@example.com', 'owner');
    const home = `/dashboard/stores/${store.id}`;
    const first = await overpaid(store, 'R-1');
    await pair.caughtUp();

    // Caught up: every report sees the payment and says it is current.
    let page = (await owner.get(home)).text;
    assert.equal(completedCount(page), 1);
    assert.match(asOf(page) ?? '', /^Figures as of now: read from the reporting copy of the database, which is up to date\.$/);
    assert.deepEqual(await exported(owner, store.id), { ids: [first.id], lag: '0' });
    assert.equal(received((await owner.get(`${home}/money`)).text), '1.5');

    // Replay paused: the primary's next payment is not on the replica.
    await pair.pauseReplay();
    let second: Awaited<ReturnType<typeof overpaid>>;
    try {
      second = await overpaid(store, 'R-2');
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      page = (await owner.get(home)).text;
      assert.equal(completedCount(page), 1, 'the home figures read the replica');
      assert.match(
        asOf(page) ?? '',
        /^Figures as of \d+ seconds? ago: read from the reporting copy of the database, which is \d+ seconds? behind; newer payments are not counted yet\.$/,
      );
      const csv = await exported(owner, store.id);
      assert.deepEqual(csv.ids, [first.id], 'the CSV reads the replica');
      assert.ok(Number(csv.lag) >= 1, `lag ${csv.lag}`);
      const money = (await owner.get(`${home}/money`)).text;
      assert.equal(received(money), '1.5', 'the Money page reads the replica');
      assert.match(asOf(money) ?? '', /^Figures as of \d+ seconds? ago/);

      // What is not a report reads the primary: the payment list, the API's balance, the refund preview.
      assert.match((await owner.get(`${home}/payments`)).text, new RegExp(`payments/${second.id}" class="mono"`));
      const balance = await app.request('GET', `/v1/payments/${second.id}/balance`, { token: store.token });
      assert.equal(balance.status, 200, balance.text);
      assert.match(JSON.stringify(balance.json), /"0\.5"/);
      const to = Address.parse(freshAddress()).toString({ bounceable: false, testOnly: true });
      const review = await owner.post(`${home}/payments/${second.id}/refunds`, { coin: 'TON', amount: '0.49', address: to });
      assert.equal(review.status, 200, review.text);
      assert.match(review.text, /id="confirm-send"[^>]*>0\.49 GRAM</);

      // Resumed: the reports catch up.
      await pair.resumeReplay();
      await pair.caughtUp();
    } finally {
      await pair.resumeReplay();
    }
    page = (await owner.get(home)).text;
    assert.equal(completedCount(page), 2);
    assert.match(asOf(page) ?? '', /^Figures as of now/);
    assert.deepEqual((await exported(owner, store.id)).ids, [second.id, first.id]);
    assert.equal(received((await owner.get(`${home}/money`)).text), '3');
  });

  it('a report runs read-only and leaves nothing on its connection; on the primary it says nothing of lag', async () => {
    const one = await openPool(pair.primaryUrl, { maxPoolSize: 1, pooled: true, preparedStatements: false });
    try {
      const reporting = reportingReader(one, { replica: false, statementTimeoutMs: 1_234 });
      const settings = sql.type(z.object({ read_only: z.string(), timeout: z.string(), jit: z.string(), pid: z.number() }))`
        select current_setting('transaction_read_only') as read_only, current_setting('statement_timeout') as timeout, current_setting('jit') as jit,
               pg_backend_pid() as pid
      `;
      const inside = await reporting.read((db) => db.one(settings));
      const { pid, ...seen } = inside.value;
      assert.deepEqual({ ...inside, value: seen }, { value: { read_only: 'on', timeout: '1234ms', jit: 'off' }, asOf: { replica: false, lagSeconds: null } });
      // The same (only) connection afterwards: nothing of the report's settings is left on the session.
      const afterwards = await one.one(settings);
      assert.equal(afterwards.pid, pid, 'the same connection');
      assert.equal(afterwards.read_only, 'off');
      assert.notEqual(afterwards.timeout, '1234ms');
      assert.equal(afterwards.jit, 'on');
      await assert.rejects(
        reporting.read((db) => db.one(sql.unsafe`insert into coins (symbol) values ('ZZZ') returning symbol`)),
        /read-only transaction/,
      );
    } finally {
      await one.end();
    }
  });

  it('a report the replica cancels for a conflict with recovery is run again (its transaction retried)', async () => {
    // The replica gives a query no time when the primary's VACUUM removes rows it still sees.
    await replicaPool.query(sql.unsafe`alter system set max_standby_streaming_delay = 0`);
    await replicaPool.query(sql.unsafe`select pg_reload_conf()`);
    try {
      await app.pool.query(sql.unsafe`create table recovery_conflict as select g as id from generate_series(1, 1000) g`);
      await pair.caughtUp();
      const reporting = reportingReader(replicaPool, { replica: true, statementTimeoutMs: 10_000 });
      let attempts = 0;
      const read = reporting.read(async (db) => {
        attempts += 1;
        // One statement that still sees the rows while the primary deletes and vacuums them.
        return db.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int + 0 * length(pg_sleep(1.5)::text) as n from recovery_conflict`);
      });
      await new Promise((resolve) => setTimeout(resolve, 400));
      await app.pool.query(sql.unsafe`delete from recovery_conflict`);
      await app.pool.query(sql.unsafe`vacuum recovery_conflict`);
      const { value } = await read;
      assert.ok(attempts >= 2, `cancelled and run again (${attempts} attempt(s))`);
      assert.equal(value, 0, 'the second attempt sees the rows gone');
    } finally {
      await replicaPool.query(sql.unsafe`alter system reset max_standby_streaming_delay`);
      await replicaPool.query(sql.unsafe`select pg_reload_conf()`);
      await app.pool.query(sql.unsafe`drop table if exists recovery_conflict`);
    }
  });

  it('a ReportingDb is no Db: a money path cannot be handed it (the type check refuses)', async () => {
    // Checked by tsc (npm test type-checks): each line below must be an error, or the check fails.
    const typeChecks = (db: ReportingDb) => {
      // @ts-expect-error a report's reader is not a Db (no transaction, query or stream)
      const asDb: Db = db;
      // @ts-expect-error nor a pool
      const asPool: DatabasePool = db;
      // @ts-expect-error the money of a payment address is read by money paths from the primary
      void depositMoney(db, '00000000-0000-0000-0000-000000000000');
      return [asDb, asPool];
    };
    assert.equal(typeof typeChecks, 'function');
    // And a report's reads work through it.
    const { value } = await reportingReader(replicaPool, { replica: true, statementTimeoutMs: 5_000 }).read((db) =>
      db.oneFirst(sql.type(z.object({ recovery: z.boolean() }))`select pg_is_in_recovery() as recovery`),
    );
    assert.equal(value, true);
  });

  it('kassa doctor: the replica is reachable, in recovery, its lag; the primary itself is a warning, another server a failure', async () => {
    const primary = app.pool;
    assert.equal((await checkReportingReplica({ databaseReportingUrl: null }, primary)).status, 'skip');
    const ok = await checkReportingReplica({ databaseReportingUrl: pair.replicaUrl }, primary);
    assert.equal(ok.status, 'ok', ok.detail);
    assert.match(ok.detail, /is a streaming replica of this database; it has applied everything it received \(no lag\)/);
    await pair.pauseReplay();
    try {
      await app.pool.query(sql.unsafe`update stores set name = name`);
      const paused = await checkReportingReplica({ databaseReportingUrl: pair.replicaUrl }, primary);
      assert.equal(paused.status, 'warn', paused.detail);
      assert.match(paused.detail, /replay is paused/);
    } finally {
      await pair.resumeReplay();
    }
    const same = await checkReportingReplica({ databaseReportingUrl: pair.primaryUrl }, primary);
    assert.equal(same.status, 'warn', same.detail);
    assert.match(same.detail, /same server as the primary/);
    // The test command's own PostgreSQL: not in recovery, another cluster.
    const other = await checkReportingReplica({ databaseReportingUrl: process.env.KASSA_TEST_ADMIN_URL! }, primary);
    assert.equal(other.status, 'fail', other.detail);
    assert.match(other.detail, /not a replica \(not in recovery\)/);
    const unreachable = new URL(pair.replicaUrl);
    unreachable.port = '1';
    const gone = await checkReportingReplica({ databaseReportingUrl: unreachable.toString() }, primary);
    assert.equal(gone.status, 'fail', gone.detail);
    assert.match(gone.detail, /could not be read/);
  });

  it('kassa start --api opens the replica for reports (the home page says "as of"); kassa doctor reports it', async () => {
    const env = { DATABASE_URL: pair.primaryUrl, DATABASE_REPORTING_URL: pair.replicaUrl };
    const kassaProcess = await startKassaProcess({ env, args: ['start', '--api', '--skip-migrate'] });
    try {
      const store = await createTestStore(app.pool, { name: 'Process shop' });
      const owner = await member(kassaProcess.url, app.pool, store.id, 'process@example.com', 'owner');
      await pair.caughtUp();
      const home = await owner.get(`/dashboard/stores/${store.id}`);
      assert.equal(home.status, 200, home.text);
      assert.match(asOf(home.text) ?? '', /^Figures as of now/);
      const connections = await replicaPool.oneFirst(
        sql.type(
          z.object({ n: z.number() }),
        )`select count(*)::int as n from pg_stat_activity where datname = 'kassa' and pid <> pg_backend_pid() and backend_type = 'client backend'`,
      );
      assert.ok(connections >= 1, `the process reads the replica (${connections} connection(s) besides this test's)`);
    } finally {
      await kassaProcess.stop();
    }
    // A replica that cannot be reached at start: the API serves, its reports read the primary, the log says so.
    const unreachable = new URL(pair.replicaUrl);
    unreachable.port = '1';
    const without = await startKassaProcess({ env: { ...env, DATABASE_REPORTING_URL: unreachable.toString() }, args: ['start', '--api', '--skip-migrate'] });
    try {
      assert.ok(without.lines().some((line) => /DATABASE_REPORTING_URL could not be opened: the reports read DATABASE_URL/.test(String(line.msg))));
      const shop = await createTestStore(app.pool, { name: 'No replica shop' });
      const owner = await member(without.url, app.pool, shop.id, 'noreplica@example.com', 'owner');
      const home = await owner.get(`/dashboard/stores/${shop.id}`);
      assert.equal(home.status, 200, home.text);
      assert.equal(asOf(home.text), null, 'read on the primary: nothing to say');
    } finally {
      await without.stop();
    }
    const doctor = await kassa(['doctor'], env);
    const report = JSON.parse(doctor.stdout);
    const replica = report.checks.find((check: { check: string }) => check.check === 'database replica for reports');
    assert.equal(replica?.status, 'ok', doctor.stdout);
    assert.match(replica.detail, /is a streaming replica of this database/);
  });
});
