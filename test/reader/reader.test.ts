// The chain reader against the sandbox over HTTP (toncenter API v3), stepped by hand (or run on a
// driven clock): its cost follows blocks, not payments; late, repeated and empty blocks; blocks
// not indexed yet (404, or another indexer's empty list); a smaller page limit; a crash mid-block;
// the lease; the request budget; the chain's clock for expiry.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { setImmediate } from 'node:timers/promises';
import { pino } from 'pino';
import { createRequestBudget } from '../../src/chain/budget.ts';
import { ChainApiError } from '../../src/chain/apiError.ts';
import { sql, z } from '../../src/db/pool.ts';
import { LATE_COMMIT_MARGIN_MS } from '../../src/chain/clock.ts';
import { chainApiRequests, chainBlockWait, chainBlocksWaitedFor, chainLag, chainWatchesSetAside } from '../../src/metrics.ts';
import { checkSetAsideWatches } from '../../src/operations/doctor.ts';
import type { TestApp } from '../helpers/app.ts';
import { freshAddress, startChainApp, type ChainTestApp } from '../helpers/chain.ts';

let app: ChainTestApp;
let store: Awaited<ReturnType<TestApp['store']>>;

before(async () => {
  app = await startChainApp();
  store = await app.store({ methods: 'TON/TON,USDT/TON' });
  // Stepped by hand from here: the background reader lets go of the cursor, and blocks are sealed
  // only by the tests.
  await app.stopReader();
  app.sandbox.chain.stopBlockClock();
});
after(() => app.close());

const TON = { methods: [{ coin: 'TON', chain: 'TON' }] };
const reader = () => app.newReader({ id: 'manual' });
const chain = () => app.sandbox.chain;

async function newPayment(body: Record<string, unknown>) {
  const response = await app.request('POST', '/v1/payments', { token: store.token, body: { ttl: 3600, ...body } });
  assert.equal(response.status, 201, response.text);
  return response.json;
}
const get = async (id: string) => (await app.request('GET', `/v1/payments/${id}`, { token: store.token })).json;
const books = async (id: string) => (await app.request('GET', `/v1/payments/${id}/transfers`, { token: store.token })).json.data as any[];
const requests = async () => (await chainApiRequests.get()).values.reduce((sum, v) => sum + v.value, 0);
const gauge = async () => (await chainBlockWait.get()).values[0]?.value ?? 0;
const lag = async () => (await chainLag.get()).values[0]?.value ?? 0;
/** A clock of the reader's own, moved by the test: how long it waits is measured on it. */
const readerClock = () => {
  let at = Date.now();
  return { now: () => new Date(at), advance: (ms: number) => (at += ms) };
};
/** A pino logger whose lines the test reads. */
const recordingLog = () => {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, log: pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) }) };
};

/** Seals what was sent (and one block more), then reads up to the newest block; returns the chain API requests it took. */
async function sealAndRead(r = reader()): Promise<number> {
  chain().sealBlock();
  chain().sealBlock();
  const before = await requests();
  const result = await r.catchUp();
  assert.equal(result.owner, true);
  return (await requests()) - before;
}

