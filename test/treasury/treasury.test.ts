// Issue 12, first slice, on the real sandbox chain: store treasuries, an API process that holds only
// the deposit public key, network-bound v5r1 deposit addresses, recovery of a deposit's money by
// hand from `kassa deposits export` with @ton/ton alone, and GET /sandbox/v1/accounts/{address}.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Address, beginCell, internal, SendMode, toNano } from '@ton/core';
import { keyPairFromSeed } from '@ton/crypto';
import { TonClient, WalletContractV5R1 } from '@ton/ton';
import { depositKeyPair, derivedWallet } from '../../src/chain/addresses.ts';
import { keyProblems, loadConfig } from '../../src/config.ts';
import { sql, z } from '../../src/db/pool.ts';
import { assertFails, kassa } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createTestStore } from '../helpers/factories.ts';
import { call, type RunningService, startTestService, waitFor } from '../helpers/service.ts';

const API_ONLY = { api: true, worker: false };
const MASTER_HEX = '5a'.repeat(32);
const MASTER = Buffer.from(MASTER_HEX, 'hex');
const PUBLIC_HEX = depositKeyPair(MASTER).publicKey.toString('hex');
// The sandbox's jetton masters, and so the customer's, are deterministic; this owner is not Kassa's.
const TREASURY_MAINNET = 'EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N';
const TREASURY_RAW = Address.parse(TREASURY_MAINNET).toRawString();
const TREASURY_TESTNET = Address.parse(TREASURY_MAINNET).toString({ testOnly: true, bounceable: false });

/** A wallet nobody has deployed (a fresh key): where recovered money is sent. */
function freshRecipient(): Address {
  return WalletContractV5R1.create({
    publicKey: keyPairFromSeed(Buffer.alloc(32, Math.floor(Math.random() * 255))).publicKey,
    walletId: { networkGlobalId: -3, context: Math.floor(Math.random() * 1e6) },
  }).address;
}

describe('store treasury (kassa store create/update)', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db.drop());

  it('create --treasury stores the raw form; update --treasury changes it; both print the store', async () => {
    const env = { DATABASE_URL: db.url };
    const created = await kassa(['store', 'create', '--name', 'Shop', '--methods', 'TON/TON', '--treasury', TREASURY_MAINNET], env);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.json.treasury, TREASURY_RAW);
    assert.equal(created.json.name, 'Shop');
    const plain = await kassa(['store', 'create', '--name', 'No treasury'], env);
    assert.equal(plain.json.treasury, null);
    const updated = await kassa(['store', 'update', plain.json.id, '--treasury', TREASURY_RAW.toUpperCase().replace('0X', '0x')], env);
    assert.equal(updated.code, 0, updated.stderr);
    assert.deepEqual(updated.json, { ...plain.json, treasury: TREASURY_RAW, methods: updated.json.methods });
    assert.equal(updated.json.methods.length, 2);
    const stored = await db.pool.oneFirst(sql.type(z.object({ treasury: z.string() }))`select treasury from stores where id = ${plain.json.id}`);
    assert.equal(stored, TREASURY_RAW);
  });

  it("refuses a wrong address, the other network's form, an unknown store and an empty update, in one line", async () => {
    const env = { DATABASE_URL: db.url };
    const store = (await kassa(['store', 'create', '--name', 'S'], env)).json;
    assertFails(await kassa(['store', 'create', '--name', 'X', '--treasury', 'not-an-address'], env), /invalid treasury "not-an-address": not a TON address/);
    assertFails(await kassa(['store', 'update', store.id, '--treasury', '0:abc'], env), /invalid treasury/);
    assertFails(await kassa(['store', 'update', '00000000-0000-4000-8000-000000000000', '--treasury', TREASURY_RAW], env), /no store with id/);
    assertFails(await kassa(['store', 'update', store.id], env), /nothing to change/);
    assertFails(await kassa(['store', 'update', '--treasury', TREASURY_RAW], env), /expected 1 argument/);
    const mainnet = { ...env, TON_NETWORK: 'mainnet', KASSA_MASTER_KEY: MASTER_HEX, BASE_URL: 'https://pay.example.com' };
    assertFails(await kassa(['store', 'update', store.id, '--treasury', TREASURY_TESTNET], mainnet), /testnet-only address cannot be used on mainnet/);
    const testnet = { ...env, TON_NETWORK: 'testnet', KASSA_MASTER_KEY: MASTER_HEX, BASE_URL: 'https://pay.example.com' };
    assertFails(await kassa(['store', 'update', store.id, '--treasury', TREASURY_MAINNET], testnet), /mainnet address cannot be used on testnet/);
    const ok = await kassa(['store', 'update', store.id, '--treasury', TREASURY_TESTNET], testnet);
    assert.equal(ok.json.treasury, TREASURY_RAW, ok.stderr);
  });
});

