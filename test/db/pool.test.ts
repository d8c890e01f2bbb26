// The SQL access layer against real Postgres: named prepared statements (`prepared`) are parsed
// once per connection, survive the connection going back to the pool, and give the same rows;
// effects after commit (`afterCommit`) run once the transaction commits, never for a rollback.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SchemaValidationError } from 'slonik';
import { afterCommit, openPool, prepared, sql, z, type DatabasePool } from '../../src/db/pool.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

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
