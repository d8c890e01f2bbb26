/**
 * The sandbox chain seen through the unmodified TonClient over real HTTP, and payment detection on
 * the transactions it returns.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Address, beginCell, internal, toNano } from '@ton/core';
import { TonClient, WalletContractV4 } from '@ton/ton';
import { depositKeyPair, depositWallet } from '../../src/chain/addresses.ts';
import type { DepositWallet } from '../../src/chain/addresses.ts';
import { getAccountState, getJettonWalletAddress } from '../../src/chain/client.ts';
import { OP_JETTON_INTERNAL_TRANSFER, detectJettonTransfer, detectTonTransfer } from '../../src/chain/detect.ts';
import { fromCoreTransaction, type ChainTransaction } from '../../src/chain/transactions.ts';
import { SandboxTransferError, startSandboxServer } from '../../src/chain/sandbox/index.ts';
import type { SandboxServer } from '../../src/chain/sandbox/index.ts';

const MASTER = Buffer.alloc(32, 0x42);
let server: SandboxServer;
let client: TonClient;
let nextIndex = 0;
const fresh = (): DepositWallet => depositWallet(MASTER, nextIndex++, 'sandbox');

/** The account's transactions (newest first) through TonClient over HTTP, as the detector reads them. */
async function txsOf(address: Address): Promise<ChainTransaction[]> {
  return (await client.getTransactions(address, { limit: 100 })).map((t) => fromCoreTransaction(t, address.toRawString()));
}

async function onlyTx(address: Address, hash: string): Promise<ChainTransaction> {
  const tx = (await txsOf(address)).find((t) => t.hash === hash);
  assert.ok(tx, `transaction ${hash} not found on ${address.toRawString()}`);
  return tx;
}

before(async () => {
  server = await startSandboxServer({ port: 0 });
  client = new TonClient({ endpoint: server.url });
});
after(async () => {
  await server?.close();
});

describe('sandbox chain', () => {
  it('deploys USDT, the other seed jettons and a look-alike USDT', () => {
    const masters = server.chain.jettonMasters();
    assert.deepEqual(Object.keys(masters).sort(), ['BLUM', 'BUILD', 'DOGS', 'DUST', 'DYOR', 'NOT', 'STON', 'USDT', 'XAUt0']);
    assert.equal(new Set(Object.values(masters)).size, 9);
    assert.notEqual(server.chain.lookalikeMaster, masters.USDT);
    for (const raw of Object.values(masters)) assert.match(raw, /^0:[0-9a-f]{64}$/);
  });

  it('rejects unknown coins, bad amounts and addresses with a clear 400 error', async () => {
    const to = fresh().friendly;
    const cases: [Parameters<SandboxServer['chain']['transfer']>[0], string][] = [
      [{ to, coin: 'BTC', amount: '1' }, 'unknown_coin'],
      [{ to, coin: 'USDT', amount: '1.1234567' }, 'invalid_amount'],
      [{ to, coin: 'TON', amount: '0.0000000001' }, 'invalid_amount'],
      [{ to, coin: 'TON', amount: '1e3' }, 'invalid_amount'],
      [{ to, coin: 'TON', amount: '-1' }, 'invalid_amount'],
      [{ to, coin: 'TON', amount: '0' }, 'invalid_amount'],
      [{ to: 'nope', coin: 'TON', amount: '1' }, 'invalid_address'],
    ];
    for (const [req, code] of cases) {
      await assert.rejects(server.chain.transfer(req), (err: unknown) => {
        assert.ok(err instanceof SandboxTransferError, String(err));
        assert.equal(err.code, code, JSON.stringify(req));
        assert.equal(err.invalidInput, true);
        return true;
      });
    }
  });

  it('answers toncenter errors: unknown method, bad address', async () => {
    const unknown = await server.chain.handleJsonRpc({ id: '1', jsonrpc: '2.0', method: 'noSuchMethod', params: {} });
    assert.equal(unknown.status, 404);
    assert.deepEqual({ ...(unknown.json as object), error: undefined }, { ok: false, code: 404, error: undefined, id: '1', jsonrpc: '2.0' });
    const badAddress = await server.chain.handleJsonRpc({ method: 'getTransactions', params: { address: 'x', limit: 1 } });
    assert.equal((badAddress.json as { ok: boolean }).ok, false);
    const res = await fetch(server.url, { method: 'POST', body: '{"method":"getMasterchainInfo","params":{}}' });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { ok: boolean }).ok, true);
  });
});

