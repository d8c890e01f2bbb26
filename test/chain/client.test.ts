/**
 * The chain client (TonClient, toncenter v2: get methods) against the sandbox's emulation over real HTTP.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { depositWallet } from '../../src/chain/addresses.ts';
import { ChainApiError, toChainApiError } from '../../src/chain/apiError.ts';
import { createChainClient, getJettonWalletAddress } from '../../src/chain/client.ts';
import type { ChainClient } from '../../src/chain/client.ts';
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

describe('chain API errors', () => {
  it('429 from failNext is a retryable ChainApiError, and the next call succeeds', async () => {
    const master = server.chain.jettonMasters().USDT!;
    const owner = depositWallet(MASTER, 0, 'sandbox').address;
    server.chain.failNext(1);
    await assert.rejects(getJettonWalletAddress(client, master, owner), (err: unknown) => {
      assert.ok(err instanceof ChainApiError);
      assert.equal(err.status, 429);
      assert.equal(err.retryable, true);
      return true;
    });
    assert.ok(await getJettonWalletAddress(client, master, owner));
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
    await assert.rejects(getJettonWalletAddress(dead, server.chain.jettonMasters().USDT!, depositWallet(MASTER, 0, 'sandbox').address), (err: unknown) => {
      assert.ok(err instanceof ChainApiError);
      assert.equal(err.status, null);
      assert.equal(err.retryable, true);
      // The log line names the URL it tried.
      assert.ok(err.message.startsWith(`chain API unreachable at ${url}`), err.message);
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