describe('an API that holds no spending key', () => {
  it("kassa keys deposit-public prints the master key's deposit public key, or the sandbox's generated one", async () => {
    const fromMaster = await kassa(['keys', 'deposit-public'], { TON_NETWORK: 'testnet', KASSA_MASTER_KEY: MASTER_HEX, BASE_URL: 'https://pay.example.com' });
    assert.equal(fromMaster.code, 0, fromMaster.stderr);
    assert.deepEqual(fromMaster.json, { publicKey: PUBLIC_HEX });
    const db = await createTestDatabase();
    try {
      const first = await kassa(['keys', 'deposit-public'], { DATABASE_URL: db.url });
      assert.equal(first.code, 0, first.stderr);
      const secret = await db.pool.oneFirst(
        sql.type(z.object({ secret: z.instanceof(Buffer) }))`select secret from service_secrets where name = 'deposit_master_key'`,
      );
      assert.equal(first.json.publicKey, depositKeyPair(secret).publicKey.toString('hex'));
      assert.deepEqual((await kassa(['keys', 'deposit-public'], { DATABASE_URL: db.url })).json, first.json);
    } finally {
      await db.drop();
    }
  });

  it('config: off sandbox the API needs one of the two keys, the worker the master key; a mismatched pair is refused', async () => {
    assert.throws(
      () => loadConfig({ TON_NETWORK: 'mainnet', BASE_URL: 'https://pay.example.com' }),
      /KASSA_MASTER_KEY \(or, for an API-only process, KASSA_DEPOSIT_PUBLIC_KEY\) is required/,
    );
    assert.throws(
      () => loadConfig({ TON_NETWORK: 'mainnet', BASE_URL: 'https://pay.example.com', KASSA_DEPOSIT_PUBLIC_KEY: 'xyz' }),
      /KASSA_DEPOSIT_PUBLIC_KEY must be 64 hex/,
    );
    const apiOnly = loadConfig({ TON_NETWORK: 'mainnet', BASE_URL: 'https://pay.example.com', KASSA_DEPOSIT_PUBLIC_KEY: PUBLIC_HEX });
    assert.deepEqual(keyProblems(apiOnly, { api: true, worker: false }), []);
    assert.match(keyProblems(apiOnly, { api: true, worker: true }).join(), /^KASSA_MASTER_KEY is required to run the worker/);
    assert.equal(keyProblems(apiOnly, { api: false, worker: true }).length, 1);
    assert.deepEqual(keyProblems(loadConfig({}), { api: true, worker: true }), []); // the sandbox default needs nothing
    const db = await createTestDatabase();
    try {
      await assert.rejects(
        startTestService({ DATABASE_URL: db.url, KASSA_MASTER_KEY: MASTER_HEX, KASSA_DEPOSIT_PUBLIC_KEY: 'ab'.repeat(32) }, API_ONLY),
        /KASSA_DEPOSIT_PUBLIC_KEY is not the public key of KASSA_MASTER_KEY/,
      );
      // the CLI refuses the worker without the master key, in one line
      assertFails(
        await kassa(['start', '--worker'], {
          DATABASE_URL: db.url,
          TON_NETWORK: 'testnet',
          BASE_URL: 'https://pay.example.com',
          KASSA_DEPOSIT_PUBLIC_KEY: PUBLIC_HEX,
        }),
        /KASSA_MASTER_KEY is required to run the worker/,
      );
    } finally {
      await db.drop();
    }
  });

  it('an API process with only the public key (testnet) makes the addresses the master key derives for testnet', async () => {
    const db = await createTestDatabase();
    const env = {
      DATABASE_URL: db.url,
      TON_NETWORK: 'testnet',
      BASE_URL: 'https://pay.example.com',
      TON_API_URL: 'http://127.0.0.1:9',
      // A budget that can follow testnet (a start refuses one that cannot).
      TON_API_RPS: '10',
      KASSA_DEPOSIT_PUBLIC_KEY: PUBLIC_HEX,
    };
    assert.equal(loadConfig(env).masterKey, null);
    const service = await startTestService(env, API_ONLY);
    try {
      const token = (await createTestStore(db.pool, { methods: 'TON/TON' })).token;
      const created = await call(service.url!, 'POST', '/v1/payments', token, {
        amount: '0.5',
        currency: 'TON',
        payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] },
      });
      assert.equal(created.status, 201, JSON.stringify(created.json));
      const row = await db.pool.one(sql.type(
        z.object({ derivation_index: z.string(), address: z.string(), address_friendly: z.string(), derivation: z.string() }),
      )`
        select derivation_index::text, address, address_friendly, derivation from deposit_addresses where payment_id = ${created.json.id}
      `);
      const expected = depositKeyPair(MASTER);
      const wallet = WalletContractV5R1.create({
        workchain: 0,
        publicKey: expected.publicKey,
        walletId: { networkGlobalId: -3, context: Number(row.derivation_index) },
      });
      assert.equal(row.derivation, 'v5r1-1');
      assert.equal(row.address, wallet.address.toRawString());
      assert.equal(created.json.paymentDetails.address, wallet.address.toString({ testOnly: true, bounceable: false }));
      assert.match(created.json.paymentDetails.address, /^0Q/);
      // the same index on mainnet is another address: addresses are bound to their network
      assert.notEqual(derivedWallet(expected.publicKey, Number(row.derivation_index), 'mainnet', 'v5r1-1').raw, row.address);
      assert.equal(await db.pool.exists(sql.unsafe`select 1 from service_secrets where name = 'deposit_master_key'`), false);
    } finally {
      await service.stop();
      await db.drop();
    }
  });

  it('an API process with only the public key (sandbox) makes addresses the master key can spend', async () => {
    const db = await createTestDatabase();
    const service = await startTestService({ DATABASE_URL: db.url, KASSA_DEPOSIT_PUBLIC_KEY: PUBLIC_HEX }, API_ONLY);
    try {
      const token = (await createTestStore(db.pool, { methods: 'TON/TON' })).token;
      const created = await call(service.url!, 'POST', '/v1/payments', token, {
        amount: '2',
        currency: 'TON',
        payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] },
      });
      assert.equal(created.status, 201, JSON.stringify(created.json));
      assert.equal(await db.pool.exists(sql.unsafe`select 1 from service_secrets where name = 'deposit_master_key'`), false);
      const deposit = Address.parse(created.json.paymentDetails.address);
      const paid = await call(service.url!, 'POST', '/sandbox/v1/transfers', null, { to: created.json.paymentDetails.address, coin: 'TON', amount: '2' });
      assert.equal(paid.status, 201, JSON.stringify(paid.json));
      // The signer: the master key, a standard v5r1 wallet, a transfer through the sandbox's toncenter v2.
      const index = Number(
        await db.pool.oneFirst(
          sql.type(z.object({ i: z.string() }))`select derivation_index::text as i from deposit_addresses where payment_id = ${created.json.id}`,
        ),
      );
      const keys = depositKeyPair(MASTER);
      const client = new TonClient({ endpoint: `${service.url}/sandbox/toncenter/api/v2/jsonRPC` });
      const wallet = client.open(WalletContractV5R1.create({ workchain: 0, publicKey: keys.publicKey, walletId: { networkGlobalId: -3, context: index } }));
      assert.ok(wallet.address.equals(deposit));
      const to = freshRecipient();
      await wallet.sendTransfer({
        seqno: 0,
        secretKey: keys.secretKey,
        sendMode: SendMode.PAY_GAS_SEPARATELY,
        timeout: Math.floor(Date.now() / 1000) + 60,
        messages: [internal({ to, value: toNano('1.5'), bounce: false })],
      });
      const balances = await waitFor(
        'the spent TON',
        () => call(service.url!, 'GET', `/sandbox/v1/accounts/${to.toRawString()}`, null),
        (r) => r.json.balances?.TON === '1.5',
      );
      assert.equal(balances.status, 200);
    } finally {
      await service.stop();
      await db.drop();
    }
  });
});

