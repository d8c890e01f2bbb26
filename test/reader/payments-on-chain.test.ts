// Payments paid on the sandbox chain, read block by block by the chain reader over HTTP (toncenter
// API v3): completion, the books for every kind of transfer, the chain's clock, cursor and backoff.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql, z } from '../../src/db/pool.ts';
import { LATE_COMMIT_MARGIN_MS } from '../../src/chain/clock.ts';
import type { TestApp } from '../helpers/app.ts';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { assertError } from '../helpers/payments.ts';

let app: ChainTestApp;
let store: Awaited<ReturnType<TestApp['store']>>;

before(async () => {
  app = await startChainApp({ WEBHOOK_ALLOW_INSECURE: 'true' });
  store = await app.store({ methods: 'TON/TON,USDT/TON,NOT/TON' });
});
after(() => app.close());

const TON = { methods: [{ coin: 'TON', chain: 'TON' }] };
const USDT = { methods: [{ coin: 'USDT', chain: 'TON' }] };

async function newPayment(body: Record<string, unknown>) {
  const response = await app.request('POST', '/v1/payments', { token: store.token, body: { ttl: 3600, ...body } });
  assert.equal(response.status, 201, response.text);
  return response.json;
}
const get = async (id: string) => (await app.request('GET', `/v1/payments/${id}`, { token: store.token })).json;
const transfers = async (id: string) => {
  const response = await app.request('GET', `/v1/payments/${id}/transfers`, { token: store.token });
  assert.equal(response.status, 200, response.text);
  return response.json.data as any[];
};

describe('completion', () => {
  it('a TON payment paid exactly completes, with its transaction hash and on-chain paidAt', async () => {
    const payment = await newPayment({ amount: '1.5', currency: 'TON', payment_options: TON });
    const sent = await app.pay(payment.paymentDetails.address, 'TON', '1.5');
    assert.equal(await app.settle(), 1);
    const paid = await get(payment.id);
    assert.equal(paid.status, 'completed');
    assert.deepEqual(paid.paymentDetails.transactionSignatures, [sent.hash]);
    assert.equal(paid.paymentDetails.receivedAmount, '1.5');
    assert.ok(paid.timer.paidAt);
    assert.ok(Date.parse(paid.timer.paidAt) <= Date.now());
    const [transfer] = await transfers(payment.id);
    assert.equal(transfer.effect, 'completed');
    assert.equal(transfer.counted, true);
    assert.equal(transfer.amount, '1.5');
    assert.equal(transfer.amountBaseUnits, '1500000000');
    assert.equal(transfer.coin, 'TON');
    assert.equal(transfer.hash, sent.hash);
  });

  it("a USDT payment completes from the internal_transfer on the deposit's jetton wallet", async () => {
    const payment = await newPayment({ amount: '12.345678', currency: 'USD', payment_options: USDT });
    assert.equal(payment.paymentDetails.coinAmount, '12.345678');
    const sent = await app.pay(payment.paymentDetails.address, 'USDT', '12.345678');
    await app.settle();
    const paid = await get(payment.id);
    assert.equal(paid.status, 'completed');
    assert.deepEqual(paid.paymentDetails.transactionSignatures, [sent.hash]);
    const books = await transfers(payment.id);
    const counted = books.filter((t) => t.counted);
    assert.equal(counted.length, 1);
    assert.equal(counted[0].coin, 'USDT');
    assert.equal(counted[0].amountBaseUnits, '12345678');
    assert.notEqual(
      counted[0].account,
      await app.pool.oneFirst(sql.type(z.object({ address: z.string() }))`select address from deposit_addresses where payment_id = ${payment.id}`),
      'counted on the jetton wallet, not the owner',
    );
    // The notification's forwarded TON is on the books too, not counted.
    assert.ok(books.some((t) => t.effect === 'not_counted' && t.coin === 'TON'));
  });

  it('overpayment completes and is marked overpaid', async () => {
    const payment = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
    await app.pay(payment.paymentDetails.address, 'TON', '1.2');
    await app.settle();
    assert.equal((await get(payment.id)).status, 'completed');
    assert.equal((await transfers(payment.id))[0].effect, 'overpaid');
  });

  it('underpaid, then topped up: partial, then completed with both hashes', async () => {
    const payment = await newPayment({ amount: '10', currency: 'USD', payment_options: USDT });
    const first = await app.pay(payment.paymentDetails.address, 'USDT', '4');
    await app.settle();
    const partly = await get(payment.id);
    assert.equal(partly.status, 'pending');
    assert.equal(partly.paymentDetails.receivedAmount, '4');
    assert.deepEqual(partly.anomalies, ['partially_paid']);
    const second = await app.pay(payment.paymentDetails.address, 'USDT', '6');
    await app.settle();
    const paid = await get(payment.id);
    assert.equal(paid.status, 'completed');
    assert.deepEqual(paid.paymentDetails.transactionSignatures, [first.hash, second.hash]);
    assert.deepEqual(paid.anomalies, [], 'paid in full, in two parts: nothing unusual');
    assert.deepEqual(
      (await transfers(payment.id)).filter((t) => t.counted).map((t) => t.effect),
      ['partial', 'completed'],
    );
  });

  it('enqueues the webhook delivery in the completing transaction', async () => {
    const payment = await newPayment({ amount: '0.5', currency: 'TON', payment_options: TON, webhookURL: 'http://127.0.0.1:9/hook' });
    await app.pay(payment.paymentDetails.address, 'TON', '0.5');
    await app.settle();
    const deliveries = await app.pool.any(
      sql.type(z.object({ status: z.string(), reason: z.string() }))`select status, reason from webhook_deliveries where payment_id = ${payment.id}`,
    );
    assert.deepEqual(deliveries, [{ status: 'pending', reason: 'completed' }]);
  });
});

