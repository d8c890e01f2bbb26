// `kassa doctor` and `kassa coins …` as real processes, against a running `kassa start` in sandbox
// mode: its emulated chain answers get_jetton_data for the sandbox's jetton masters over the same
// toncenter v2 JSON-RPC that mainnet's toncenter speaks.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Address } from '@ton/core';
import { SANDBOX_TONCENTER_PATH } from '../../src/chain/sandbox/path.ts';
import { sql, z } from '../../src/db/pool.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createTestStore } from '../helpers/factories.ts';
import { kassa, type CliResult } from '../helpers/cli.ts';
import { startKassaProcess, type KassaProcess } from '../helpers/kassaProcess.ts';
import { loadConfig } from '../../src/config.ts';
import { setMaster } from '../../src/operations/coins.ts';
import { TreasuryContract } from '@ton/sandbox';
import { getJettonWalletAddress } from '../../src/chain/client.ts';
import { doctorChainClient, runDoctor, SANDBOX_WALLET_CODE_HASH, type DoctorReport } from '../../src/operations/doctor.ts';
import { updateStore } from '../../src/stores/stores.ts';

function assertFails(result: CliResult, code: number, pattern: RegExp): void {
  assert.equal(result.code, code, `${result.stdout}${result.stderr}`);
  const lines = result.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one line on stderr, got: ${result.stderr}`);
  assert.match(lines[0]!, pattern);
}

const byName = (result: CliResult, name: string) => result.json.checks.find((check: any) => check.check === name);

describe('kassa doctor and kassa coins against a running sandbox', () => {
  let db: TestDatabase;
  let service: KassaProcess;
  let url: string;
  let env: Record<string, string>;
  let masters: Record<string, string>;
  let depositAddress: string;

  before(async () => {
    db = await createTestDatabase();
    service = await startKassaProcess({ env: { DATABASE_URL: db.url } });
    url = service.url;
    env = { DATABASE_URL: db.url, BASE_URL: url };
    const { token } = await createTestStore(db.pool, { name: 'Doctor', methods: 'TON/TON,USDT/TON,NOT/TON' });
    const created = await fetch(`${url}/v1/payments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } }),
    });
    assert.equal(created.status, 201);
    depositAddress = (await created.json()).paymentDetails.address;
    const rows = await db.pool.any(
      sql.type(
        z.object({ coin_symbol: z.string(), master_address: z.string() }),
      )`select coin_symbol, master_address from jetton_masters where network = 'sandbox'`,
    );
    masters = Object.fromEntries(rows.map((row) => [row.coin_symbol, row.master_address]));
  });
  after(async () => {
    await service?.stop();
    await db.drop();
  });

  it("doctor: one line per check; the sandbox's own BASE_URL (http, loopback) fails, the chain and every accepted coin pass; exit 1", async () => {
    const result = await kassa(['doctor'], env);
    assertFails(result, 1, /^kassa: doctor: 2 check\(s\) failed: BASE_URL, CHECKOUT_BASE_URL$/);
    const lines = result.stdout.trimEnd().split('\n');
    assert.equal(lines.length, result.json.checks.length + 2, 'one line per check, between the opening and closing lines');
    for (const line of lines.slice(1, -1)) assert.ok(JSON.parse(line.replace(/,$/, '')).check);
    assert.equal(result.json.ok, false);
    assert.equal(result.json.network, 'sandbox');
    assert.equal(byName(result, 'BASE_URL').status, 'fail');
    assert.match(byName(result, 'BASE_URL').detail, /not HTTPS; 127\.0\.0\.1 is a loopback address/);
    assert.equal(byName(result, 'TON_NETWORK').status, 'warn');
    assert.equal(byName(result, 'TON_API_KEY').status, 'skip');
    assert.equal(byName(result, 'chain API').status, 'ok');
    assert.equal(byName(result, 'chain API').chainTime, undefined, 'the check line carries no internal fields');
    assert.equal(byName(result, 'clock').status, 'ok', byName(result, 'clock').detail);
    assert.equal(byName(result, 'coin TON').status, 'ok');
    assert.equal(byName(result, 'coin USDT').status, 'ok');
    assert.match(byName(result, 'coin USDT').detail, /^USDT: decimals 6; wallet code [0-9a-f]{64}$/);
    assert.match(byName(result, 'coin NOT').detail, /^NOT: decimals 9; wallet code/);
    assert.equal(byName(result, 'coin DOGS'), undefined, 'only coins a store accepts');
    assert.equal(byName(result, 'KASSA_MASTER_KEY').status, 'ok');
    assert.match(byName(result, 'KASSA_MASTER_KEY').detail, /derives the deposit addresses issued/);
    assert.equal(byName(result, 'treasuries').status, 'warn');
    assert.match(byName(result, 'treasuries').detail, /without a treasury/);
    assert.equal(byName(result, 'chain budget').status, 'skip');
    assert.match(byName(result, 'chain budget').detail, /^TON_API_RPS=0: no cap .*requests per block/);
    // The server this test runs on: its own max_connections and what is open now (the service's pools among them).
    const room = byName(result, 'database connections');
    assert.ok(['ok', 'warn'].includes(room.status), JSON.stringify(room));
    const [, inUse, max] = /^(\d+) of (\d+) connections in use/.exec(room.detail) ?? [];
    assert.ok(Number(inUse) >= 2 && Number(max) >= Number(inUse), room.detail);
    assert.match(room.detail, /a kassa start process may open up to 54 \(--api 24, --worker 50\)/);
  });

  it('doctor: with a public https BASE_URL and the chain API at TON_API_URL, every check passes (exit 0)', async () => {
    const result = await kassa(['doctor'], {
      DATABASE_URL: db.url,
      BASE_URL: 'https://pay.example.com',
      TON_API_URL: `${url}${SANDBOX_TONCENTER_PATH}`,
      TON_API_KEY: 'unused-by-the-sandbox',
    });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(result.json.ok, true);
    assert.ok(!result.json.checks.some((check: any) => check.status === 'fail'));
    assert.ok(!result.stdout.includes('unused-by-the-sandbox'), 'the key is never printed');
  });

  it('doctor always prints its checks: configuration problems are failed checks, and the database is checked (answers, migrated, backups; never the embedded one on mainnet)', async () => {
    const mainnet = {
      DATABASE_URL: db.url,
      TON_NETWORK: 'mainnet',
      KASSA_MASTER_KEY: crypto.randomBytes(32).toString('hex'),
      TON_API_URL: `${url}${SANDBOX_TONCENTER_PATH}`,
      TON_API_KEY: 'k',
    };
    // No BASE_URL (a start would refuse it): the doctor still prints every check, that one failed.
    const result = await kassa(['doctor'], mainnet);
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /^kassa: doctor: \d+ check\(s\) failed: BASE_URL, /);
    assert.equal(result.stdout.trimEnd().split('\n').length, result.json.checks.length + 2, 'one line per check');
    assert.equal(byName(result, 'BASE_URL').status, 'fail');
    assert.match(byName(result, 'BASE_URL').detail, /^BASE_URL is required when TON_NETWORK=mainnet/);
    assert.equal(byName(result, 'chain API').status, 'ok');
    assert.equal(byName(result, 'database').status, 'ok');
    assert.match(byName(result, 'database').detail, /^DATABASE_URL answers; every migration is applied$/);
    assert.match(byName(result, 'database backups').detail, /WAL archiving is \w+.*pg_dump/);
    assert.ok(byName(result, 'treasuries'), 'the checks that read the database ran');
    // Without DATABASE_URL on mainnet: the embedded database is not opened, the database check says why.
    const { DATABASE_URL: _unused, ...embedded } = mainnet;
    const refused = await kassa(['doctor'], { ...embedded, BASE_URL: 'https://pay.example.com' });
    assert.equal(refused.code, 1, refused.stderr);
    assert.equal(byName(refused, 'database').status, 'fail');
    assert.match(byName(refused, 'database').detail, /^not opened: DATABASE_URL is required when TON_NETWORK=mainnet/);
    assert.equal(byName(refused, 'treasuries'), undefined);
    assert.equal(byName(refused, 'BASE_URL').status, 'ok');
  });

  it('doctor fails a master whose decimals differ, a coin with no master, a chain API that does not answer, and a key that does not derive the issued addresses', async () => {
    const config = loadConfig(env);
    const check = (report: DoctorReport, name: string) => report.checks.find((c) => c.check === name)!;
    await db.pool.query(sql.unsafe`update jetton_masters set master_address = ${masters.NOT!} where coin_symbol = 'USDT' and network = 'sandbox'`);
    await db.pool.query(sql.unsafe`delete from jetton_masters where coin_symbol = 'NOT' and network = 'sandbox'`);
    try {
      const report = await runDoctor(config, db.pool);
      assert.equal(report.ok, false);
      assert.equal(check(report, 'coin USDT').status, 'fail');
      assert.match(check(report, 'coin USDT').detail, /decimals 9 on chain, 6 in the database/);
      assert.equal(check(report, 'coin NOT').status, 'fail');
      assert.match(
        check(report, 'coin NOT').detail,
        /no jetton master on sandbox; a store accepts it \(kassa coins set-master NOT --network sandbox ADDRESS\)/,
      );
    } finally {
      await db.pool.query(sql.unsafe`update jetton_masters set master_address = ${masters.USDT!} where coin_symbol = 'USDT' and network = 'sandbox'`);
      await db.pool.query(sql.unsafe`insert into jetton_masters (coin_symbol, network, master_address) values ('NOT', 'sandbox', ${masters.NOT!})`);
    }
    const unreachable = await runDoctor(loadConfig({ ...env, TON_API_URL: 'http://127.0.0.1:9' }), db.pool);
    assert.equal(check(unreachable, 'chain API').status, 'fail');
    assert.equal(check(unreachable, 'coins').status, 'fail');
    const otherKey = await runDoctor(loadConfig({ ...env, KASSA_MASTER_KEY: crypto.randomBytes(32).toString('hex') }), db.pool);
    assert.equal(check(otherKey, 'KASSA_MASTER_KEY').status, 'fail');
    assert.match(check(otherKey, 'KASSA_MASTER_KEY').detail, /does not derive the deposit addresses already issued/);
  });

  it('doctor fails the gas wallet when its balance is short of the top-ups planned and the jetton transfers waiting for gas', async () => {
    const config = loadConfig(env);
    const payment = await db.pool.one(
      sql.type(z.object({ id: z.string(), store_id: z.string(), address: z.string() }))`
        select p.id, p.store_id, da.address from payments p join deposit_addresses da on da.payment_id = p.id order by p.created_at desc limit 1
      `,
    );
    const gas = await db.pool.oneFirst(sql.type(z.object({ address: z.string() }))`select address from gas_wallets where network = 'sandbox'`);
    const treasury = `0:${'ab'.repeat(32)}`;
    await db.pool.query(sql.unsafe`
      insert into outgoing_transfers (kind, reason, payment_id, store_id, from_address, to_address, coin_symbol, amount, amount_base_units)
      values ('gas_top_up', 'gas', ${payment.id}, ${payment.store_id}, ${gas}, ${payment.address}, 'TON', 5000, 5000000000000),
             ('refund', 'refund', ${payment.id}, ${payment.store_id}, ${payment.address}, ${treasury}, 'USDT', 1, 1000000)
    `);
    try {
      const report = await runDoctor(config, db.pool);
      const gasCheck = report.checks.find((c) => c.check === 'gas wallet')!;
      assert.equal(gasCheck.status, 'fail', gasCheck.detail);
      assert.match(
        gasCheck.detail,
        /holds [\d.]+ TON, less than the 5000\.077 TON needed: 1 top-up\(s\) planned \(5000 TON\), 0 jetton sweep\(s\) and 1 jetton refund\(s\) waiting for gas; fund it/,
      );
    } finally {
      await db.pool.query(sql.unsafe`delete from outgoing_transfers where payment_id = ${payment.id}`);
    }
  });

  it('coins list: every coin with its master per network, null where there is none', async () => {
    const result = await kassa(['coins', 'list'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim().split('\n').length, 1);
    const bySymbol = Object.fromEntries(result.json.data.map((coin: any) => [coin.symbol, coin]));
    assert.deepEqual(Object.keys(bySymbol).sort(), ['BLUM', 'BUILD', 'DOGS', 'DUST', 'DYOR', 'NOT', 'STON', 'TON', 'USDT', 'XAUt0']);
    assert.equal(bySymbol.TON.kind, 'native');
    assert.equal(bySymbol.TON.masters, undefined);
    assert.deepEqual(bySymbol.USDT.masters.mainnet, {
      address: 'EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs',
      raw: '0:b113a994b5024a16719f69139328eb759596c38a25f59028b146fecdc3621dfe',
    });
    assert.equal(bySymbol.USDT.masters.sandbox.raw, masters.USDT);
    // The masters added from tonkeeper/ton-assets (migration 000013), in the forms their issuers publish.
    assert.deepEqual(Object.fromEntries(['BUILD', 'BLUM', 'DUST', 'DYOR', 'XAUt0'].map((symbol) => [symbol, bySymbol[symbol].masters.mainnet.address])), {
      BUILD: 'EQBYnUrIlwBrWqp_rl-VxeSBvTR2VmTfC4ManQ657n_BUILD',
      BLUM: 'EQCAj5oiRRrXokYsg_B-e0KG9xMwh5upr5I8HQzErm0_BLUM',
      DUST: 'EQBlqsm144Dq6SjbPI4jjZvA1hqTIP3CvHovbIfW_t-SCALE',
      DYOR: 'EQCQZpelevHNsbw5IUtwSa4Cs8kqWww0KsYeDri9kwS18eCz',
      XAUt0: 'EQA1R_LuQCLHlMgOo1S4G7Y7W1cd0FrAkbA10Zq7rddKxi9k',
    });
    assert.equal(bySymbol.NOT.masters.testnet, null, 'no testnet masters are shipped');
    assert.equal(bySymbol.XAUt0.decimals, 6);
    assert.equal(bySymbol.DYOR.decimals, 15);
    assert.equal(bySymbol.TON.coingeckoId, 'the-open-network');
    assert.equal(bySymbol.USDT.coingeckoId, 'tether');
    assert.equal(bySymbol.DYOR.coingeckoId, null, 'no id known: not priced from fiat until an operator sets one');
  });

  it('coins set-price-id sets and clears the id the second price source knows a coin by', async () => {
    const set = await kassa(['coins', 'set-price-id', 'BUILD', 'build-3'], env);
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(set.json, { coin: 'BUILD', coingeckoId: 'build-3', previous: null });
    const cleared = await kassa(['coins', 'set-price-id', 'BUILD', 'none'], env);
    assert.deepEqual(cleared.json, { coin: 'BUILD', coingeckoId: null, previous: 'build-3' });
    assertFails(await kassa(['coins', 'set-price-id', 'BUILD', 'Not An Id'], env), 1, /is not a CoinGecko coin id/);
    assertFails(await kassa(['coins', 'set-price-id', 'FOO', 'foo'], env), 1, /no coin "FOO"/);
    assertFails(await kassa(['coins', 'set-price-id', 'BUILD'], env), 2, /./);
  });

  it('coins set-master verifies the master on the configured chain before storing it', async () => {
    const friendly = (raw: string) => Address.parseRaw(raw).toString({ urlSafe: true, bounceable: true });
    const stored = async (coin: string) =>
      db.pool.oneFirst(
        sql.type(z.object({ m: z.string() }))`select master_address as m from jetton_masters where coin_symbol = ${coin} and network = 'sandbox'`,
      );

    assertFails(
      await kassa(['coins', 'set-master', 'USDT', '--network', 'sandbox', friendly(masters.NOT!)], env),
      1,
      /not stored: USDT: decimals 9 on chain, 6 in the database/,
    );
    const chain = { network: 'sandbox' as const, client: doctorChainClient(loadConfig(env)) };
    const refused = (coin: string, network: 'mainnet' | 'testnet' | 'sandbox', address: string) => setMaster(db.pool, { coin, network, address }, chain);
    await assert.rejects(refused('USDT', 'sandbox', depositAddress), /not stored: USDT: get_jetton_data failed/);
    await assert.rejects(refused('USDT', 'mainnet', friendly(masters.USDT!)), /TON_NETWORK is sandbox: a mainnet master can be verified only on mainnet/);
    await assert.rejects(
      refused('USDT', 'mainnet', Address.parseRaw(masters.USDT!).toString({ testOnly: true })),
      /is a testnet \(test-only\) address, not a mainnet one/,
    );
    await assert.rejects(refused('TON', 'sandbox', friendly(masters.USDT!)), /TON is the chain's own coin/);
    await assert.rejects(refused('FOO', 'sandbox', friendly(masters.USDT!)), /no coin "FOO"/);
    await assert.rejects(refused('USDT', 'sandbox', 'not-an-address'), /is not a TON address/);
    assert.equal(await stored('USDT'), masters.USDT);
    assertFails(await kassa(['coins', 'set-master', 'USDT', friendly(masters.USDT!)], env), 2, /--network mainnet\|testnet\|sandbox is required/);

    await db.pool.query(sql.unsafe`delete from jetton_masters where coin_symbol = 'XAUt0' and network = 'sandbox'`);
    const result = await kassa(['coins', 'set-master', 'XAUt0', '--network', 'sandbox', friendly(masters.XAUt0!)], env);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.json.coin, 'XAUt0');
    assert.equal(result.json.previous, null);
    assert.equal(result.json.master.raw, masters.XAUt0);
    assert.match(result.json.verified, /^XAUt0: decimals 6; wallet code [0-9a-f]{64}$/);
    assert.equal(await stored('XAUt0'), masters.XAUt0);

    // DYOR: 15 decimals in the catalogue (000013) and in its sandbox master's on-chain metadata.
    const dyor = await kassa(['coins', 'set-master', 'DYOR', '--network', 'sandbox', friendly(masters.DYOR!)], env);
    assert.equal(dyor.code, 0, dyor.stderr);
    assert.match(dyor.json.verified, /^DYOR: decimals 15; wallet code [0-9a-f]{64}$/);
    assert.equal(dyor.json.warning, undefined);
    // A catalogue that said 9, as it did before 000013, is refused by the chain's metadata.
    await db.pool.query(sql.unsafe`update coins set decimals = 9 where symbol = 'DYOR'`);
    try {
      assertFails(
        await kassa(['coins', 'set-master', 'DYOR', '--network', 'sandbox', friendly(masters.DYOR!)], env),
        1,
        /not stored: DYOR: decimals 15 on chain, 9 in the database/,
      );
    } finally {
      await db.pool.query(sql.unsafe`update coins set decimals = 15 where symbol = 'DYOR'`);
    }
  });

  it('doctor warns when a treasury customers pay by reference is not a wallet Kassa knows: never deployed, a jetton wallet; a wallet passes', async () => {
    assert.equal(TreasuryContract.code.hash().toString('hex'), SANDBOX_WALLET_CODE_HASH, "the sandbox's test wallet is the one the doctor knows");
    const config = loadConfig(env);
    const wallet = async () => Address.parse(((await (await fetch(`${url}/sandbox/v1/wallets`, { method: 'POST' })).json()) as any).address).toRawString();
    const good = await wallet();
    const owner = await wallet();
    // A sandbox wallet holds USDT, so its jetton wallet is deployed: a contract, not a wallet.
    const jettonWallet = (await getJettonWalletAddress(doctorChainClient(config), masters.USDT!, owner)).toRawString();
    const uninit = `0:${crypto.randomBytes(32).toString('hex')}`;
    const stores = [];
    for (const [name, treasury] of [
      ['Good', good],
      ['Jetton', jettonWallet],
      ['Fresh', uninit],
    ] as const) {
      const { id } = await createTestStore(db.pool, { name, methods: 'TON/TON' });
      await updateStore(db.pool, id, { treasury, settlement: 'treasury' });
      stores.push(id);
    }
    try {
      const report = await runDoctor(config, db.pool);
      const check = (r: DoctorReport, name: string) => r.checks.find((c) => c.check === name)!;
      const treasuries = check(report, 'treasury wallets');
      assert.equal(treasuries.status, 'warn', treasuries.detail);
      assert.match(treasuries.detail, /^2 of 3 treasury\(ies\) customers pay by reference is not a wallet Kassa knows/);
      assert.match(treasuries.detail, new RegExp(`${jettonWallet} of Jetton \\(${stores[1]}\\): a jetton wallet`));
      assert.match(treasuries.detail, new RegExp(`${uninit} of Fresh \\(${stores[2]}\\): not deployed \\(uninit\\)`));
      assert.doesNotMatch(treasuries.detail, new RegExp(good));
      assert.ok(
        report.checks.every((c) => c.check !== 'treasury wallets' || c.status !== 'fail'),
        'a warning: the doctor still passes',
      );
      // The known wallet alone: ok.
      for (const id of stores.slice(1)) await updateStore(db.pool, id, { settlement: 'deposit' });
      const alone = (await runDoctor(config, db.pool)).checks.find((c) => c.check === 'treasury wallets')!;
      assert.equal(alone.status, 'ok', alone.detail);
    } finally {
      for (const id of stores) await updateStore(db.pool, id, { settlement: 'deposit' });
    }
  });
});
