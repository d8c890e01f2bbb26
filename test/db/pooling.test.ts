// Kassa behind a pooler in transaction mode (issue 46): a private PgBouncer 1.18 (Debian's) in front
// of a test database as DATABASE_URL, the database itself as DATABASE_SESSION_URL. The API serves
// payments through the pooler (nothing refused at connect, no named prepared statements), the worker
// completes them through the session URL, `kassa migrate` refuses the pooler, and the doctor's
// "database pooling" check says what it finds.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.ts';
import { openPool, sql, z } from '../../src/db/pool.ts';
import { probeTransactionPooler } from '../../src/db/pooling.ts';
import { checkPooling } from '../../src/operations/doctor.ts';
import { startService } from '../../src/server.ts';
import { kassa } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createTestStore } from '../helpers/factories.ts';
import { startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.ts';
import { call, startTestService, waitFor } from '../helpers/service.ts';

let db: TestDatabase;
let bouncer: PgBouncer;

before(async () => {
  db = await createTestDatabase();
  bouncer = await startPgBouncer(db.url);
});
after(async () => {
  await bouncer?.stop();
  await db?.drop();
});

/** The database's default statement_timeout (what a pooler's new server connections start with); null: none. */
async function setDatabaseTimeout(ms: number | null): Promise<void> {
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  try {
    await admin.query(
      ms === null
        ? `alter database ${pg.escapeIdentifier(db.name)} reset statement_timeout`
        : `alter database ${pg.escapeIdentifier(db.name)} set statement_timeout = '${ms}ms'`,
    );
  } finally {
    await admin.end();
  }
}

describe('behind PgBouncer in transaction mode', () => {
  it('probe: a direct URL keeps one backend per client; through the pooler statements change backends', async () => {
    assert.equal((await probeTransactionPooler(db.url)).pooled, false);
    const probe = await probeTransactionPooler(bouncer.url);
    assert.equal(probe.pooled, true, probe.detail);
  });

  it('the API creates and reads payments through the pooler, the worker completes them through the session URL', async () => {
    const service = await startTestService({ DATABASE_URL: bouncer.url, DATABASE_SESSION_URL: db.url });
    try {
      const token = (await createTestStore(db.pool, { name: 'Pooled shop', methods: 'TON/TON' })).token;
      const created = await call(service.url!, 'POST', '/v1/payments', token, {
        amount: '0.1',
        currency: 'TON',
        ttl: 3600,
        payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] },
      });
      assert.equal(created.status, 201, JSON.stringify(created.json));
      // Several reads at once: each may run on another server connection of the pooler, where a
      // named statement prepared on one would not exist.
      const reads = await Promise.all(Array.from({ length: 24 }, () => call(service.url!, 'GET', `/v1/payments/${created.json.id}`, token)));
      for (const read of reads) assert.equal(read.status, 200, JSON.stringify(read.json));
      const more = await Promise.all(
        Array.from({ length: 8 }, () =>
          call(service.url!, 'POST', '/v1/payments', token, {
            amount: '0.2',
            currency: 'TON',
            ttl: 3600,
            payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] },
          }),
        ),
      );
      for (const payment of more) assert.equal(payment.status, 201, JSON.stringify(payment.json));
      const sent = await call(service.url!, 'POST', '/sandbox/v1/transfers', null, { to: created.json.paymentDetails.address, coin: 'TON', amount: '0.1' });
      assert.equal(sent.status, 201, JSON.stringify(sent.json));
      await waitFor(
        'the payment to complete',
        async () => (await call(service.url!, 'GET', `/v1/payments/${created.json.id}`, token)).json.status,
        (status) => status === 'completed',
      );
    } finally {
      await service.stop();
    }
    assert.doesNotMatch(bouncer.log(), /prepared statement|unsupported startup parameter/i);
  });

  it("the statement timeout in force through the pooler is the database's default (none is sent at connect)", async () => {
    await setDatabaseTimeout(1_000);
    // A pooler of its own: its server connections start after the default was set.
    const fresh = await startPgBouncer(db.url);
    const pool = await openPool(fresh.url, { pooled: true, preparedStatements: false, statementTimeoutMs: 1_000, maxPoolSize: 2 });
    try {
      assert.equal(await pool.oneFirst(sql.type(z.object({ t: z.string() }))`select current_setting('statement_timeout') as t`), '1s');
      await assert.rejects(pool.query(sql.unsafe`select pg_sleep(2)`), (error: { cause?: { code?: string } }) => {
        assert.equal(error.cause?.code, '57014', 'cancelled by the server, not given up by the client');
        return true;
      });
    } finally {
      await pool.end();
      await fresh.stop();
      await setDatabaseTimeout(null);
    }
  });

  it('kassa migrate through the pooler is refused, with what to set; through DATABASE_SESSION_URL it migrates', async () => {
    const refused = await kassa(['migrate'], { DATABASE_URL: bouncer.url });
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(
      refused.stderr,
      /kassa migrate refused: DATABASE_SESSION_URL \(or DATABASE_URL when it is unset\) goes through a pooler in transaction mode .* Set DATABASE_SESSION_URL to a direct or session-mode connection/,
    );
    const migrated = await kassa(['migrate'], { DATABASE_URL: bouncer.url, DATABASE_SESSION_URL: db.url });
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.deepEqual(migrated.json, { migrated: true });
  });

  it('kassa start --skip-migrate does not migrate, and refuses while a migration is not applied', async () => {
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    const last = (
      await admin.query<{ hash: string; previous_hash: string | null; filename: string; date: Date }>(
        'select hash, previous_hash, filename, date from graphile_migrate.migrations order by date desc, filename desc limit 1',
      )
    ).rows[0]!;
    await admin.query('delete from graphile_migrate.migrations where hash = $1', [last.hash]);
    try {
      const config = loadConfig({ PORT: '0', DATABASE_URL: bouncer.url, DATABASE_SESSION_URL: db.url });
      await assert.rejects(
        startService(config, { api: true, worker: false }, pino({ level: 'silent' }), () => new Date(), [], { migrate: false }),
        /1 migration\(s\) not applied \(up to \d{6}[-\w]*\.sql\) and --skip-migrate was given: run kassa migrate first/,
      );
    } finally {
      await admin.query('insert into graphile_migrate.migrations (hash, previous_hash, filename, date) values ($1, $2, $3, $4)', [
        last.hash,
        last.previous_hash,
        last.filename,
        last.date,
      ]);
      await admin.end();
    }
  });

  it('doctor "database pooling": fails when the session URL is the pooler, or when the timeout in force is not the configured one; ok otherwise', async () => {
    const throughPooler = loadConfig({ DATABASE_URL: bouncer.url });
    const sessionPooled = await checkPooling(throughPooler, { url: bouncer.url, sessionUrl: bouncer.url });
    assert.equal(sessionPooled.status, 'fail', sessionPooled.detail);
    assert.match(
      sessionPooled.detail,
      /^DATABASE_URL \(also the session URL: DATABASE_SESSION_URL is unset\) goes through a pooler in transaction mode .*migrations .* would run through it/,
    );

    const apart = loadConfig({ DATABASE_URL: bouncer.url, DATABASE_SESSION_URL: db.url, DATABASE_STATEMENT_TIMEOUT_MS: '4000' });
    const noDefault = await checkPooling(apart, { url: bouncer.url, sessionUrl: db.url });
    assert.equal(noDefault.status, 'fail', noDefault.detail);
    assert.match(
      noDefault.detail,
      /statement timeout in force through DATABASE_URL is 0 ms, not DATABASE_STATEMENT_TIMEOUT_MS \(4000 ms\).*ALTER ROLE <Kassa's user> SET statement_timeout = '4000ms'/,
    );

    await setDatabaseTimeout(4_000);
    const fresh = await startPgBouncer(db.url);
    try {
      const ok = await checkPooling(apart, { url: fresh.url, sessionUrl: db.url });
      assert.deepEqual(ok, {
        check: 'database pooling',
        status: 'ok',
        detail:
          'DATABASE_URL goes through a pooler in transaction mode; DATABASE_SESSION_URL is direct or session-mode; statement timeout 4000 ms in force; no named prepared statements',
      });
    } finally {
      await fresh.stop();
      await setDatabaseTimeout(null);
    }

    // kassa doctor itself, through the pooler alone: its checks are printed, this one failed.
    const doctor = await kassa(['doctor'], { DATABASE_URL: bouncer.url });
    assert.equal(doctor.code, 1, doctor.stdout + doctor.stderr);
    const pooling = doctor.json.checks.find((one: { check: string }) => one.check === 'database pooling');
    assert.equal(pooling?.status, 'fail', doctor.stdout);
    assert.equal(doctor.json.checks.find((one: { check: string }) => one.check === 'database')?.status, 'ok', doctor.stdout);

    const direct = await checkPooling(loadConfig({ DATABASE_URL: db.url }), { url: db.url, sessionUrl: db.url });
    assert.equal(direct.status, 'ok', direct.detail);
    assert.match(direct.detail, /is direct or session-mode; statement timeout 5000 ms in force; named prepared statements$/);
  });
});
