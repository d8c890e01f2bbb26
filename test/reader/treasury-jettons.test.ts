// Jettons paid straight to a store's treasury by reference (issue 43, CONTRACT §12) on the real
// sandbox chain: sandbox wallets play the treasury and the customer; the customer's wallet sends a
// TEP-74 transfer to its own jetton wallet with destination = the treasury and forward_payload = the
// reference. The chain reader reads the treasury's jetton wallet of each accepted coin (asked of the
// master once) block by block and matches from the internal_transfer that reaches it — with a
// notification or without one (forward_ton_amount = 0). Booked as a deposit's jetton transfer
// (completed, wrong coin); a mistyped reference is kept as unmatched jettons. Books = chain: every
// base unit the treasury's jetton wallet received is on the books, on a payment or unmatched.
// Reconciliation heals the treasury's jetton wallets as it heals deposits: a transfer the block
// stream never showed, or that arrived while no reader ran, is booked from the wallet's history, once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Address, beginCell } from '@ton/core';
import { pino } from 'pino';
import { createChainClient } from '../../src/chain/client.ts';
import { toncenterV3History } from '../../src/chain/history.ts';
import { holdOutOfBlockStream } from '../../src/chain/sandbox/history.ts';
import { SANDBOX_JSON_RPC_PATH, SANDBOX_TONCENTER_PATH } from '../../src/chain/sandbox/path.ts';
import { accountHealer } from '../../src/reader/heal.ts';
import { reconcileDeposits } from '../../src/treasury/reconcile.ts';
import { sql, z } from '../../src/db/pool.ts';
import { toBaseUnits } from '../../src/money.ts';
import { updateStore } from '../../src/stores/stores.ts';
import { sandboxBalances, startChainApp, type ChainTestApp } from '../helpers/chain.ts';

let app: ChainTestApp;
let store: Awaited<ReturnType<ChainTestApp['store']>>;
let treasury: string;
let customer: string;

const raw = (address: string) => Address.parse(address).toRawString();
/** A sandbox wallet (createWallet) starts with this much of each jetton. */
const WALLET_JETTONS = '10000';

async function newPayment(amount: string, coin = 'USDT', token = store.token) {
  const created = await app.request('POST', '/v1/payments', {
    token,
    body: { amount, currency: coin, payment_options: { methods: [{ coin, chain: 'TON' }] }, ttl: 3600 },
  });
  assert.equal(created.status, 201, created.text);
  return created.json;
}
const get = async (id: string, token = store.token) => (await app.request('GET', `/v1/payments/${id}`, { token })).json;
const books = async (id: string, token = store.token) => (await app.request('GET', `/v1/payments/${id}/transfers`, { token })).json.data as any[];
const unmatched = async () => (await app.request('GET', '/v1/unmatched-transfers', { token: store.token })).json.data as any[];
/** The customer's wallet sends `amount` of `coin` to the treasury, the text comment as forward_payload. */
const payTreasury = (coin: string, amount: string, comment: string | undefined, notify = true) =>
  app.pay(treasury, coin, amount, { from: customer, notify, ...(comment === undefined ? {} : { comment }) });

/** The treasury's jetton wallet of `coin`, as the reader found it (jetton_wallets). */
const treasuryWallet = (coin: string, of = treasury) =>
  app.pool.maybeOneFirst(sql.type(z.object({ address: z.string() }))`
    select w.address from jetton_wallets w join jetton_masters m on m.master_address = w.master_address and m.network = 'sandbox'
    where w.owner_address = ${of} and m.coin_symbol = ${coin} and w.genuine
  `);

/** Every base unit of `coin` the treasury received is on the books: booked on payments, or kept as unmatched (none sent out here). */
async function assertJettonBooksMatchChain(coin: string, decimals: number, of = treasury) {
  const wallet = await treasuryWallet(coin, of);
  assert.ok(wallet, `the reader knows the treasury's ${coin} wallet`);
  const onBooks = await app.pool.oneFirst(sql.type(z.object({ total: z.string() }))`
    select ((select coalesce(sum(amount_base_units), 0) from transfers where account = ${wallet} and coin_symbol = ${coin})
          + (select coalesce(sum(amount_base_units), 0) from unmatched_transfers where account = ${wallet} and state <> 'assigned'))::text as total
  `);
  const held = toBaseUnits((await sandboxBalances(app, of))[coin] ?? '0', decimals);
  assert.equal(BigInt(onBooks), held - toBaseUnits(WALLET_JETTONS, decimals), `${coin}: books = chain`);
}