describe("money out through Kassa's own processes: an API without the master key, a worker that signs", () => {
  it('the API (public key only) takes a payment; the worker (master key) sweeps it to the treasury and pays a refund, nobody acting', async () => {
    const db = await createTestDatabase();
    const api = await startTestService({ DATABASE_URL: db.url, KASSA_DEPOSIT_PUBLIC_KEY: PUBLIC_HEX }, API_ONLY);
    let worker: RunningService | null = null;
    try {
      worker = await startTestService({ DATABASE_URL: db.url, BASE_URL: api.url!, KASSA_MASTER_KEY: MASTER_HEX }, { api: false, worker: true });
      const treasury = freshRecipient();
      const { token } = await createTestStore(db.pool, { name: 'Swept', methods: 'TON/TON', treasury: treasury.toRawString() });
      const created = await call(api.url!, 'POST', '/v1/payments', token, {
        amount: '2',
        currency: 'TON',
        payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] },
      });
      assert.equal(created.status, 201, JSON.stringify(created.json));
      assert.equal(await db.pool.exists(sql.unsafe`select 1 from service_secrets where name = 'deposit_master_key'`), false);
      await call(api.url!, 'POST', '/sandbox/v1/transfers', null, { to: created.json.paymentDetails.address, coin: 'TON', amount: '2.5' });
      const swept = await waitFor(
        'the sweep in the treasury',
        () => call(api.url!, 'GET', `/sandbox/v1/accounts/${treasury.toRawString()}`, null),
        (r) => r.json.balances?.TON === '1.99',
      );
      // The sweep's fee came out of the counted 2 TON (0.01 set aside; what it did not use stays the merchant's).
      assert.equal(swept.json.balances.TON, '1.99');
      const sweep = await waitFor(
        'the sweep confirmed',
        () =>
          db.pool.one(
            sql.type(
              z.object({ state: z.string(), fee: z.string().nullable() }),
            )`select state, fee::text as fee from outgoing_transfers where payment_id = ${created.json.id} and kind = 'sweep'`,
          ),
        (r) => r.state === 'confirmed',
      );
      assert.ok(Number(sweep.fee) > 0);
      const customer = freshRecipient();
      const refund = await call(api.url!, 'POST', `/v1/payments/${created.json.id}/refunds`, token, {
        coin: 'TON',
        amount: '0.49',
        address: customer.toString({ bounceable: false }),
      });
      assert.equal(refund.status, 201, JSON.stringify(refund.json));
      const done = await waitFor(
        'the refund confirmed',
        () => call(api.url!, 'GET', `/v1/payments/${created.json.id}/refunds`, token),
        (r) => r.json.data?.[0]?.status === 'confirmed',
      );
      assert.match(done.json.data[0].transactionHash, /^[0-9a-f]{64}$/);
      const got = await call(api.url!, 'GET', `/sandbox/v1/accounts/${customer.toRawString()}`, null);
      // The destination receives the amount; the fee came out of the refundable 0.5 TON.
      assert.equal(got.json.balances.TON, '0.49');

      // A USDT payment: the worker tops the deposit up from the gas wallet and sweeps the jettons.
      const { token: usdtToken } = await createTestStore(db.pool, { name: 'Swept USDT', methods: 'USDT/TON', treasury: treasury.toRawString() });
      const usdt = await call(api.url!, 'POST', '/v1/payments', usdtToken, {
        amount: '3',
        currency: 'USDT',
        payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] },
      });
      assert.equal(usdt.status, 201, JSON.stringify(usdt.json));
      await call(api.url!, 'POST', '/sandbox/v1/transfers', null, { to: usdt.json.paymentDetails.address, coin: 'USDT', amount: '3' });
      const jettons = await waitFor(
        'the USDT in the treasury',
        () => call(api.url!, 'GET', `/sandbox/v1/accounts/${treasury.toRawString()}`, null),
        (r) => r.json.balances?.USDT === '3',
      );
      assert.equal(jettons.json.balances.USDT, '3');
      // kassa gas: the gas wallet paid for it (the excess came back to it).
      const gas = await kassa(['gas'], { DATABASE_URL: db.url, BASE_URL: api.url!, KASSA_MASTER_KEY: MASTER_HEX });
      assert.equal(gas.code, 0, gas.stderr);
      assert.match(gas.json.address, /^UQ/);
      assert.equal(gas.json.network, 'sandbox');
      assert.ok(Number(gas.json.balance) < 1000 && Number(gas.json.balance) > 999.9, gas.json.balance);
    } finally {
      await worker?.stop();
      await api.stop();
      await db.drop();
    }
  });
});

