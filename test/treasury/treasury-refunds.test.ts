// A sale refunded after its window, from the store's treasury, signed by the merchant's wallet
// (issue 29 item 2, CONTRACT §11) on the real sandbox chain: the treasury is a wallet the sandbox
// holds the key of (POST /sandbox/v1/wallets), and the test plays it signing the TON Connect request
// the API returned (POST /sandbox/v1/transfers with `from` and `payload`). The reader sees the
// transfer leave the treasury by its reference and confirms the refund (books = chain); one nobody
// signs expires — only once no wallet's own lifetime can land it (heldUntil, issue 44 §1); one signed
// twice is confirmed once and its repeat booked; one signed for another amount is booked as what
// moved (issue 48.13); the same money refunded twice is flagged (beyondSale, issue 48.6); the link
// paid from another account is seen at the customer; a jetton master without wallet_code is asked
// for the treasury's jetton wallet. refund_exceeds_balance says why the sale is not refundable from
// its deposit and names the next step (item 3). The tests that move the chain ahead run last.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Address, beginCell, Cell, toNano } from '@ton/core';
import { transferQueryId } from '../../src/chain/jettonTransfer.ts';
import { sql, z } from '../../src/db/pool.ts';
import { commentOf, parseJettonTransferRequest } from '../../src/chain/detect.ts';
import { LATE_COMMIT_MARGIN_MS } from '../../src/chain/clock.ts';
import { fromBaseUnits } from '../../src/money.ts';
import { updateStore } from '../../src/stores/stores.ts';
import { outgoingOfPayment } from '../../src/treasury/outgoing.ts';
import { treasuryRefundsPaidTwice } from '../../src/metrics.ts';
import { TREASURY_REFUND_TTL_MS, WALLET_LONGEST_LIFETIME_MS } from '../../src/treasury/treasuryRefunds.ts';
import { startEventReceiver } from '../helpers/eventReceiver.ts';
import { assertBooksMatchChain, freshAddress, sandboxBalances, startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { assertError } from '../helpers/payments.ts';

let app: ChainTestApp;
let store: Awaited<ReturnType<ChainTestApp['store']>>;
let treasury: string;

const refund = (id: string, body: unknown) => app.request('POST', `/v1/payments/${id}/refunds`, { token: store.token, body });
const refunds = async (id: string) => (await app.request('GET', `/v1/payments/${id}/refunds`, { token: store.token })).json.data as any[];

/** A sale, completed and swept to the treasury (the store has no refund window). */
async function sweptSale(coin: 'TON' | 'USDT', amount: string) {
  const created = await app.request('POST', '/v1/payments', {
    token: store.token,
    body: { amount, currency: coin, payment_options: { methods: [{ coin, chain: 'TON' }] } },
  });
  assert.equal(created.status, 201, created.text);
  const wallet = Address.parse(created.json.paymentDetails.address).toRawString();
  await app.pay(created.json.paymentDetails.address, coin, amount);
  await app.settle();
  await app.drain(wallet);
  const [sweep] = await outgoingOfPayment(app.pool, created.json.id, 'sweep');
  assert.equal(sweep?.state, 'confirmed', JSON.stringify(sweep));
  return { id: created.json.id as string, wallet };
}

/**
 * The merchant's wallet (the treasury) signs the TON Connect request: each of its messages, as a
 * wallet sends it, whenever the test calls it — as a wallet that ignores validUntil would, late.
 * `amount`: a TON refund signed for another amount than asked (the wallet let the merchant edit it).
 */
async function sign(request: { from: string; messages: Array<{ address: string; amount: string; payload: string }> }, options: { amount?: string } = {}) {
  assert.equal(request.from, treasury);
  for (const message of request.messages)
    await app.pay(message.address, 'TON', options.amount ?? fromBaseUnits(BigInt(message.amount), 9), { from: treasury, payload: message.payload });
  await app.settle();
}

/**
 * A jetton refund's request as a wallet that let the merchant edit the amount signs it: the TEP-74
 * transfer body with another amount, everything else (query id, destination, the reference) as asked.
 */
async function signJetton(request: { from: string; messages: Array<{ address: string; amount: string; payload: string }> }, amount: bigint) {
  const [message] = request.messages;
  const body = Cell.fromBase64(message!.payload).beginParse();
  const op = body.loadUint(32);
  const queryId = body.loadUintBig(64);
  body.loadCoins();
  const edited = beginCell().storeUint(op, 32).storeUint(queryId, 64).storeCoins(amount).storeSlice(body).endCell();
  await app.pay(message!.address, 'TON', fromBaseUnits(BigInt(message!.amount), 9), { from: treasury, payload: edited.toBoc().toString('base64') });
  await app.settle();
}

/** A store webhook endpoint for refund.confirmed while `run` runs; the payload of the refund's event. */
async function withRefundEvents(run: (eventOf: (refundId: string) => Promise<any>) => Promise<void>) {
  const receiver = await startEventReceiver(app);
  const endpoint = await app.request('POST', '/v1/webhook-endpoints', { token: store.token, body: { url: receiver.url, events: ['refund.confirmed'] } });
  assert.equal(endpoint.status, 201, endpoint.text);
  try {
    await run((refundId) =>
      app.pool.oneFirst(sql.type(z.object({ payload: z.any() }))`
        select payload from webhook_deliveries where event = 'refund.confirmed' and payload->>'refundID' = ${refundId}
      `),
    );
  } finally {
    await app.request('DELETE', `/v1/webhook-endpoints/${endpoint.json.id}`, { token: store.token });
    await receiver.close();
  }
}

/** Moves the sandbox chain (and the reader with it) to `seconds` past `instant` (an ISO time). */
async function chainTo(instant: string, seconds: number) {
  const ahead = Math.ceil((new Date(instant).getTime() - app.sandbox.chain.now * 1000) / 1000) + seconds;
  assert.ok(ahead >= 0, `the chain is already ${-ahead} s past ${instant} + ${seconds} s`);
  await app.advanceChain(ahead);
}

/** nanoTON the treasury holds on the chain. */
const treasuryTon = async () => BigInt(toNano((await sandboxBalances(app, treasury)).TON!));

/** nanoTON the books say left the treasury for a sale's TON refunds: what each confirmed one moved and its fee. */
const bookedOut = async (saleId: string) =>
  (await outgoingOfPayment(app.pool, saleId, 'refund'))
    .filter((row) => row.state === 'confirmed' && row.paid_from === null)
    .reduce((sum, row) => sum + BigInt(row.sent_amount_base_units!) + BigInt(row.fee_base_units!), 0n);

const paidTwice = async (why: string) => (await treasuryRefundsPaidTwice.get()).values.find((v) => v.labels.why === why)?.value ?? 0;

before(async () => {
  // Store endpoints at a local receiver (refund.confirmed's payload).
  app = await startChainApp({ WEBHOOK_ALLOW_INSECURE: 'true' });
  // Kassa's clock follows the chain where a test moved it ahead of the wall clock (advanceChain): a refund asked then gets a validUntil ahead of the chain.
  app.clock.follow(() => new Date(Math.max(Date.now(), app.sandbox.chain.now * 1000)));
  treasury = (await app.request('POST', '/sandbox/v1/wallets')).json.address;
  store = await app.store({ methods: 'TON/TON,USDT/TON', refundWindowDays: 0 });
  await updateStore(app.pool, store.id, { treasury });
});
after(() => app.close());

describe('refunds from the treasury, signed by the merchant', () => {
  it('a sandbox wallet is funded with 1,000 TON and 10,000 of each jetton', async () => {
    const fresh = (await app.request('POST', '/sandbox/v1/wallets')).json.address;
    const held = await sandboxBalances(app, fresh);
    assert.equal(held.TON, '1000');
    assert.equal(held.USDT, '10000');
    assert.equal(held.NOT, '10000');
  });

  it('a TON sale swept to the treasury: the deposit refund says why not and names the next step; the treasury refund, signed, is confirmed', async () => {
    const sale = await sweptSale('TON', '2.5');
    const customer = freshAddress();
    // From the deposit: the sale is the merchant's, swept on a date; the next step is "from": "treasury".
    const refused = await refund(sale.id, { coin: 'TON', amount: '2.5', address: customer });
    assertError(refused, 400, 'invalid_request_error', 'refund_exceeds_balance', 'amount');
    assert.match(refused.json.error.message, /the sale's counted 2\.5 TON is the merchant's: swept to the treasury on \d{4}-\d\d-\d\dT/);
    assert.match(refused.json.error.message, /Next step: refund the sale from the treasury — the same request with "from": "treasury"/);
    assert.doesNotMatch(refused.json.error.message, /will be paid from the treasury/);
    // More than the sale that reached the treasury: refused, saying how much may be.
    const over = await refund(sale.id, { coin: 'TON', amount: '2.6', address: customer, from: 'treasury' });
    assertError(over, 400, 'invalid_request_error', 'refund_exceeds_balance', 'amount');
    assert.match(
      over.json.error.message,
      /at most 2\.5 TON is refundable from the treasury; of the sale's counted 2\.5 TON, 2\.5 TON was swept to the treasury on /,
    );

    const before = BigInt(toNano((await sandboxBalances(app, treasury)).TON!));
    const asked = await refund(sale.id, { coin: 'TON', amount: '2.5', address: customer, from: 'treasury' });
    assert.equal(asked.status, 201, asked.text);
    const r = asked.json;
    assert.equal(r.status, 'awaiting_signature');
    assert.equal(r.from, 'treasury');
    assert.equal(r.receives, '2.5');
    const validUntil = r.tonconnect.validUntil;
    assert.equal(new Date(r.validUntil).getTime(), validUntil * 1000);
    assert.ok(Math.abs(validUntil * 1000 - (Date.now() + TREASURY_REFUND_TTL_MS)) < 5_000);
    // One message: 2.5 TON to the customer (non-bounceable), its payload the refund's reference.
    assert.equal(r.tonconnect.messages.length, 1);
    const [message] = r.tonconnect.messages;
    const to = Address.parseFriendly(message.address);
    assert.equal(to.isBounceable, false);
    assert.equal(to.address.toRawString(), customer);
    assert.equal(message.amount, toNano('2.5').toString());
    assert.equal(commentOf(Cell.fromBase64(message.payload)), `Kassa refund ${r.id}`);
    assert.equal(
      r.link,
      `ton://transfer/${message.address}?amount=${message.amount}&bin=${Buffer.from(message.payload, 'base64').toString('base64url')}&exp=${validUntil}`,
    );
    // Kassa's signer never touches it: nothing planned or sent from the treasury.
    assert.equal(await app.pool.exists(sql.unsafe`select 1 from outgoing_transfers where from_address = ${treasury} and state in ('planned', 'sent')`), false);
    // The same amount again while it awaits the signature: the sale is taken.
    const again = await refund(sale.id, { coin: 'TON', amount: '0.1', address: customer, from: 'treasury' });
    assertError(again, 400, 'invalid_request_error', 'refund_exceeds_balance', 'amount');
    assert.match(
      again.json.error.message,
      /2\.5 TON is taken by treasury refunds awaiting a signature \(held 660 s past their validUntil: a wallet may sign its own later lifetime\) or paid/,
    );

    await sign(r.tonconnect);
    const [done] = await refunds(sale.id);
    assert.equal(done.status, 'confirmed', JSON.stringify(done));
    assert.equal(done.tonconnect, undefined);
    assert.match(done.transactionHash, /^[0-9a-f]{64}$/);
    // Books = chain: the customer received exactly the amount from the treasury; the treasury paid it and the fee the books say.
    assert.equal(app.arrived(customer, treasury), toNano('2.5'));
    const row = (await outgoingOfPayment(app.pool, sale.id, 'refund'))[0]!;
    assert.equal(row.sent_amount_base_units, toNano('2.5').toString());
    const afterwards = BigInt(toNano((await sandboxBalances(app, treasury)).TON!));
    assert.equal(before - afterwards, toNano('2.5') + BigInt(row.fee_base_units!));
    // The deposit's books are untouched by it (the treasury is not a deposit).
    await assertBooksMatchChain(app, sale.id, sale.wallet);
    // The store's endpoints hear refund.confirmed like any refund's; the audit log has it.
    const audit = await app.pool.oneFirst(sql.type(z.object({ detail: z.any() }))`
      select detail from audit_log where subject = ${sale.id} and action = 'refund.create' order by at desc limit 1
    `);
    assert.equal(audit.from, 'treasury');
  });

  it("a USDT refund from the treasury that a frozen customer wallet bounces back to the treasury's jetton wallet turns failed: the USDT is the treasury's again, refundable again", async () => {
    const sale = await sweptSale('USDT', '10');
    const customer = freshAddress();
    const frozen = await app.sandbox.chain.lockJettonWallet(customer, 'USDT');
    const treasuryUsdt = (await sandboxBalances(app, treasury)).USDT;
    const asked = await refund(sale.id, { coin: 'USDT', amount: '7.5', address: customer, from: 'treasury' });
    assert.equal(asked.status, 201, asked.text);
    await sign(asked.json.tonconnect);
    await app.settle();
    const [done] = await refunds(sale.id);
    assert.equal(done.status, 'failed', JSON.stringify(done));
    assert.match(done.failureReason, new RegExp(`refused the jettons.*refused by ${frozen}`));
    assert.equal((await sandboxBalances(app, customer)).USDT ?? '0', '0');
    assert.equal((await sandboxBalances(app, treasury)).USDT, treasuryUsdt, 'the USDT came back to the treasury');
    const again = await refund(sale.id, { coin: 'USDT', amount: '7.5', address: freshAddress(), from: 'treasury' });
    assert.equal(again.status, 201, again.text);
  });

  it("a USDT sale: a TEP-74 transfer from the treasury's jetton wallet, signed, is confirmed; the customer gets exactly the amount", async () => {
    const sale = await sweptSale('USDT', '10');
    const customer = freshAddress();
    const treasuryUsdt = (await sandboxBalances(app, treasury)).USDT;
    const asked = await refund(sale.id, { coin: 'USDT', amount: '7.5', address: customer, from: 'treasury' });
    assert.equal(asked.status, 201, asked.text);
    const [message] = asked.json.tonconnect.messages;
    // To the treasury's jetton wallet (bounceable), 0.05 TON for the fees, the transfer body moving 7.5 USDT to the customer.
    const jettonWallet = Address.parseFriendly(message.address);
    assert.equal(jettonWallet.isBounceable, true);
    const master = Address.parse(app.sandbox.chain.jettonMasters().USDT!);
    assert.equal(jettonWallet.address.toRawString(), (await app.sandbox.chain.jettonWalletOf(master, Address.parse(treasury))).toRawString());
    assert.equal(message.amount, '50000000');
    const body = parseJettonTransferRequest(Cell.fromBase64(message.payload));
    // Its own query id (unique per transfer): a bounce back to the treasury's jetton wallet names the refund.
    assert.deepEqual(body, { queryId: transferQueryId(asked.json.id), amount: 7_500_000n, destination: customer, comment: `Kassa refund ${asked.json.id}` });
    await sign(asked.json.tonconnect);
    const [done] = await refunds(sale.id);
    assert.equal(done.status, 'confirmed', JSON.stringify(done));
    assert.equal((await sandboxBalances(app, customer)).USDT, '7.5');
    assert.equal(Number((await sandboxBalances(app, treasury)).USDT), Number(treasuryUsdt) - 7.5);
    const row = (await outgoingOfPayment(app.pool, sale.id, 'refund'))[0]!;
    assert.equal(row.sent_amount_base_units, '7500000');
    // The rest of the sale (2.5 USDT) is still refundable from the treasury; no more.
    const over = await refund(sale.id, { coin: 'USDT', amount: '2.6', address: customer, from: 'treasury' });
    assertError(over, 400, 'invalid_request_error', 'refund_exceeds_balance', 'amount');
    assert.match(over.json.error.message, /at most 2\.5 USDT is refundable from the treasury/);
  });

  it("USDT with no wallet_code for its master (as every mainnet and testnet master): the treasury's jetton wallet is asked of the master (get_wallet_address); signed, confirmed", async () => {
    const sale = await sweptSale('USDT', '3');
    const customer = freshAddress();
    // The sandbox's master registered as mainnet's are: no standard wallet code Kassa could compute offline with.
    await app.pool.query(sql.unsafe`update jetton_masters set wallet_code = null where network = 'sandbox' and coin_symbol = 'USDT'`);
    try {
      const asked = await refund(sale.id, { coin: 'USDT', amount: '2', address: customer, from: 'treasury' });
      assert.equal(asked.status, 201, asked.text);
      const [message] = asked.json.tonconnect.messages;
      const master = Address.parse(app.sandbox.chain.jettonMasters().USDT!);
      const treasuryWallet = await app.sandbox.chain.jettonWalletOf(master, Address.parse(treasury));
      assert.equal(Address.parse(message.address).toRawString(), treasuryWallet.toRawString());
      await sign(asked.json.tonconnect);
      const done = (await refunds(sale.id)).find((r) => r.id === asked.json.id);
      assert.equal(done.status, 'confirmed', JSON.stringify(done));
      assert.equal((await sandboxBalances(app, customer)).USDT, '2');
      const row = (await outgoingOfPayment(app.pool, sale.id, 'refund')).find((r) => r.id === asked.json.id)!;
      assert.equal(row.sent_amount_base_units, '2000000');
    } finally {
      await app.pool.query(sql.unsafe`
        update jetton_masters j set wallet_code = k.wallet_code from jetton_masters k
        where j.network = 'sandbox' and j.coin_symbol = 'USDT' and k.network = 'sandbox' and k.coin_symbol = 'NOT'
      `);
    }
  });

  it('a request signed twice (the merchant clicked twice): confirmed once, the second transfer booked as paidAgain', async () => {
    const sale = await sweptSale('TON', '1');
    const customer = freshAddress();
    const asked = await refund(sale.id, { coin: 'TON', amount: '0.4', address: customer, from: 'treasury' });
    assert.equal(asked.status, 201, asked.text);
    await sign(asked.json.tonconnect);
    await sign(asked.json.tonconnect);
    const [done] = await refunds(sale.id);
    assert.equal(done.status, 'confirmed');
    assert.equal(done.paidAgain.length, 1, JSON.stringify(done));
    assert.equal(done.paidAgain[0].amount, '0.4');
    assert.notEqual(done.paidAgain[0].transactionHash, done.transactionHash);
    // Books = chain: what left the treasury for the customer is the refund and its repeat, no more, no less.
    assert.equal(app.arrived(customer, treasury), toNano('0.4') * 2n);
    // The reader booking the same block again changes nothing.
    const repeats = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from treasury_refund_repeats`);
    assert.equal(repeats, 1);
  });

  it('"from": "treasury" is refused while the sale is in its deposit, and for a store without a treasury', async () => {
    const windowed = await app.store({ methods: 'TON/TON', refundWindowDays: 3 });
    await updateStore(app.pool, windowed.id, { treasury });
    const created = await app.request('POST', '/v1/payments', {
      token: windowed.token,
      body: { amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
    });
    await app.pay(created.json.paymentDetails.address, 'TON', '1');
    await app.settle();
    const inWindow = await app.request('POST', `/v1/payments/${created.json.id}/refunds`, {
      token: windowed.token,
      body: { coin: 'TON', amount: '1', address: freshAddress(), from: 'treasury' },
    });
    assertError(inWindow, 400, 'invalid_request_error', 'invalid_request', 'from');
    assert.match(inWindow.json.error.message, /still in its deposit \(refundable from its deposit until .*\): leave out "from"/);
    const bare = await app.store({ methods: 'TON/TON', refundWindowDays: 0 });
    const paid = await app.request('POST', '/v1/payments', {
      token: bare.token,
      body: { amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
    });
    const noTreasury = await app.request('POST', `/v1/payments/${paid.json.id}/refunds`, {
      token: bare.token,
      body: { coin: 'TON', amount: '1', address: freshAddress(), from: 'treasury' },
    });
    assertError(noTreasury, 400, 'invalid_request_error', 'invalid_request', 'from');
    assert.match(noTreasury.json.error.message, /only for a store with a treasury address/);
  });
  it('a refund signed for less than asked: booked as what moved, refund.confirmed says the same amount, the difference flagged (askedAmount); the rest refundable again', async () => {
    const receiver = await startEventReceiver(app);
    try {
      const endpoint = await app.request('POST', '/v1/webhook-endpoints', { token: store.token, body: { url: receiver.url, events: ['refund.confirmed'] } });
      assert.equal(endpoint.status, 201, endpoint.text);
      const sale = await sweptSale('TON', '1');
      const customer = freshAddress();
      const asked = await refund(sale.id, { coin: 'TON', amount: '1', address: customer, from: 'treasury' });
      assert.equal(asked.status, 201, asked.text);
      const held = await treasuryTon();
      await sign(asked.json.tonconnect, { amount: '0.3' });
      const [done] = await refunds(sale.id);
      assert.equal(done.status, 'confirmed', JSON.stringify(done));
      assert.equal(done.amount, '0.3');
      assert.equal(done.receives, '0.3');
      assert.equal(done.askedAmount, '1');
      assert.equal(app.arrived(customer, treasury), toNano('0.3'));
      // Books = chain: the treasury paid what moved and its fee, to the nanoTON.
      assert.equal(held - (await treasuryTon()), await bookedOut(sale.id));
      const event = await app.pool.oneFirst(sql.type(z.object({ payload: z.any() }))`
        select payload from webhook_deliveries where event = 'refund.confirmed' and payload->>'refundID' = ${done.id}
      `);
      assert.equal(event.amount, '0.3');
      assert.equal(event.askedAmount, '1');
      // What did not move is refundable from the treasury again: 0.7 TON, no more.
      const over = await refund(sale.id, { coin: 'TON', amount: '0.8', address: customer, from: 'treasury' });
      assertError(over, 400, 'invalid_request_error', 'refund_exceeds_balance', 'amount');
      assert.match(over.json.error.message, /at most 0\.7 TON is refundable from the treasury/);
    } finally {
      await app.request('DELETE', `/v1/webhook-endpoints/${(await app.request('GET', '/v1/webhook-endpoints', { token: store.token })).json.data[0]?.id}`, {
        token: store.token,
      });
      await receiver.close();
    }
  });

  // Issue 48 items 6 and 13, variants (the reviewer's adversary cases): a jetton signed for less,
  // TON signed for more, the link paid by another account and then the request signed too.
  it('a USDT refund signed for less than asked: booked as what moved, refund.confirmed says the same, askedAmount flags it; the rest refundable again', async () => {
    await withRefundEvents(async (eventOf) => {
      const sale = await sweptSale('USDT', '10');
      const customer = freshAddress();
      const asked = await refund(sale.id, { coin: 'USDT', amount: '6', address: customer, from: 'treasury' });
      assert.equal(asked.status, 201, asked.text);
      await signJetton(asked.json.tonconnect, 2_500_000n);
      const [done] = await refunds(sale.id);
      assert.equal(done.status, 'confirmed', JSON.stringify(done));
      assert.deepEqual([done.amount, done.receives, done.askedAmount, done.beyondSale], ['2.5', '2.5', '6', undefined]);
      assert.equal((await sandboxBalances(app, customer)).USDT, '2.5');
      const row = (await outgoingOfPayment(app.pool, sale.id, 'refund'))[0]!;
      assert.deepEqual([row.amount_base_units, row.sent_amount_base_units], ['2500000', '2500000']);
      const event = await eventOf(done.id);
      assert.deepEqual([event.amount, event.askedAmount], ['2.5', '6']);
      // What did not move is refundable from the treasury again: 7.5 USDT, no more.
      const over = await refund(sale.id, { coin: 'USDT', amount: '7.6', address: customer, from: 'treasury' });
      assertError(over, 400, 'invalid_request_error', 'refund_exceeds_balance', 'amount');
      assert.match(over.json.error.message, /at most 7\.5 USDT is refundable from the treasury/);
    });
  });

  it("a USDT refund signed for less than asked that a frozen customer wallet bounces: failed (booked as what moved), the USDT the treasury's again", async () => {
    const sale = await sweptSale('USDT', '10');
    const customer = freshAddress();
    const frozen = await app.sandbox.chain.lockJettonWallet(customer, 'USDT');
    const treasuryUsdt = (await sandboxBalances(app, treasury)).USDT;
    const asked = await refund(sale.id, { coin: 'USDT', amount: '6', address: customer, from: 'treasury' });
    assert.equal(asked.status, 201, asked.text);
    await signJetton(asked.json.tonconnect, 2_500_000n);
    await app.settle();
    const [done] = await refunds(sale.id);
    assert.equal(done.status, 'failed', JSON.stringify(done));
    assert.match(done.failureReason, new RegExp(`refused by ${frozen}`));
    assert.deepEqual([done.amount, done.askedAmount], ['2.5', '6']);
    assert.equal((await sandboxBalances(app, treasury)).USDT, treasuryUsdt, 'the USDT came back to the treasury');
    // Nothing left the treasury for the sale: all of it is refundable again.
    const again = await refund(sale.id, { coin: 'USDT', amount: '10', address: freshAddress(), from: 'treasury' });
    assert.equal(again.status, 201, again.text);
  });

  it('a USDT refund signed for more than asked, beyond the sale: booked as what moved (askedAmount), the sale refunded twice by the excess (beyondSale, metric)', async () => {
    await withRefundEvents(async (eventOf) => {
      const sale = await sweptSale('USDT', '4');
      const customer = freshAddress();
      const asked = await refund(sale.id, { coin: 'USDT', amount: '3', address: customer, from: 'treasury' });
      assert.equal(asked.status, 201, asked.text);
      const before = await paidTwice('beyond_sale');
      await signJetton(asked.json.tonconnect, 5_000_000n);
      const [done] = await refunds(sale.id);
      assert.equal(done.status, 'confirmed', JSON.stringify(done));
      assert.deepEqual([done.amount, done.receives, done.askedAmount, done.beyondSale], ['5', '5', '3', '1']);
      assert.equal((await sandboxBalances(app, customer)).USDT, '5');
      assert.equal(await paidTwice('beyond_sale'), before + 1);
      assert.deepEqual([(await eventOf(done.id)).amount, (await eventOf(done.id)).askedAmount], ['5', '3']);
      assertError(
        await refund(sale.id, { coin: 'USDT', amount: '0.01', address: customer, from: 'treasury' }),
        400,
        'invalid_request_error',
        'refund_exceeds_balance',
        'amount',
      );
    });
  });

  it('a TON refund signed for more than asked: booked as what moved (askedAmount); within the sale no flag, beyond it beyondSale; books = chain', async () => {
    const sale = await sweptSale('TON', '1');
    const customer = freshAddress();
    const held = await treasuryTon();
    const first = await refund(sale.id, { coin: 'TON', amount: '0.4', address: customer, from: 'treasury' });
    assert.equal(first.status, 201, first.text);
    await sign(first.json.tonconnect, { amount: '0.6' });
    const [one] = await refunds(sale.id);
    assert.equal(one.status, 'confirmed', JSON.stringify(one));
    assert.deepEqual([one.amount, one.receives, one.askedAmount, one.beyondSale], ['0.6', '0.6', '0.4', undefined]);
    // 0.4 of the sale is left to refund from the treasury, no more.
    assertError(
      await refund(sale.id, { coin: 'TON', amount: '0.5', address: customer, from: 'treasury' }),
      400,
      'invalid_request_error',
      'refund_exceeds_balance',
      'amount',
    );
    const second = await refund(sale.id, { coin: 'TON', amount: '0.4', address: customer, from: 'treasury' });
    assert.equal(second.status, 201, second.text);
    const before = await paidTwice('beyond_sale');
    await sign(second.json.tonconnect, { amount: '0.7' });
    const two = (await refunds(sale.id)).find((r) => r.id === second.json.id);
    assert.equal(two.status, 'confirmed', JSON.stringify(two));
    assert.deepEqual([two.amount, two.askedAmount, two.beyondSale], ['0.7', '0.4', '0.3']);
    assert.equal(await paidTwice('beyond_sale'), before + 1);
    assert.equal(app.arrived(customer, treasury), toNano('1.3'));
    assert.equal(held - (await treasuryTon()), await bookedOut(sale.id));
  });

  it('a sale refunded in full through the link by another account, then the request signed by the treasury too: confirmed once, the repeat booked as paidAgain (log, metric)', async () => {
    const sale = await sweptSale('TON', '1');
    const customer = freshAddress();
    const asked = await refund(sale.id, { coin: 'TON', amount: '1', address: customer, from: 'treasury' });
    assert.equal(asked.status, 201, asked.text);
    const link = new URL(asked.json.link);
    const other = (await app.request('POST', '/sandbox/v1/wallets')).json.address;
    await app.pay(link.pathname.replace(/^\/+/, ''), 'TON', '1', {
      from: other,
      payload: Buffer.from(link.searchParams.get('bin')!, 'base64url').toString('base64'),
    });
    await app.settle();
    const [paid] = await refunds(sale.id);
    assert.deepEqual([paid.status, paid.paidFrom], ['confirmed', other]);
    const before = await paidTwice('signed_twice');
    await sign(asked.json.tonconnect);
    const [done] = await refunds(sale.id);
    assert.equal(done.status, 'confirmed');
    assert.equal(done.paidAgain?.length, 1, JSON.stringify(done));
    assert.equal(done.paidAgain[0].amount, '1');
    assert.equal(await paidTwice('signed_twice'), before + 1);
    assert.equal(app.arrived(customer, other) + app.arrived(customer, treasury), toNano('2'));
  });

  it('the ton:// link paid from another account than the treasury: seen at the customer by its reference, confirmed (paidFrom); the treasury paid nothing', async () => {
    const sale = await sweptSale('TON', '1');
    const customer = freshAddress();
    const asked = await refund(sale.id, { coin: 'TON', amount: '0.5', address: customer, from: 'treasury' });
    assert.equal(asked.status, 201, asked.text);
    const link = new URL(asked.json.link);
    const second = (await app.request('POST', '/sandbox/v1/wallets')).json.address;
    const before = (await sandboxBalances(app, treasury)).TON;
    // Another account of the merchant's wallet app opens the link: to, amount and bin as it says.
    await app.pay(link.pathname.replace(/^\/+/, ''), 'TON', fromBaseUnits(BigInt(link.searchParams.get('amount')!), 9), {
      from: second,
      payload: Buffer.from(link.searchParams.get('bin')!, 'base64url').toString('base64'),
    });
    await app.settle();
    const [done] = await refunds(sale.id);
    assert.equal(done.status, 'confirmed', JSON.stringify(done));
    assert.equal(done.paidFrom, second);
    assert.equal(done.receives, '0.5');
    assert.equal(done.fee, '0');
    assert.equal(app.arrived(customer, second), toNano('0.5'));
    assert.equal((await sandboxBalances(app, treasury)).TON, before);
    // The sale's 0.5 TON paid is taken: at most 0.5 more.
    const over = await refund(sale.id, { coin: 'TON', amount: '0.6', address: customer, from: 'treasury' });
    assertError(over, 400, 'invalid_request_error', 'refund_exceeds_balance', 'amount');
  });

  it('a refund nobody signs expires only past validUntil + the longest wallet lifetime (600 s) + the late-commit margin; its amount may be asked again then', async () => {
    const sale = await sweptSale('TON', '1');
    const customer = freshAddress();
    const asked = await refund(sale.id, { coin: 'TON', amount: '1', address: customer, from: 'treasury' });
    assert.equal(asked.status, 201, asked.text);
    const validUntil = new Date(asked.json.validUntil).getTime();
    assert.equal(new Date(asked.json.heldUntil).getTime(), validUntil + WALLET_LONGEST_LIFETIME_MS + LATE_COMMIT_MARGIN_MS);
    // Past validUntil and the late-commit margin: not yet (a wallet may have signed its own, later lifetime).
    await chainTo(asked.json.validUntil, LATE_COMMIT_MARGIN_MS / 1000 + 5);
    assert.equal((await refunds(sale.id))[0].status, 'awaiting_signature');
    await chainTo(asked.json.heldUntil, 5);
    const [expired] = await refunds(sale.id);
    assert.equal(expired.status, 'expired');
    assert.equal(expired.tonconnect, undefined);
    assert.equal(app.arrived(customer, treasury), 0n);
    // The sale is refundable from the treasury again.
    const again = await refund(sale.id, { coin: 'TON', amount: '1', address: customer, from: 'treasury' });
    assert.equal(again.status, 201, again.text);
  });
  it('a wallet that signs with its own 300-s lifetime (Tonkeeper) lands after validUntil + 60 s: still held meanwhile — no second refund of that money — and confirmed', async () => {
    const sale = await sweptSale('TON', '1');
    const customer = freshAddress();
    const asked = await refund(sale.id, { coin: 'TON', amount: '1', address: customer, from: 'treasury' });
    assert.equal(asked.status, 201, asked.text);
    // The wallet signed just before validUntil with valid_until = its time + 300 s; its message lands 90 s after validUntil.
    await chainTo(asked.json.validUntil, 90);
    const [waiting] = await refunds(sale.id);
    assert.equal(waiting.status, 'awaiting_signature');
    const again = await refund(sale.id, { coin: 'TON', amount: '1', address: customer, from: 'treasury' });
    assertError(again, 400, 'invalid_request_error', 'refund_exceeds_balance', 'amount');
    assert.match(again.json.error.message, /1 TON is taken by treasury refunds awaiting a signature \(held 660 s past their validUntil/);
    const held = await treasuryTon();
    await sign(asked.json.tonconnect);
    const [done] = await refunds(sale.id);
    assert.equal(done.status, 'confirmed', JSON.stringify(done));
    assert.equal(done.beyondSale, undefined);
    assert.equal(app.arrived(customer, treasury), toNano('1'));
    assert.equal(held - (await treasuryTon()), await bookedOut(sale.id));
    assert.equal((await refunds(sale.id)).length, 1);
  });

  it('an expired refund asked again, then signed anyway by a wallet ignoring validUntil: both confirmed, the books flag the money paid twice (beyondSale, log, metric)', async () => {
    const sale = await sweptSale('TON', '1');
    const customer = freshAddress();
    const first = await refund(sale.id, { coin: 'TON', amount: '1', address: customer, from: 'treasury' });
    assert.equal(first.status, 201, first.text);
    await chainTo(first.json.heldUntil, 5);
    assert.equal((await refunds(sale.id))[0].status, 'expired');
    const second = await refund(sale.id, { coin: 'TON', amount: '1', address: customer, from: 'treasury' });
    assert.equal(second.status, 201, second.text);
    const held = await treasuryTon();
    await sign(second.json.tonconnect);
    const before = await paidTwice('beyond_sale');
    // The old request, signed anyway: the chain moved it, so it is confirmed — and flagged.
    await sign(first.json.tonconnect);
    const all = await refunds(sale.id);
    const late = all.find((r) => r.id === first.json.id);
    const asked = all.find((r) => r.id === second.json.id);
    assert.equal(late.status, 'confirmed', JSON.stringify(late));
    assert.equal(late.beyondSale, '1', JSON.stringify(late));
    assert.equal(asked.status, 'confirmed');
    assert.equal(asked.beyondSale, undefined);
    assert.equal(await paidTwice('beyond_sale'), before + 1);
    // Books = chain: 2 TON left the treasury for the customer; nothing more is refundable from it.
    assert.equal(app.arrived(customer, treasury), toNano('2'));
    assert.equal(held - (await treasuryTon()), await bookedOut(sale.id));
    const more = await refund(sale.id, { coin: 'TON', amount: '0.1', address: customer, from: 'treasury' });
    assertError(more, 400, 'invalid_request_error', 'refund_exceeds_balance', 'amount');
  });

  it('two treasury refunds of one sale with different amounts, signed in the reverse order (the expired one first): both confirmed, the one that took the sale twice flagged (beyondSale)', async () => {
    const sale = await sweptSale('TON', '1');
    const customer = freshAddress();
    const first = await refund(sale.id, { coin: 'TON', amount: '1', address: customer, from: 'treasury' });
    assert.equal(first.status, 201, first.text);
    await chainTo(first.json.heldUntil, 5);
    assert.equal((await refunds(sale.id))[0].status, 'expired');
    const second = await refund(sale.id, { coin: 'TON', amount: '0.6', address: customer, from: 'treasury' });
    assert.equal(second.status, 201, second.text);
    const held = await treasuryTon();
    const before = await paidTwice('beyond_sale');
    // The old request (1 TON) lands first, then the new one (0.6 TON).
    await sign(first.json.tonconnect);
    await sign(second.json.tonconnect);
    const all = await refunds(sale.id);
    const old = all.find((r) => r.id === first.json.id);
    const again = all.find((r) => r.id === second.json.id);
    assert.deepEqual([old.status, old.beyondSale], ['confirmed', undefined], JSON.stringify(old));
    assert.deepEqual([again.status, again.beyondSale], ['confirmed', '0.6'], JSON.stringify(again));
    assert.equal(await paidTwice('beyond_sale'), before + 1);
    assert.equal(app.arrived(customer, treasury), toNano('1.6'));
    assert.equal(held - (await treasuryTon()), await bookedOut(sale.id));
  });

  it('an expired refund asked again within the sale, both signed: no beyondSale (the sale covers both), yet the late one is flagged paidAfterExpiry (log, metric)', async () => {
    const sale = await sweptSale('TON', '2');
    const customer = freshAddress();
    const first = await refund(sale.id, { coin: 'TON', amount: '1', address: customer, from: 'treasury' });
    assert.equal(first.status, 201, first.text);
    await chainTo(first.json.heldUntil, 5);
    const [expired] = await refunds(sale.id);
    assert.equal(expired.status, 'expired');
    const second = await refund(sale.id, { coin: 'TON', amount: '1', address: customer, from: 'treasury' });
    assert.equal(second.status, 201, second.text);
    const held = await treasuryTon();
    const before = await paidTwice('after_expiry');
    await sign(second.json.tonconnect);
    await sign(first.json.tonconnect);
    const all = await refunds(sale.id);
    const late = all.find((r) => r.id === first.json.id);
    const asked = all.find((r) => r.id === second.json.id);
    assert.deepEqual([asked.status, asked.beyondSale, asked.paidAfterExpiry], ['confirmed', undefined, undefined], JSON.stringify(asked));
    assert.equal(late.status, 'confirmed', JSON.stringify(late));
    assert.equal(late.beyondSale, undefined, 'within the sale: not beyond it');
    assert.ok(late.paidAfterExpiry, JSON.stringify(late));
    assert.ok(new Date(late.paidAfterExpiry.expiredAt).getTime() >= new Date(first.json.heldUntil).getTime(), JSON.stringify(late));
    assert.equal(await paidTwice('after_expiry'), before + 1);
    assert.equal(app.arrived(customer, treasury), toNano('2'));
    assert.equal(held - (await treasuryTon()), await bookedOut(sale.id));
  });

  it('a USDT refund expired, asked again for less, both signed: both confirmed, the later flagged (beyondSale)', async () => {
    const sale = await sweptSale('USDT', '5');
    const customer = freshAddress();
    const first = await refund(sale.id, { coin: 'USDT', amount: '5', address: customer, from: 'treasury' });
    assert.equal(first.status, 201, first.text);
    await chainTo(first.json.heldUntil, 5);
    assert.equal((await refunds(sale.id))[0].status, 'expired');
    const second = await refund(sale.id, { coin: 'USDT', amount: '3', address: customer, from: 'treasury' });
    assert.equal(second.status, 201, second.text);
    const before = await paidTwice('beyond_sale');
    await sign(second.json.tonconnect);
    await sign(first.json.tonconnect);
    const all = await refunds(sale.id);
    const late = all.find((r) => r.id === first.json.id);
    const asked = all.find((r) => r.id === second.json.id);
    assert.deepEqual([asked.status, asked.beyondSale], ['confirmed', undefined], JSON.stringify(asked));
    assert.deepEqual([late.status, late.beyondSale], ['confirmed', '3'], JSON.stringify(late));
    assert.equal(await paidTwice('beyond_sale'), before + 1);
    assert.equal((await sandboxBalances(app, customer)).USDT, '8');
  });
});
