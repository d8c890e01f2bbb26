// Refunds on the real sandbox chain (issue 12): POST/GET /v1/payments/{id}/refunds. An
// overpayment and a late payment go back to the address given (a wallet never deployed); more
// than the refundable balance is refused; two refunds at once cannot overdraw; idempotency.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Address, toNano } from '@ton/core';
import { jettonTransferBody } from '../../src/chain/jettonTransfer.ts';
import { sql, z } from '../../src/db/pool.ts';
import { updateStore } from '../../src/stores/stores.ts';
import { fromBaseUnits } from '../../src/money.ts';
import { transfersCarriedMore } from '../../src/metrics.ts';
import { CLOSING_REFUND_FEE } from '../../src/treasury/closing.ts';
import { depositMoney, outgoingOfPayment } from '../../src/treasury/outgoing.ts';
import { sendFromWallet } from '../../src/treasury/signer.ts';
import { assertBooksMatchChain, freshAddress, startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { member } from '../helpers/dashboard.ts';
import { assertError } from '../helpers/payments.ts';

let app: ChainTestApp;
let store: Awaited<ReturnType<ChainTestApp['store']>>;
let treasury: string;
const TON = { methods: [{ coin: 'TON', chain: 'TON' }] };

async function payment(amount: string) {
  const created = await app.request('POST', '/v1/payments', { token: store.token, body: { amount, currency: 'TON', payment_options: TON } });
  assert.equal(created.status, 201, created.text);
  return {
    id: created.json.id as string,
    address: created.json.paymentDetails.address as string,
    wallet: Address.parse(created.json.paymentDetails.address).toRawString(),
  };
}

const refund = (id: string, body: unknown, headers: Record<string, string> = {}) =>
  app.request('POST', `/v1/payments/${id}/refunds`, { token: store.token, body, headers });
const nano = async (address: string) => toNano((await app.request('GET', `/sandbox/v1/accounts/${address}`)).json.balances.TON);
/** An expired payment paid 1 TON late (all of it refundable), and the refund of everything asked for it: the deposit holds exactly its money. */
async function refundOfEverythingAsked() {
  const p = await payment('2');
  const expired = await app.request('POST', `/sandbox/v1/payments/${p.id}/expire`, { token: store.token });
  assert.equal(expired.json.status, 'expired', expired.text);
  await app.pay(p.address, 'TON', '1');
  await app.settle();
  const to = Address.parse(freshAddress());
  const created = await refund(p.id, { coin: 'TON', amount: '1', address: to.toString({ bounceable: false }) });
  assert.equal(created.status, 201, created.text);
  return { p, to, created };
}
const refunds = async (id: string) => (await app.request('GET', `/v1/payments/${id}/refunds`, { token: store.token })).json.data as any[];

/** The deposit's fee for receiving the last TON transfer in (booked on it). */
const lateFee = async (paymentId: string) =>
  BigInt(
    await app.pool.oneFirst(sql.type(z.object({ fee: z.string() }))`
      select coalesce(fee_base_units, 0)::text as fee from transfers where payment_id = ${paymentId} and coin_symbol = 'TON' order by lt desc limit 1
    `),
  );
before(async () => {
  app = await startChainApp();
  store = await app.store({ methods: 'TON/TON' });
  treasury = freshAddress();
  await updateStore(app.pool, store.id, { treasury });
});
after(() => app.close());

describe('refunds', () => {
  it('an overpayment goes back to the address given; over the balance is refused; the payment stays completed', async () => {
    const p = await payment('1');
    await app.pay(p.address, 'TON', '1.5');
    await app.settle();
    await app.drain(p.wallet); // the counted 1 TON, less its fee, went to the treasury
    const to = freshAddress();
    // The fee comes out of the refundable 0.5 TON: 0.01 TON is set aside for it (less than all of it; all of it, 0.5, would take its fee from itself).
    const over = await refund(p.id, { coin: 'TON', amount: '0.495', address: to });
    assertError(over, 400, 'invalid_request_error', 'refund_exceeds_balance', 'amount');
    assert.match(over.json.error.message, /at most 0\.5 TON is refundable now: all of it, .* or at most 0\.49 TON with its fee paid on top/);
    const created = await refund(p.id, { coin: 'TON', amount: '0.49', address: to });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(Object.keys(created.json).sort(), ['address', 'amount', 'coin', 'createdAt', 'fee', 'from', 'id', 'paymentID', 'receives', 'status']);
    assert.equal(created.json.amount, '0.49');
    assert.equal(created.json.receives, '0.49');
    assert.equal(created.json.fee, '0.01');
    assert.equal(created.json.address, to);
    assert.equal(created.json.status, 'pending');
    assert.equal(created.json.paymentID, p.id);
    assertError(await refund(p.id, { coin: 'TON', amount: '0.01', address: to }), 400, 'invalid_request_error', 'refund_exceeds_balance', 'amount');
    assertError(await refund(p.id, { coin: 'TON', amount: '0.000000001', address: to }), 400, 'invalid_request_error', 'refund_below_minimum', 'amount');
    await app.drain(p.wallet);
    const [done] = await refunds(p.id);
    assert.equal(done.status, 'confirmed');
    assert.match(done.transactionHash, /^[0-9a-f]{64}$/);
    assert.ok(Number(done.fee) > 0 && Number(done.fee) < 0.01, done.fee);
    // Exactly the amount arrived; the books match what the deposit holds, to the nanoTON.
    assert.equal(app.arrived(Address.parse(to).toRawString(), p.wallet), toNano('0.49'));
    const [ton] = await depositMoney(app.pool, p.id);
    assert.equal(BigInt(ton!.refundable) + BigInt(ton!.merchant_unswept), await nano(p.wallet));
    assert.equal(BigInt(ton!.refundable), toNano('0.01') - toNano(done.fee));
    const after = (await app.request('GET', `/v1/payments/${p.id}`, { token: store.token })).json;
    assert.equal(after.status, 'completed');
    // `overpaid` stays once the overpayment is refunded: a fact of what the customer did.
    assert.ok(after.anomalies.includes('overpaid'), JSON.stringify(after.anomalies));
  });

  it('a late payment (after expiry) is refundable in full, and reaches a wallet never deployed', async () => {
    const p = await payment('2');
    const expired = await app.request('POST', `/sandbox/v1/payments/${p.id}/expire`, { token: store.token });
    assert.equal(expired.json.status, 'expired', expired.text);
    await app.pay(p.address, 'TON', '2');
    await app.settle();
    const to = freshAddress();
    // Everything refundable, from a deposit that holds nothing else: the deposit empties, its fee taken from it.
    const created = await refund(p.id, { coin: 'TON', amount: '2', address: Address.parse(to).toString({ bounceable: false }) });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.fee, '0.01');
    assert.equal(created.json.receives, '1.99');
    await app.drain(p.wallet);
    const [done] = await refunds(p.id);
    assert.equal(done.status, 'confirmed');
    // A closing message: the refund its exact value (what `receives` said), what its fee did not use carried to the treasury.
    const got = app.arrived(Address.parse(to).toRawString(), p.wallet);
    assert.equal(got, toNano('1.99'));
    const unused = (await outgoingOfPayment(app.pool, p.id, 'sweep')).find((row) => row.closing_of === done.id)!;
    assert.equal(got + toNano(done.fee) + BigInt(unused.sent_amount_base_units!), toNano('2'));
    await assertBooksMatchChain(app, p.id, p.wallet);
    assert.equal((await app.request('GET', `/sandbox/v1/accounts/${p.address}`)).json.balances.TON, '0');
  });

  it("the refund of everything takes nobody else's money: the customer receives exactly what was planned; what arrived between planning and signing stays in the deposit and on the books", async () => {
    const { p, to, created } = await refundOfEverythingAsked();
    assert.equal(created.json.receives, '0.99', 'the refund of everything: its fee taken from it');
    // Before the signer runs, 2 TON more arrive (and are booked).
    await app.pay(p.address, 'TON', '2');
    await app.settle();
    await app.drain(p.wallet);
    const [done] = await refunds(p.id);
    assert.equal(done.status, 'confirmed', done.failureReason);
    // Exactly what was planned arrived (issue 31 §1b: it used to carry the whole balance, 2.99 TON).
    assert.equal(app.arrived(to.toRawString(), p.wallet), toNano('0.99'));
    assert.equal(done.receives, '0.99');
    assert.ok(Number(done.fee) > 0 && Number(done.fee) < 0.01, done.fee);
    await assertBooksMatchChain(app, p.id, p.wallet);
    const [ton] = await depositMoney(app.pool, p.id);
    assert.equal(BigInt(ton!.refunded), toNano('0.99'));
    // The new 2 TON, and what the fee did not use of its 0.01, are refundable: the refund of all of it empties the deposit.
    // (less the deposit's own fees for receiving the 2 TON, booked on that transfer)
    const inFees = await app.pool.oneFirst(sql.type(z.object({ fees: z.string() }))`
      select coalesce(sum(fee_base_units), 0)::text as fees from transfers where payment_id = ${p.id} and coin_symbol = 'TON'
    `);
    assert.equal(BigInt(ton!.refundable), toNano('3') - toNano('0.99') - toNano(done.fee) - BigInt(inFees));
    assert.equal(BigInt(ton!.refundable), await nano(p.wallet));
    const again = await refund(p.id, { coin: 'TON', amount: fromBaseUnits(BigInt(ton!.refundable), 9), address: to.toRawString() });
    assert.equal(again.status, 201, again.text);
    await app.drain(p.wallet);
    const last = (await refunds(p.id)).find((r) => r.id === again.json.id);
    assert.equal(last.status, 'confirmed');
    // The last movement out: a closing message, the refund its exact value (its amount less
    // CLOSING_REFUND_FEE), what the fee did not use carried to the treasury.
    assert.equal(app.arrived(to.toRawString(), p.wallet) - toNano('0.99'), BigInt(ton!.refundable) - CLOSING_REFUND_FEE);
    assert.equal(await nano(p.wallet), 0n);
    const [after] = await depositMoney(app.pool, p.id);
    assert.equal(BigInt(after!.refundable), 0n);
    await assertBooksMatchChain(app, p.id, p.wallet);
  });

  it("money landing in the seconds between the balance check and the refund of everything leaving reaches the treasury, not the refund's address: the books say so, and it is reported", async () => {
    // Wallet v5 carries only send actions (no reserve), so the carry-all cannot leave out what lands
    // after the signer looked (docs/API.md): here 0.5 TON lands after signing, before the broadcast.
    // The refund goes as its exact value; the carry-all goes to the store's treasury (issue 44 §2).
    const { p, to } = await refundOfEverythingAsked();
    const reported = async () => (await transfersCarriedMore.get()).values.find((v) => v.labels.kind === 'refund')?.value ?? 0;
    const reportedBefore = await reported();
    const treasuryBefore = app.arrived(treasury, p.wallet);
    const landing = async (_boc: Buffer, send: () => Promise<void>) => {
      await app.pay(p.address, 'TON', '0.5');
      await send();
    };
    const sent = await sendFromWallet({ ...app.signer(), hooks: { broadcast: landing } }, p.wallet);
    assert.equal(sent.outcome, 'sent', JSON.stringify(sent));
    await app.settle();
    const [done] = await refunds(p.id);
    assert.equal(done.status, 'confirmed', done.failureReason);
    // The customer received exactly the refund's value: its amount less CLOSING_REFUND_FEE, nothing of the late 0.5.
    const arrived = app.arrived(to.toRawString(), p.wallet);
    assert.equal(arrived, toNano('1') - CLOSING_REFUND_FEE);
    assert.equal(done.receives, fromBaseUnits(arrived, 9));
    // The late 0.5 TON (less the deposit's fee for receiving it) and what the refund's fee did not use reached the treasury,
    // each booked as the customer's money swept there beside the refund.
    const late = toNano('0.5') - (await lateFee(p.id));
    const carried = (await outgoingOfPayment(app.pool, p.id, 'sweep')).filter((row) => row.closing_of === done.id);
    assert.ok(
      carried.every((row) => row.state === 'confirmed' && row.reason === 'held_money' && row.to_address === treasury && row.fee_base_units === '0'),
      JSON.stringify(carried),
    );
    assert.ok(
      carried.some((row) => BigInt(row.amount_base_units) === late),
      'the late money on a row of its own',
    );
    const toTreasury = app.arrived(treasury, p.wallet) - treasuryBefore;
    assert.equal(
      toTreasury,
      carried.reduce((sum, row) => sum + BigInt(row.sent_amount_base_units!), 0n),
    );
    assert.ok(toTreasury > late && toTreasury < late + CLOSING_REFUND_FEE, toTreasury.toString());
    assert.equal(toNano(done.fee) + arrived + toTreasury - late, toNano('1'), "the customer's 1 TON: the refund, its fee, its fee's unused part");
    assert.equal(await nano(p.wallet), 0n);
    const [ton] = await depositMoney(app.pool, p.id);
    assert.deepEqual([ton!.refundable, ton!.refunded], ['0', arrived.toString()]);
    await assertBooksMatchChain(app, p.id, p.wallet);
    assert.equal(await reported(), reportedBefore + 1);
  });

  it('a refund may name the payer instead of an address (the source of the incoming transfer)', async () => {
    const p = await payment('1');
    await app.pay(p.address, 'TON', '1.5');
    await app.settle();
    const r = await refund(p.id, { coin: 'TON', amount: '0.4', address: 'payer' });
    assert.equal(r.status, 201, r.text);
    const sender = await app.pool.oneFirst(sql.type(z.object({ sender: z.string() }))`select sender from transfers where payment_id = ${p.id} limit 1`);
    assert.equal(r.json.address, sender);
    await app.drain(p.wallet);
    assert.equal(app.arrived(sender, p.wallet), toNano('0.4'));
    const none = await refund(p.id, { coin: 'USDT', amount: '0.1', address: 'payer' });
    assertError(none, 400, 'invalid_request_error', 'invalid_address', 'address');
    assert.match(none.json.error.message, /no payer of USDT is known/);
  });

  it("TON that came with another token's notification goes back to the notification's sender, never to the deposit's own jetton wallet", async () => {
    const p = await payment('1');
    const expired = await app.request('POST', `/sandbox/v1/payments/${p.id}/expire`, { token: store.token });
    assert.equal(expired.json.status, 'expired', expired.text);
    // The customer sends a token Kassa does not accept (the look-alike USDT) with 0.5 TON forwarded (TEP-74 forward_ton_amount).
    const chain = app.sandbox.chain;
    const master = Address.parse(chain.lookalikeMaster);
    const ownJettonWallet = await chain.jettonWalletOf(master, Address.parse(p.wallet));
    await chain.customer.send({
      to: await chain.jettonWalletOf(master, chain.customer.address),
      value: toNano('0.6'),
      bounce: true,
      body: jettonTransferBody({
        amount: 5_000_000n,
        destination: Address.parse(p.wallet),
        responseDestination: chain.customer.address,
        forwardTonAmount: toNano('0.5'),
      }),
    });
    await app.settle();
    const [booked] = await app.pool.any(sql.type(z.object({ sender: z.string(), amount: z.string() }))`
      select sender, amount_base_units::text as amount from transfers where payment_id = ${p.id} and coin_symbol = 'TON'
    `);
    assert.deepEqual(booked, { sender: chain.customerAddress, amount: toNano('0.5').toString() });
    // The deposit's own wallet of that token (it sent the notification) is no destination.
    assertError(
      await refund(p.id, { coin: 'TON', amount: '0.4', address: ownJettonWallet.toRawString() }),
      400,
      'invalid_request_error',
      'invalid_address',
      'address',
    );
    const r = await refund(p.id, { coin: 'TON', amount: '0.4', address: 'payer' });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.address, chain.customerAddress);
    const before = app.arrived(chain.customerAddress, p.wallet);
    await app.drain(p.wallet);
    assert.equal((await refunds(p.id))[0].status, 'confirmed');
    assert.equal(app.arrived(chain.customerAddress, p.wallet) - before, toNano('0.4'), 'the payer got it');
    assert.equal(app.arrived(ownJettonWallet.toRawString(), p.wallet), 0n);
    const [ton] = await depositMoney(app.pool, p.id);
    assert.equal(BigInt(ton!.refundable) + BigInt(ton!.merchant_unswept), await nano(p.wallet), 'chain = books');
  });

  it('issue 48: a second refund asked while the first is in flight says what it waits for, and is signed as soon as the chain confirms the first (never ~2 minutes later)', async () => {
    const p = await payment('1');
    await app.pay(p.address, 'TON', '2');
    await app.settle();
    await app.drain(p.wallet); // the counted 1 TON to the treasury: 1 TON overpaid is refundable
    const first = await refund(p.id, { coin: 'TON', amount: '0.2', address: freshAddress() });
    assert.equal(first.status, 201, first.text);
    // The first is signed and recorded, its broadcast lost: it is in flight (sent), not on chain yet.
    const lost = await sendFromWallet({ ...app.signer(), hooks: { broadcast: async () => {} } }, p.wallet);
    assert.equal(lost.outcome, 'sent');
    const to = freshAddress();
    const second = await refund(p.id, { coin: 'TON', amount: '0.3', address: to });
    assert.equal(second.status, 201, second.text);
    // It says why it waits, in the API and on the dashboard's payment page (plain words).
    assert.equal(second.json.status, 'pending');
    assert.deepEqual(second.json.waitingFor, { reason: 'another_transfer', transferID: first.json.id });
    assert.deepEqual(
      (await refunds(p.id)).map((r) => [r.id, r.status, r.waitingFor ?? null]),
      [
        [first.json.id, 'sent', null],
        [second.json.id, 'pending', { reason: 'another_transfer', transferID: first.json.id }],
      ],
    );
    const owner = await member(app.url, app.pool, store.id, `owner-${p.id}@refunds.example`, 'owner');
    const page = (await owner.get(`/dashboard/stores/${store.id}/payments/${p.id}`)).text;
    assert.match(
      page,
      /<span class="muted waiting-for" data-waiting-for="another_transfer">Waiting its turn: another refund from the same payment address is on its way, and an address sends one transfer at a time\. This one is sent as soon as the network confirms that one\.<\/span>/,
    );
    // The wallet's job (brought on by the second's plan) finds the first in flight and broadcasts it
    // again; the reader books it meanwhile (its confirmation enqueues the wallet's job for now). The
    // run must not push that job back to when the first's message could no longer land
    // (valid_until + the late-commit margin, ~2 minutes): it is due now.
    const again = await sendFromWallet(
      {
        ...app.signer(),
        hooks: {
          broadcast: async (_boc, send) => {
            await send();
            await app.settle();
          },
        },
      },
      p.wallet,
    );
    assert.equal(again.outcome, 'waiting');
    assert.equal((await refunds(p.id))[0].status, 'confirmed');
    const job = await app.pool.one(sql.type(z.object({ due: z.boolean(), run_at: z.date() }))`
      select run_at <= now() as due, run_at from graphile_worker.jobs where key = ${`outgoing__send:${p.wallet}`}
    `);
    assert.ok(job.due, `the wallet's job runs at ${job.run_at.toISOString()}, not now: the second refund would wait for it`);
    const [, waiting] = await refunds(p.id);
    assert.equal(waiting.waitingFor, undefined);
    // That job's run signs the second at once.
    const next = await sendFromWallet(app.signer(), p.wallet);
    assert.deepEqual([next.outcome, 'transferId' in next ? next.transferId : null], ['sent', second.json.id]);
    await app.drain(p.wallet);
    assert.deepEqual(
      (await refunds(p.id)).map((r) => r.status),
      ['confirmed', 'confirmed'],
    );
    assert.equal(app.arrived(Address.parse(to).toRawString(), p.wallet), toNano('0.3'));
    await assertBooksMatchChain(app, p.id, p.wallet);
  });

  it('two refunds at once cannot overdraw', async () => {
    const p = await payment('1');
    await app.pay(p.address, 'TON', '1.5');
    await app.settle();
    const answers = await Promise.all([0, 1, 2].map(() => refund(p.id, { coin: 'TON', amount: '0.3', address: freshAddress() })));
    assert.deepEqual(answers.map((a) => a.status).sort(), [201, 400, 400]);
    for (const a of answers.filter((x) => x.status === 400)) assertError(a, 400, 'invalid_request_error', 'refund_exceeds_balance', 'amount');
    assert.equal((await refunds(p.id)).length, 1);
  });

  it('X-Idempotency-Key: the same request is answered again and refunds once; another body is refused', async () => {
    const p = await payment('1');
    await app.pay(p.address, 'TON', '1.2');
    await app.settle();
    const key = crypto.randomUUID();
    const body = { coin: 'TON', amount: '0.1', address: freshAddress() };
    const first = await refund(p.id, body, { 'X-Idempotency-Key': key });
    const again = await refund(p.id, body, { 'X-Idempotency-Key': key });
    assert.equal(first.status, 201);
    assert.equal(again.status, 201);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.json, first.json);
    assert.equal((await refunds(p.id)).length, 1);
    assertError(
      await refund(p.id, { ...body, amount: '0.05' }, { 'X-Idempotency-Key': key }),
      422,
      'invalid_request_error',
      'idempotency_key_reused',
      'X-Idempotency-Key',
    );
  });

  it("errors: bad address, bad amount, unknown coin, missing fields, another store's payment", async () => {
    const p = await payment('1');
    await app.pay(p.address, 'TON', '1.2');
    await app.settle();
    assertError(await refund(p.id, { coin: 'TON', amount: '0.1', address: 'nope' }), 400, 'invalid_request_error', 'invalid_address', 'address');
    assertError(await refund(p.id, { coin: 'TON', amount: '0.1', address: '0:abc' }), 400, 'invalid_request_error', 'invalid_address', 'address');
    // Basechain only, and none of Kassa's own wallets: each refused with a message that says why.
    const masterchain = await refund(p.id, { coin: 'TON', amount: '0.1', address: `-1:${'ab'.repeat(32)}` });
    assertError(masterchain, 400, 'invalid_request_error', 'invalid_address', 'address');
    assert.match(masterchain.json.error.message, /workchain -1 address: Kassa sends only to basechain/);
    const own = await refund(p.id, { coin: 'TON', amount: '0.1', address: p.address });
    assertError(own, 400, 'invalid_request_error', 'invalid_address', 'address');
    assert.match(own.json.error.message, /Kassa's own deposit addresses/);
    const gas = await app.pool.oneFirst(sql.type(z.object({ address: z.string() }))`select address from gas_wallets where network = 'sandbox'`);
    const toGas = await refund(p.id, { coin: 'TON', amount: '0.1', address: gas });
    assertError(toGas, 400, 'invalid_request_error', 'invalid_address', 'address');
    assert.match(toGas.json.error.message, /Kassa's own gas wallet/);
    assertError(await refund(p.id, { coin: 'TON', amount: '-1', address: freshAddress() }), 400, 'invalid_request_error', 'invalid_amount', 'amount');
    assertError(await refund(p.id, { coin: 'TON', amount: '0.0000000001', address: freshAddress() }), 400, 'invalid_request_error', 'invalid_amount', 'amount');
    assertError(await refund(p.id, { coin: 'XYZ', amount: '0.1', address: freshAddress() }), 400, 'invalid_request_error', 'invalid_coin', 'coin');
    assertError(await refund(p.id, { coin: 'TON', amount: '0.1' }), 400, 'invalid_request_error', 'missing_parameter', 'address');
    const other = await app.store({ name: 'Other', methods: 'TON/TON' });
    const foreign = await app.request('POST', `/v1/payments/${p.id}/refunds`, {
      token: other.token,
      body: { coin: 'TON', amount: '0.1', address: freshAddress() },
    });
    assertError(foreign, 404, 'not_found_error', 'payment_not_found');
    assertError(await app.request('GET', `/v1/payments/${p.id}/refunds`, { token: other.token }), 404, 'not_found_error', 'payment_not_found');
    assert.deepEqual(await refunds(p.id), []);
  });
});
