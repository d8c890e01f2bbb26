// toncenter API v3 as ton-index-go serves it: a fixture of its JSON (built field by field from its
// models, test/helpers/toncenter-v3-transactions-by-masterchain-block.json) parsed by
// transactions.ts, and the sandbox's emulation over HTTP behaving like the real API where money
// is at stake: a block not indexed yet (ton-index-go's 404, or another indexer's empty list),
// out-of-order indexing, tick/tock in every block, the defaults and limits (and a smaller
// -max-limit), the gateway's 429.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fromV3Transaction, type V3Transaction } from '../../src/chain/transactions.ts';
import { detectTonTransfer } from '../../src/chain/detect.ts';
import { routeTransaction } from '../../src/reader/classify.ts';
import { startSandboxServer, type SandboxServer } from '../../src/chain/sandbox/index.ts';
import { toncenterV3Source } from '../../src/chain/source.ts';
import { ChainApiError } from '../../src/chain/apiError.ts';
import { createRequestBudget } from '../../src/chain/budget.ts';

const fixture = JSON.parse(fs.readFileSync(new URL('../helpers/toncenter-v3-transactions-by-masterchain-block.json', import.meta.url), 'utf8')) as {
  transactions: V3Transaction[];
  address_book: Record<string, { user_friendly: string }>;
};

describe('toncenter v3 JSON as ton-index-go renders it (the fixture)', () => {
  const txs = fixture.transactions.map(fromV3Transaction);

  it('parses every row: raw addresses to lower case, base64 hashes to hex, string lts and values', () => {
    assert.deepEqual(
      txs.map((t) => [t.account.slice(0, 6), t.lt]),
      [
        ['-1:555', '61234567000004'],
        ['0:83df', '61234567000003'],
        ['0:b5ee', '61234567000002'],
        ['-1:333', '61234567000000'],
      ],
      'the default order is descending by lt',
    );
    for (const t of txs) {
      assert.match(t.hash, /^[0-9a-f]{64}$/);
      assert.match(t.account, /^-?\d+:[0-9a-f]{64}$/);
    }
    assert.equal(txs[0]!.hash, Buffer.from('mS9bq1FNtMNBd3UlvxP2cbpfL3fdqzC8zd7CYjjXw3I=', 'base64').toString('hex'));
  });

  it('a transfer to a deposit: its value, sender and comment; credited though aborted (an uninitialised wallet)', () => {
    const deposit = txs[2]!;
    assert.equal(deposit.inMessage?.value, 1_500_000_000n);
    assert.equal(deposit.inMessage?.source, '0:83dfd552e63729b472fcbcc8c45ebcc6691702558b68ec7527e1ba403a0f31a8');
    assert.equal(deposit.aborted, true);
    assert.deepEqual(deposit.compute, { skipped: true });
    const transfer = detectTonTransfer(deposit);
    assert.equal(transfer?.counted, true);
    assert.equal(transfer?.comment, 'order 42');
  });

  it("a wallet's external message: no source, its normalized hash (hash_norm, sent because it differs)", () => {
    const wallet = txs[1]!;
    assert.equal(wallet.inMessage?.source, null);
    assert.equal(wallet.inMessage?.hashNormalized, Buffer.from('hHWXwzp5LB8VVXCJcHLu6md7P46Z6nZ0W0hiWfb9HIk=', 'base64').toString('hex'));
    assert.equal(wallet.totalFees, 2_231_232n);
    assert.deepEqual(
      wallet.outMessages?.map((m) => [m.destination, m.value, m.fwdFee]),
      [['0:b5ee9c72410101010044000084ff0020dd2082014c97ba9730ed44d0d70b1fe0', 1_500_000_000n, 266_669n]],
    );
    assert.equal(detectTonTransfer(wallet), null);
  });

  it('tick and tock of the special accounts: no message, nothing for the reader', () => {
    for (const t of [txs[0]!, txs[3]!]) {
      assert.equal(t.inMessage, null);
      assert.equal(detectTonTransfer(t), null);
      assert.deepEqual(routeTransaction(t, undefined, null), { kind: 'ignored' });
    }
    assert.ok(Object.keys(fixture.address_book).every((raw) => raw === raw.toUpperCase()));
  });
});

