import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Address } from '@ton/core';
import { WalletContractV4, WalletContractV5R1 } from '@ton/ton';
import {
  MAX_DEPOSIT_INDEX,
  MAX_DEPOSIT_INDEX_V5,
  NETWORK_GLOBAL_ID,
  WALLET_ID_BASE,
  derivedWallet,
  parseNetworkAddress,
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

  it('derives 2,000 distinct addresses, each the same when derived again (speed is bench/, not a test)', () => {
    const addresses = new Set<string>();
    for (let i = 0; i < 2000; i++) addresses.add(depositWallet(MASTER, i, 'mainnet').raw);
    assert.equal(addresses.size, 2000);
    assert.equal(depositWallet(MASTER, 1999, 'mainnet').raw, depositWallet(MASTER, 1999, 'mainnet').raw);
  });

  it('reject bad input', () => {
    assert.throws(() => depositWallet(MASTER, -1, 'mainnet'), RangeError);
    assert.throws(() => depositWallet(MASTER, 1.5, 'mainnet'), RangeError);
    assert.throws(() => depositWallet(MASTER, MAX_DEPOSIT_INDEX + 1, 'mainnet'), RangeError);
    assert.throws(() => depositKeyPair(Buffer.alloc(4)), /at least/);
  });
});

describe('deposit addresses, derivation v5r1-1 (new payments)', () => {
  const { publicKey } = depositKeyPair(MASTER);

  it('equal WalletContractV5R1.create with walletId {networkGlobalId, context: index}', () => {
    for (const network of ['mainnet', 'testnet', 'sandbox'] as const) {
      for (const index of [0, 1, 2, 17, 4096, 1_000_000, MAX_DEPOSIT_INDEX_V5]) {
        const w = derivedWallet(publicKey, index, network, 'v5r1-1');
        const expected = WalletContractV5R1.create({ workchain: 0, publicKey, walletId: { networkGlobalId: NETWORK_GLOBAL_ID[network], context: index } });
        assert.ok(w.address.equals(expected.address), `${network} ${index}`);
        assert.ok(
          w.address.equals(
            WalletContractV5R1.create({ workchain: 0, publicKey, walletId: { networkGlobalId: w.networkGlobalId!, context: w.context! } }).address,
          ),
        );
        assert.equal(w.walletVersion, 'v5r1');
        assert.equal(w.walletId, (NETWORK_GLOBAL_ID[network] ^ index) | 0);
      }
    }
  });

  it("differ per network (the sandbox shares testnet's id) and from the v4r2 derivation", () => {
    const main = derivedWallet(publicKey, 7, 'mainnet', 'v5r1-1');
    const test = derivedWallet(publicKey, 7, 'testnet', 'v5r1-1');
    assert.notEqual(main.raw, test.raw);
    assert.equal(derivedWallet(publicKey, 7, 'sandbox', 'v5r1-1').raw, test.raw);
    assert.notEqual(main.raw, depositWallet(MASTER, 7, 'mainnet').raw);
    assert.deepEqual(NETWORK_GLOBAL_ID, { mainnet: -239, testnet: -3, sandbox: -3 });
  });

  it('are frozen (known vectors)', () => {
    assert.equal(derivedWallet(publicKey, 0, 'mainnet', 'v5r1-1').raw, '0:786075e23f93a0318353f531f8310a9463a35dd68c7fa5fafbacfed4ed9ba60d');
    assert.equal(derivedWallet(publicKey, 1, 'mainnet', 'v5r1-1').raw, '0:aba5e9e115fd76d70b5b53d07f1c8c2dbe6b9531accf143073f31ea6a300ca77');
    assert.equal(derivedWallet(publicKey, 0, 'testnet', 'v5r1-1').raw, '0:5dc146a7fc187356db36ba6edf214cb8344e432c5da8a44a5a9eff954702c7ec');
    assert.equal(derivedWallet(publicKey, 1, 'testnet', 'v5r1-1').walletId, -4);
  });

  it("the v4r2-1 derivation from the public key is the master key's", () => {
    for (const index of [0, 5, 99]) assert.equal(derivedWallet(publicKey, index, 'mainnet', 'v4r2-1').raw, depositWallet(MASTER, index, 'mainnet').raw);
  });

  it('reject an index beyond the 31-bit context and a bad public key', () => {
    assert.throws(() => derivedWallet(publicKey, MAX_DEPOSIT_INDEX_V5 + 1, 'mainnet', 'v5r1-1'), RangeError);
    assert.throws(() => derivedWallet(publicKey, -1, 'mainnet', 'v5r1-1'), RangeError);
    assert.throws(() => derivedWallet(Buffer.alloc(31), 0, 'mainnet', 'v5r1-1'), /32 bytes/);
  });
});

describe('parseNetworkAddress', () => {
  const w = depositWallet(MASTER, 3, 'mainnet');
  const testOnly = w.address.toString({ testOnly: true });
  const mainnetForm = w.address.toString();
  it("takes raw anywhere, each network's own friendly form, and either on the sandbox", () => {
    for (const [value, network] of [
      [w.raw, 'mainnet'],
      [w.raw, 'testnet'],
      [mainnetForm, 'mainnet'],
      [testOnly, 'testnet'],
      [testOnly, 'sandbox'],
      [mainnetForm, 'sandbox'],
    ] as const) {
      const parsed = parseNetworkAddress(value, network);
      assert.ok('address' in parsed && parsed.address.equals(w.address), `${value} on ${network}`);
    }
  });
  it("refuses the other network's friendly form and non-addresses", () => {
    assert.match((parseNetworkAddress(testOnly, 'mainnet') as { problem: string }).problem, /testnet-only/);
    assert.match((parseNetworkAddress(mainnetForm, 'testnet') as { problem: string }).problem, /mainnet address/);
    assert.ok('problem' in parseNetworkAddress('0:12', 'sandbox'));
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
    for (const s of ['', 'hello', '0:1234', `5:${'0'.repeat(64)}`, `${w.friendly.slice(0, -1)}A`, `UQ${'A'.repeat(46)}`]) {
      assert.equal(parseAddress(s), null, s);
    }
  });
});
