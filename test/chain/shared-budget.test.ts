// The chain API budget shared through PostgreSQL (issue 21): toncenter counts requests per key
// across all processes, so two processes (here: two pools and two budgets, as two processes have)
// on one database and one key stay under the rate together; another key has a budget of its own;
// a 429 seen by one pauses the other. The refusal of a budget that cannot follow the chain, and
// the headroom kassa doctor reports, are pure functions of the network and TON_API_RPS.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BLOCK_INTERVAL_MS, budgetHeadroom, budgetShortfall, READER_REQUESTS_PER_BLOCK } from '../../src/chain/budget.ts';
import { budgetKeyId, budgetUsage, sharedRequestBudget } from '../../src/chain/sharedBudget.ts';
import { openPool, sql, z, type DatabasePool } from '../../src/db/pool.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
let pools: DatabasePool[];

before(async () => {
  db = await createTestDatabase();
  pools = [await openPool(db.url), await openPool(db.url)];
});
after(async () => {
  for (const pool of pools) await pool.end();
  await db.drop();
});

/** When each of `count` requests may go, taken through `budget`. */
async function times(budget: { take(): Promise<void> }, count: number, sent: number[]): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    await budget.take();
    sent.push(performance.now());
  }
}

describe('the shared chain budget', () => {
  it('two processes on one key stay under its rate together', async () => {
    const rps = 10;
    const options = { apiRoot: 'https://toncenter.example', apiKey: 'key-one', rps };
    const [a, b] = [sharedRequestBudget(pools[0]!, options), sharedRequestBudget(pools[1]!, options)];
    const sent: number[] = [];
    const started = performance.now();
    await Promise.all([times(a, 12, sent), times(b, 12, sent)]);
    const elapsed = performance.now() - started;
    // 24 requests at 10/s need 2.3 s at least, whoever sends them; each process alone would have taken 1.1 s.
    assert.ok(elapsed >= 2_200, `24 requests took ${Math.round(elapsed)} ms`);
    // (No bound on the busiest second: the slots are 1/rps apart in the database, but a loaded machine
    // wakes a sleeper late and the next on time, so when requests leave is the scheduler's, not the budget's.)
    assert.equal(a.taken + b.taken, 24);
    assert.deepEqual(await budgetUsage(pools[0]!, options.apiRoot, options.apiKey), { requests: 24n });
  });

  it('another key (or API) has a budget of its own, and the key is never stored', async () => {
    const one = budgetKeyId('https://toncenter.example', 'key-one');
    assert.notEqual(one, budgetKeyId('https://toncenter.example', 'key-two'));
    assert.notEqual(one, budgetKeyId('https://indexer.example', 'key-one'));
    assert.match(one, /^[0-9a-f]{64}$/);
    const other = sharedRequestBudget(pools[1]!, { apiRoot: 'https://toncenter.example', apiKey: 'key-two', rps: 1 });
    await other.take();
    const rows = await pools[0]!.anyFirst(sql.type(z.object({ key_id: z.string() }))`select key_id from chain_api_budgets`);
    assert.equal(rows.length, 2);
    assert.ok(rows.every((id) => !id.includes('key')));
  });

  it('a 429 seen by one process pauses the other', async () => {
    const options = { apiRoot: 'https://paused.example', apiKey: null, rps: 50 };
    const [a, b] = [sharedRequestBudget(pools[0]!, options), sharedRequestBudget(pools[1]!, options)];
    await a.take();
    const wait = a.backOff(1_500);
    assert.equal(wait, 1_500);
    // The pause is written to the shared row (asynchronously): wait until it is there.
    for (let i = 0; i < 50; i += 1) {
      const paused = await pools[0]!.oneFirst(
        sql.type(z.object({ p: z.boolean() }))`
          select paused_until > clock_timestamp() + interval '1 second' as p from chain_api_budgets where key_id = ${budgetKeyId(options.apiRoot, null)}`,
      );
      if (paused) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const started = performance.now();
    await b.take();
    assert.ok(performance.now() - started >= 1_000, 'the other process waited for the pause');
  });

  it('TON_API_RPS=0 shares nothing and never waits', async () => {
    const free = sharedRequestBudget(pools[0]!, { apiRoot: 'https://indexer.example', apiKey: null, rps: 0 });
    await Promise.all(Array.from({ length: 50 }, () => free.take()));
    assert.equal(free.taken, 50);
    assert.equal(await budgetUsage(pools[0]!, 'https://indexer.example', null), null);
  });
});

describe('a budget against the block rate', () => {
  it('refuses a mainnet or testnet budget that cannot keep up, naming TON_API_RPS and a key', () => {
    assert.equal(BLOCK_INTERVAL_MS.mainnet, 400);
    const noKey = budgetShortfall('mainnet', 1, false);
    assert.match(noKey!, /^TON_API_RPS=1 cannot keep up with mainnet: it makes about 2\.5 masterchain blocks\/s/);
    assert.match(noKey!, /Set TON_API_KEY/);
    assert.match(
      budgetShortfall('testnet', 2, true)!,
      /TON_API_RPS=2 cannot keep up with testnet: it makes about 2\.2 masterchain blocks\/s .*Set TON_API_RPS to your plan's rate/,
    );
    assert.equal(budgetShortfall('mainnet', 10, true), null);
    assert.equal(budgetShortfall('testnet', 3, false), null);
    assert.equal(budgetShortfall('mainnet', 0, false), null, 'no cap: a self-hosted indexer');
    assert.equal(budgetShortfall('sandbox', 1, false), null);
  });

  it('reports the headroom and the catch-up speed', () => {
    const free = budgetHeadroom('mainnet', 10);
    assert.equal(free.blocksPerSecond, 2.5);
    assert.equal(free.needed, 2.5 * READER_REQUESTS_PER_BLOCK);
    assert.equal(free.headroom, 10 - 2.5 * READER_REQUESTS_PER_BLOCK);
    assert.equal(free.catchUpFactor, 10 / (2.5 * READER_REQUESTS_PER_BLOCK));
    const measured = budgetHeadroom('mainnet', 10, 1.2);
    assert.equal(measured.needed, 3);
    assert.equal(measured.headroom, 7);
    assert.deepEqual(budgetHeadroom('testnet', 0).headroom, null);
  });
});