describe('TON payments to a deposit address', () => {
  it('counts a non-bounceable 1.5 TON transfer to a fresh (uninitialised) address', async () => {
    const d = fresh();
    assert.equal((await client.getContractState(d.address)).state, 'uninitialized');
    const sent = await server.chain.transfer({ to: d.friendly, coin: 'TON', amount: '1.5' });
    const tx = await onlyTx(d.address, sent.hash);
    assert.equal(tx.lt, sent.lt);
    const t = detectTonTransfer(tx);
    assert.ok(t);
    assert.equal(t.counted, true);
    assert.equal(t.amount, 1_500_000_000n);
    assert.equal(t.sender, server.chain.customerAddress);
    assert.equal(t.hash, sent.hash);
    assert.equal(t.lt, sent.lt);
    // credited although aborted: the wallet has no code yet
    assert.equal(tx.aborted, true);
    const state = await getAccountState(client, d.address);
    assert.equal(state.state, 'uninitialized');
    assert.equal(state.balance > 1_400_000_000n, true);
    assert.deepEqual(state.lastTransaction, { lt: sent.lt, hash: sent.hash });
  });

  it('does not count a bounceable transfer to an uninitialised address: it bounces back', async () => {
    const d = fresh();
    const sent = await server.chain.transfer({ to: d.raw, coin: 'TON', amount: '2', bounce: true });
    const t = detectTonTransfer(await onlyTx(d.address, sent.hash));
    assert.ok(t);
    assert.equal(t.counted, false);
    assert.equal(t.reason, 'value_returned');
    assert.equal(t.amount, 2_000_000_000n);
    assert.equal((await client.getContractState(d.address)).balance, 0n);
  });

  it('counts a transfer with a text comment and reads the comment', async () => {
    const d = fresh();
    const sent = await server.chain.transfer({ to: d.friendly, coin: 'TON', amount: '0.25', comment: 'order #42 — спасибо' });
    const t = detectTonTransfer(await onlyTx(d.address, sent.hash));
    assert.ok(t);
    assert.equal(t.counted, true);
    assert.equal(t.amount, 250_000_000n);
    assert.equal(t.comment, 'order #42 — spasibo'.replace('spasibo', 'спасибо'));
  });

  it('follows the chain clock: utime is the pinned on-chain time', async () => {
    const d = fresh();
    const at = server.chain.now + 3600;
    server.chain.setNow(at);
    const sent = await server.chain.transfer({ to: d.raw, coin: 'TON', amount: '1' });
    assert.equal(detectTonTransfer(await onlyTx(d.address, sent.hash))?.utime, at);
    assert.equal(server.chain.advance(60), at + 60);
    assert.throws(() => server.chain.setNow(at - 1), RangeError);
    const later = await server.chain.transfer({ to: d.raw, coin: 'TON', amount: '1' });
    assert.equal(detectTonTransfer(await onlyTx(d.address, later.hash))?.utime, at + 60);
  });

  it('sweeps a deposit wallet with its derived key through sendBoc (external in is not a payment)', async () => {
    const d = fresh();
    await server.chain.transfer({ to: d.friendly, coin: 'TON', amount: '3' });
    const { publicKey, secretKey } = depositKeyPair(MASTER);
    const wallet = client.open(WalletContractV4.create({ workchain: 0, publicKey, walletId: d.walletId }));
    assert.ok(wallet.address.equals(d.address));
    assert.equal(await wallet.getSeqno(), 0);
    await wallet.sendTransfer({
      seqno: 0,
      secretKey,
      timeout: server.chain.now + 60, // chain time, which an earlier test moved ahead of the wall clock
      messages: [internal({ to: Address.parse(server.chain.customerAddress), value: toNano('1'), bounce: false })],
    });
    assert.equal((await client.getContractState(d.address)).state, 'active');
    assert.equal(await wallet.getSeqno(), 1); // runGetMethod over HTTP
    const txs = await txsOf(d.address);
    assert.equal(txs.length, 2);
    assert.equal(detectTonTransfer(txs[0]!), null); // the external (outgoing) one, newest first
    assert.equal(detectTonTransfer(txs[1]!)?.counted, true);
  });
});

