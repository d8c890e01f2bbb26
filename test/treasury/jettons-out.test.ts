// Jettons out on the real sandbox chain (issue 12): a USDT deposit holds no TON, so the gas wallet
// (derived from the master key, funded by the sandbox) tops it up, batched in one message for
// several deposits; then the deposit's jetton wallet sends the USDT to the treasury, the excess TON
// back to the gas wallet. The top-up is Kassa's own TON: never counted, never refundable.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Address } from '@ton/core';
import { pino } from 'pino';
import { createChainClient } from '../../src/chain/client.ts';
import { SANDBOX_JSON_RPC_PATH } from '../../src/chain/sandbox/path.ts';
import { sql, z } from '../../src/db/pool.ts';
import { updateStore } from '../../src/stores/stores.ts';
import { gasReport, gasWalletAddress, recordRefundGasPayment } from '../../src/treasury/gas.ts';
import { outgoingOfPayment, refundableBaseUnits } from '../../src/treasury/outgoing.ts';
import { reconcileDeposits } from '../../src/treasury/reconcile.ts';
import { sendFromWallet, type SignerDeps } from '../../src/treasury/signer.ts';
import { assertBooksMatchChain, freshAddress, sandboxBalances, startChainApp, type ChainTestApp } from '../helpers/chain.ts';

const log = pino({ level: process.env.LOG_LEVEL ?? 'silent' });
const client = () => createChainClient({ endpoint: `${app.url}${SANDBOX_JSON_RPC_PATH}` });
let app: ChainTestApp;
let store: Awaited<ReturnType<ChainTestApp['store']>>;
let treasury: string;
let gas: string;

const balances = (address: string) => sandboxBalances(app, address);

async function completedUsdt(amount: string) {
  const created = await app.request('POST', '/v1/payments', {
    token: store.token,
    body: { amount, currency: 'USDT', payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } },
  });
  assert.equal(created.status, 201, created.text);
  await app.pay(created.json.paymentDetails.address, 'USDT', amount);
  await app.settle();
  assert.equal((await app.request('GET', `/v1/payments/${created.json.id}`, { token: store.token })).json.status, 'completed');
  return { id: created.json.id as string, wallet: Address.parse(created.json.paymentDetails.address).toRawString() };
}

/** Gas wallet transactions started by Kassa's signer. */
const gasMessages = () => app.sandbox.chain.transactionsOf(Address.parse(gas)).filter((tx) => tx.inMessage?.info.type === 'external-in').length;

before(async () => {
  app = await startChainApp();
  store = await app.store({ methods: 'TON/TON,USDT/TON' });
  treasury = freshAddress();
  await updateStore(app.pool, store.id, { treasury });
  gas = (await gasWalletAddress(app.pool, 'sandbox'))!;
});
after(() => app.close());

describe('the gas wallet', () => {
  it('is derived from the deposit key, recorded, funded by the sandbox; gasReport says its address and balance', async () => {
    const client = createChainClient({ endpoint: `${app.url}${SANDBOX_JSON_RPC_PATH}` });
    const report = await gasReport(app.pool, app.config, client);
    assert.equal(report.addressRaw, gas);
    assert.equal(report.balance, '1000');
    assert.equal(Address.parse(report.address).toRawString(), gas);
  });
});

