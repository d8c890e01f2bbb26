/**
 * An account's history over real HTTP: the sandbox's `/api/v3/transactions` as ton-index-go serves
 * it (default sort desc, default limit 100, 500 over 1000, inclusive lt range, raw upper case,
 * standard base64 hashes, lt strings, only indexed blocks), the switch that holds a transaction out
 * of the block stream, and the history source (src/chain/history.ts) paging by lt.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { depositWallet } from '../../src/chain/addresses.ts';
import { ChainApiError } from '../../src/chain/apiError.ts';
import { toncenterV3History } from '../../src/chain/history.ts';
import { MAX_REQUEST_LINE_BYTES } from '../../src/chain/v3Request.ts';
import { startReverseProxy } from '../helpers/proxy.ts';
import { holdOutOfBlockStream } from '../../src/chain/sandbox/history.ts';
import { startSandboxServer, type SandboxServer } from '../../src/chain/sandbox/index.ts';

let server: SandboxServer;
const deposit = depositWallet(Buffer.alloc(32, 0x21), 7, 'sandbox');
const paid: { hash: string; lt: string }[] = [];

async function get(query: string): Promise<{ status: number; json: { transactions?: Record<string, unknown>[]; error?: string } }> {
  const response = await fetch(`${server.root}/api/v3/transactions?${query}`);
  return { status: response.status, json: (await response.json()) as { transactions?: Record<string, unknown>[] } };
}

before(async () => {
  server = await startSandboxServer({ port: 0 });
  server.chain.sealBlock();
  for (const amount of ['0.1', '0.2', '0.3']) {
    paid.push(await server.chain.transfer({ to: deposit.raw, coin: 'TON', amount }));
    server.chain.sealBlock();
  }
});
after(() => server?.close());

describe('GET /api/v3/transactions (sandbox, as ton-index-go)', () => {
  it('answers one account in toncenter’s forms, newest first by default', async () => {
    const { status, json } = await get(`account=${encodeURIComponent(deposit.friendly)}`);
    assert.equal(status, 200);
    const txs = json.transactions!;
    assert.equal(txs.length, 3);
    const lts = txs.map((t) => BigInt(t.lt as string));
    assert.ok(lts[0]! > lts[1]! && lts[1]! > lts[2]!, 'sort desc by default');
    for (const tx of txs) {
      assert.equal(typeof tx.lt, 'string');
      assert.equal(tx.account, deposit.raw.toUpperCase());
      assert.match(tx.hash as string, /^[A-Za-z0-9+/]{43}=$/);
      assert.equal(typeof tx.mc_block_seqno, 'number');
    }
    assert.ok(Object.hasOwn(json, 'address_book'));
  });

  it('takes an inclusive lt range, sort asc, limit and offset; 500 over 1000', async () => {
    const [first, second, third] = [...paid].sort((a, b) => (BigInt(a.lt) < BigInt(b.lt) ? -1 : 1));
    const ranged = await get(`account=${deposit.raw}&start_lt=${second!.lt}&end_lt=${third!.lt}&sort=asc`);
    assert.deepEqual(
      ranged.json.transactions!.map((t) => t.lt),
      [second!.lt, third!.lt],
    );
    const paged = await get(`account=${deposit.raw}&sort=asc&limit=1&offset=0`);
    assert.deepEqual(
      paged.json.transactions!.map((t) => t.lt),
      [first!.lt],
    );
    const tooMany = await get(`account=${deposit.raw}&limit=1001`);
    assert.equal(tooMany.status, 500);
    assert.equal(tooMany.json.error, 'limit is not allowed: 1001 > 1000');
    assert.equal((await get('account=not-an-address')).status, 422);
  });

  it('serves only transactions of indexed blocks', async () => {
    const pending = await server.chain.transfer({ to: deposit.raw, coin: 'TON', amount: '0.4' });
    const before = (await get(`account=${deposit.raw}`)).json.transactions!.map((t) => t.lt);
    assert.ok(!before.includes(pending.lt), 'not in a block yet: not served');
    server.chain.sealBlock();
    paid.push(pending);
    const after = (await get(`account=${deposit.raw}`)).json.transactions!.map((t) => t.lt);
    assert.ok(after.includes(pending.lt));
  });

  it('keeps a transaction held out of the block stream in the account’s history', async () => {
    const held = await server.chain.transfer({ to: deposit.raw, coin: 'TON', amount: '0.5' });
    const seqno = server.chain.sealBlock();
    const listsDeposit = async () => {
      const block = (await (await fetch(`${server.root}/api/v3/transactionsByMasterchainBlock?seqno=${seqno}&sort=asc`)).json()) as {
        transactions: { account: string }[];
      };
      return block.transactions.some((t) => t.account === deposit.raw.toUpperCase());
    };
    // Served once before it is held out (the sandbox keeps a served block's rows): listed then, not after.
    assert.equal(await listsDeposit(), true);
    assert.equal(holdOutOfBlockStream(server.chain, deposit.raw, seqno), 1);
    assert.equal(await listsDeposit(), false);
    paid.push(held);
    const history = (await get(`account=${deposit.raw}&sort=asc`)).json.transactions!;
    assert.ok(history.some((t) => t.lt === held.lt && t.mc_block_seqno === seqno));
  });

  it('the history source pages by lt through every page', async () => {
    const history = toncenterV3History({ baseUrl: server.root, pageSize: 2 });
    const all = await history.transactions(deposit.raw);
    assert.ok(all.complete);
    assert.deepEqual(
      all.transactions.map((t) => t.lt),
      paid.map((p) => p.lt).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)),
    );
    assert.ok(all.requests >= 3, `${all.requests} requests for ${all.transactions.length} transactions, 2 a page`);
    assert.deepEqual(new Set(all.transactions.map((t) => t.hash)), new Set(paid.map((p) => p.hash)));
    const capped = await toncenterV3History({ baseUrl: server.root, pageSize: 1, maxPages: 2 }).transactions(deposit.raw);
    assert.equal(capped.complete, false);
    assert.deepEqual(
      capped.transactions.map((t) => t.lt),
      all.transactions.slice(-2).map((t) => t.lt),
      'a history longer than maxPages pages: its newest are read',
    );
  });

  for (const status of [500, 422] as const)
    it(`learns the page size from a ${status} "limit is not allowed: N > M" and reads every page at M`, async () => {
      server.chain.v3.maxLimit = 2;
      server.chain.v3.limitRefusalStatus = status;
      try {
        const history = toncenterV3History({ baseUrl: server.root });
        const all = await history.transactions(deposit.raw);
        assert.ok(all.complete);
        assert.deepEqual(
          all.transactions.map((t) => t.lt),
          paid.map((p) => p.lt).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)),
        );
        assert.ok(all.requests >= Math.ceil(paid.length / 2), `${all.requests} pages of 2 for ${paid.length} transactions`);
        // The next call asks 2 from the start: no refusal, the same pages.
        const again = await history.transactions(deposit.raw);
        assert.equal(again.requests, all.requests);
        assert.equal((await history.jettonWallets([deposit.raw])).wallets.length, 0);
      } finally {
        server.chain.v3.maxLimit = 1000;
        server.chain.v3.limitRefusalStatus = 500;
      }
    });

  it('reads down from toLt (inclusive), newest first, and from fromLt up', async () => {
    const lts = paid.map((p) => p.lt).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
    const history = toncenterV3History({ baseUrl: server.root, pageSize: 1, maxPages: 2 });
    const below = await history.transactions(deposit.raw, { toLt: lts[3]! });
    assert.deepEqual(
      below.transactions.map((t) => t.lt),
      [lts[2], lts[3]],
    );
    assert.equal(below.complete, false);
    const between = await toncenterV3History({ baseUrl: server.root, pageSize: 2 }).transactions(deposit.raw, { fromLt: lts[1]!, toLt: lts[3]! });
    assert.deepEqual(
      between.transactions.map((t) => t.lt),
      [lts[1], lts[2], lts[3]],
    );
    assert.ok(between.complete);
    assert.equal(between.requests, 2);
  });

  it('names the URL it tried when the API is unreachable', async () => {
    const dead = createServer();
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
    const { port } = dead.address() as AddressInfo;
    await new Promise<void>((resolve) => dead.close(() => resolve()));
    const error = await toncenterV3History({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 2_000 })
      .transactions(deposit.raw)
      .catch((e: unknown) => e);
    assert.ok(error instanceof ChainApiError);
    assert.match(error.message, new RegExp(`unreachable at http://127\\.0\\.0\\.1:${port}/api/v3/transactions`));
  });
});

describe('jetton/wallets of many owners (reconciliation asks it of every deposit)', () => {
  /** 250 deposits; every 50th holds USDT (a wallet of its own, sorted anywhere among the owners). */
  const owners = Array.from({ length: 250 }, (_, i) => depositWallet(Buffer.alloc(32, 0x22), 1000 + i, 'sandbox').raw);
  const holders = owners.filter((_, i) => i % 50 === 7);

  before(async () => {
    for (const owner of holders) await server.chain.transfer({ to: owner, coin: 'USDT', amount: '1.5' });
    server.chain.sealBlock();
  });

  it('every request line stays under 7 KB (owners in their friendly form): a front refusing lines over 8 KB passes them all', async () => {
    const front = await startReverseProxy(server.url, { maxRequestLine: 8 * 1024 });
    try {
      const history = toncenterV3History({ baseUrl: front.url });
      const { wallets, requests } = await history.jettonWallets(owners);
      assert.deepEqual(wallets.map((w) => w.owner).sort(), [...holders].sort());
      assert.ok(wallets.every((w) => w.balance === 1_500_000n));
      assert.equal(requests, 3, '100 owners a request');
      const lines = front.seen.filter((line) => line.includes('/jetton/wallets'));
      assert.equal(lines.length, 3);
      for (const line of lines) assert.ok(Buffer.byteLength(line) < MAX_REQUEST_LINE_BYTES, `${Buffer.byteLength(line)} bytes`);
    } finally {
      await front.close();
    }
  });

  it('a front with a smaller limit (414 over 2 KB): the batch is halved until it passes, never given up', async () => {
    const front = await startReverseProxy(server.url, { maxRequestLine: 2048 });
    try {
      const history = toncenterV3History({ baseUrl: front.url });
      const { wallets } = await history.jettonWallets(owners);
      assert.deepEqual(wallets.map((w) => w.owner).sort(), [...holders].sort());
      const lines = front.seen.filter((line) => line.includes('/jetton/wallets'));
      const refused = lines.filter((line) => Buffer.byteLength(line) > 2048);
      assert.ok(refused.length >= 1 && refused.length <= 3, `${refused.length} refused: 100 → 50 → 25 owners a request`);
      // Learnt: the next call asks as many as passed at once.
      front.seen.length = 0;
      assert.equal((await history.jettonWallets(owners)).wallets.length, holders.length);
      assert.ok(front.seen.every((line) => Buffer.byteLength(line) <= 2048));
    } finally {
      await front.close();
    }
  });

  it('the sandbox orders them by owner, then id, as ton-index-go does', async () => {
    const url = new URL(`${server.root}/api/v3/jetton/wallets`);
    for (const owner of holders) url.searchParams.append('owner_address', owner);
    const rows = ((await (await fetch(url)).json()) as { jetton_wallets: Array<{ owner: string; address: string }> }).jetton_wallets;
    assert.equal(rows.length, holders.length);
    const order = rows.map((r) => r.owner);
    assert.deepEqual(order, [...order].sort());
    assert.notDeepEqual(
      rows.map((r) => r.address),
      [...rows.map((r) => r.address)].sort(),
      'sorted by owner, not by the wallet address (true for these owners)',
    );
  });
});