describe('cost follows the chain, not the payments', () => {
  it('a payment among 2,000 open ones completes with the same chain requests as one alone', async () => {
    const alone = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
    await sealAndRead();
    await app.pay(alone.paymentDetails.address, 'TON', '1');
    const costAlone = await sealAndRead();
    assert.equal((await get(alone.id)).status, 'completed');

    // 2,000 more open payments, each with its deposit and jetton wallet accounts.
    const template = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
    await app.pool.query(sql.unsafe`
      with copies as (
        insert into payments (id, store_id, status, amount, currency, metadata, created_via, created_at, expires_at, payment_method_id, coin_symbol, coin_amount, coin_amount_base_units, method_selected_at)
        select gen_random_uuid(), store_id, 'pending', amount, currency, metadata, created_via, created_at, expires_at, payment_method_id, coin_symbol, coin_amount, coin_amount_base_units, method_selected_at
        from payments p, generate_series(1, 2000) where p.id = ${template.id}
        returning id
      ), numbered as (select id, row_number() over () as n from copies), addresses as (
        insert into deposit_addresses (payment_id, derivation_index, network, address, address_friendly, derivation)
        select id, 1000000 + n, 'sandbox', '0:' || md5(n::text) || md5((-n)::text), 'UQ' || n, 'v5r1-1' from numbered
        returning payment_id, address
      )
      insert into chain_watches (account, payment_id, kind, coin_symbol) select address, payment_id, 'deposit', 'TON' from addresses
    `);
    const open = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from payments where status = 'pending'`);
    assert.ok(open >= 2000, `${open} open`);
    await sealAndRead();
    await app.pay(template.paymentDetails.address, 'TON', '1');
    const costAmongMany = await sealAndRead();
    assert.equal((await get(template.id)).status, 'completed');
    assert.equal(costAmongMany, costAlone, `requests: ${costAlone} alone, ${costAmongMany} among ${open} open payments`);
  });
});

describe('requests while caught up', () => {
  it('one request per block: the block after the cursor is asked for directly, masterchainInfo only now and then', async () => {
    // masterchainInfo every minute here (3 s by default), so a slow machine does not add one.
    const r = app.newReader({ id: 'manual', infoEveryMs: 60_000 });
    await sealAndRead(r);
    const before = await requests();
    for (let i = 0; i < 5; i += 1) {
      chain().sealBlock();
      const step = await r.step();
      assert.equal(step.processed, 1);
    }
    assert.equal((await requests()) - before, 5, 'five blocks, five requests');
    // No new block yet: one request, and the cursor waits on the next seqno.
    const idle = await r.step();
    assert.equal(idle.processed, 0);
    assert.equal(idle.waitingFor, idle.lastSeqno! + 1);
    assert.equal((await requests()) - before, 6);
  });
});

describe('a clock set back', () => {
  it('the running reader keeps its pace on a clock that goes back (it once paused as long as the jump, for days)', async () => {
    // Each reading of the clock an hour before the last: a step always "ends before it began".
    let calls = 0;
    const r = app.newReader({ id: 'manual', now: () => new Date(Date.now() + 3 * 86_400_000 - calls++ * 3_600_000) });
    const stop = new AbortController();
    const running = r.run(stop.signal);
    /** Seals two blocks and waits (at most 10 s) for the running reader to read them. */
    const readsOn = async () => {
      chain().sealBlock();
      const target = chain().sealBlock();
      const deadline = Date.now() + 10_000;
      while (((await app.cursor())?.last ?? 0) < target) {
        assert.ok(Date.now() < deadline, `the reader stood still at ${(await app.cursor())?.last}, block ${target} sealed`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    };
    try {
      for (let i = 0; i < 3; i += 1) await readsOn();
    } finally {
      stop.abort();
      await running;
    }
  });
});

describe('nothing missed, nothing counted twice', () => {
  it('a repeated page, empty blocks and many pages: every transfer once', async () => {
    const payment = await newPayment({ amount: '100', currency: 'TON', payment_options: TON });
    await sealAndRead();
    for (let i = 0; i < 4; i += 1) chain().sealBlock(); // blocks of tick/tock only
    const sent: string[] = [];
    for (let i = 0; i < 40; i += 1) sent.push((await app.pay(payment.paymentDetails.address, 'TON', '0.000000001')).hash);
    chain().repeatNextPages(2);
    const small = app.newReader({ id: 'manual', pageSize: 8 });
    await sealAndRead(small);
    const booked = await books(payment.id);
    assert.equal(booked.length, 40);
    assert.deepEqual(new Set(booked.map((t) => t.hash)), new Set(sent));
    // Dust first, then the full amount in time: the payment completes (nothing stops the reads).
    await app.pay(payment.paymentDetails.address, 'TON', '100');
    await sealAndRead(small);
    assert.equal((await get(payment.id)).status, 'completed');
  });

  it('an API run with a smaller -max-limit (500 "limit is not allowed: 1000 > 100", as the 2025 releases answer it): the reader pages by 100 and books the block', async () => {
    const payment = await newPayment({ amount: '2', currency: 'TON', payment_options: TON });
    await sealAndRead();
    await app.pay(payment.paymentDetails.address, 'TON', '2');
    chain().sealBlock({ others: 150 });
    chain().v3.maxLimit = 100;
    try {
      await sealAndRead(app.newReader({ id: 'manual' }));
    } finally {
      chain().v3.maxLimit = 1000;
    }
    assert.equal((await get(payment.id)).status, 'completed');
    assert.equal((await books(payment.id)).length, 1);
  });

  it('a reader killed mid-block: the next one books the rest, nothing twice', async () => {
    const payment = await newPayment({ amount: '3', currency: 'TON', payment_options: TON });
    await sealAndRead();
    for (const amount of ['1', '1', '1']) await app.pay(payment.paymentDetails.address, 'TON', amount);
    const seqno = chain().sealBlock();
    chain().sealBlock();
    const block = await app.source().block(seqno);
    assert.ok(block, 'the block is indexed');
    const deposit = block.transactions.filter(
      (tx) => tx.account === payment.paymentDetails.address || tx.inMessage?.source === app.sandbox.chain.customerAddress,
    );
    assert.equal(deposit.length, 3, 'three transfers reached the deposit');
    // The first transfer is booked, then the process dies before the cursor moves.
    assert.equal(await reader().bookBlock({ ...block, transactions: deposit.slice(0, 1) }), 1);
    const restarted = app.newReader({ id: 'restarted' });
    await app.pool.query(sql.unsafe`update chain_reader set lease_expires_at = now() - interval '1 second'`);
    await restarted.catchUp();
    assert.equal((await books(payment.id)).length, 3);
    assert.equal((await get(payment.id)).status, 'completed');
  });
});

describe('a new cursor', () => {
  it('money sent before any reader ever ran is booked: the first cursor starts before the open payments', async () => {
    await app.pool.query(sql.unsafe`delete from chain_reader`);
    const payment = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
    const sent = await app.pay(payment.paymentDetails.address, 'TON', '1');
    for (let i = 0; i < 3; i += 1) chain().sealBlock();
    const first = app.newReader({ id: 'first-ever' });
    await first.catchUp();
    const paid = await get(payment.id);
    assert.equal(paid.status, 'completed');
    assert.deepEqual(paid.paymentDetails.transactionSignatures, [sent.hash]);
    await first.release();
  });
});

describe('a restarted sandbox chain (kassa start again on the same database)', () => {
  // The sandbox chain lives in memory and numbers its blocks from the wall clock: after a restart
  // the stored cursor lies outside the new chain, before its first block or past its newest.
  for (const [where, offset] of [
    ['before its first block', -100_000],
    ['past its newest block', 100_000],
  ] as const) {
    it(`a cursor ${where} moves to the new chain's first block; money sent on the new chain is booked`, async () => {
      const r = reader();
      await sealAndRead(r);
      const first = chain().firstBlock()!.seqno;
      const latest = (await app.cursor())!.last;
      await app.pool.query(
        sql.unsafe`update chain_reader set last_block_seqno = ${latest + offset}, latest_block_seqno = greatest(latest_block_seqno, ${latest + offset}::bigint)`,
      );
      const payment = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
      await app.pay(payment.paymentDetails.address, 'TON', '1');
      await sealAndRead(r);
      assert.equal((await get(payment.id)).status, 'completed');
      const cursor = (await app.cursor())!;
      assert.ok(
        cursor.last >= first && cursor.last === chain().latestPublishedBlock().seqno,
        `the cursor (${cursor.last}) is on the new chain (first ${first})`,
      );
    });
  }
});

