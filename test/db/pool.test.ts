// The SQL access layer against real Postgres. Each thing src/db/pool.ts adds to slonik and
// node-postgres (its header says why) has a test here that fails when an upgrade of either breaks it:
// - the bounded wait for a connection (a call gives up, fails as "database unavailable", and a
//   connection that arrives late is handed back unused);
// - the client-side bound on a statement the server does not answer (a frozen TCP proxy);
// - named prepared statements (`prepared`): parsed once per connection, kept across uses, renewed
//   by generation after a migration changed a result type;
// - no DISCARD ALL: a connection's session outlives its return to the pool;
// - "database unavailable" told by class, code or message for real failures (refused, terminated,
//   timed out), and not for others.
// Also: every row checked against its schema, and effects after commit (`afterCommit`) run once the
// transaction commits, never for a rollback.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ConnectionError, SchemaValidationError, StatementTimeoutError } from 'slonik';
import { afterCommit, isDatabaseUnavailable, openPool, prepared, QueryTimeoutError, sql, z, type DatabasePool } from '../../src/db/pool.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startTcpProxy } from '../helpers/proxy.ts';

/** The error a promise rejects with (it must reject). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected a rejection');
}

const pid = (pool: DatabasePool) => pool.oneFirst(sql.type(z.object({ pid: z.number() }))`select pg_backend_pid() as pid`);

describe('the pool wrapper', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db.drop());

  it('a call waits a bounded time for a connection, then fails as database unavailable; the pool carries on', async () => {
    const pool = await openPool(db.url, { maxPoolSize: 1, connectionWaitMs: 300 });
    try {
      let release = () => {};
      let acquired = () => {};
      const holding = new Promise<void>((resolve) => {
        acquired = resolve;
      });
      const held = pool.connect(async (connection) => {
        await connection.query(sql.unsafe`select 1`);
        acquired();
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      });
      await holding;
      const error = await rejection(pool.oneFirst(sql.unsafe`select 1`));
      assert.ok(error instanceof ConnectionError, String(error));
      assert.match(String((error as Error).message), /no database connection within 300 ms/);
      assert.equal(isDatabaseUnavailable(error), true);
      release();
      await held;
      // The connection that reached the caller who gave up went back unused: the one-connection pool serves again.
      assert.equal(await pool.oneFirst(sql.type(z.object({ n: z.number() }))`select 2 as n`), 2);
    } finally {
      await pool.end();
    }
  });

  it('a statement the server does not answer fails at the client bound, and its connection is not reused', async () => {
    const admin = new URL(db.url);
    const proxy = await startTcpProxy({ host: admin.hostname, port: Number(admin.port || 5432) });
    // statement_timeout far away: only the client's own bound can end the wait.
    const pool = await openPool(proxy.through(db.url), { maxPoolSize: 1, statementTimeoutMs: 60_000, queryTimeoutMs: 300, connectionWaitMs: 2_000 });
    try {
      const before = await pid(pool);
      proxy.freeze();
      const error = await rejection(pool.oneFirst(sql.unsafe`select 1`));
      assert.ok(error instanceof QueryTimeoutError, String(error));
      assert.equal(isDatabaseUnavailable(error), true);
      // The next call cannot even connect through the frozen proxy: unavailable too, within the wait bound.
      assert.equal(isDatabaseUnavailable(await rejection(pool.transaction((tx) => tx.query(sql.unsafe`select 1`)))), true);
      proxy.thaw();
      assert.notEqual(await pid(pool), before, 'a new connection');
    } finally {
      proxy.thaw();
      await pool.end();
      await proxy.close();
    }
  });

  it('no DISCARD ALL: a connection keeps its session between uses of the pool', async () => {
    const pool = await openPool(db.url, { maxPoolSize: 1 });
    try {
      const first = await pid(pool);
      await pool.query(sql.unsafe`select set_config('kassa.pinned', 'kept', false)`);
      assert.equal(await pid(pool), first, 'the same connection');
      assert.equal(await pool.oneFirst(sql.type(z.object({ v: z.string() }))`select current_setting('kassa.pinned', true) as v`), 'kept');
    } finally {
      await pool.end();
    }
  });

  it('tells "database unavailable" from real failures: refused, terminated, statement timeout — and not from others', async () => {
    // Refused: a port nothing listens on.
    const port = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const nowhere = new URL(db.url);
    nowhere.hostname = '127.0.0.1';
    nowhere.port = String(port);
    const refused = await rejection(
      (async () => {
        const pool = await openPool(nowhere.toString(), { maxPoolSize: 1, connectionWaitMs: 2_000 });
        try {
          await pool.oneFirst(sql.unsafe`select 1`);
        } finally {
          await pool.end();
        }
      })(),
    );
    assert.equal(isDatabaseUnavailable(refused), true, String(refused));

    // Terminated mid-statement (what a database restart does).
    const pool = await openPool(db.url, { maxPoolSize: 1, statementTimeoutMs: 1_000 });
    try {
      const victim = await pid(pool);
      const running = rejection(pool.query(sql.unsafe`select pg_sleep(10)`));
      // Terminated once the statement runs (polled, not slept for), well within statement_timeout.
      const active = sql.type(
        z.object({ active: z.boolean() }),
      )`select exists (select 1 from pg_stat_activity where pid = ${victim} and state = 'active') as active`;
      while (!(await db.pool.oneFirst(active)));
      await db.pool.query(sql.unsafe`select pg_terminate_backend(${victim})`);
      const terminated = await running;
      assert.equal(isDatabaseUnavailable(terminated), true, String(terminated));

      // Cancelled at statement_timeout.
      const timedOut = await rejection(pool.query(sql.unsafe`select pg_sleep(3)`));
      assert.ok(timedOut instanceof StatementTimeoutError, String(timedOut));
      assert.equal(isDatabaseUnavailable(timedOut), true);

      // Not unavailable: an error of the statement itself.
      const broken = await rejection(pool.query(sql.unsafe`select 1 / 0`));
      assert.equal(isDatabaseUnavailable(broken), false, String(broken));
    } finally {
      await pool.end();
    }
  });
});

describe('prepared statements', () => {
  let db: TestDatabase;
  let pool: DatabasePool;
  before(async () => {
    db = await createTestDatabase();
    // One connection, so every query below meets the statements the earlier ones prepared.
    pool = await openPool(db.url, { maxPoolSize: 1 });
  });
  after(async () => {
    await pool.end();
    await db.drop();
  });

  const coin = (symbol: string) =>
    prepared(sql.type(z.object({ symbol: z.string(), decimals: z.number() }))`select symbol, decimals::int as decimals from coins where symbol = ${symbol}`);
  const preparedHere = () =>
    pool.anyFirst(sql.type(z.object({ name: z.string() }))`select name from pg_prepared_statements where name like 'kassa\\_%' order by name`);

  it('names a statement by its text: the same text the same name, another text another name', () => {
    const first = coin('TON') as unknown as { name: string };
    const again = coin('USDT') as unknown as { name: string };
    const other = prepared(sql.type(z.object({ n: z.number() }))`select 1 as n`) as unknown as { name: string };
    assert.match(first.name, /^kassa_[0-9a-f]{24}$/);
    assert.equal(again.name, first.name);
    assert.notEqual(other.name, first.name);
  });

  it('prepares once per connection and keeps the statement across uses of the pool', async () => {
    const { name } = coin('TON') as unknown as { name: string };
    assert.deepEqual(await pool.one(coin('TON')), { symbol: 'TON', decimals: 9 });
    assert.deepEqual(await pool.one(coin('USDT')), { symbol: 'USDT', decimals: 6 });
    await pool.transaction(async (tx) => assert.deepEqual(await tx.one(coin('TON')), { symbol: 'TON', decimals: 9 }));
    assert.deepEqual(await preparedHere(), [name]);
  });

  it('prepares afresh after a migration changed a column the statement returns', async () => {
    await pool.query(sql.unsafe`create table scratch_widths (id int primary key, width int not null)`);
    await pool.query(sql.unsafe`insert into scratch_widths values (1, 7)`);
    const width = () => prepared(sql.type(z.object({ width: z.union([z.number(), z.string()]) }))`select width from scratch_widths where id = ${1}`);
    assert.deepEqual(await pool.one(width()), { width: 7 });
    const before = (width() as unknown as { name: string }).name;
    // What a migration run by a newer process does under this one's feet.
    await pool.query(sql.unsafe`alter table scratch_widths alter column width type bigint`);
    // PostgreSQL refuses the statement prepared with the old result type once…
    await assert.rejects(pool.one(width()), /cached plan must not change result type/);
    // …and from then on every statement gets a new name and is prepared again.
    assert.notEqual((width() as unknown as { name: string }).name, before);
    assert.deepEqual(await pool.one(width()), { width: '7' });
    assert.deepEqual(await pool.one(coin('TON')), { symbol: 'TON', decimals: 9 });
  });

  it('a failing prepared statement does not poison the connection', async () => {
    const bad = (symbol: string) => prepared(sql.type(z.object({ n: z.number() }))`select 1 / (length(${symbol}) - 3) as n`);
    await assert.rejects(pool.one(bad('TON')), /division by zero/);
    assert.deepEqual(await pool.one(bad('USDT')), { n: 1 });
    assert.deepEqual(await pool.one(bad('USDT')), { n: 1 });
  });
});

describe('result schemas (sql.type)', () => {
  let db: TestDatabase;
  let pool: DatabasePool;
  before(async () => {
    db = await createTestDatabase();
    pool = await openPool(db.url, { maxPoolSize: 1 });
  });
  after(async () => {
    await pool.end();
    await db.drop();
  });

  it('every row is checked: a row that does not fit is refused, a fitting one comes back as parsed', async () => {
    assert.deepEqual(await pool.any(sql.type(z.object({ n: z.number() }))`select 1 as n union all select 2`), [{ n: 1 }, { n: 2 }]);
    await assert.rejects(
      pool.any(sql.type(z.object({ n: z.number() }))`select '1'::text as n union all select 'two'`),
      (error: unknown) => error instanceof SchemaValidationError,
    );
    // zod's own output is what comes back (here: a default filled in).
    assert.deepEqual(await pool.one(sql.type(z.object({ n: z.number(), m: z.string().default('none') }))`select 1 as n`), { n: 1, m: 'none' });
    // Without a schema the row is node-postgres's.
    assert.deepEqual(await pool.one(sql.unsafe`select 1::int as n, 'x' as s`), { n: 1, s: 'x' });
  });

  it('an asynchronous refinement is refused rather than skipped', async () => {
    const asynchronous = z.object({ n: z.number() }).refine(async () => true);
    await assert.rejects(pool.one(sql.type(asynchronous)`select 1 as n`), /validate synchronously/);
  });
});

describe('afterCommit', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db.drop());

  it('runs after the commit, and never for a rolled-back transaction', async () => {
    const ran: string[] = [];
    await db.pool.transaction(async (tx) => {
      afterCommit(tx, () => ran.push('committed'));
      await tx.query(sql.unsafe`select 1`);
      assert.deepEqual(ran, [], 'not before the commit');
    });
    assert.deepEqual(ran, ['committed']);
    await assert.rejects(
      db.pool.transaction(async (tx) => {
        afterCommit(tx, () => ran.push('rolled back'));
        throw new Error('roll back');
      }),
      /roll back/,
    );
    await db.pool.transaction(async (tx) => tx.query(sql.unsafe`select 1`));
    assert.deepEqual(ran, ['committed'], 'a later commit does not run what a rolled-back one registered');
  });

  it('runs once for a callback slonik retried after a serialization failure', async () => {
    let attempts = 0;
    let ran = 0;
    await db.pool.transaction(async (tx) => {
      attempts += 1;
      afterCommit(tx, () => {
        ran += 1;
      });
      if (attempts === 1) throw Object.assign(new Error('could not serialize access'), { code: '40001' });
    });
    assert.equal(attempts, 2);
    assert.equal(ran, 1);
  });

  it('forgets what a rolled-back savepoint registered, keeps what its transaction registered', async () => {
    const ran: string[] = [];
    await db.pool.transaction(async (tx) => {
      afterCommit(tx, () => ran.push('outer'));
      await assert.rejects(
        tx.transaction(async (nested) => {
          afterCommit(nested, () => ran.push('savepoint'));
          throw new Error('roll back to the savepoint');
        }),
      );
    });
    assert.deepEqual(ran, ['outer']);
  });

  it('runs at once outside a transaction (the statement has committed)', () => {
    let ran = false;
    afterCommit(db.pool, () => {
      ran = true;
    });
    assert.equal(ran, true);
  });
});
