import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Address } from '@ton/core';
import { WalletContractV4 } from '@ton/ton';
import {
  MAX_DEPOSIT_INDEX,
  WALLET_ID_BASE,
  depositKeyPair,
  depositWallet,
  friendlyAddress,
  parseAddress,
  toRawAddress,
} from '../../src/chain/addresses.ts';

const MASTER = Buffer.from('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', 'hex');

describe('deposit addresses', () => {
  it('equal WalletContractV4.create for the derived key and walletId = base + index', () => {
    const { publicKey } = depositKeyPair(MASTER);
    for (const index of [0, 1, 2, 17, 4096, 1_000_000, MAX_DEPOSIT_INDEX]) {
      const w = depositWallet(MASTER, index, 'mainnet');
      const expected = WalletContractV4.create({ workchain: 0, publicKey, walletId: WALLET_ID_BASE + index });
      assert.ok(w.address.equals(expected.address), `index ${index}`);
      assert.equal(w.raw, expected.address.toRawString());
      assert.equal(w.walletId, WALLET_ID_BASE + index);
      assert.equal(w.index, index);
    }
  });

  it('differ per index and per master key', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 500; i++) seen.add(depositWallet(MASTER, i, 'mainnet').raw);
    assert.equal(seen.size, 500);
    const other = Buffer.from(MASTER);
    other[0] = 0xff;
    assert.notEqual(depositWallet(other, 0, 'mainnet').raw, depositWallet(MASTER, 0, 'mainnet').raw);
  });

  it('never change: frozen derivation vector', () => {
    assert.equal(depositKeyPair(MASTER).publicKey.toString('hex'), 'fbd7e3a1d7b1dd6dd78f9840a5ba282a5d0b61d77a98eda4a0431d4cc21c6204');
    assert.equal(depositWallet(MASTER, 0, 'mainnet').raw, '0:eff93ff359788a5a0c246b0065b330a63cb2a9b1a1383f91fe5a895f84e5139d');
    assert.equal(depositWallet(MASTER, 1, 'mainnet').raw, '0:ead82296386af56852a0c306c59fe4f017d5667bbd85325e9df26f5f12cefeff');
  });

  it('show the non-bounceable form: UQ on mainnet and sandbox, 0Q (testOnly) on testnet', () => {
    const main = depositWallet(MASTER, 0, 'mainnet');
    const sandbox = depositWallet(MASTER, 0, 'sandbox');
    const test = depositWallet(MASTER, 0, 'testnet');
    assert.equal(main.friendly, 'UQDv-T_zWXiKWgwkawBlszCmPLKpsaE4P5H-WolfhOUTnfIF');
    assert.equal(sandbox.friendly, main.friendly);
    assert.equal(test.friendly, '0QDv-T_zWXiKWgwkawBlszCmPLKpsaE4P5H-WolfhOUTnUmP');
    assert.equal(test.raw, main.raw);
    const parsed = Address.parseFriendly(test.friendly);
    assert.equal(parsed.isBounceable, false);
    assert.equal(parsed.isTestOnly, true);
    assert.equal(friendlyAddress(main.address, 'testnet'), test.friendly);
  });

  it('derive fast (cached key and code cell)', () => {
    const t = performance.now();
    for (let i = 0; i < 2000; i++) depositWallet(MASTER, i, 'mainnet');
    const perAddress = (performance.now() - t) / 2000;
    assert.ok(perAddress < 1, `deriving took ${perAddress} ms per address`);
  });

  it('reject bad input', () => {
    assert.throws(() => depositWallet(MASTER, -1, 'mainnet'), RangeError);
    assert.throws(() => depositWallet(MASTER, 1.5, 'mainnet'), RangeError);
    assert.throws(() => depositWallet(MASTER, MAX_DEPOSIT_INDEX + 1, 'mainnet'), RangeError);
    assert.throws(() => depositKeyPair(Buffer.alloc(4)), /at least/);
  });
});

describe('parseAddress', () => {
  const w = depositWallet(MASTER, 3, 'mainnet');
  it('accepts raw and every friendly form', () => {
    for (const s of [
      w.raw,
      w.raw.toUpperCase().replace('0X', '0x'),
      w.friendly,
      w.address.toString(),
      w.address.toString({ urlSafe: false }),
      w.address.toString({ testOnly: true, bounceable: false }),
    ]) {
      const a = parseAddress(s);
      assert.ok(a?.equals(w.address), s);
    }
    assert.equal(toRawAddress(w.friendly), w.raw);
  });

  it('returns null for anything else', () => {
    for (const s of ['', 'hello', '0:1234', '5:' + '0'.repeat(64), w.friendly.slice(0, -1) + 'A', 'UQ' + 'A'.repeat(46)]) {
      assert.equal(parseAddress(s), null, s);
    }
  });
});