describe("a deposit's jetton wallet its master will not give (get_wallet_address fails for good)", () => {
  it('its watch is set aside and reported (log, metric, doctor); every other payment is still booked', async () => {
    const odd = await newPayment({ amount: '5', currency: 'USD', payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } });
    // As when the wallet code is not known offline and the master is an odd one: here an account with no code.
    const account = `pending:${odd.id}:USDT`;
    await app.pool.query(sql.unsafe`
      update chain_watches set account = ${account}, jetton_master = ${freshAddress()} where payment_id = ${odd.id} and kind = 'jetton_wallet'
    `);
    const other = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
    await app.pay(other.paymentDetails.address, 'TON', '1');
    const setAsideBefore = (await chainWatchesSetAside.get()).values[0]?.value ?? 0;
    const { lines, log } = recordingLog();
    const r = app.newReader({ id: 'manual', log });
    await sealAndRead(r);
    assert.equal((await get(other.id)).status, 'completed', 'the reader read on');
    const watch = await app.pool.one(sql.type(z.object({ set_aside_at: z.date().nullable(), set_aside_reason: z.string().nullable() }))`
      select set_aside_at, set_aside_reason from chain_watches where account = ${account}
    `);
    assert.ok(watch.set_aside_at);
    assert.match(watch.set_aside_reason ?? '', /exit_code/);
    assert.ok(lines.some((line) => line.level === 50 && line.paymentId === odd.id && String(line.msg).includes('set aside')));
    const doctor = await checkSetAsideWatches(app.pool);
    assert.equal(doctor.status, 'warn');
    assert.match(doctor.detail, new RegExp(`payment ${odd.id} \\(USDT`));
    // Asked no more: counted once.
    await sealAndRead(r);
    assert.equal(((await chainWatchesSetAside.get()).values[0]?.value ?? 0) - setAsideBefore, 1);
    await app.pool.query(sql.unsafe`delete from chain_watches where account = ${account}`);
    assert.equal((await checkSetAsideWatches(app.pool)).status, 'ok');
  });
});