describe('sweeping USDT', () => {
  it('top-up from the gas wallet, then the jetton transfer: the treasury gets the amount the books say', async () => {
    const payment = await completedUsdt('7.5');
    const [sweep] = await outgoingOfPayment(app.pool, payment.id);
    assert.equal(sweep!.coin_symbol, 'USDT');
    assert.equal(sweep!.amount, '7.5');

    const first = await sendFromWallet(app.signer(), payment.wallet);
    assert.equal(first.outcome, 'waiting_for_gas');
    const topUp = (await outgoingOfPayment(app.pool, payment.id, 'gas_top_up'))[0]!;
    assert.equal(topUp.from_address, gas);
    assert.equal(topUp.to_address, payment.wallet);
    // What the sweep waits for (a refund's waitingFor, issue 48): its network fee, this top-up.
    const waiting = (await outgoingOfPayment(app.pool, payment.id, 'sweep'))[0]!;
    assert.deepEqual(waiting.waiting_for, { reason: 'network_fee', transferID: topUp.id, kind: 'gas_top_up' });
    assert.equal((await sendFromWallet(app.signer(), gas)).outcome, 'sent');
    await app.settle();
    assert.equal((await outgoingOfPayment(app.pool, payment.id, 'gas_top_up'))[0]!.state, 'confirmed');
    assert.equal((await outgoingOfPayment(app.pool, payment.id, 'sweep'))[0]!.waiting_for, null);
    // The top-up is on the deposit's books as Kassa's own TON, not as money to refund.
    const books = (await app.request('GET', `/v1/payments/${payment.id}/transfers`, { token: store.token })).json.data as any[];
    const gasRow = books.find((t) => t.sender === gas);
    assert.equal(gasRow.effect, 'not_counted');
    assert.equal(await refundableBaseUnits(app.pool, payment.id, 'TON'), 0n);

    assert.equal((await sendFromWallet(app.signer(), payment.wallet)).outcome, 'sent');
    await app.settle();
    await app.settle();
    const done = (await outgoingOfPayment(app.pool, payment.id, 'sweep'))[0]!;
    assert.equal(done.state, 'confirmed');
    assert.equal(done.sent_amount_base_units, '7500000');
    assert.ok(Number(done.fee) > 0 && Number(done.fee) < 0.1, done.fee!);
    assert.equal((await balances(treasury)).USDT, '7.5');
    assert.equal((await balances(payment.wallet)).USDT, '0');
  });

  it('top-ups for several deposits go in one gas wallet message', async () => {
    const payments = [await completedUsdt('1'), await completedUsdt('2'), await completedUsdt('3')];
    const before = (await balances(treasury)).USDT;
    for (const p of payments) assert.equal((await sendFromWallet(app.signer(), p.wallet)).outcome, 'waiting_for_gas');
    const messagesBefore = gasMessages();
    const batch = await sendFromWallet(app.signer(), gas);
    assert.equal(batch.outcome, 'sent');
    assert.equal(batch.outcome === 'sent' && batch.transfers, 3);
    await app.settle();
    assert.equal(gasMessages() - messagesBefore, 1);
    const topUps = await app.pool.any(sql.type(z.object({ state: z.string(), transaction_hash: z.string().nullable() }))`
      select state, transaction_hash from outgoing_transfers where kind = 'gas_top_up' and payment_id = any(${sql.array(
        payments.map((p) => p.id),
        'uuid',
      )})
    `);
    assert.equal(topUps.length, 3);
    assert.ok(topUps.every((t) => t.state === 'confirmed'));
    assert.equal(new Set(topUps.map((t) => t.transaction_hash)).size, 1);
    for (const p of payments) assert.equal((await sendFromWallet(app.signer(), p.wallet)).outcome, 'sent');
    await app.settle();
    await app.settle();
    assert.equal(Number((await balances(treasury)).USDT) - Number(before), 6);
  });

  it('a USDT overpayment is refunded in USDT to the address given', async () => {
    const created = await app.request('POST', '/v1/payments', {
      token: store.token,
      body: { amount: '2', currency: 'USDT', payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } },
    });
    assert.equal(created.status, 201, created.text);
    const wallet = Address.parse(created.json.paymentDetails.address).toRawString();
    await app.pay(created.json.paymentDetails.address, 'USDT', '2.75');
    await app.settle();
    const to = freshAddress();
    // A jetton refund's gas comes from the shared gas wallet: the store pays for it first.
    await recordRefundGasPayment(app.pool, { storeId: store.id, amountBaseUnits: 100_000_000n, note: 'test', now: new Date() });
    const refund = await app.request('POST', `/v1/payments/${created.json.id}/refunds`, {
      token: store.token,
      body: { coin: 'USDT', amount: '0.75', address: to },
    });
    assert.equal(refund.status, 201, refund.text);
    const over = await app.request('POST', `/v1/payments/${created.json.id}/refunds`, {
      token: store.token,
      body: { coin: 'USDT', amount: '0.1', address: to },
    });
    assert.equal(over.json.error.code, 'refund_exceeds_balance');
    // A refund never costs more than it moves: the smallest USDT refund is 0.1.
    const dust = await app.request('POST', `/v1/payments/${created.json.id}/refunds`, {
      token: store.token,
      body: { coin: 'USDT', amount: '0.01', address: to },
    });
    assert.equal(dust.json.error.code, 'refund_below_minimum');
    for (let round = 0; round < 16; round += 1) {
      await sendFromWallet(app.signer(), wallet);
      await sendFromWallet(app.signer(), gas);
      await app.settle();
      const rows = await outgoingOfPayment(app.pool, created.json.id);
      if (rows.some((r) => r.kind === 'refund' && r.state === 'confirmed')) break;
    }
    const [done] = (await app.request('GET', `/v1/payments/${created.json.id}/refunds`, { token: store.token })).json.data;
    assert.equal(done.status, 'confirmed');
    await app.settle();
    assert.equal((await balances(to)).USDT, '0.75');
    assert.equal((await balances(wallet)).USDT, '0');
  });

  it('a jetton transfer its jetton wallet refuses is failed on the books (the jettons did not move)', async () => {
    const payment = await completedUsdt('1');
    // Books that claim more than the deposit holds (as a bug would): 50 USDT to refund.
    await app.pool.query(sql.unsafe`
      insert into outgoing_transfers (kind, reason, payment_id, store_id, from_address, to_address, coin_symbol, amount, amount_base_units)
      values ('refund', 'refund', ${payment.id}, ${store.id}, ${payment.wallet}, ${freshAddress()}, 'USDT', 50, 50000000)
    `);
    for (let round = 0; round < 8; round += 1) {
      await sendFromWallet(app.signer(), payment.wallet);
      await sendFromWallet(app.signer(), gas);
      await app.settle();
    }
    const rows = await outgoingOfPayment(app.pool, payment.id);
    const sweep = rows.find((r) => r.kind === 'sweep')!;
    const refused = rows.find((r) => r.kind === 'refund')!;
    assert.equal(sweep.state, 'confirmed');
    assert.equal(refused.state, 'failed', JSON.stringify(refused));
    assert.match(refused.failure_reason!, /the jetton wallet refused the transfer/);
    assert.equal((await balances(payment.wallet)).USDT, '0');
  });
});

