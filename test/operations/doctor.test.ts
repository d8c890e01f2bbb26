// The doctor's pure checks: public URLs, jetton metadata decimals (TEP-64), the verdict on a master.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { beginCell } from '@ton/core';
import { onchainContent } from '../../src/chain/sandbox/jetton.ts';
import { contentDecimals, judgeMaster } from '../../src/operations/jettonMaster.ts';
import { checkApiKey, checkPublicUrl } from '../../src/operations/doctor.ts';

describe('checkPublicUrl', () => {
  it('passes a public https URL', () => {
    assert.equal(checkPublicUrl('BASE_URL', 'https://pay.example.com').status, 'ok');
    assert.equal(checkPublicUrl('BASE_URL', 'https://203.0.113.9.nip.io/kassa').status, 'ok');
  });
  it('fails http, bind addresses, loopback, private addresses and localhost', () => {
    for (const [url, reason] of [
      ['http://pay.example.com', /not HTTPS/],
      ['https://0.0.0.0:3000', /0\.0\.0\.0 is a bind address/],
      ['https://[::]:3000', /:: is a bind address/],
      ['https://127.0.0.1:3000', /loopback/],
      ['https://[::1]', /loopback/],
      ['https://10.1.2.3', /private network/],
      ['https://localhost', /local host/],
    ] as const) {
      const check = checkPublicUrl('BASE_URL', url);
      assert.equal(check.status, 'fail', url);
      assert.match(check.detail, reason);
    }
  });
});

describe('checkApiKey', () => {
  it('needs TON_API_KEY off sandbox and never shows it', () => {
    assert.equal(checkApiKey({ tonNetwork: 'mainnet', tonApiKey: null }).status, 'fail');
    const set = checkApiKey({ tonNetwork: 'mainnet', tonApiKey: 'secret-key' });
    assert.equal(set.status, 'ok');
    assert.ok(!set.detail.includes('secret-key'));
    assert.equal(checkApiKey({ tonNetwork: 'sandbox', tonApiKey: null }).status, 'skip');
  });
});

describe('contentDecimals (TEP-64)', () => {
  it('reads on-chain decimals', () => {
    assert.deepEqual(contentDecimals(onchainContent({ name: 'Tether USD', symbol: 'USDT', decimals: '6' })), { source: 'on-chain', decimals: 6 });
  });
  it('reads on-chain decimals beside a uri (semi-chain, as the USDT master keeps them): the chain decides, no URL is fetched', () => {
    assert.deepEqual(contentDecimals(onchainContent({ uri: 'https://tether.to/usdt-ton.json', decimals: '6' })), { source: 'on-chain', decimals: 6 });
    assert.deepEqual(contentDecimals(onchainContent({ uri: 'https://storage.dyor.io/dyor.json', decimals: '15' })), { source: 'on-chain', decimals: 15 });
  });
  it('defaults to 9 for on-chain content without decimals or uri', () => {
    assert.deepEqual(contentDecimals(onchainContent({ name: 'X', symbol: 'X' })), { source: 'default', decimals: 9 });
  });
  it('reports off-chain and semi-chain content as not verifiable offline', () => {
    const offchain = beginCell().storeUint(1, 8).storeStringTail('https://issuer.example/jetton.json').endCell();
    assert.deepEqual(contentDecimals(offchain), { source: 'off-chain', uri: 'https://issuer.example/jetton.json' });
    assert.deepEqual(contentDecimals(onchainContent({ uri: 'ipfs://abc' })), { source: 'off-chain', uri: 'ipfs://abc' });
  });
  it('reports unreadable content', () => {
    assert.equal(contentDecimals(beginCell().endCell()).source, 'unreadable');
    assert.equal(contentDecimals(beginCell().storeUint(7, 8).endCell()).source, 'unreadable');
    assert.equal(contentDecimals(onchainContent({ decimals: 'six' })).source, 'unreadable');
  });
});

describe('judgeMaster', () => {
  const hash = 'ab'.repeat(32);
  it('passes matching decimals with a wallet code', () => {
    const verdict = judgeMaster('USDT', 6, { decimals: { source: 'on-chain', decimals: 6 }, walletCodeHash: hash, walletAddressAnswered: true });
    assert.deepEqual(verdict, { ok: true, detail: `USDT: decimals 6; wallet code ${hash}`, decimalsUnverified: false });
  });
  it('fails other decimals, no wallet code, no wallet address', () => {
    assert.match(
      judgeMaster('USDT', 6, { decimals: { source: 'default', decimals: 9 }, walletCodeHash: hash, walletAddressAnswered: true }).detail,
      /decimals 9 on chain, 6 in the database/,
    );
    const broken = judgeMaster('NOT', 9, { decimals: { source: 'on-chain', decimals: 9 }, walletCodeHash: null, walletAddressAnswered: false });
    assert.equal(broken.ok, false);
    assert.match(broken.detail, /no jetton wallet code.*get_wallet_address gave no address/);
  });
  it('passes off-chain metadata with a warning flag', () => {
    const verdict = judgeMaster('USDT', 6, {
      decimals: { source: 'off-chain', uri: 'https://tether.to/usdt-ton.json' },
      walletCodeHash: hash,
      walletAddressAnswered: true,
    });
    assert.equal(verdict.ok, true);
    assert.equal(verdict.decimalsUnverified, true);
    assert.match(verdict.detail, /decimals not verifiable offline \(metadata at https:\/\/tether\.to\/usdt-ton\.json; the database says 6\)/);
  });
});