describe('the lease', () => {
  it('one reader at a time; another takes over when the holder stops renewing', async () => {
    const a = app.newReader({ id: 'reader-a' });
    const b = app.newReader({ id: 'reader-b' });
    await app.pool.query(sql.unsafe`update chain_reader set lease_expires_at = now() - interval '1 second'`);
    assert.equal((await a.step()).owner, true);
    assert.equal((await b.step()).owner, false, 'b waits while a holds the cursor');
    // a dies: its lease runs out (moved to the past here instead of waiting LEASE_MS).
    await app.pool.query(sql.unsafe`update chain_reader set lease_expires_at = now() - interval '1 second'`);
    assert.equal((await b.step()).owner, true);
    assert.equal((await a.step()).owner, false);
    await b.release();
  });
});

describe('the request budget', () => {
  it('caps requests per second, and a 429 pauses every request', async () => {
    const budget = createRequestBudget(5);
    const source = app.source({ budget });
    const started = performance.now();
    for (let i = 0; i < 6; i += 1) await source.latestBlock();
    assert.ok(performance.now() - started >= 900, 'six requests at 5/s span at least a second');
    chain().failNext(1, 429);
    await assert.rejects(source.latestBlock(), (error: unknown) => error instanceof ChainApiError && error.status === 429);
    const paused = performance.now();
    await source.latestBlock();
    assert.ok(performance.now() - paused >= 900, 'after a 429 the next request waits the backoff');
  });

  it('a jetton notification from an unknown wallet is asked about once per wallet', async () => {
    const payment = await newPayment({ amount: '5', currency: 'USD', payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } });
    await sealAndRead();
    await app.pay(payment.paymentDetails.address, 'USDT', '1', { fromLookalike: true });
    const first = await sealAndRead();
    await app.pay(payment.paymentDetails.address, 'USDT', '1', { fromLookalike: true });
    const second = await sealAndRead();
    assert.ok(second < first, `the second notification costs no get-method call (${first} then ${second} requests)`);
    assert.equal((await books(payment.id)).filter((t) => t.notifiedToken).length, 2);
  });
});