describe('on the sandbox (kassa start, defaults): v5r1 deposits, recovery, accounts', () => {
  let db: TestDatabase;
  let service: RunningService;
  let token: string;
  let url: string;
  let client: TonClient;

  before(async () => {
    db = await createTestDatabase();
    service = await startTestService({ DATABASE_URL: db.url });
    url = service.url!;
    token = (await createTestStore(db.pool)).token;
    client = new TonClient({ endpoint: `${url}/sandbox/toncenter/api/v2/jsonRPC` });
  });
  after(async () => {
    await service?.stop();
    await db?.drop();
  });

  async function completedPayment(coin: 'TON' | 'USDT', amount: string): Promise<{ id: string; address: string }> {
    const body =
      coin === 'TON'
        ? { amount, currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } }
        : { amount, currency: 'USD', payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } };
    const created = await call(url, 'POST', '/v1/payments', token, body);
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const sent = await call(url, 'POST', '/sandbox/v1/transfers', null, { to: created.json.paymentDetails.address, coin, amount });
    assert.equal(sent.status, 201, JSON.stringify(sent.json));
    await waitFor(
      `${coin} payment completed`,
      () => call(url, 'GET', `/v1/payments/${created.json.id}`, token),
      (r) => r.json.status === 'completed',
    );
    return { id: created.json.id, address: created.json.paymentDetails.address };
  }

  it("TON and USDT payments to v5r1 deposit addresses complete; accounts shows the deposits' balances", async () => {
    const ton = await completedPayment('TON', '1.25');
    const usdt = await completedPayment('USDT', '7.5');
    const derivations = await db.pool.anyFirst(
      sql.type(z.object({ derivation: z.string() }))`select derivation from deposit_addresses where payment_id in (${ton.id}, ${usdt.id})`,
    );
    assert.deepEqual([...derivations], ['v5r1-1', 'v5r1-1']);
    const tonAccount = await call(url, 'GET', `/sandbox/v1/accounts/${ton.address}`, null);
    assert.equal(tonAccount.status, 200);
    assert.equal(tonAccount.json.address, Address.parse(ton.address).toRawString());
    assert.equal(tonAccount.json.balances.TON, '1.25');
    assert.equal(tonAccount.json.balances.USDT, '0');
    const usdtAccount = await call(url, 'GET', `/sandbox/v1/accounts/${encodeURIComponent(Address.parse(usdt.address).toRawString())}`, null);
    assert.equal(usdtAccount.json.balances.USDT, '7.5');
    assert.equal(usdtAccount.json.balances.NOT, '0');
    assert.deepEqual(Object.keys(usdtAccount.json.balances).sort(), ['BLUM', 'BUILD', 'DOGS', 'DUST', 'DYOR', 'NOT', 'STON', 'TON', 'USDT', 'XAUt0']);
  });

  it('GET /sandbox/v1/accounts/{address} refuses a bad address: 400 invalid_address (param address)', async () => {
    for (const bad of ['nope', '0:abc', `1:${'0'.repeat(64)}`]) {
      const answer = await call(url, 'GET', `/sandbox/v1/accounts/${bad}`, null);
      assert.equal(answer.status, 400, bad);
      assert.equal(answer.json.error.code, 'invalid_address');
      assert.equal(answer.json.error.param, 'address');
    }
  });

  it("deposits export: a standard v5r1 wallet built from it alone moves a TON deposit's money out", async () => {
    const payment = await completedPayment('TON', '3');
    const env = { DATABASE_URL: service.databaseUrl };
    const shown = await kassa(['deposits', 'export', '--payment', payment.id], env);
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(shown.json.privateKey, undefined);
    const exported = await kassa(['deposits', 'export', '--payment', payment.id, '--include-secret'], env);
    assert.equal(exported.code, 0, exported.stderr);
    const e = exported.json;
    assert.deepEqual({ ...e, privateKey: undefined }, { ...shown.json, privateKey: undefined });
    assert.equal(e.paymentId, payment.id);
    assert.equal(e.address, payment.address);
    assert.equal(e.network, 'sandbox');
    assert.equal(e.walletVersion, 'v5r1');
    assert.match(e.privateKey, /^[0-9a-f]{64}$/);

    // From here on only @ton/ton and @ton/crypto, with the exported fields.
    const keys = keyPairFromSeed(Buffer.from(e.privateKey, 'hex'));
    assert.equal(keys.publicKey.toString('hex'), e.publicKey);
    const contract = WalletContractV5R1.create({
      workchain: 0,
      publicKey: keys.publicKey,
      walletId: { networkGlobalId: e.networkGlobalId, context: e.context },
    });
    assert.ok(contract.address.equals(Address.parse(e.address)));
    assert.equal(contract.walletId.networkGlobalId ^ (e.context as number), e.walletId);
    const wallet = client.open(contract);
    assert.equal(await wallet.getBalance(), toNano('3'));
    const to = freshRecipient();
    await wallet.sendTransfer({
      seqno: await wallet.getSeqno(),
      secretKey: keys.secretKey,
      // Everything the wallet holds, its first message deploying it.
      sendMode: SendMode.CARRY_ALL_REMAINING_BALANCE,
      timeout: Math.floor(Date.now() / 1000) + 60,
      messages: [internal({ to, value: 0n, bounce: false })],
    });
    const arrived = await waitFor(
      'the recovered TON',
      () => call(url, 'GET', `/sandbox/v1/accounts/${to.toRawString()}`, null),
      (r) => Number(r.json.balances?.TON ?? 0) > 0,
    );
    assert.ok(Number(arrived.json.balances.TON) > 2.99 && Number(arrived.json.balances.TON) < 3, arrived.json.balances.TON);
    const left = await call(url, 'GET', `/sandbox/v1/accounts/${e.address}`, null);
    assert.equal(left.json.balances.TON, '0');
  });

  it("deposits export: a USDT deposit's jettons moved out by hand (TON for gas sent first)", async () => {
    const payment = await completedPayment('USDT', '4.2');
    const e = (await kassa(['deposits', 'export', '--payment', payment.id, '--include-secret'], { DATABASE_URL: service.databaseUrl })).json;
    const keys = keyPairFromSeed(Buffer.from(e.privateKey, 'hex'));
    const wallet = client.open(
      WalletContractV5R1.create({ workchain: 0, publicKey: keys.publicKey, walletId: { networkGlobalId: e.networkGlobalId, context: e.context } }),
    );
    assert.ok(wallet.address.equals(Address.parse(e.address)));
    // A deposit holds no TON for gas: send it some first (the runbook's step).
    assert.equal((await call(url, 'POST', '/sandbox/v1/transfers', null, { to: e.address, coin: 'TON', amount: '0.2' })).status, 201);
    await waitFor(
      'gas TON',
      () => wallet.getBalance(),
      (b) => b >= toNano('0.2'),
    );
    const usdtMaster = Address.parse(
      await db.pool.oneFirst(
        sql.type(z.object({ m: z.string() }))`select master_address as m from jetton_masters where coin_symbol = 'USDT' and network = 'sandbox'`,
      ),
    );
    const asked = await client.runMethod(usdtMaster, 'get_wallet_address', [{ type: 'slice', cell: beginCell().storeAddress(wallet.address).endCell() }]);
    const jettonWallet = asked.stack.readAddress();
    const to = freshRecipient();
    const transfer = beginCell()
      .storeUint(0x0f8a7ea5, 32) // jetton transfer (TEP-74)
      .storeUint(0, 64)
      .storeCoins(4_200_000n) // 4.2 USDT (6 decimals)
      .storeAddress(to)
      .storeAddress(wallet.address) // the excess comes back
      .storeBit(0)
      .storeCoins(0n)
      .storeBit(0)
      .endCell();
    await wallet.sendTransfer({
      seqno: await wallet.getSeqno(),
      secretKey: keys.secretKey,
      sendMode: SendMode.PAY_GAS_SEPARATELY,
      timeout: Math.floor(Date.now() / 1000) + 60,
      messages: [internal({ to: jettonWallet, value: toNano('0.1'), bounce: true, body: transfer })],
    });
    const arrived = await waitFor(
      'the recovered USDT',
      () => call(url, 'GET', `/sandbox/v1/accounts/${to.toRawString()}`, null),
      (r) => r.json.balances?.USDT === '4.2',
    );
    assert.equal(arrived.json.balances.USDT, '4.2');
    assert.equal((await call(url, 'GET', `/sandbox/v1/accounts/${e.address}`, null)).json.balances.USDT, '0');
  });

  it('deposits export refuses an unknown payment and a wrong master key, in one line', async () => {
    const env = { DATABASE_URL: service.databaseUrl };
    assertFails(await kassa(['deposits', 'export', '--payment', '00000000-0000-4000-8000-000000000000'], env), /has no deposit address/);
    assertFails(await kassa(['deposits', 'export'], env), /--payment is required/);
    const payment = await completedPayment('TON', '0.1');
    assertFails(
      await kassa(['deposits', 'export', '--payment', payment.id, '--include-secret'], { ...env, KASSA_MASTER_KEY: MASTER_HEX }),
      /does not derive payment/,
    );
  });
});