describe('the sandbox toncenter v3 behaves like ton-index-go', () => {
  let server: SandboxServer;
  const get = async (path: string) => {
    const response = await fetch(`${server.root}/api/v3/${path}`);
    return { status: response.status, headers: response.headers, json: (await response.json()) as any };
  };
  before(async () => {
    server = await startSandboxServer({ port: 0 });
  });
  after(() => server.close());

  it('a block not indexed yet (the tip + 1, a future seqno) answers 404 "masterchain block N not found"; the source says "not yet"', async () => {
    const next = server.chain.sealBlock() + 1;
    for (const seqno of [next, next + 1_000]) {
      const reply = await get(`transactionsByMasterchainBlock?seqno=${seqno}`);
      assert.equal(reply.status, 404);
      assert.deepEqual(reply.json, { error: `masterchain block ${seqno} not found` });
    }
    assert.equal(await toncenterV3Source({ baseUrl: server.root }).block(next), null);
  });

  it("another indexer's empty 200 for a block not indexed yet (v3.unindexedBlock = 'empty') means the same to the source", async () => {
    const next = server.chain.sealBlock() + 1;
    server.chain.v3.unindexedBlock = 'empty';
    try {
      const reply = await get(`transactionsByMasterchainBlock?seqno=${next}`);
      assert.deepEqual([reply.status, reply.json], [200, { transactions: [], address_book: {} }]);
      assert.equal(await toncenterV3Source({ baseUrl: server.root }).block(next), null);
    } finally {
      server.chain.v3.unindexedBlock = 'not_found';
    }
  });

  it('every block has the tick and tock of the special accounts, raw addresses upper case, hashes base64', async () => {
    const seqno = server.chain.sealBlock();
    const { json } = await get(`transactionsByMasterchainBlock?seqno=${seqno}&sort=asc`);
    const rows = json.transactions as any[];
    assert.deepEqual(
      rows.map((r) => [r.account.slice(0, 5), r.description.type, r.description.is_tock]),
      [
        ['-1:33', 'tick_tock', false],
        ['-1:55', 'tick_tock', false],
        ['-1:33', 'tick_tock', true],
        ['-1:55', 'tick_tock', true],
      ],
    );
    for (const r of rows) {
      assert.equal(typeof r.lt, 'string');
      assert.equal(typeof r.now, 'number');
      assert.equal(r.mc_block_seqno, seqno);
      assert.equal(Buffer.from(r.hash, 'base64').length, 32);
      assert.ok(r.account in json.address_book);
    }
  });

  it('a transfer: upper-case raw addresses, string values, hash_norm only where it differs from hash', async () => {
    const to = `0:${'ab'.repeat(32)}`;
    await server.chain.transfer({ to, coin: 'TON', amount: '1.5', comment: 'hi' });
    const seqno = server.chain.sealBlock();
    const rows = (await get(`transactionsByMasterchainBlock?seqno=${seqno}`)).json.transactions as any[];
    const deposit = rows.find((r) => r.account === to.toUpperCase());
    assert.ok(deposit);
    assert.equal(deposit.in_msg.value, '1500000000');
    assert.equal(deposit.in_msg.source, server.chain.customerAddress.toUpperCase());
    assert.equal('hash_norm' in deposit.in_msg, false, 'an internal message has no normalized hash of its own');
    const wallet = rows.find((r) => r.account === server.chain.customerAddress.toUpperCase());
    assert.ok(wallet?.in_msg.hash_norm, "the wallet's external message carries hash_norm");
    assert.notEqual(wallet.in_msg.hash_norm, wallet.in_msg.hash);
  });

  it('defaults sort=desc and limit=100; limit over 1000 is 500 "limit is not allowed" (422 as newer releases answer it); a wrong sort 422', async () => {
    const seqno = server.chain.sealBlock({ others: 150 });
    const { json } = await get(`transactionsByMasterchainBlock?seqno=${seqno}`);
    const lts = (json.transactions as any[]).map((r) => BigInt(r.lt));
    assert.equal(lts.length, 100);
    assert.ok(
      lts.every((lt, i) => i === 0 || lts[i - 1]! >= lt),
      'descending by lt',
    );
    const all = await get(`transactionsByMasterchainBlock?seqno=${seqno}&limit=1000&sort=asc`);
    assert.equal(all.json.transactions.length, 154);
    const over = await get(`transactionsByMasterchainBlock?seqno=${seqno}&limit=1001`);
    assert.equal(over.status, 500, "the ton-index-go releases of 2025 rewrap the query builder's 422 as a 500");
    assert.deepEqual(over.json, { error: 'limit is not allowed: 1001 > 1000' });
    server.chain.v3.limitRefusalStatus = 422;
    try {
      const newer = await get(`transactionsByMasterchainBlock?seqno=${seqno}&limit=1001`);
      assert.deepEqual([newer.status, newer.json], [422, { error: 'limit is not allowed: 1001 > 1000' }]);
    } finally {
      server.chain.v3.limitRefusalStatus = 500;
    }
    const sort = await get(`transactionsByMasterchainBlock?seqno=${seqno}&sort=up`);
    assert.deepEqual([sort.status, sort.json], [422, { error: 'wrong value for sort parameter' }]);
  });

  it('out-of-order indexing: a held block answers 404 while later ones are served and masterchainInfo.last moves past it', async () => {
    const held = server.chain.holdBlock();
    assert.equal(server.chain.sealBlock(), held);
    const later = [server.chain.sealBlock(), server.chain.sealBlock()];
    const info = await get('masterchainInfo');
    assert.equal(info.json.last.seqno, later[1]);
    assert.equal(typeof info.json.last.gen_utime, 'string');
    assert.equal(typeof info.json.first.seqno, 'number');
    const unindexed = await get(`transactionsByMasterchainBlock?seqno=${held}`);
    assert.deepEqual([unindexed.status, unindexed.json], [404, { error: `masterchain block ${held} not found` }]);
    assert.deepEqual((await get(`blocks?workchain=-1&seqno=${held}`)).json, { blocks: [] });
    assert.ok((await get(`transactionsByMasterchainBlock?seqno=${later[0]}`)).json.transactions.length >= 4);
    const source = toncenterV3Source({ baseUrl: server.root });
    assert.equal(await source.block(held), null, 'the source says "not yet", not "an empty block"');
    server.chain.releaseBlock(held);
    assert.equal((await get(`blocks?workchain=-1&seqno=${held}`)).json.blocks[0].seqno, held);
    assert.equal((await source.block(held))?.transactions.length, 4);
  });

  for (const status of [500, 422] as const) {
    it(`a deployment run with a smaller -max-limit: ${status} "limit is not allowed: 1000 > 100", and the source pages by 100 from then on`, async () => {
      const seqno = server.chain.sealBlock({ others: 150 });
      server.chain.v3.maxLimit = 100;
      server.chain.v3.limitRefusalStatus = status;
      try {
        const refused = await get(`transactionsByMasterchainBlock?seqno=${seqno}&limit=1000`);
        assert.deepEqual([refused.status, refused.json], [status, { error: 'limit is not allowed: 1000 > 100' }]);
        const budget = createRequestBudget(0);
        const source = toncenterV3Source({ baseUrl: server.root, budget });
        const block = await source.block(seqno);
        assert.equal(block?.transactions.length, 154);
        assert.equal(new Set(block?.transactions.map((t) => t.hash)).size, 154);
        assert.equal(block?.requests, 3, 'the refused page, then two pages of 100 and 54');
        assert.equal((await source.block(seqno))?.requests, 2, 'the next block asks 100 at once');
        // A refused page size is no overload: nothing waits behind it.
        const started = performance.now();
        await budget.take();
        assert.ok(performance.now() - started < 500, 'the budget was not backed off');
      } finally {
        server.chain.v3.maxLimit = 1000;
        server.chain.v3.limitRefusalStatus = 500;
      }
    });
  }

  it('a limit refusal that asks for no smaller page is thrown at once, not asked again for ever', async () => {
    const seqno = server.chain.sealBlock();
    server.chain.v3.maxLimit = 0;
    try {
      const source = toncenterV3Source({ baseUrl: server.root });
      await assert.rejects(source.block(seqno), (error: unknown) => {
        assert.ok(error instanceof ChainApiError);
        assert.equal(error.status, 500);
        assert.equal(error.retryable, false, 'asked again it is refused again');
        return true;
      });
    } finally {
      server.chain.v3.maxLimit = 1000;
    }
  });

  it("the gateway's 429: its own body, no Retry-After", async () => {
    server.chain.failNext(1, 429);
    const reply = await get('masterchainInfo');
    assert.equal(reply.status, 429);
    assert.deepEqual(reply.json, { ok: false, result: 'Ratelimit exceed', code: 429 });
    assert.equal(reply.headers.get('retry-after'), null);
  });
});