describe('an indexer that commits blocks out of order (ton-index-go answers 404 "masterchain block N not found" for a block not indexed yet, other indexers an empty list)', () => {
  const holes = async () => (await chainBlocksWaitedFor.get()).values[0]?.value ?? 0;
  const notIndexed = async () => (await chainApiRequests.get()).values.find((v) => v.labels.outcome === 'not_indexed')?.value ?? 0;
  afterEach(() => {
    chain().v3.unindexedBlock = 'not_found';
  });

  for (const answer of ['not_found', 'empty'] as const) {
    it(`a transfer in a block indexed 6 s after the blocks behind it (${answer === 'not_found' ? '404' : 'an empty 200'} meanwhile): the cursor holds, waits (measured), then books it once`, async () => {
      chain().v3.unindexedBlock = answer;
      const payment = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
      await sealAndRead();
      const held = chain().holdBlock();
      const sent = await app.pay(payment.paymentDetails.address, 'TON', '1');
      assert.equal(chain().sealBlock(), held);
      for (let i = 0; i < 3; i += 1) chain().sealBlock();
      const clock = readerClock();
      const { lines, log } = recordingLog();
      const r = app.newReader({ id: 'manual', now: clock.now, log });
      const holesBefore = await holes();
      const notIndexedBefore = await notIndexed();
      const first = await r.catchUp();
      assert.equal(first.waitingFor, held);
      assert.ok(first.latestSeqno! > held, 'the API serves later blocks');
      assert.equal((await app.cursor())!.last, held - 1, 'the cursor holds before the block not indexed');
      // 6 s pass on the reader's clock; it asks again: still not indexed, still held, measured.
      clock.advance(6_000);
      const again = await r.step();
      assert.equal(again.waitingFor, held);
      assert.equal(again.processed, 0);
      assert.ok((await gauge()) >= 6, `kassa_chain_block_wait_seconds ${await gauge()}`);
      assert.equal((await holes()) - holesBefore, 1, 'one block waited for, counted once');
      const warned = lines.find((line) => line.level === 40 && line.seqno === held);
      assert.ok(warned, 'the wait is logged');
      assert.ok(Number(warned.waitedSeconds) >= 6, `waitedSeconds ${warned.waitedSeconds}`);
      assert.match(String(warned.msg), /not indexed this block while it serves later ones/);
      assert.equal((await get(payment.id)).status, 'pending');
      // Indexed at last: read, booked once, the payment completes.
      chain().releaseBlock(held);
      const done = await r.catchUp();
      assert.ok(done.processed >= 4, `${done.processed} blocks read`);
      assert.equal(await gauge(), 0);
      const paid = await get(payment.id);
      assert.equal(paid.status, 'completed');
      assert.deepEqual(paid.paymentDetails.transactionSignatures, [sent.hash]);
      assert.equal((await books(payment.id)).length, 1);
      if (answer === 'not_found') assert.ok((await notIndexed()) - notIndexedBefore >= 2, 'the 404s are counted as not_indexed, not as errors');
      assert.equal(chain().v3.unindexedBlock, answer);
    });
  }

  it('the same with the reader restarted while it waits: the new one waits on the same block, then books it once', async () => {
    const payment = await newPayment({ amount: '2', currency: 'TON', payment_options: TON });
    await sealAndRead();
    const held = chain().holdBlock();
    await app.pay(payment.paymentDetails.address, 'TON', '2');
    chain().sealBlock();
    chain().sealBlock();
    chain().sealBlock();
    assert.equal((await reader().catchUp()).waitingFor, held);
    // The process dies; its lease runs out (moved to the past here); another reader takes over.
    await app.pool.query(sql.unsafe`update chain_reader set lease_expires_at = now() - interval '1 second'`);
    const restarted = app.newReader({ id: 'restarted' });
    const waiting = await restarted.catchUp();
    assert.equal(waiting.owner, true);
    assert.equal(waiting.waitingFor, held);
    assert.equal((await app.cursor())!.last, held - 1);
    chain().releaseBlock(held);
    await restarted.catchUp();
    assert.equal((await get(payment.id)).status, 'completed');
    assert.equal((await books(payment.id)).length, 1);
    await restarted.release();
  });

  it("a block of 300 transactions pages in full under the API's default descending sort; the transfer in it is booked once", async () => {
    const payment = await newPayment({ amount: '3', currency: 'TON', payment_options: TON });
    await sealAndRead();
    await app.pay(payment.paymentDetails.address, 'TON', '3');
    // tick + tock of two special accounts (4), the customer's wallet and the deposit (2), 294 strangers' transfers.
    const seqno = chain().sealBlock({ others: 294 });
    chain().sealBlock();
    const block = await app.source({ pageSize: 100 }).block(seqno);
    assert.ok(block);
    assert.equal(block.transactions.length, 300);
    assert.equal(new Set(block.transactions.map((t) => t.hash)).size, 300);
    assert.ok(block.transactions.every((t, i, all) => i === 0 || BigInt(all[i - 1]!.lt) <= BigInt(t.lt)));
    assert.equal(block.requests, 4, 'three full pages of 100 and the empty one after them');
    await sealAndRead(app.newReader({ id: 'manual', pageSize: 100 }));
    assert.equal((await get(payment.id)).status, 'completed');
    assert.equal((await books(payment.id)).length, 1);
  });
});

