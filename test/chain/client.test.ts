/**
 * The watcher's chain client against the sandbox's toncenter emulation over real HTTP.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { depositWallet } from '../../src/chain/addresses.ts';
import {
  ChainApiError,
  createChainClient,
  fetchNewTransactions,
  getJettonWalletAddress,
  toChainApiError,
} from '../../src/chain/client.ts';
import type { ChainClient, TxCursor } from '../../src/chain/client.ts';
import { transactionHashHex } from '../../src/chain/detect.ts';
import { startSandboxServer } from '../../src/chain/sandbox/index.ts';
import type { SandboxServer } from '../../src/chain/sandbox/index.ts';

const MASTER = Buffer.alloc(32, 0x17);
let server: SandboxServer;
let client: ChainClient;

before(async () => {
  server = await startSandboxServer({ port: 0 });
  client = createChainClient({ endpoint: server.url, apiKey: 'sandbox-ignores-keys', timeoutMs: 5_000 });
});
after(async () => {
  await server?.close();
});

async function pay(to: string, n: number): Promise<string[]> {
  const hashes: string[] = [];
  for (let i = 0; i < n; i++) {
    hashes.push((await server.chain.transfer({ to, coin: 'TON', amount: `0.${i + 1}` })).hash);
  }
  return hashes;
}

describe('fetchNewTransactions', () => {
  it('returns every transaction exactly once across calls, oldest first, paging with lt+hash', async () => {
    const d = depositWallet(MASTER, 0, 'sandbox');
    const sentA = await pay(d.friendly, 5);

    const first = await fetchNewTransactions(client, d.address, null, { limit: 2 }); // 3 pages
    assert.deepEqual(first.transactions.map(transactionHashHex), sentA);
    assert.equal(first.truncated, false);
    assert.deepEqual(first.cursor, { lt: first.transactions[4]!.lt.toString(), hash: sentA[4] });

    const none = await fetchNewTransactions(client, d.address, first.cursor, { limit: 2 });
    assert.deepEqual(none.transactions, []);
    assert.deepEqual(none.cursor, first.cursor);

    const sentB = await pay(d.raw, 3);
    const second = await fetchNewTransactions(client, d.address, first.cursor, { limit: 2 });
    assert.deepEqual(second.transactions.map(transactionHashHex), sentB);
    assert.equal(second.cursor?.hash, sentB[2]);

    // exactly at a page boundary: 2 new with page size 2
    const sentC = await pay(d.raw, 2);
    const third = await fetchNewTransactions(client, d.address.toString(), second.cursor, { limit: 2 });
    assert.deepEqual(third.transactions.map(transactionHashHex), sentC);

    const all = [...first.transactions, ...second.transactions, ...third.transactions].map(transactionHashHex);
    assert.equal(new Set(all).size, 10);
    const lts = [...first.transactions, ...second.transactions, ...third.transactions].map((t) => t.lt);
    assert.deepEqual([...lts].sort((a, b) => (a < b ? -1 : 1)), lts);
  });

  it('is empty for an address with no history', async () => {
    const d = depositWallet(MASTER, 99, 'sandbox');
    const res = await fetchNewTransactions(client, d.address, null, { limit: 10 });
    assert.deepEqual(res, { transactions: [], cursor: null, truncated: false });
  });

  it('reports truncation instead of skipping transactions it could not reach', async () => {
    const d = depositWallet(MASTER, 1, 'sandbox');
    await pay(d.raw, 4);
    const cursor: TxCursor | null = null;
    const res = await fetchNewTransactions(client, d.address, cursor, { limit: 1, maxPages: 2 });
    assert.deepEqual(res, { transactions: [], cursor: null, truncated: true });
  });

  it('toncenter-style paging is inclusive of the anchor (raw JSON-RPC)', async () => {
    const d = depositWallet(MASTER, 0, 'sandbox');
    const newest = (await client.getTransactions(d.address, { limit: 3 }))[2]!;
    const reply = await server.chain.handleJsonRpc({
      id: 1,
      jsonrpc: '2.0',
      method: 'getTransactions',
      params: { address: d.raw, limit: 2, lt: newest.lt.toString(), hash: transactionHashHex(newest) },
    });
    assert.equal(reply.status, 200);
    const result = (reply.json as { result: { transaction_id: { lt: string; hash: string } }[] }).result;
    assert.equal(result.length, 2);
    assert.equal(result[0]!.transaction_id.lt, newest.lt.toString());
    assert.equal(result[0]!.transaction_id.hash, newest.hash().toString('base64'));
    assert.ok(BigInt(result[1]!.transaction_id.lt) < newest.lt);
  });
});

describe('chain API errors', () => {
  it('429 from failNext is a retryable ChainApiError, and the next call succeeds', async () => {
    const d = depositWallet(MASTER, 0, 'sandbox');
    server.chain.failNext(1);
    await assert.rejects(fetchNewTransactions(client, d.address, null), (err: unknown) => {
      assert.ok(err instanceof ChainApiError);
      assert.equal(err.status, 429);
      assert.equal(err.retryable, true);
      return true;
    });
    const ok = await fetchNewTransactions(client, d.address, null);
    assert.ok(ok.transactions.length > 0);
  });

  it('5xx is retryable too; consecutive failures are counted per request', async () => {
    server.chain.failNext(2, 503);
    const master = server.chain.jettonMasters().USDT!;
    const owner = depositWallet(MASTER, 0, 'sandbox').address;
    for (let i = 0; i < 2; i++) {
      await assert.rejects(getJettonWalletAddress(client, master, owner), (err: unknown) => {
        assert.ok(err instanceof ChainApiError && err.retryable && err.status === 503);
        return true;
      });
    }
    const wallet = await getJettonWalletAddress(client, master, owner);
    assert.match(wallet.toRawString(), /^0:[0-9a-f]{64}$/);
  });

  it('a connection failure is retryable; a get method on an uninitialised account is not', async () => {
    const closed = await startSandboxServer({ port: 0, chain: server.chain });
    const url = closed.url;
    await closed.close();
    const dead = createChainClient({ endpoint: url, timeoutMs: 2_000 });
    await assert.rejects(fetchNewTransactions(dead, depositWallet(MASTER, 0, 'sandbox').address, null), (err: unknown) => {
      assert.ok(err instanceof ChainApiError);
      assert.equal(err.status, null);
      assert.equal(err.retryable, true);
      return true;
    });
    const nobody = depositWallet(MASTER, 12345, 'sandbox').address;
    await assert.rejects(getJettonWalletAddress(client, nobody, nobody), (err: unknown) => {
      assert.ok(err instanceof ChainApiError);
      assert.equal(err.retryable, false);
      return true;
    });
  });

  it('maps a 200 {ok:false} reply by its code', () => {
    const e = toChainApiError(new Error('Received error: {"ok":false,"code":500,"error":"LITE_SERVER_UNKNOWN"}'));
    assert.equal(e.status, 500);
    assert.equal(e.retryable, true);
    assert.equal(toChainApiError(new Error('Malformed response: x')).retryable, false);
  });
});