describe('jetton payments', () => {
  it('detects USDT 12.345678 on the owner jetton wallet found through get_wallet_address', async () => {
    const d = fresh();
    const usdt = server.chain.jettonMasters().USDT!;
    const jettonWallet = await getJettonWalletAddress(client, usdt, d.address);
    const sent = await server.chain.transfer({ to: d.friendly, coin: 'USDT', amount: '12.345678', comment: 'inv-7' });
    const tx = await onlyTx(jettonWallet, sent.hash);
    const j = detectJettonTransfer(tx);
    assert.ok(j);
    assert.equal(j.counted, true);
    assert.equal(j.amount, 12_345_678n);
    assert.equal(j.sender, server.chain.customerAddress);
    assert.equal(j.comment, 'inv-7');
    assert.equal(j.lt, sent.lt);
    // the owner also got a transfer_notification carrying a little TON: recorded, not counted
    const ownerTxs = await txsOf(d.address);
    assert.equal(ownerTxs.length, 1);
    const n = detectTonTransfer(ownerTxs[0]!);
    assert.equal(n?.counted, false);
    assert.equal(n?.reason, 'jetton_notification');
    assert.equal(n?.sender, jettonWallet.toRawString());
    // and the jetton wallet's own get method answers over HTTP (int, slice, cell stack entries)
    const data = await client.runMethod(jettonWallet, 'get_wallet_data');
    assert.equal(data.stack.readBigNumber(), 12_345_678n);
    assert.ok(data.stack.readAddress().equals(d.address));
    assert.equal(data.stack.readAddress().toRawString(), usdt);
  });

  it('detects the other seed jettons with their own decimals', async () => {
    const d = fresh();
    for (const [coin, amount, units] of [
      ['NOT', '1.000000001', 1_000_000_001n],
      ['XAUt0', '0.5', 500_000n],
    ] as const) {
      const master = server.chain.jettonMasters()[coin]!;
      const jw = await getJettonWalletAddress(client, master, d.address);
      const sent = await server.chain.transfer({ to: d.raw, coin, amount });
      const j = detectJettonTransfer(await onlyTx(jw, sent.hash));
      assert.equal(j?.counted, true, coin);
      assert.equal(j?.amount, units, coin);
    }
  });

  it('a look-alike USDT lands on a jetton wallet that is not the real master wallet, so it never counts', async () => {
    const d = fresh();
    const realWallet = await getJettonWalletAddress(client, server.chain.jettonMasters().USDT!, d.address);
    const fakeWallet = await getJettonWalletAddress(client, server.chain.lookalikeMaster, d.address);
    assert.equal(realWallet.equals(fakeWallet), false);
    const sent = await server.chain.transfer({ to: d.friendly, coin: 'USDT', amount: '1000', fromLookalike: true });
    // the fake transfer did succeed, on the fake wallet
    assert.equal(detectJettonTransfer(await onlyTx(fakeWallet, sent.hash))?.counted, true);
    // nothing reached the wallet we watch
    assert.deepEqual(await txsOf(realWallet), []);
    // the owner sees a notification that looks just like a real one: never counted
    const notes = (await txsOf(d.address)).map(detectTonTransfer);
    assert.deepEqual(
      notes.map((n) => n?.reason),
      ['jetton_notification'],
    );
  });

  it('a forged internal_transfer sent straight to the real jetton wallet fails and is not counted', async () => {
    const d = fresh();
    await server.chain.transfer({ to: d.raw, coin: 'USDT', amount: '1' }); // deploys the real wallet
    const realWallet = await getJettonWalletAddress(client, server.chain.jettonMasters().USDT!, d.address);
    const attacker = await server.chain.blockchain.treasury('attacker');
    await attacker.send({
      to: realWallet,
      value: toNano('0.2'),
      bounce: true,
      body: beginCell()
        .storeUint(OP_JETTON_INTERNAL_TRANSFER, 32)
        .storeUint(0, 64)
        .storeCoins(1_000_000_000n)
        .storeAddress(attacker.address)
        .storeAddress(attacker.address)
        .storeCoins(0)
        .storeBit(0)
        .endCell(),
    });
    const detected = (await txsOf(realWallet)).map(detectJettonTransfer);
    assert.equal(detected.length, 2);
    const [forged, genuine] = detected; // newest first
    assert.equal(forged?.counted, false);
    assert.equal(forged?.reason, 'compute_failed');
    assert.equal(forged?.amount, 1_000_000_000n);
    assert.equal(genuine?.counted, true);
    assert.equal(genuine?.amount, 1_000_000n);
  });
});