describe("the chain's clock (these move it forward, so they run last)", () => {
  it('a block indexed 20 s late (404 meanwhile, later blocks served) is booked within a second of appearing by the running reader; the wait and the lag are measured, no error', async () => {
    const payment = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
    await sealAndRead();
    const held = chain().holdBlock();
    const sent = await app.pay(payment.paymentDetails.address, 'TON', '1');
    assert.equal(chain().sealBlock(), held);
    // The reader runs its own loop on a driven clock: each of its pauses moves the clock, and the
    // chain goes on meanwhile (a block every 400 ms, dated by that clock); the held block is indexed 20 s on.
    const clock = readerClock();
    const started = clock.now().getTime();
    const elapsed = () => clock.now().getTime() - started;
    const chainStart = chain().now;
    const stop = new AbortController();
    let sealedAt = 0;
    let released = false;
    let bookedAt: number | null = null;
    let longestWait = 0;
    let largestLag = 0;
    const sleep = async (ms: number) => {
      // Where the step that just ended left the cursor (the clock stood still while it ran).
      if (released && bookedAt === null && (await app.cursor())!.last >= held) bookedAt = elapsed();
      for (const until = elapsed() + ms; sealedAt + 400 <= until; ) {
        sealedAt += 400;
        chain().setNow(chainStart + Math.floor(sealedAt / 1000));
        chain().sealBlock();
      }
      clock.advance(ms);
      if (!released && elapsed() >= 20_000) {
        chain().releaseBlock(held);
        released = true;
      }
      if (!released) {
        longestWait = Math.max(longestWait, await gauge());
        largestLag = Math.max(largestLag, await lag());
      }
      if (bookedAt !== null || elapsed() > 90_000) stop.abort();
      await setImmediate();
    };
    const { lines, log } = recordingLog();
    await app.newReader({ id: 'manual', now: clock.now, log, sleep }).run(stop.signal);
    assert.ok(bookedAt !== null, 'the block was booked');
    assert.ok(bookedAt - 20_000 <= 1_000, `booked ${bookedAt - 20_000} ms after it was indexed`);
    assert.ok(longestWait >= 18, `kassa_chain_block_wait_seconds reached ${longestWait}`);
    assert.ok(largestLag >= 15, `kassa_chain_lag_seconds reached ${largestLag} while the later blocks were served`);
    assert.deepEqual(
      lines.filter((line) => Number(line.level) >= 50 || String(line.msg).startsWith('chain API error')).map((line) => line.msg),
      [],
      'a block not indexed yet is no error',
    );
    assert.ok(lines.some((line) => line.level === 40 && line.seqno === held));
    const paid = await get(payment.id);
    assert.equal(paid.status, 'completed');
    assert.deepEqual(paid.paymentDetails.transactionSignatures, [sent.hash]);
  });

  it('a block published late: a transfer made before expiresAt but booked after it still completes the payment', async () => {
    const payment = await newPayment({ amount: '1', currency: 'TON', payment_options: TON, ttl: 900 });
    await sealAndRead();
    chain().holdBlocks();
    const sent = await app.pay(payment.paymentDetails.address, 'TON', '1');
    chain().sealBlock();
    // The chain moves on past expiresAt, but those blocks are not published yet.
    chain().setNow(Math.ceil(Date.parse(payment.timer.expiresAt) / 1000) + 30);
    await sealAndRead();
    assert.equal((await get(payment.id)).status, 'pending', 'not expired: the chain is not read past expiresAt');
    chain().releaseBlocks();
    await sealAndRead();
    const paid = await get(payment.id);
    assert.equal(paid.status, 'completed');
    assert.deepEqual(paid.paymentDetails.transactionSignatures, [sent.hash]);
    // And a payment nobody paid expires by the chain's clock, which is now past its expiresAt.
    chain().useWallClock();
  });

  it('a transfer made before expiresAt in a shard block committed blocks later (past expiresAt) completes the payment, not after_expiry', async () => {
    const payment = await newPayment({ amount: '1', currency: 'TON', payment_options: TON, ttl: 900 });
    await sealAndRead();
    const expiresAt = Math.ceil(Date.parse(payment.timer.expiresAt) / 1000);
    chain().setNow(expiresAt - 5);
    const sent = await app.pay(payment.paymentDetails.address, 'TON', '1');
    // Its shard block is committed by the third masterchain block from now, all three dated 20 s past expiresAt.
    chain().commitLate(3);
    chain().setNow(expiresAt + 20);
    chain().sealBlock();
    chain().sealBlock();
    await sealAndRead();
    const paid = await get(payment.id);
    assert.equal(paid.status, 'completed');
    assert.deepEqual(paid.paymentDetails.transactionSignatures, [sent.hash]);
    assert.deepEqual(
      (await books(payment.id)).map((t) => t.effect),
      ['completed'],
    );
  });

  it('money sent to a payment that ended days ago is booked', async () => {
    const payment = await newPayment({ amount: '1', currency: 'TON', payment_options: TON, ttl: 900 });
    // Past expiresAt by more than the margin for shard blocks committed late.
    chain().setNow(Math.ceil(Date.parse(payment.timer.expiresAt) / 1000) + LATE_COMMIT_MARGIN_MS / 1000 + 1);
    await sealAndRead();
    await sealAndRead();
    assert.equal((await get(payment.id)).status, 'expired', "expired by the chain's clock");
    chain().advance(3 * 24 * 3600);
    await app.pay(payment.paymentDetails.address, 'TON', '0.7');
    await sealAndRead();
    assert.deepEqual(
      (await books(payment.id)).map((t) => [t.effect, t.amount]),
      [['after_expiry', '0.7']],
    );
  });
});