describe('a jetton refund the destination refuses (a frozen USDT wallet)', () => {
  it('bounces back: the refund is failed, its USDT refundable again, the chain and the books agree to the base unit', async () => {
    const created = await app.request('POST', '/v1/payments', {
      token: store.token,
      body: { amount: '2', currency: 'USDT', payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.json.id as string;
    const wallet = Address.parse(created.json.paymentDetails.address).toRawString();
    await app.pay(created.json.paymentDetails.address, 'USDT', '2.75');
    await app.settle();
    const to = freshAddress();
    // Tether froze the customer's USDT wallet: it refuses every incoming transfer (real TVM, exit 45).
    const frozen = await app.sandbox.chain.lockJettonWallet(to, 'USDT');
    await recordRefundGasPayment(app.pool, { storeId: store.id, amountBaseUnits: 100_000_000n, note: 'test', now: new Date() });
    const refund = await app.request('POST', `/v1/payments/${id}/refunds`, { token: store.token, body: { coin: 'USDT', amount: '0.75', address: to } });
    assert.equal(refund.status, 201, refund.text);
    await app.drain(wallet);

    const rows = await outgoingOfPayment(app.pool, id);
    const refunded = rows.find((r) => r.kind === 'refund')!;
    assert.equal(refunded.state, 'failed', JSON.stringify(refunded));
    assert.equal(refunded.failure_kind, 'permanent');
    assert.match(refunded.failure_reason!, new RegExp(`refused the jettons; they came back to the deposit \\(refused by ${frozen}`));
    assert.equal(rows.find((r) => r.kind === 'sweep')!.state, 'confirmed', 'the counted 2 USDT went to the treasury');
    const [shown] = (await app.request('GET', `/v1/payments/${id}/refunds`, { token: store.token })).json.data;
    assert.equal(shown.status, 'failed');
    // On chain: nothing reached the frozen wallet; the 0.75 is back in the deposit.
    assert.equal((await balances(to)).USDT, '0');
    assert.equal((await balances(wallet)).USDT, '0.75');
    // On the books: refundable again, to the base unit.
    assert.equal(await refundableBaseUnits(app.pool, id, 'USDT'), 750_000n);
    // Chain = books: reconciliation (a minute on, past the confirmation) finds no difference.
    app.sandbox.chain.advance(2);
    await app.settle();
    const differences = await reconcileDeposits({ pool: app.pool, client: client(), log, now: () => new Date(Date.now() + 61_000) });
    assert.deepEqual(
      differences.filter((d) => d.paymentId === id),
      [],
    );
    const books = await app.pool.anyFirst(
      sql.type(z.object({ difference: z.string() }))`select difference_base_units::text as difference from deposit_reconciliations where payment_id = ${id}`,
    );
    assert.ok(books.length === 2 && books.every((d) => d === '0'), JSON.stringify(books));
    // The merchant can refund it again (elsewhere; the bounced refund's gas was spent: paid for again).
    await recordRefundGasPayment(app.pool, { storeId: store.id, amountBaseUnits: 100_000_000n, note: 'test', now: new Date() });
    const again = await app.request('POST', `/v1/payments/${id}/refunds`, {
      token: store.token,
      body: { coin: 'USDT', amount: '0.75', address: freshAddress() },
    });
    assert.equal(again.status, 201, again.text);
  });
});

describe('a jetton refund is confirmed when the customer has it (issue 44 §3)', () => {
  /** The refund.* events the store's webhook endpoint was given for a payment, in order. */
  const refundEvents = (paymentId: string) =>
    app.pool.anyFirst(sql.type(z.object({ event: z.string() }))`
      select event from webhook_deliveries where payment_id = ${paymentId} and event like 'refund.%' order by created_at, id
    `);
  /** A webhook endpoint of the store hearing refund events (its public URL is never called here: the deliveries are only recorded). */
  const endpoint = async (storeId: string) => {
    await app.pool.query(sql.unsafe`
      insert into webhook_endpoints (store_id, url, events, created_at) values (${storeId}, 'https://merchant.example/hook', ${sql.array(['refund.confirmed', 'refund.failed'], 'text')}, now())
    `);
  };

  /** A store of `methods` with a treasury and a refund endpoint, and its payment in `coin` (id and deposit wallet, raw). */
  const storeWithPayment = async (methods: string, coin: 'TON' | 'USDT', amount: string) => {
    const own = await app.store({ methods });
    await updateStore(app.pool, own.id, { treasury: freshAddress() });
    await endpoint(own.id);
    const created = await app.request('POST', '/v1/payments', {
      token: own.token,
      body: { amount, currency: coin, payment_options: { methods: [{ coin, chain: 'TON' }] } },
    });
    assert.equal(created.status, 201, created.text);
    const address = created.json.paymentDetails.address as string;
    return { own, id: created.json.id as string, address, wallet: Address.parse(address).toRawString() };
  };

  it("stays sent while the customer's jetton wallet has not taken it (its shard block committed late), confirmed and told once it has", async () => {
    const chain = app.sandbox.chain;
    const { own, id, address, wallet } = await storeWithPayment('USDT/TON', 'USDT', '2');
    await app.pay(address, 'USDT', '2.75');
    await app.settle();
    await app.drain(wallet); // the sale's 2 USDT swept
    await recordRefundGasPayment(app.pool, { storeId: own.id, amountBaseUnits: 100_000_000n, note: 'test', now: new Date() });
    const to = freshAddress();
    const refund = await app.request('POST', `/v1/payments/${id}/refunds`, { token: own.token, body: { coin: 'USDT', amount: '0.75', address: to } });
    assert.equal(refund.status, 201, refund.text);
    const customerWallet = (await chain.jettonWalletOf(Address.parse(chain.jettonMasters().USDT!), Address.parse(to))).toRawString();
    // The blocks are sealed by the test alone: the customer's jetton wallet's transaction is held 6 blocks.
    chain.stopBlockClock();
    try {
      const holding: SignerDeps = {
        ...app.signer(),
        hooks: { afterBroadcast: (transfer) => (transfer.id === refund.json.id ? chain.commitLateOnly(customerWallet, 6) : undefined) },
      };
      let row = (await outgoingOfPayment(app.pool, id, 'refund'))[0]!;
      for (let round = 0; round < 12 && row.state !== 'confirmed'; round += 1) {
        await sendFromWallet(holding, wallet);
        await sendFromWallet(holding, gas);
        await app.settle();
        row = (await outgoingOfPayment(app.pool, id, 'refund'))[0]!;
      }
      // The deposit's transaction left: on the books it moved, but the customer does not have it yet.
      assert.equal(row.state, 'confirmed', JSON.stringify(row));
      assert.equal(row.delivered_at, null);
      const shown = async () => (await app.request('GET', `/v1/payments/${id}/refunds`, { token: own.token })).json.data[0];
      assert.equal((await shown()).status, 'sent');
      assert.deepEqual(await refundEvents(id), [], 'no refund.confirmed before the customer has it');
      // The customer's jetton wallet's block is committed: confirmed, and told once.
      await app.settle();
      await app.settle();
      assert.equal((await balances(to)).USDT, '0.75');
      const done = (await outgoingOfPayment(app.pool, id, 'refund'))[0]!;
      assert.ok(done.delivered_at !== null, JSON.stringify(done));
      assert.equal((await shown()).status, 'confirmed');
      assert.deepEqual(await refundEvents(id), ['refund.confirmed']);
    } finally {
      chain.startBlockClock();
    }
  });

  it('a refund of a second coin (USDT paid to a TON payment) bounced by a frozen USDT wallet is caught: failed, never told confirmed, the USDT refundable again, chain = books', async () => {
    const { own, id, address, wallet } = await storeWithPayment('TON/TON', 'TON', '1');
    await app.pay(address, 'TON', '1');
    await app.pay(address, 'USDT', '3'); // by mistake: booked as wrong coin from its notification
    await app.settle();
    assert.equal(await refundableBaseUnits(app.pool, id, 'USDT'), 3_000_000n);
    const to = freshAddress();
    const frozen = await app.sandbox.chain.lockJettonWallet(to, 'USDT');
    await recordRefundGasPayment(app.pool, { storeId: own.id, amountBaseUnits: 100_000_000n, note: 'test', now: new Date() });
    const refund = await app.request('POST', `/v1/payments/${id}/refunds`, { token: own.token, body: { coin: 'USDT', amount: '3', address: to } });
    assert.equal(refund.status, 201, refund.text);
    await app.drain(wallet);
    await app.settle();
    const row = (await outgoingOfPayment(app.pool, id, 'refund')).find((r) => r.id === refund.json.id)!;
    assert.equal(row.state, 'failed', JSON.stringify(row));
    assert.match(row.failure_reason!, new RegExp(`refused the jettons; they came back to the deposit \\(refused by ${frozen}`));
    assert.equal((await balances(to)).USDT ?? '0', '0');
    assert.equal((await balances(wallet)).USDT, '3');
    assert.equal(await refundableBaseUnits(app.pool, id, 'USDT'), 3_000_000n);
    assert.deepEqual(await refundEvents(id), ['refund.failed'], 'never told confirmed');
    await assertBooksMatchChain(app, id, wallet);
  });
});

describe("a jetton transfer's failed top-ups", () => {
  it('back off (1, then 2 minutes) and after 3 the transfer fails, transiently, with a retry time; nothing left the gas wallet', async () => {
    const payment = await completedUsdt('2');
    const t0 = new Date();
    let now = t0;
    const at = (seconds: number) => {
      now = new Date(t0.getTime() + seconds * 1000);
    };
    const deps = (): SignerDeps => ({ ...app.signer(), now: () => now });
    const topUps = () => outgoingOfPayment(app.pool, payment.id, 'gas_top_up');
    const gasBefore = gasMessages();
    // A top-up the gas wallet's message never delivered (as a batch the chain refused would leave it).
    const failLast = async () => {
      const last = (await topUps()).find((t) => t.state === 'planned')!;
      await app.pool.query(sql.unsafe`
        update outgoing_transfers set state = 'failed', failure_kind = 'permanent', failure_reason = 'the wallet sent nothing: test', failed_at = ${sql.timestamp(now)}
        where id = ${last.id}
      `);
    };
    assert.deepEqual(await sendFromWallet(deps(), payment.wallet), {
      outcome: 'waiting_for_gas',
      transferId: (await outgoingOfPayment(app.pool, payment.id))[0]!.id,
      topUpPlanned: true,
    });
    await failLast();
    at(30);
    assert.equal(((await sendFromWallet(deps(), payment.wallet)) as { topUpPlanned: boolean }).topUpPlanned, false, 'within the first minute: none');
    assert.equal((await topUps()).length, 1);
    at(61);
    assert.equal(((await sendFromWallet(deps(), payment.wallet)) as { topUpPlanned: boolean }).topUpPlanned, true, 'after a minute: a second');
    await failLast();
    at(61 + 100);
    assert.equal(((await sendFromWallet(deps(), payment.wallet)) as { topUpPlanned: boolean }).topUpPlanned, false, 'then two minutes');
    at(61 + 121);
    assert.equal(((await sendFromWallet(deps(), payment.wallet)) as { topUpPlanned: boolean }).topUpPlanned, true, 'a third');
    await failLast();
    at(61 + 121 + 3600);
    const outcome = await sendFromWallet(deps(), payment.wallet);
    assert.equal(outcome.outcome, 'failed');
    const sweep = (await outgoingOfPayment(app.pool, payment.id)).find((t) => t.kind === 'sweep')!;
    assert.equal(sweep.state, 'failed');
    assert.equal(sweep.failure_kind, 'transient');
    assert.match(sweep.failure_reason!, /gas top-ups from the gas wallet failed 3 times/);
    assert.ok(sweep.retry_at && sweep.retry_at > now, 'the planner tries it again later, with its own backoff and cap');
    assert.equal((await topUps()).length, 3);
    assert.equal(gasMessages(), gasBefore, 'the gas wallet sent nothing');
    assert.equal((await balances(payment.wallet)).USDT, '2');
  });
});

describe("the gas wallet's batch window", () => {
  it("a top-up planned while the batch waits joins it: the gas wallet's job keeps its run_at (a stream of top-ups cannot push it back)", async () => {
    const [a, b] = [await completedUsdt('1'), await completedUsdt('1')];
    const runAt = () =>
      app.pool.oneFirst(sql.type(z.object({ run_at: z.date() }))`select run_at from graphile_worker.jobs where key = ${`outgoing__send:${gas}`}`);
    assert.equal((await sendFromWallet(app.signer(), a.wallet)).outcome, 'waiting_for_gas');
    const first = await runAt();
    // Half a second later by the signer's clock: under Graphile's default (replace) the job would move to then + 1 s.
    const later = new Date(Date.now() + 500);
    assert.equal((await sendFromWallet({ ...app.signer(), now: () => later }, b.wallet)).outcome, 'waiting_for_gas');
    assert.equal((await runAt()).getTime(), first.getTime());
    await app.drain(a.wallet, b.wallet);
    assert.equal(
      (await outgoingOfPayment(app.pool, a.id, 'gas_top_up'))[0]!.transaction_hash,
      (await outgoingOfPayment(app.pool, b.id, 'gas_top_up'))[0]!.transaction_hash,
    );
  });
});