before(async () => {
  app = await startChainApp();
  treasury = raw((await app.request('POST', '/sandbox/v1/wallets')).json.address);
  customer = raw((await app.request('POST', '/sandbox/v1/wallets')).json.address);
  store = await app.store({ methods: 'TON/TON,USDT/TON,NOT/TON', refundWindowDays: 0 });
  await updateStore(app.pool, store.id, { treasury, settlement: 'treasury' });
  // A first TON payment, so the reader has read the treasury's jetton wallets before any jetton moves.
  await newPayment('1', 'TON');
  await app.settle();
});
after(async () => {
  await app.close();
});

describe('jettons paid to a treasury', () => {
  it('a USDT payment carries the reference as the forward_payload; the checkout asks the TEP-74 transfer to the treasury with it', async () => {
    const payment = await newPayment('2');
    const details = payment.paymentDetails;
    assert.equal(raw(details.address), treasury);
    const comment = beginCell().storeUint(0, 32).storeStringTail(details.reference).endCell();
    assert.equal(details.payload, comment.toBoc().toString('base64'));
    const request = await app.request('GET', `/pay/v1/checkout/payments/${payment.id}/ton-connect?account=${encodeURIComponent(customer)}`);
    assert.equal(request.status, 200, request.text);
    const [message] = request.json.messages;
    assert.equal(message.amount, '50000000', 'the same 0.05 TON as a deposit payment (the excess comes back)');
    // The customer's wallet signs it as TON Connect asks: TON to its own jetton wallet with that body.
    const { hash } = await app.pay(message.address, 'TON', '0.05', { from: customer, payload: message.payload });
    assert.ok(hash);
    await app.settle();
    const paid = await get(payment.id);
    assert.equal(paid.status, 'completed', JSON.stringify(await books(payment.id)));
    const [transfer] = await books(payment.id);
    assert.equal(transfer.coin, 'USDT');
    assert.equal(transfer.amountBaseUnits, '2000000');
    assert.equal(transfer.account, await treasuryWallet('USDT'));
    assert.equal(transfer.comment, details.reference);
    assert.equal(transfer.effect, 'completed');
    assert.equal(
      await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from outgoing_transfers where payment_id = ${payment.id}`),
      0,
      'nothing to sweep',
    );
    await assertJettonBooksMatchChain('USDT', 6);
  });

  it('with a notification, and with forward_ton_amount = 0 (none reaches the treasury): both matched from the internal_transfer', async () => {
    const notified = await newPayment('1.5');
    const silent = await newPayment('0.75');
    await payTreasury('USDT', '1.5', notified.paymentDetails.reference, true);
    await payTreasury('USDT', '0.75', silent.paymentDetails.reference.replace('-', '').toLowerCase(), false);
    await app.settle();
    assert.equal((await get(notified.id)).status, 'completed');
    assert.equal((await get(silent.id)).status, 'completed');
    assert.deepEqual(
      (await books(silent.id)).map((t) => [t.coin, t.amountBaseUnits, t.effect]),
      [['USDT', '750000', 'completed']],
    );
    await assertJettonBooksMatchChain('USDT', 6);
  });

  it('partial then overpaid in USDT, and another accepted jetton with the reference is booked as the wrong coin', async () => {
    const payment = await newPayment('3');
    const reference: string = payment.paymentDetails.reference;
    await payTreasury('USDT', '1', reference);
    await app.settle();
    assert.equal((await get(payment.id)).status, 'pending');
    await payTreasury('NOT', '5', reference);
    await payTreasury('USDT', '2.5', reference);
    await app.settle();
    const paid = await get(payment.id);
    assert.equal(paid.status, 'completed');
    assert.ok(paid.anomalies.includes('wrong_coin'), JSON.stringify(paid.anomalies));
    const effects = (await books(payment.id)).map((t) => [t.coin, t.effect]);
    assert.deepEqual(effects, [
      ['USDT', 'partial'],
      ['NOT', 'wrong_coin'],
      ['USDT', 'overpaid'],
    ]);
    await assertJettonBooksMatchChain('USDT', 6);
    await assertJettonBooksMatchChain('NOT', 9);
  });

  it('a mistyped reference in a jetton transfer is kept as unmatched USDT, suggesting the payment one character away', async () => {
    const payment = await newPayment('0.9');
    const reference: string = payment.paymentDetails.reference;
    const at = 6;
    const typo = `${reference.slice(0, at)}${reference[at] === '7' ? '8' : '7'}${reference.slice(at + 1)}`;
    const { hash } = await payTreasury('USDT', '0.9', typo, false);
    await app.settle();
    assert.equal((await get(payment.id)).status, 'pending');
    assert.deepEqual(await books(payment.id), []);
    const kept = (await unmatched()).find((u) => u.transactionHash === hash);
    assert.ok(kept, 'kept as unmatched');
    assert.equal(kept.coin, 'USDT');
    assert.equal(kept.amount, '0.9');
    assert.equal(kept.reason, 'malformed_reference');
    assert.equal(kept.reference, typo.replace('-', '').replace(/^(.{4})/, '$1-'));
    assert.equal(kept.sender, customer);
    assert.ok(
      kept.suggestions.some((s: any) => s.paymentID === payment.id && s.why === 'reference_one_character_away'),
      JSON.stringify(kept.suggestions),
    );
    await assertJettonBooksMatchChain('USDT', 6);
    // Assigned by a person, it completes the payment in USDT at its chain time.
    const assigned = await app.request('POST', `/v1/unmatched-transfers/${kept.id}/assign`, { token: store.token, body: { paymentID: payment.id } });
    assert.equal(assigned.status, 200, assigned.text);
    assert.equal((await get(payment.id)).status, 'completed');
    assert.deepEqual(
      (await books(payment.id)).map((t) => [t.coin, t.amountBaseUnits]),
      [['USDT', '900000']],
    );
    await assertJettonBooksMatchChain('USDT', 6);
  });

  it('USDT below the store’s 0.01 is dust: kept and listed (dust: true), every base unit booked; 0.01 itself is not', async () => {
    const dust = await payTreasury('USDT', '0.009', undefined);
    const edge = await payTreasury('USDT', '0.01', 'hello', false);
    await app.settle();
    const list = await unmatched();
    const kept = list.find((u) => u.transactionHash === dust.hash);
    assert.deepEqual([kept?.coin, kept?.amount, kept?.reason, kept?.dust], ['USDT', '0.009', 'no_reference', true]);
    assert.equal(list.find((u) => u.transactionHash === edge.hash)?.dust, undefined);
    await assertJettonBooksMatchChain('USDT', 6);
  });
});

describe("reconciliation heals the treasury's jetton wallets", () => {
  const log = pino({ level: process.env.LOG_LEVEL ?? 'silent' });
  /** As the deposits__reconcile task runs it: each account's history booked through the reader's path. */
  const reconcile = () => {
    const history = toncenterV3History({ baseUrl: `${app.url}${SANDBOX_TONCENTER_PATH}` });
    const heal = accountHealer({ history, book: app.newBooker().book, log });
    const client = createChainClient({ endpoint: `${app.url}${SANDBOX_JSON_RPC_PATH}` });
    return reconcileDeposits({ pool: app.pool, client, log, now: () => new Date(), heal, network: 'sandbox', jettonWallets: history.jettonWallets });
  };
  const unmatchedAt = (account: string) =>
    app.pool.anyFirst(sql.type(z.object({ hash: z.string() }))`select hash from unmatched_transfers where account = ${account}`);
  const transfersAt = (account: string) =>
    app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from transfers where account = ${account}`);

  it('a USDT transfer the block stream never showed (forward_ton_amount = 0) is booked on its payment, once; books = chain', async () => {
    const payment = await newPayment('1.2');
    const wallet = (await treasuryWallet('USDT'))!;
    const chain = app.sandbox.chain;
    chain.stopBlockClock();
    try {
      await payTreasury('USDT', '1.2', payment.paymentDetails.reference, false);
      const seqno = chain.sealBlock();
      // The treasury's jetton wallet's transactions (the internal_transfer), before any reader can ask.
      assert.ok(holdOutOfBlockStream(chain, wallet, seqno) >= 1);
      holdOutOfBlockStream(chain, treasury, seqno);
    } finally {
      chain.startBlockClock();
    }
    await app.settle();
    assert.equal((await get(payment.id)).status, 'pending', 'the reader never saw it');
    await reconcile();
    assert.equal((await get(payment.id)).status, 'completed');
    assert.deepEqual(
      (await books(payment.id)).map((t) => [t.coin, t.amountBaseUnits, t.effect, t.account]),
      [['USDT', '1200000', 'completed', wallet]],
    );
    const booked = await transfersAt(wallet);
    await reconcile();
    assert.equal(await transfersAt(wallet), booked, 'healed again: nothing doubled');
    await assertJettonBooksMatchChain('USDT', 6);
  });

  it('while no reader runs, a new treasury’s USDT wallet (never looked up) is asked of the master and its transfer booked; the reader, back, doubles nothing', async () => {
    await app.stopReader();
    const fresh = raw((await app.request('POST', '/sandbox/v1/wallets')).json.address);
    // The sandbox's opening 10,000 USDT reached it before any payment settled there: the merchant's
    // own history, which healing reads and leaves off the books. A second on (chain time has whole seconds).
    const opened = app.sandbox.chain.now;
    while (Math.floor(Date.now() / 1000) <= opened) await new Promise((resolve) => setTimeout(resolve, 50));
    const other = await app.store({ methods: 'TON/TON,USDT/TON', refundWindowDays: 0 });
    await updateStore(app.pool, other.id, { treasury: fresh, settlement: 'treasury' });
    assert.equal(await treasuryWallet('USDT', fresh), null, 'no reader has looked it up');
    const payment = await newPayment('0.8', 'USDT', other.token);
    await app.pay(fresh, 'USDT', '0.8', { from: customer, comment: payment.paymentDetails.reference });
    app.sandbox.chain.sealBlock();
    app.sandbox.chain.sealBlock();
    await reconcile();
    const wallet = await treasuryWallet('USDT', fresh);
    assert.ok(wallet, 'reconciliation asked the master for it');
    assert.equal((await get(payment.id, other.token)).status, 'completed');
    assert.deepEqual(
      (await books(payment.id, other.token)).map((t) => [t.coin, t.amountBaseUnits, t.effect]),
      [['USDT', '800000', 'completed']],
    );
    const restarted = app.newReader({ id: 'restarted' });
    try {
      assert.equal((await restarted.catchUp()).owner, true);
    } finally {
      await restarted.release();
    }
    assert.equal(await transfersAt(wallet), 1, 'the reader read the same block: booked once');
    assert.deepEqual(await unmatchedAt(wallet), [], 'the opening balance is no unmatched money');
    await assertJettonBooksMatchChain('USDT', 6, fresh);
  });
});

describe('a reader that restarts', () => {
  it('USDT sent while no reader ran, with and without a notification, is booked from its cursor; the same blocks read again change nothing', async () => {
    // The background reader stopped in the test before; each reader here starts from the cursor.
    const cursor = (await app.cursor())!.last;
    const notified = await newPayment('0.6');
    const silent = await newPayment('0.35');
    await payTreasury('USDT', '0.6', notified.paymentDetails.reference, true);
    await payTreasury('USDT', '0.35', silent.paymentDetails.reference, false);
    app.sandbox.chain.sealBlock();
    app.sandbox.chain.sealBlock();
    assert.equal((await get(notified.id)).status, 'pending', 'no reader ran');
    const back = app.newReader({ id: 'back' });
    assert.equal((await back.catchUp()).owner, true);
    await back.release();
    assert.equal((await get(notified.id)).status, 'completed');
    assert.equal((await get(silent.id)).status, 'completed');
    // As if it had crashed before writing its cursor: the same blocks are read again.
    await app.pool.query(sql.unsafe`update chain_reader set last_block_seqno = ${cursor} where network = 'sandbox'`);
    const again = app.newReader({ id: 'again' });
    assert.equal((await again.catchUp()).owner, true);
    await again.release();
    assert.deepEqual(
      [...(await books(notified.id)), ...(await books(silent.id))].map((t) => [t.coin, t.amountBaseUnits, t.effect]),
      [
        ['USDT', '600000', 'completed'],
        ['USDT', '350000', 'completed'],
      ],
    );
    await assertJettonBooksMatchChain('USDT', 6);
  });
});
