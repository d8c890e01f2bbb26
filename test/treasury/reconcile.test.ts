// Reconciliation on the real sandbox chain (issue 12): after payments in and sweeps, refunds and
// top-ups out, every deposit's books (in − out − fees) equal its on-chain balance to the nanoTON
// and the jetton base unit; money moved behind Kassa's back shows up as a difference (table,
// reporting view, metric). It heals (issue 21): a transfer the block stream never showed is found in
// the account's history (/api/v3/transactions) and booked through the reader's path, once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Address, internal, SendMode, toNano } from '@ton/core';
import { WalletContractV5R1 } from '@ton/ton';
import { pino } from 'pino';
import { depositKeyPair } from '../../src/chain/addresses.ts';
import { createChainClient } from '../../src/chain/client.ts';
import { toncenterV3History } from '../../src/chain/history.ts';
import { holdOutOfBlockStream } from '../../src/chain/sandbox/history.ts';
import { SANDBOX_JSON_RPC_PATH, SANDBOX_TONCENTER_PATH } from '../../src/chain/sandbox/path.ts';
import { sql, z } from '../../src/db/pool.ts';
import { registry } from '../../src/metrics.ts';
import { useDatabaseForMetrics } from '../../src/metrics.ts';
import { updateStore } from '../../src/stores/stores.ts';
import reconcileTask from '../../tasks/deposits__reconcile.ts';
import { accountHealer } from '../../src/reader/heal.ts';
import { recordRefundGasPayment } from '../../src/treasury/gas.ts';
import { outgoingOfPayment, refundableBaseUnits } from '../../src/treasury/outgoing.ts';
import { reconcileDeposits } from '../../src/treasury/reconcile.ts';
import { freshAddress, startChainApp, type ChainTestApp } from '../helpers/chain.ts';

const log = pino({ level: process.env.LOG_LEVEL ?? 'silent' });
let app: ChainTestApp;
let store: Awaited<ReturnType<ChainTestApp['store']>>;

const client = () => createChainClient({ endpoint: `${app.url}${SANDBOX_JSON_RPC_PATH}` });
/** Sixty seconds on: what was just confirmed is reconciled too. */
const later = () => new Date(Date.now() + 61_000);
/**
 * Chain time has whole seconds: reconciliation looks at deposits the reader has settled a second
 * past. The chain's clock is moved on for that (no waiting for it).
 */
async function reconcile(options: { heal?: boolean } = {}) {
  await app.advanceChain(2);
  if (!options.heal) return reconcileDeposits({ pool: app.pool, client: client(), log, now: later });
  // As the deposits__reconcile task does: the account's history, booked through the reader's path.
  const history = toncenterV3History({ baseUrl: `${app.url}${SANDBOX_TONCENTER_PATH}`, pageSize: 2 });
  const heal = accountHealer({ history, book: app.newBooker().book, log });
  return reconcileDeposits({ pool: app.pool, client: client(), log, now: later, heal, jettonWallets: history.jettonWallets });
}

/** A payment the customer pays with transfers the block stream never shows (the sandbox switch). */
async function paidOutOfStream(coin: 'TON' | 'USDT', amount: string) {
  const created = await app.request('POST', '/v1/payments', {
    token: store.token,
    body: { amount, currency: coin, payment_options: { methods: [{ coin, chain: 'TON' }] } },
  });
  assert.equal(created.status, 201, created.text);
  const id = created.json.id as string;
  const address = created.json.paymentDetails.address as string;
  const chain = app.sandbox.chain;
  chain.stopBlockClock();
  try {
    await app.pay(address, coin, amount);
    const seqno = chain.sealBlock();
    // The deposit's transactions, and its jetton wallet's: synchronously after sealing, before any reader can ask.
    let held = holdOutOfBlockStream(chain, address, seqno);
    if (coin !== 'TON') {
      const wallet = await app.pool.oneFirst(
        sql.type(z.object({ account: z.string() }))`select account from chain_watches where payment_id = ${id} and kind = 'jetton_wallet'`,
      );
      held += holdOutOfBlockStream(chain, wallet, seqno);
    }
    assert.ok(held >= 1);
  } finally {
    chain.startBlockClock();
  }
  await app.settle();
  return id;
}