describe("the sandbox's jetton switches", () => {
  it('a locked jetton wallet refuses with exit 45 (real TVM), the sender takes the amount back; unlocked it takes it; jetton/wallets lists it', async () => {
    const chain = server.chain;
    const owner = fresh().address;
    const wallet = await chain.lockJettonWallet(owner.toRawString(), 'USDT');
    const usdt = Address.parse(chain.jettonMasters().USDT!);
    const customerWallet = await chain.jettonWalletOf(usdt, chain.customer.address);
    const before = (await chain.balancesOf(chain.customer.address)).USDT;
    const refused = await chain.transfer({ to: owner.toString(), coin: 'USDT', amount: '2' });
    const tx = await onlyTx(Address.parse(wallet), refused.hash);
    assert.deepEqual(tx.compute, { skipped: false, success: false, exitCode: 45 });
    const back = (await txsOf(customerWallet)).find((t) => t.inMessage?.bounced);
    assert.ok(back && back.compute.skipped === false && back.compute.success, 'the sender took the bounce');
    assert.equal((await chain.balancesOf(chain.customer.address)).USDT, before);
    assert.equal((await chain.balancesOf(owner)).USDT, '0');

    await chain.unlockJettonWallet(owner.toRawString(), 'USDT');
    // Without a notification (forward_ton_amount 0): the owner's own address sees nothing.
    await chain.transfer({ to: owner.toString(), coin: 'USDT', amount: '2', notify: false });
    assert.equal((await chain.balancesOf(owner)).USDT, '2');
    assert.deepEqual(await txsOf(owner), []);

    const response = await fetch(new URL(`/api/v3/jetton/wallets?owner_address=${owner.toString()}&exclude_zero_balance=true`, server.url));
    assert.equal(response.status, 200);
    const listed = (await response.json()) as { jetton_wallets: Array<Record<string, string>> };
    assert.deepEqual(
      listed.jetton_wallets.map((w) => [w.address, w.owner, w.jetton, w.balance]),
      [[wallet.toUpperCase(), owner.toRawString().toUpperCase(), usdt.toRawString().toUpperCase(), '2000000']],
    );
    await assert.rejects(chain.transfer({ to: owner.toString(), coin: 'TON', amount: '1', notify: false }), /notify applies to jettons only/);
  });
});
