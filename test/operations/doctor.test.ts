// The doctor's pure checks: public URLs, jetton metadata decimals (TEP-64), the verdict on a master,
// the chain budget against the block rate (requests per block, headroom).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { beginCell } from '@ton/core';
import { onchainContent } from '../../src/chain/sandbox/jetton.ts';
import { contentDecimals, judgeMaster } from '../../src/operations/jettonMaster.ts';
import { checkApiKey, checkBudget, checkClock, checkPublicUrl, type BudgetSample } from '../../src/operations/doctor.ts';
import { connectionsAtMost, judgeConnectionRoom } from '../../src/db/connections.ts';

describe('clock', () => {
  const now = new Date('2026-11-27T12:00:00Z');
  const at = (seconds: number) => new Date(now.getTime() + seconds * 1000);
  it('a block older than now, or a few seconds "ahead", is a clock in step', () => {
    assert.deepEqual(checkClock(at(-4), now, 60), { check: 'clock', status: 'ok', detail: "the newest masterchain block is 4 s old by this machine's clock" });
    assert.equal(checkClock(at(9), now, 60).status, 'ok');
  });
  it("behind the chain: transfers out still land (signed by the chain's time); a warning, a fail from 30 s (webhooks' signAt refused by receivers)", () => {
    const behind = checkClock(at(25), now, 60);
    assert.equal(behind.status, 'warn');
    assert.match(
      behind.detail,
      /clock is 25 s behind the chain's: transfers out are still signed by the chain's time.*only 5 s to reach its receiver\. Synchronise the clock \(NTP\)$/,
    );
    const late = checkClock(at(30), now, 60);
    assert.equal(late.status, 'fail');
    assert.match(late.detail, /every webhook arrives older than its receiver's 30-s window/);
    assert.doesNotMatch(checkClock(at(90), now, 60).detail, /no money could leave/);
  });
  it('is skipped when the chain API does not answer', () => {
    assert.equal(checkClock(undefined, now, 60).status, 'skip');
  });
});

describe('database connections', () => {
  it('a process opens at most its pools: 54 for kassa start, 24 for --api, 50 for --worker', () => {
    assert.deepEqual(
      [connectionsAtMost({ api: true, worker: true }), connectionsAtMost({ api: true, worker: false }), connectionsAtMost({ api: false, worker: true })],
      [54, 24, 50],
    );
  });

  it('warns once another API process could be refused at its most', () => {
    const ok = judgeConnectionRoom({ max: 100, reserved: 3, inUse: 30 });
    assert.equal(ok.status, 'ok');
    assert.match(ok.detail, /^30 of 100 connections in use \(3 reserved for superusers\): 67 free/);
    assert.equal(judgeConnectionRoom({ max: 100, reserved: 3, inUse: 73 }).status, 'ok', '24 free: one more API process fits');
    const tight = judgeConnectionRoom({ max: 100, reserved: 3, inUse: 74 });
    assert.equal(tight.status, 'warn');
    assert.match(tight.detail, /23 free.*raise max_connections/);
    assert.match(judgeConnectionRoom({ max: 100, reserved: 3, inUse: 120 }).detail, /: 0 free/);
  });
});

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

describe('checkBudget', () => {
  const sample = (at: number, requests: bigint | null, block: number | null, readerRunning = true): BudgetSample => ({ at, requests, block, readerRunning });

  it("reports requests per block measured while the reader runs, less the doctor's own, and the headroom", () => {
    // 25 blocks, 40 requests of which 10 were the doctor's: 1.2 requests per block.
    const check = checkBudget({ tonNetwork: 'mainnet', tonApiRps: 10, tonApiKey: 'k' }, sample(0, 100n, 1000), sample(10_000, 140n, 1025), 10);
    assert.equal(check.status, 'ok');
    assert.match(check.detail, /1\.2 requests per block \(measured over 25 blocks/);
    assert.match(check.detail, /= 3 requests\/s; headroom 7 requests\/s/);
    assert.match(check.detail, /catching up at 3\.33× the chain/);
  });

  it("uses the reader's known cost when nothing can be measured", () => {
    const check = checkBudget({ tonNetwork: 'testnet', tonApiRps: 25, tonApiKey: 'k' }, sample(0, null, null, false), sample(3_000, null, null, false));
    assert.equal(check.status, 'ok');
    assert.match(check.detail, /2 requests per block \(the reader's cost while caught up; not measured/);
  });

  it('fails a budget a start would refuse, and one the measured cost exceeds; warns when catching up is slow', () => {
    const refused = checkBudget({ tonNetwork: 'mainnet', tonApiRps: 1, tonApiKey: null });
    assert.equal(refused.status, 'fail');
    assert.match(refused.detail, /TON_API_RPS=1 cannot keep up with mainnet.*Set TON_API_KEY/);
    const exceeded = checkBudget({ tonNetwork: 'mainnet', tonApiRps: 5, tonApiKey: 'k' }, sample(0, 0n, 0), sample(4_000, 30n, 10));
    assert.equal(exceeded.status, 'fail');
    assert.match(exceeded.detail, /3 requests per block .*cannot follow the chain at the measured cost/);
    assert.equal(checkBudget({ tonNetwork: 'mainnet', tonApiRps: 4, tonApiKey: 'k' }).status, 'warn');
  });

  it('TON_API_RPS=0 is no cap: ok off sandbox, skipped in sandbox', () => {
    assert.equal(checkBudget({ tonNetwork: 'mainnet', tonApiRps: 0, tonApiKey: null }).status, 'ok');
    assert.equal(checkBudget({ tonNetwork: 'sandbox', tonApiRps: 0, tonApiKey: null }).status, 'skip');
  });
});