describe('the books: money that does not pay is still recorded', () => {
  it('a wrong coin is recorded and the payment stays pending', async () => {
    const tonPayment = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
    await app.pay(tonPayment.paymentDetails.address, 'USDT', '5');
    const usdtPayment = await newPayment({ amount: '5', currency: 'USD', payment_options: USDT });
    await app.pay(usdtPayment.paymentDetails.address, 'TON', '1');
    await app.settle();
    assert.equal((await get(tonPayment.id)).status, 'pending');
    assert.equal((await get(usdtPayment.id)).status, 'pending');
    const onTon = await transfers(tonPayment.id);
    assert.ok(
      onTon.some((t) => t.effect === 'wrong_coin' && t.coin === 'USDT' && t.amount === '5'),
      JSON.stringify(onTon),
    );
    const onUsdt = await transfers(usdtPayment.id);
    assert.ok(
      onUsdt.some((t) => t.effect === 'wrong_coin' && t.coin === 'TON' && t.amount === '1'),
      JSON.stringify(onUsdt),
    );
    assert.deepEqual((await get(tonPayment.id)).anomalies, ['wrong_coin']);
    assert.deepEqual((await get(usdtPayment.id)).anomalies, ['wrong_coin']);
  });

  it('a bounceable transfer to the uninitialised deposit bounces and is recorded as not credited', async () => {
    const payment = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
    await app.pay(payment.paymentDetails.address, 'TON', '1', { bounce: true });
    await app.settle();
    assert.equal((await get(payment.id)).status, 'pending');
    const [transfer] = await transfers(payment.id);
    assert.equal(transfer.effect, 'not_credited');
    assert.equal(transfer.detail, 'value_returned');
  });

  it('a look-alike USDT never counts: its TON is booked as TON, its claim kept beside it', async () => {
    const payment = await newPayment({ amount: '5', currency: 'USD', payment_options: USDT });
    await app.pay(payment.paymentDetails.address, 'USDT', '5', { fromLookalike: true });
    await app.settle();
    assert.equal((await get(payment.id)).status, 'pending');
    const books = await transfers(payment.id);
    assert.equal(books.filter((t) => t.counted).length, 0);
    const fake = books.find((t) => t.notifiedToken);
    assert.ok(fake, JSON.stringify(books));
    assert.equal(fake.coin, 'TON');
    assert.equal(fake.effect, 'wrong_coin');
    assert.equal(fake.amountBaseUnits, '1', 'the nanoTON the look-alike wallet forwarded');
    assert.deepEqual(fake.notifiedToken, { master: app.sandbox.chain.lookalikeMaster, amountBaseUnits: '5000000' });
    // Asked of the chain once for that wallet, then remembered.
    const asked = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from jetton_wallets where genuine = false`);
    assert.ok(asked >= 1);
  });

  it('TON with any body is value: an encrypted comment or an unknown op counts toward a TON payment', async () => {
    const payment = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
    await app.pay(payment.paymentDetails.address, 'TON', '0.5', { bodyOp: 0x2167da4b });
    await app.pay(payment.paymentDetails.address, 'TON', '0.5', { bodyOp: 0x12345678 });
    await app.settle();
    assert.equal((await get(payment.id)).status, 'completed');
    assert.deepEqual(
      (await transfers(payment.id)).map((t) => [t.effect, t.detail]),
      [
        ['partial', 'encrypted_comment'],
        ['completed', 'op 0x12345678'],
      ],
    );
  });

  it('a transfer after expiry, after cancel and after completion is recorded with that effect', async () => {
    const expired = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
    const expiredNow = await app.request('POST', `/sandbox/v1/payments/${expired.id}/expire`, { token: store.token });
    assert.equal(expiredNow.status, 200, expiredNow.text);
    assert.equal(expiredNow.json.status, 'expired');
    await app.pay(expired.paymentDetails.address, 'TON', '1');

    const cancelled = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
    await app.request('POST', `/v1/payments/${cancelled.id}/cancel`, { token: store.token });
    await app.pay(cancelled.paymentDetails.address, 'TON', '1');

    const completed = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
    await app.pay(completed.paymentDetails.address, 'TON', '1');
    await app.settle();
    await app.pay(completed.paymentDetails.address, 'TON', '0.25');
    await app.settle();

    assert.equal((await get(expired.id)).status, 'expired');
    assert.deepEqual(
      (await transfers(expired.id)).map((t) => t.effect),
      ['after_expiry'],
    );
    assert.equal((await get(cancelled.id)).status, 'cancelled');
    assert.deepEqual(
      (await transfers(cancelled.id)).map((t) => t.effect),
      ['after_cancel'],
    );
    assert.equal((await get(completed.id)).status, 'completed');
    assert.deepEqual(
      (await transfers(completed.id)).map((t) => t.effect),
      ['completed', 'after_completion'],
    );
    assert.equal((await get(completed.id)).paymentDetails.receivedAmount, '1');
    // Beside each status, what the books hold (extension `anomalies`).
    assert.deepEqual((await get(expired.id)).anomalies, ['paid_late']);
    assert.deepEqual((await get(cancelled.id)).anomalies, ['paid_after_cancel']);
    assert.deepEqual((await get(completed.id)).anomalies, ['overpaid']);
  });
});

describe('cancel is decided against the chain', () => {
  it('payments paid on chain moments before the cancel are completed, not cancelled (409)', async () => {
    const payments = await Promise.all(Array.from({ length: 20 }, () => newPayment({ amount: '1', currency: 'TON', payment_options: TON })));
    // Paid one after another, each cancelled 0–500 ms after its transfer was answered.
    const pending: Promise<Awaited<ReturnType<typeof app.request>>>[] = [];
    for (const [i, payment] of payments.entries()) {
      await app.pay(payment.paymentDetails.address, 'TON', '1');
      await new Promise((resolve) => setTimeout(resolve, (i * 173) % 500));
      pending.push(app.request('POST', `/v1/payments/${payment.id}/cancel`, { token: store.token }));
    }
    const answers = await Promise.all(pending);
    for (const [i, answer] of answers.entries()) {
      assertError(answer, 409, 'invalid_request_error', 'payment_not_cancellable');
      assert.equal((await get(payments[i]!.id)).status, 'completed');
    }
  });

  it('an unpaid pending payment is cancelled once the chain is read up to the cancel', async () => {
    const payment = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
    const response = await app.request('POST', `/v1/payments/${payment.id}/cancel`, { token: store.token });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.json.status, 'cancelled');
  });

  it('a transfer made before the cancel whose shard block is committed after it is booked after_cancel: the payment stays cancelled, the money refundable', async () => {
    // The decision (docs/API.md, "Cancel"): the cancel waits for the chain read up to its time, not
    // for LATE_COMMIT_MARGIN_MS more; a transfer made before it and committed late is booked when it
    // lands (the deposit stays watched: its watch never ends), after_cancel and refundable.
    const payment = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
    const chain = app.sandbox.chain;
    chain.stopBlockClock();
    let sent: { hash: string };
    try {
      sent = await app.pay(payment.paymentDetails.address, 'TON', '1');
      chain.commitLate(25); // held out of the next 24 masterchain blocks (~10 s of them)
    } finally {
      chain.startBlockClock();
    }
    const response = await app.request('POST', `/v1/payments/${payment.id}/cancel`, { token: store.token });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.json.status, 'cancelled');
    assert.deepEqual(await transfers(payment.id), [], 'not committed yet: nothing to book at the cancel');
    // Still watched after the cancel (a deposit's watch never ends, so well past LATE_COMMIT_MARGIN_MS).
    assert.ok(await app.pool.exists(sql.unsafe`select 1 from chain_watches where payment_id = ${payment.id} and set_aside_at is null`));
    for (let i = 0; i < 25; i += 1) chain.sealBlock(); // the shard block is committed
    await app.settle();
    assert.equal((await get(payment.id)).status, 'cancelled');
    const booked = await transfers(payment.id);
    assert.deepEqual(
      booked.map((t) => [t.effect, t.amount, t.hash]),
      [['after_cancel', '1', sent.hash]],
    );
    assert.deepEqual((await get(payment.id)).anomalies, ['paid_after_cancel']);
    const balance = await app.request('GET', `/v1/payments/${payment.id}/balance`, { token: store.token });
    const ton = balance.json.coins.find((c: { coin: string }) => c.coin === 'TON');
    assert.equal(ton.refundable, '1');
    const refund = await app.request('POST', `/v1/payments/${payment.id}/refunds`, {
      token: store.token,
      body: { coin: 'TON', amount: '0.5', address: 'payer' },
    });
    assert.equal(refund.status, 201, refund.text);
  });

  it('answers 503 chain_behind with Retry-After when the reader cannot get that far', async () => {
    const payment = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
    app.sandbox.chain.holdBlocks();
    try {
      const response = await app.request('POST', `/v1/payments/${payment.id}/cancel`, { token: store.token });
      assertError(response, 503, 'api_error', 'chain_behind');
      assert.equal(response.headers.get('retry-after'), '5');
      assert.equal((await get(payment.id)).status, 'pending');
    } finally {
      app.sandbox.chain.releaseBlocks();
    }
  });
});

describe('the sandbox expire control', () => {
  it('books what was sent until now first: a transfer made in time completes the payment instead', async () => {
    const payment = await newPayment({ amount: '2', currency: 'TON', payment_options: TON });
    const sent = await app.pay(payment.paymentDetails.address, 'TON', '2');
    const response = await app.request('POST', `/sandbox/v1/payments/${payment.id}/expire`, { token: store.token });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.json.status, 'completed');
    assert.deepEqual(response.json.paymentDetails.transactionSignatures, [sent.hash]);
  });

  it('a created payment just expires', async () => {
    const payment = await newPayment({ amount: '2', currency: 'TON' });
    const response = await app.request('POST', `/sandbox/v1/payments/${payment.id}/expire`, { token: store.token });
    assert.equal(response.json.status, 'expired');
    assert.equal(response.json.paymentDetails, undefined);
  });
});

describe('the reader', () => {
  it('booking the same block again changes nothing', async () => {
    const payment = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
    await app.pay(payment.paymentDetails.address, 'TON', '0.4');
    await app.pay(payment.paymentDetails.address, 'TON', '0.6');
    await app.settle();
    const before = await transfers(payment.id);
    const cursor = (await app.cursor())!;
    const source = app.source();
    let again = 0;
    for (let seqno = cursor.last - 5; seqno <= cursor.last; seqno += 1) {
      const block = await source.block(seqno);
      assert.ok(block, `block ${seqno} is indexed`);
      again += await app.reader.bookBlock(block);
    }
    assert.equal(again, 0);
    assert.deepEqual(await transfers(payment.id), before);
    assert.equal((await get(payment.id)).status, 'completed');
  });

  it('a comment PostgreSQL cannot store (NUL) neither blocks the payment nor the others', async () => {
    const poisoned = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
    const healthy = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
    // Straight to the sandbox chain: its HTTP control refuses a NUL like every route, but a wallet can send one.
    await app.sandbox.chain.transfer({ to: poisoned.paymentDetails.address, coin: 'TON', amount: '1', comment: 'pay\u0000load' });
    await app.pay(healthy.paymentDetails.address, 'TON', '1');
    await app.settle();
    assert.equal((await get(poisoned.id)).status, 'completed');
    assert.equal((await get(healthy.id)).status, 'completed');
    assert.equal((await transfers(poisoned.id))[0].comment, 'pay\uFFFDload');
  });

  it('backs off on 429 from the chain API and recovers without skipping the block', async () => {
    const payment = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
    await app.pay(payment.paymentDetails.address, 'TON', '1');
    app.sandbox.chain.failNext(2, 429);
    await app.settle();
    assert.equal((await get(payment.id)).status, 'completed');
  });

  it("a transfer made after expiresAt (on-chain time) does not count, and the chain's clock expires the payment", async () => {
    const payment = await newPayment({ amount: '1', currency: 'TON', payment_options: TON, ttl: 900 });
    // Past expiresAt by more than the margin for shard blocks committed late.
    app.sandbox.chain.setNow(Math.ceil(Date.parse(payment.timer.expiresAt) / 1000) + LATE_COMMIT_MARGIN_MS / 1000 + 5);
    await app.pay(payment.paymentDetails.address, 'TON', '1');
    await app.settle();
    assert.equal((await get(payment.id)).status, 'expired');
    assert.deepEqual(
      (await transfers(payment.id)).map((t) => t.effect),
      ['after_expiry'],
    );
  });
});

describe('sandbox routes and the transfers API', () => {
  it('refuses bad sandbox transfers with the envelope', async () => {
    assertError(
      await app.request('POST', '/sandbox/v1/transfers', { body: { to: 'nowhere', coin: 'TON', amount: '1' } }),
      400,
      'invalid_request_error',
      'invalid_address',
      'to',
    );
    assertError(
      await app.request('POST', '/sandbox/v1/transfers', { body: { to: `0:${'1'.repeat(64)}`, coin: 'DOGE', amount: '1' } }),
      404,
      'not_found_error',
      'currency_not_found',
      'coin',
    );
    assertError(
      await app.request('POST', '/sandbox/v1/transfers', { body: { to: `0:${'1'.repeat(64)}`, coin: 'USDT', amount: '1.0000001' } }),
      400,
      'invalid_request_error',
      'invalid_amount',
      'amount',
    );
    assertError(
      await app.request('POST', '/sandbox/v1/transfers', { body: { to: `0:${'1'.repeat(64)}`, coin: 'TON' } }),
      400,
      'invalid_request_error',
      'missing_parameter',
      'amount',
    );
  });

  it("GET /v1/payments/{id}/transfers: another store's payment is 404", async () => {
    const other = await app.store({ name: 'Other' });
    const payment = await newPayment({ amount: '1', currency: 'TON', payment_options: TON });
    assertError(await app.request('GET', `/v1/payments/${payment.id}/transfers`, { token: other.token }), 404, 'not_found_error', 'payment_not_found');
    assertError(
      await app.request('GET', '/v1/payments/nope/transfers', { token: store.token }),
      400,
      'invalid_request_error',
      'invalid_payment_id',
      'paymentID',
    );
    assert.deepEqual(await transfers(payment.id), []);
  });
});
