// Signing with a deposit wallet (src/treasury/wallets.ts) on the real wallet contracts of the sandbox
// chain (issue 44 §5): every action is signed with +2 (ignore errors), wallet v4r2's as wallet v5r1's
// — a v4 wallet commits nothing before its actions, so without it an action that fails rolls the
// transaction back but its gas, and the same message applies again and again until its valid_until.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Address, Cell, internal, loadMessage, SendMode, toNano } from '@ton/core';
import { depositKeyPair } from '../../src/chain/addresses.ts';
import { startSandboxServer, type SandboxServer } from '../../src/chain/sandbox/index.ts';
import { fromCoreTransaction } from '../../src/chain/transactions.ts';
import { signWalletMessage, walletAddress, type WalletRef } from '../../src/treasury/wallets.ts';

const keys = depositKeyPair(Buffer.alloc(32, 0x44));
let server: SandboxServer;

before(async () => {
  server = await startSandboxServer({ port: 0 });
});
after(() => server?.close());

/** The send modes of the actions a signed external message carries (wallet v4r2: after wallet id, valid_until, seqno and op; v5r1: its out-list). */
function v4Modes(boc: Buffer): number[] {
  const body = loadMessage(Cell.fromBoc(boc)[0]!.beginParse()).body.beginParse();
  body.skip(512 + 32 + 32 + 32 + 8); // signature, wallet id, valid_until, seqno, op 0 (simple send)
  const modes: number[] = [];
  while (body.remainingRefs > 0) {
    modes.push(body.loadUint(8));
    body.loadRef();
  }
  return modes;
}

const externalsOf = (wallet: Address) =>
  server.chain
    .transactionsOf(wallet)
    .filter((tx) => tx.inMessage?.info.type === 'external-in')
    .map((tx) => fromCoreTransaction(tx, wallet.toRawString()));

for (const derivation of ['v4r2-1', 'v5r1-1'] as const) {
  describe(`a ${derivation} deposit's message whose action cannot be carried out`, () => {
    it('is applied once: the action skipped (+2), the seqno moved on, the same message refused after; no gas paid twice', async () => {
      const ref: WalletRef = { index: derivation === 'v4r2-1' ? 4401 : 4402, derivation, network: 'sandbox' };
      const wallet = walletAddress(keys, ref);
      await server.chain.transfer({ to: wallet.toString({ bounceable: false, testOnly: true }), coin: 'TON', amount: '1' });
      server.chain.sealBlock();
      // 5 TON from a wallet of 1: the action phase cannot send it.
      const signed = signWalletMessage(keys, ref, {
        seqno: 0,
        validUntil: Math.floor(Date.now() / 1000) + 60,
        sendMode: SendMode.PAY_GAS_SEPARATELY,
        messages: [internal({ to: Address.parse(server.chain.customerAddress), value: toNano('5'), bounce: false })],
      });
      if (derivation === 'v4r2-1') assert.deepEqual(v4Modes(signed.boc), [SendMode.PAY_GAS_SEPARATELY + SendMode.IGNORE_ERRORS]);
      const external = Cell.fromBoc(signed.boc)[0]!;
      await server.chain.sendExternal(external);
      const [first] = externalsOf(wallet);
      assert.ok(first, 'the wallet took the message');
      assert.equal(first.actionSuccess, true, 'the action phase succeeded: its one action skipped');
      assert.equal(first.outMessages?.length ?? 0, 0, 'nothing sent');
      const balance = (await server.chain.balancesOf(wallet)).TON!;
      assert.ok(toNano(balance) < toNano('1') && toNano(balance) > toNano('0.99'), balance);
      // Validators offered the same message again (a rebroadcast, another validator): refused, no gas paid.
      await assert.rejects(server.chain.sendExternal(external));
      assert.equal(externalsOf(wallet).length, 1, 'applied once');
      assert.equal((await server.chain.balancesOf(wallet)).TON, balance);
    });
  });
}