/** When `id`'s deposit was last reconciled (null: never). */
const checkedAt = (id: string) =>
  app.pool.maybeOneFirst(sql.type(z.object({ at: z.date().nullable() }))`select max(checked_at) as at from deposit_reconciliations where payment_id = ${id}`);

/**
 * Runs `run` until it has looked at `id`'s deposit: a deposit whose last transaction the reader
 * has not settled a second past is left for the next run (by design), which a loaded machine can
 * make happen once or twice.
 */
async function untilLookedAt<T>(id: string, run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    const before = await checkedAt(id);
    const result = await run();
    const after = await checkedAt(id);
    if (after !== null && (before === null || after.getTime() > before.getTime())) return result;
    if (attempt === 5) throw new Error(`reconciliation never looked at the deposit of ${id}`);
  }
}

const statusOf = (id: string) => app.pool.oneFirst(sql.type(z.object({ status: z.string() }))`select status from payments where id = ${id}`);
const transfersOf = (id: string) => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from transfers where payment_id = ${id}`);

async function paid(coin: 'TON' | 'USDT', amount: string, paidAmount = amount, token = store.token) {
  const created = await app.request('POST', '/v1/payments', {
    token,
    body: { amount, currency: coin, payment_options: { methods: [{ coin, chain: 'TON' }] } },
  });
  assert.equal(created.status, 201, created.text);
  await app.pay(created.json.paymentDetails.address, coin, paidAmount);
  await app.settle();
  return { id: created.json.id as string, wallet: Address.parse(created.json.paymentDetails.address).toRawString() };
}

before(async () => {
  app = await startChainApp();
  store = await app.store({ methods: 'TON/TON,USDT/TON' });
  await updateStore(app.pool, store.id, { treasury: freshAddress() });
  useDatabaseForMetrics(app.pool);
});
after(() => app.close());

describe('reconciliation', () => {
  let spent: { id: string; wallet: string };

  it('books and chain agree after payments, sweeps, a refund and jetton top-ups', async () => {
    const ton = await paid('TON', '1.2', '1.7');
    const usdt = await paid('USDT', '4');
    // A store without a treasury: its money stays in the deposit.
    spent = await paid('TON', '0.9', '0.9', (await app.store({ name: 'Keeps its money', methods: 'TON/TON' })).token);
    const refund = await app.request('POST', `/v1/payments/${ton.id}/refunds`, {
      token: store.token,
      body: { coin: 'TON', amount: '0.2', address: freshAddress() },
    });
    assert.equal(refund.status, 201, refund.text);
    await app.drain(ton.wallet, usdt.wallet);
    const states = await app.pool.anyFirst(sql.type(z.object({ state: z.string() }))`select state from outgoing_transfers`);
    assert.ok(states.length >= 4 && states.every((s) => s === 'confirmed'), JSON.stringify(states));
    assert.deepEqual(await reconcile(), []);
    const rows = await app.pool.any(
      sql.type(
        z.object({ coin_symbol: z.string(), difference: z.string() }),
      )`select coin_symbol, difference_base_units::text as difference from deposit_reconciliations`,
    );
    assert.ok(rows.length >= 4, JSON.stringify(rows)); // three TON deposits and one USDT jetton wallet
    assert.ok(rows.every((r) => r.difference === '0'));
  });

  it("finds money moved behind Kassa's back: a difference in the table, the reporting view and the metric", async () => {
    // Someone with the master key spends from a deposit by hand (a standard wallet, no Kassa).
    const secret = await app.pool.oneFirst(
      sql.type(z.object({ secret: z.instanceof(Buffer) }))`select secret from service_secrets where name = 'deposit_master_key'`,
    );
    const index = Number(
      await app.pool.oneFirst(sql.type(z.object({ i: z.string() }))`select derivation_index::text as i from deposit_addresses where payment_id = ${spent.id}`),
    );
    const keys = depositKeyPair(secret);
    const wallet = client().open(WalletContractV5R1.create({ workchain: 0, publicKey: keys.publicKey, walletId: { networkGlobalId: -3, context: index } }));
    assert.equal(wallet.address.toRawString(), spent.wallet);
    await wallet.sendTransfer({
      seqno: 0,
      secretKey: keys.secretKey,
      sendMode: SendMode.PAY_GAS_SEPARATELY,
      timeout: Math.floor(Date.now() / 1000) + 60,
      messages: [internal({ to: Address.parse(freshAddress()), value: toNano('0.3'), bounce: false })],
    });
    await app.settle();
    const found = await reconcile();
    assert.equal(
      found.length,
      1,
      JSON.stringify(found, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
    );
    assert.equal(found[0]!.paymentId, spent.id);
    assert.equal(found[0]!.coin, 'TON');
    assert.ok(found[0]!.booked - found[0]!.onChain > toNano('0.3'));
    const view = await app.pool.any(
      sql.type(
        z.object({ payment_id: z.string(), difference_base_units: z.string() }),
      )`select payment_id, difference_base_units::text as difference_base_units from reporting.deposit_differences`,
    );
    assert.deepEqual(
      view.map((r) => r.payment_id),
      [spent.id],
    );
    assert.ok(BigInt(view[0]!.difference_base_units) < -toNano('0.3'));
    const metric = (await registry.getSingleMetric('kassa_deposit_differences')!.get()).values.find((v) => v.labels.coin === 'TON');
    assert.equal(metric?.value, 1);
  });
});

describe('reconciliation heals', () => {
  for (const coin of ['TON', 'USDT'] as const) {
    it(`books a ${coin} transfer the block stream never showed, completing its payment, once`, async () => {
      const id = await paidOutOfStream(coin, coin === 'TON' ? '1.25' : '3');
      // The reader followed the chain past it and never saw it.
      assert.equal(await statusOf(id), 'pending');
      assert.equal(await transfersOf(id), 0);
      // Reported only, without healing: the deposit differs from its books.
      const reported = await untilLookedAt(id, () => reconcile());
      assert.ok(
        reported.some((d) => d.paymentId === id),
        'the difference is reported',
      );
      assert.equal(await transfersOf(id), 0);

      const found = await untilLookedAt(id, () => reconcile({ heal: true }));
      assert.deepEqual(
        found.filter((d) => d.paymentId === id).map((d) => d.coin),
        [],
        'nothing differs once healed',
      );
      assert.equal(await statusOf(id), 'completed');
      const booked = await transfersOf(id);
      assert.ok(booked >= 1);
      const rows = await app.pool.any(
        sql.type(z.object({ coin_symbol: z.string(), difference: z.string() }))`
          select coin_symbol, difference_base_units::text as difference from deposit_reconciliations where payment_id = ${id}`,
      );
      assert.ok(rows.length >= 1 && rows.every((r) => r.difference === '0'), JSON.stringify(rows));

      // Twice — the second time as the worker runs it (the deposits__reconcile task, wired with the
      // account history): booked once.
      const task = reconcileTask({
        config: app.config,
        pool: app.pool,
        log,
        // Each run an hour on, so every deposit is looked at again (least recently checked first).
        now: () => new Date(Date.now() + 3_600_000),
        chain: client(),
        history: toncenterV3History({ baseUrl: `${app.url}${SANDBOX_TONCENTER_PATH}` }),
      });
      await untilLookedAt(id, async () => {
        await app.advanceChain(2);
        await task!({}, { job: { id: 'reconcile-test' } } as never);
      });
      assert.equal(await transfersOf(id), booked);
      assert.equal(await statusOf(id), 'completed');
    });
  }

  it('heals a jetton refund booked confirmed whose jettons came back (a frozen USDT wallet): failed, refundable again, chain = books', async () => {
    const usdt = await paid('USDT', '2', '2.5');
    const to = freshAddress();
    await app.sandbox.chain.lockJettonWallet(to, 'USDT');
    await recordRefundGasPayment(app.pool, { storeId: store.id, amountBaseUnits: 100_000_000n, note: 'test', now: new Date() });
    const refund = await app.request('POST', `/v1/payments/${usdt.id}/refunds`, { token: store.token, body: { coin: 'USDT', amount: '0.5', address: to } });
    assert.equal(refund.status, 201, refund.text);
    await app.drain(usdt.wallet);
    const refundRow = async () => (await outgoingOfPayment(app.pool, usdt.id, 'refund'))[0]!;
    assert.equal((await refundRow()).state, 'failed');
    // The books as a Kassa before this release wrote them: the bounced refund confirmed.
    await app.pool.query(sql.unsafe`
      update outgoing_transfers set state = 'confirmed', failure_reason = null, failure_kind = null, failed_at = null where id = ${(await refundRow()).id}
    `);
    assert.equal(await refundableBaseUnits(app.pool, usdt.id, 'USDT'), 0n);
    const found = await untilLookedAt(usdt.id, () => reconcile({ heal: true }));
    assert.deepEqual(
      found.filter((d) => d.paymentId === usdt.id),
      [],
      'nothing differs once healed',
    );
    const healed = await refundRow();
    assert.equal(healed.state, 'failed');
    assert.match(healed.failure_reason!, /they came back to the deposit/);
    assert.equal(await refundableBaseUnits(app.pool, usdt.id, 'USDT'), 500_000n);
  });

  it('finds an accepted jetton sent without a notification (forward_ton_amount 0) and books it as a wrong coin, once', async () => {
    const ton = await paid('TON', '1');
    await app.sandbox.chain.transfer({ to: ton.wallet, coin: 'USDT', amount: '3', notify: false });
    await app.settle();
    const usdtRows = () =>
      app.pool.any(sql.type(z.object({ effect: z.string(), amount_base_units: z.string(), account: z.string() }))`
        select effect, amount_base_units::text as amount_base_units, account from transfers where payment_id = ${ton.id} and coin_symbol = 'USDT' order by lt`);
    assert.deepEqual(await usdtRows(), [], 'the block stream shows the deposit nothing');

    const found = await untilLookedAt(ton.id, () => reconcile({ heal: true }));
    assert.deepEqual(
      found.filter((d) => d.paymentId === ton.id),
      [],
    );
    const usdtWallet = (
      await app.sandbox.chain.jettonWalletOf(Address.parse(app.sandbox.chain.jettonMasters().USDT!), Address.parse(ton.wallet))
    ).toRawString();
    assert.deepEqual(await usdtRows(), [{ effect: 'wrong_coin', amount_base_units: '3000000', account: usdtWallet }]);
    assert.equal(await refundableBaseUnits(app.pool, ton.id, 'USDT'), 3_000_000n);
    assert.equal(await statusOf(ton.id), 'completed');
    const usdtBooks = await app.pool.oneFirst(
      sql.type(z.object({ difference: z.string() }))`
        select difference_base_units::text as difference from deposit_reconciliations where payment_id = ${ton.id} and coin_symbol = 'USDT'`,
    );
    assert.equal(usdtBooks, '0');

    // One with a notification is booked from it by the block stream, and not again from the wallet.
    await app.pay(ton.wallet, 'USDT', '1');
    await app.settle();
    await untilLookedAt(ton.id, () => reconcile({ heal: true }));
    const rows = await usdtRows();
    assert.deepEqual(
      rows.map((r) => [r.effect, r.amount_base_units, r.account]),
      [
        ['wrong_coin', '3000000', usdtWallet],
        ['wrong_coin', '1000000', ton.wallet],
      ],
    );
    assert.equal(await refundableBaseUnits(app.pool, ton.id, 'USDT'), 4_000_000n);
  });
});
