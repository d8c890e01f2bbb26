// First-run setup's rules (src/dashboard/setup.ts) against real PostgreSQL: a code only while Kassa
// has no store and no account, a new one at each start replacing the older, the code as a person
// types it, expiry, and the row lock that lets only one of two setups racing through the database
// win (both made to wait at the same point by a lock the test holds on the stores table).
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { sql, z } from '../../src/db/pool.ts';
import { FormProblem } from '../../src/errors.ts';
import { completeSetup, newSetupCode, normalizeSetupCode, offerSetup, SetupClosed, type SetupInput, setupOpen } from '../../src/dashboard/setup.ts';
import { parseMethodList } from '../../src/stores/stores.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createTestStore } from '../helpers/factories.ts';

const now = new Date('2026-11-28T12:00:00Z');
const PASSWORD = 'a long owner password';
const input = (code: string, email: string, at = now): SetupInput => ({
  code,
  storeName: `Shop of ${email}`,
  methods: parseMethodList('TON/TON'),
  refundWindowDays: 7,
  email,
  password: PASSWORD,
  actor: { clientAddress: '127.0.0.1', userAgent: 'test' },
  now: at,
});

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db?.drop();
});
beforeEach(async () => {
  await db.pool.query(sql.unsafe`truncate first_run_setup, stores, dashboard_users, audit_log cascade`);
});

describe('first-run setup', () => {
  it('a code reads as typed: case, spaces, dashes, O for 0 and I or L for 1 do not matter', () => {
    const code = newSetupCode();
    assert.match(code, /^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/);
    assert.equal(normalizeSetupCode(' ab0c-1d2e fg3h '), 'AB0C1D2EFG3H');
    assert.equal(normalizeSetupCode('abOc-ldIe'), normalizeSetupCode('AB0C-1D1E'));
    assert.notEqual(newSetupCode(), newSetupCode());
  });

  it('is offered only while there is no store and no account; each start replaces the code', async () => {
    const first = await offerSetup(db.pool, now);
    const second = await offerSetup(db.pool, now);
    assert.ok(first && second && first.code !== second.code);
    assert.equal(await setupOpen(db.pool), true);
    await assert.rejects(
      completeSetup(db.pool, input(first.code, 'ann@shop.example')),
      (error: unknown) => error instanceof FormProblem && error.field === 'code',
    );
    await createTestStore(db.pool);
    assert.equal(await setupOpen(db.pool), false);
    assert.equal(await offerSetup(db.pool, now), null, 'a store made on the command line: no setup');
    await assert.rejects(completeSetup(db.pool, input(second.code, 'ann@shop.example')), SetupClosed);
  });

  it('an expired code is refused; a spent one is refused forever and no new one is offered', async () => {
    const offered = (await offerSetup(db.pool, now))!;
    const late = new Date(now.getTime() + 24 * 3600_000 + 1);
    await assert.rejects(
      completeSetup(db.pool, input(offered.code, 'ann@shop.example', late)),
      (error: unknown) => error instanceof FormProblem && /expired/.test(error.message),
    );
    const done = await completeSetup(db.pool, input(offered.code, 'ann@shop.example'));
    assert.ok(done.token);
    await assert.rejects(completeSetup(db.pool, input(offered.code, 'bob@shop.example')), SetupClosed);
    assert.equal(await offerSetup(db.pool, now), null);
  });

  it('two setups racing with the right code: one wins, the other is told Kassa is set up already', async () => {
    const offered = (await offerSetup(db.pool, now))!;
    // Hold every insert into stores until both setups are inside their transactions.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const holding = db.pool.transaction(async (tx) => {
      await tx.query(sql.unsafe`lock table stores in share row exclusive mode`);
      await released;
    });
    const racing = ['ann@shop.example', 'bob@shop.example'].map((email) => completeSetup(db.pool, input(offered.code, email)));
    // Both wait on a lock: one on the test's (its store), the other on the first's row lock (or, without that lock, also on the test's).
    try {
      for (let i = 0; i < 200; i += 1) {
        const waiting = await db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
          select count(distinct pid)::int as n from pg_locks where not granted
        `);
        if (waiting >= 2) break;
        assert.ok(i < 199, 'both setups wait on a lock');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    } finally {
      release();
      await holding;
    }
    const outcomes = await Promise.allSettled(racing);
    assert.deepEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected']);
    const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    assert.ok(refused.reason instanceof SetupClosed, String(refused.reason));
    const made = await db.pool.one(sql.type(z.object({ stores: z.number(), users: z.number() }))`
      select (select count(*)::int from stores) as stores, (select count(*)::int from dashboard_users) as users
    `);
    assert.deepEqual(made, { stores: 1, users: 1 });
  });
});
