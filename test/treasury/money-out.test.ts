// Money out, as a careful merchant and an attacker would try it on the sandbox (issue 25): every
// case compares what the chain holds with the books (deposit_money) to the nanoTON.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Address, toNano } from '@ton/core';
import { sql, z } from '../../src/db/pool.ts';
import { coinAmountFor, fromBaseUnits } from '../../src/money.ts';
import { transfersCarriedMore } from '../../src/metrics.ts';
import { checkFailedTransfers } from '../../src/operations/doctor.ts';
import { updateStore } from '../../src/stores/stores.ts';
import { gasWalletAddress, recordRefundGasPayment, storeRefundGas } from '../../src/treasury/gas.ts';
import { CLOSING_REFUND_FEE, CLOSING_SHARE_MINIMUM, SHARE_SEND_MODE } from '../../src/treasury/closing.ts';
import { TON_FEE_RESERVE_BASE_UNITS } from '../../src/treasury/fees.ts';
import { depositMoney, outgoingOfPayment } from '../../src/treasury/outgoing.ts';
import { sendFromWallet } from '../../src/treasury/signer.ts';
import { planDueSweeps } from '../../src/treasury/sweeps.ts';
import { freshAddress, startChainApp, type ChainTestApp, assertBooksMatchChain, sandboxBalances } from '../helpers/chain.ts';

let app: ChainTestApp;
let gas: string;

const balances = (address: string) => sandboxBalances(app, address);

async function newStore(methods: string, treasury: string | null) {
  const store = await app.store({ methods });
  if (treasury) await updateStore(app.pool, store.id, { treasury });
  return store;
}

async function payment(token: string, amount: string, coin: string) {
  const created = await app.request('POST', '/v1/payments', {
    token,
    body: { amount, currency: coin, payment_options: { methods: [{ coin, chain: 'TON' }] } },
  });
  assert.equal(created.status, 201, created.text);
  return {
    id: created.json.id as string,
    address: created.json.paymentDetails.address as string,
    wallet: Address.parse(created.json.paymentDetails.address).toRawString(),
  };
}

/**
 * A TON sale's deposit left with only dust: the sale swept beside the customer's 0.3 (its change
 * stays), then a refund of 0.29 leaves the customer what its fee's 0.01 reserve did not use, never
 * refundable on its own. `later`: past REFUND_HOLD_DAYS (30), when its final sweep is due.
 */
async function settledWithDust() {
  const treasury = freshAddress();
  const store = await newStore('TON/TON', treasury);
  const p = await payment(store.token, '1', 'TON');
  await app.pay(p.address, 'TON', '1.3');
  await app.settle();
  const r = await app.request('POST', `/v1/payments/${p.id}/refunds`, { token: store.token, body: { coin: 'TON', amount: '0.29', address: freshAddress() } });
  assert.equal(r.status, 201, r.text);
  await app.drain(p.wallet);
  const [before] = await depositMoney(app.pool, p.id);
  const [dust, change] = [BigInt(before!.refundable), BigInt(before!.merchant_unswept)];
  assert.ok(dust > 0n && dust < TON_FEE_RESERVE_BASE_UNITS && change > 0n, JSON.stringify(before));
  const later = new Date(Date.now() + 31 * 86_400_000);
  assert.equal(await planDueSweeps(app.pool, { holdDays: 30, now: new Date() }), 0, 'not before REFUND_HOLD_DAYS');
  return { treasury, p, dust, change, later };
}

before(async () => {
  app = await startChainApp();
  gas = (await gasWalletAddress(app.pool, 'sandbox'))!;
  // 0.01 TON is one figure in the code and in SQL (the dust line, the fee reserve, the smallest TON refund).
  const sqlSide = await app.pool.one(sql.type(z.object({ reserve: z.string(), minimum: z.string() }))`
    select ton_fee_reserve_base_units()::text as reserve, (select refund_minimum_base_units::text from coins where symbol = 'TON') as minimum
  `);
  assert.deepEqual(sqlSide, { reserve: TON_FEE_RESERVE_BASE_UNITS.toString(), minimum: TON_FEE_RESERVE_BASE_UNITS.toString() });
});
after(() => app.close());

describe('money out: nobody else’s money, fees on the books', () => {
  it('concurrent refunds beyond the balance: each is accepted only with its fee, every accepted one arrives whole, the merchant keeps the counted money', async () => {
    const treasury = freshAddress();
    const store = await newStore('TON/TON', treasury);
    const p = await payment(store.token, '1', 'TON');
    await app.pay(p.address, 'TON', '3');
    await app.settle();
    await app.drain(p.wallet); // the counted 1 TON (less its fee) went to the treasury
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        app.request('POST', `/v1/payments/${p.id}/refunds`, { token: store.token, body: { coin: 'TON', amount: '0.2', address: freshAddress() } }),
      ),
    );
    const accepted = answers.filter((a) => a.status === 201);
    // 2 TON refundable; each refund takes 0.2 and sets 0.01 aside for its fee: 9 fit.
    assert.equal(accepted.length, 9, JSON.stringify(answers.map((a) => a.status)));
    for (const a of answers.filter((x) => x.status !== 201)) assert.equal(a.json.error.code, 'refund_exceeds_balance');
    await app.drain(p.wallet);
    for (const a of accepted) {
      const [done] = (await app.request('GET', `/v1/payments/${p.id}/refunds`, { token: store.token })).json.data.filter((r: any) => r.id === a.json.id);
      assert.equal(done.status, 'confirmed', JSON.stringify(done));
      assert.equal(app.arrived(Address.parse(a.json.address).toRawString(), p.wallet), toNano('0.2'));
    }
    assert.equal(app.arrived(treasury, p.wallet), toNano('0.99'));
    await assertBooksMatchChain(app, p.id, p.wallet);
    // GET …/balance: the same books, per coin, with the sweep beside the refunds.
    const balance = await app.request('GET', `/v1/payments/${p.id}/balance`, { token: store.token });
    assert.equal(balance.status, 200, balance.text);
    const [ton] = balance.json.coins;
    assert.deepEqual(
      { coin: ton.coin, received: ton.received, counted: ton.counted, refunded: ton.refunded, swept: ton.swept },
      { coin: 'TON', received: '3', counted: '1', refunded: '1.8', swept: '0.99' },
    );
    const [money] = await depositMoney(app.pool, p.id);
    assert.equal(toNano(ton.refundable), BigInt(money!.refundable));
    assert.equal(toNano(ton.fees), BigInt(money!.fees));
    assert.equal(balance.json.sweeps.length, 1);
    assert.equal(balance.json.sweeps[0].reason, 'payment');
    assert.equal(balance.json.sweeps[0].sent, '0.99');
    assert.equal(balance.json.sweeps[0].status, 'confirmed');
    const other = await app.store({ methods: 'TON/TON' });
    assert.equal((await app.request('GET', `/v1/payments/${p.id}/balance`, { token: other.token })).status, 404);
  });

  it("the sweep of a deposit that holds only the merchant's money carries it all: the treasury gets the counted amount less exactly the sweep's fee", async () => {
    const treasury = freshAddress();
    const store = await newStore('TON/TON', treasury);
    const p = await payment(store.token, '1.25', 'TON');
    await app.pay(p.address, 'TON', '1.25');
    await app.settle();
    await app.drain(p.wallet);
    const [sweep] = await outgoingOfPayment(app.pool, p.id, 'sweep');
    assert.equal(sweep!.state, 'confirmed', JSON.stringify(sweep));
    assert.equal(sweep!.amount_base_units, toNano('1.25').toString());
    const fee = BigInt(sweep!.fee_base_units!);
    assert.ok(fee > 0n && fee < TON_FEE_RESERVE_BASE_UNITS, fee.toString());
    // To the nanoTON: what the customer paid, less only the one transaction that swept it.
    assert.equal(app.arrived(treasury, p.wallet), toNano('1.25') - fee);
    assert.equal(BigInt(sweep!.sent_amount_base_units!), toNano('1.25') - fee);
    assert.equal((await balances(p.wallet)).TON ?? '0', '0');
    const [ton] = await depositMoney(app.pool, p.id);
    assert.deepEqual([ton!.merchant_unswept, ton!.refundable, ton!.fees], ['0', '0', fee.toString()]);
    await assertBooksMatchChain(app, p.id, p.wallet);
  });

  it("the largest refund the balance states is accepted beside the merchant's change, and closes the deposit: one message pays the customer all of it less only its fee and the merchant its change (issue 29: 0.011041998 TON)", async () => {
    const treasury = freshAddress();
    const store = await newStore('TON/TON', treasury);
    const p = await payment(store.token, '1', 'TON');
    await app.pay(p.address, 'TON', '1.011041998');
    await app.settle();
    await app.drain(p.wallet); // the counted 1 TON swept, 0.01 of it set aside for the fee: the merchant's change stays
    const [before] = await depositMoney(app.pool, p.id);
    assert.equal(before!.refundable, '11041998');
    const change = BigInt(before!.merchant_unswept);
    assert.ok(change >= CLOSING_SHARE_MINIMUM, `the sweep left the merchant a change: ${change}`);
    const treasuryBefore = app.arrived(treasury, p.wallet);
    const stated = (await app.request('GET', `/v1/payments/${p.id}/balance`, { token: store.token })).json.coins[0];
    assert.equal(stated.largestRefund, '0.011041998');
    const to = freshAddress();
    const less = await app.request('POST', `/v1/payments/${p.id}/refunds`, { token: store.token, body: { coin: 'TON', amount: '0.011', address: to } });
    assert.equal(less.json.error.code, 'refund_exceeds_balance');
    assert.match(less.json.error.message, /at most 0\.011041998 TON is refundable now: all of it, its fee taken from it \(0\.001041998 TON arrives/);
    const all = await app.request('POST', `/v1/payments/${p.id}/refunds`, {
      token: store.token,
      body: { coin: 'TON', amount: stated.largestRefund, address: to },
    });
    assert.equal(all.status, 201, all.text);
    assert.equal(all.json.receives, '0.001041998', 'what arrives at least');
    await app.drain(p.wallet);
    const [done] = (await app.request('GET', `/v1/payments/${p.id}/refunds`, { token: store.token })).json.data;
    assert.equal(done.status, 'confirmed', JSON.stringify(done));
    // One message: the customer got all that was refundable less only the refund's own fee (more than
    // the 0.001041998 stated: the fee's reserve is not kept back), the merchant its change less only
    // its message's forwarding fee; the deposit is empty, and the two fees are the transaction's.
    const rows = await outgoingOfPayment(app.pool, p.id);
    const leftover = rows.find((row) => row.reason === 'leftover')!;
    assert.deepEqual([leftover.state, leftover.closing_of, leftover.amount_base_units], ['confirmed', done.id, change.toString()]);
    // The share had a message of its own in the closing message: its row says that message's mode.
    const shareMode = await app.pool.oneFirst(
      sql.type(z.object({ mode: z.number().nullable() }))`select send_mode as mode from outgoing_transfers where id = ${leftover.id}`,
    );
    assert.equal(shareMode, SHARE_SEND_MODE);
    const refundRow = rows.find((row) => row.id === done.id)!;
    assert.equal(leftover.transaction_hash, refundRow.transaction_hash, 'the same transaction');
    const refundFee = BigInt(refundRow.fee_base_units!);
    const leftoverFee = BigInt(leftover.fee_base_units!);
    assert.ok(refundFee > 0n && refundFee < TON_FEE_RESERVE_BASE_UNITS, refundFee.toString());
    assert.ok(leftoverFee > 0n && leftoverFee < CLOSING_SHARE_MINIMUM, `a forwarding fee: ${leftoverFee}`);
    // The refund went as its exact value (what `receives` said); what its fee did not use went to the
    // treasury with the carry-all, booked as the customer's money beside it.
    assert.equal(app.arrived(Address.parse(to).toRawString(), p.wallet), 1_041_998n);
    assert.equal(done.receives, '0.001041998');
    const unused = rows.find((row) => row.reason === 'held_money' && row.closing_of === done.id)!;
    assert.equal(1_041_998n + refundFee + BigInt(unused.sent_amount_base_units!), 11_041_998n);
    assert.equal(app.arrived(treasury, p.wallet) - treasuryBefore, change - leftoverFee + BigInt(unused.sent_amount_base_units!));
    assert.equal(BigInt(leftover.sent_amount_base_units!), change - leftoverFee);
    assert.equal((await balances(p.wallet)).TON ?? '0', '0');
    const [after] = await depositMoney(app.pool, p.id);
    assert.deepEqual([after!.refundable, after!.merchant_unswept], ['0', '0']);
    await assertBooksMatchChain(app, p.id, p.wallet);
    // The balance answer lists the change beside the sale's sweep; the merchant hears of it as a sweep.
    const balance = await app.request('GET', `/v1/payments/${p.id}/balance`, { token: store.token });
    assert.deepEqual(
      balance.json.sweeps.map((sweep: any) => [sweep.reason, sweep.status]),
      [
        ['payment', 'confirmed'],
        ['leftover', 'confirmed'],
        ['held_money', 'confirmed'],
      ],
    );
  });

  it('a share the wallet skipped (+2: the fees took its money first) is booked as carried by the carry-all to the treasury, not as late money; no fee below zero', async () => {
    const treasury = freshAddress();
    const store = await newStore('TON/TON', treasury);
    const p = await payment(store.token, '1', 'TON');
    await app.pay(p.address, 'TON', '1.5');
    await app.settle();
    await app.drain(p.wallet); // the counted 1 TON swept, 0.01 of it set aside for the fee: the merchant's change stays
    const [before] = await depositMoney(app.pool, p.id);
    const change = BigInt(before!.merchant_unswept);
    assert.ok(change >= CLOSING_SHARE_MINIMUM, `the merchant's change: ${change}`);
    const everything = BigInt(before!.refundable);
    const to = freshAddress();
    const all = await app.request('POST', `/v1/payments/${p.id}/refunds`, {
      token: store.token,
      body: { coin: 'TON', amount: fromBaseUnits(everything, 9), address: to },
    });
    assert.equal(all.status, 201, all.text);
    const treasuryBefore = app.arrived(treasury, p.wallet);
    // The refund leaves 0.001 TON for the fees (the compute and its forwarding cost about 0.003): they take
    // part of the merchant's change first, and the wallet skips its share.
    assert.equal((await sendFromWallet({ ...app.signer(), closingRefundFee: 1_000_000n }, p.wallet)).outcome, 'sent');
    await app.settle();
    const rows = await outgoingOfPayment(app.pool, p.id);
    const refund = rows.find((row) => row.id === all.json.id)!;
    const leftover = rows.find((row) => row.reason === 'leftover')!;
    assert.deepEqual([refund.state, leftover.state, leftover.closing_of, leftover.to_address], ['confirmed', 'confirmed', refund.id, treasury]);
    assert.equal(app.arrived(Address.parse(to).toRawString(), p.wallet), everything - 1_000_000n, 'the refund: its exact value');
    assert.equal(refund.fee_base_units, '1000000', 'the refund paid what it left for the fees');
    // The share went with the carry-all; it paid the rest of the fees (no late money was booked).
    assert.equal(BigInt(leftover.sent_amount_base_units!) + BigInt(leftover.fee_base_units!), change);
    assert.ok(BigInt(leftover.fee_base_units!) > 0n && BigInt(leftover.fee_base_units!) < CLOSING_SHARE_MINIMUM * 5n, leftover.fee_base_units!);
    assert.equal(app.arrived(treasury, p.wallet) - treasuryBefore, BigInt(leftover.sent_amount_base_units!));
    assert.equal(rows.filter((row) => row.closing_of === refund.id).length, 1, 'nothing else carried');
    assert.ok(rows.every((row) => row.fee_base_units === null || BigInt(row.fee_base_units) >= 0n));
    assert.equal((await balances(p.wallet)).TON ?? '0', '0');
    await assertBooksMatchChain(app, p.id, p.wallet);
  });

  it("the refund of everything after overpayments, partial refunds, a jetton refund and the sweep empties the deposit: Kassa's gas goes back to the gas wallet in the same message", async () => {
    const treasury = freshAddress();
    const store = await newStore('USDT/TON', treasury);
    // An endpoint hearing every refund and sweep of the store (its deliveries are only recorded here).
    const endpoint = await app.pool.oneFirst(sql.type(z.object({ id: z.string() }))`
      insert into webhook_endpoints (store_id, url, events, created_at)
      values (${store.id}, 'https://merchant.example/hook', ${sql.array(['refund.confirmed', 'refund.failed', 'sweep.confirmed', 'sweep.failed'], 'text')}, now())
      returning id
    `);
    await recordRefundGasPayment(app.pool, { storeId: store.id, amountBaseUnits: toNano('1'), note: null, now: new Date() });
    const p = await payment(store.token, '2', 'USDT');
    await app.pay(p.address, 'USDT', '3');
    await app.pay(p.address, 'TON', '1'); // by mistake
    await app.settle();
    const customer = freshAddress();
    const refund = (body: unknown) => app.request('POST', `/v1/payments/${p.id}/refunds`, { token: store.token, body });
    assert.equal((await refund({ coin: 'USDT', amount: '1', address: customer })).status, 201);
    assert.equal((await refund({ coin: 'TON', amount: '0.3', address: customer })).status, 201);
    await app.drain(p.wallet); // the USDT refund (its gas topped up), the TON refund, the USDT sale's sweep
    const [ton] = await depositMoney(app.pool, p.id);
    const gasLeft = BigInt(ton!.gas!);
    assert.ok(gasLeft >= CLOSING_SHARE_MINIMUM, `Kassa's gas left in the deposit: ${gasLeft}`);
    assert.equal((await balances(treasury)).USDT, '2');
    const gasBefore = app.arrived(gas, p.wallet);
    const everything = BigInt(ton!.refundable);
    const last = await refund({ coin: 'TON', amount: fromBaseUnits(everything, 9), address: customer });
    assert.equal(last.status, 201, last.text);
    await app.drain(p.wallet);
    const rows = await outgoingOfPayment(app.pool, p.id);
    const back = rows.find((row) => row.reason === 'gas_return')!;
    const closing = rows.find((row) => row.id === last.json.id)!;
    assert.deepEqual([closing.state, back.state, back.closing_of, back.to_address], ['confirmed', 'confirmed', closing.id, gas]);
    assert.equal(BigInt(back.amount_base_units), gasLeft);
    assert.equal(app.arrived(gas, p.wallet) - gasBefore, gasLeft - BigInt(back.fee_base_units!));
    assert.equal(app.arrived(Address.parse(customer).toRawString(), p.wallet), toNano('0.3') + everything - CLOSING_REFUND_FEE);
    const left = await balances(p.wallet);
    assert.deepEqual([left.TON ?? '0', left.USDT ?? '0'], ['0', '0'], JSON.stringify(left));
    const [after] = await depositMoney(app.pool, p.id);
    assert.deepEqual([after!.refundable, after!.merchant_unswept, after!.gas], ['0', '0', '0']);
    await assertBooksMatchChain(app, p.id, p.wallet);
    // Kassa's gas is not the store's: no sweep in its balance answer, no event.
    const balance = await app.request('GET', `/v1/payments/${p.id}/balance`, { token: store.token });
    assert.ok(!balance.json.sweeps.some((sweep: any) => sweep.id === back.id));
    const told = await app.pool.any(sql.type(z.object({ event: z.string(), id: z.string() }))`
      select event, coalesce(payload->>'sweepID', payload->>'refundID') as id from webhook_deliveries where endpoint_id = ${endpoint} order by id
    `);
    assert.ok(
      told.some((d) => d.event === 'refund.confirmed' && d.id === closing.id),
      `the closing refund is told: ${JSON.stringify(told)}`,
    );
    assert.ok(
      told.some((d) => d.event === 'sweep.confirmed'),
      `the sale's sweep is told: ${JSON.stringify(told)}`,
    );
    assert.ok(!told.some((d) => d.id === back.id), `Kassa's gas going home in the same message is never told: ${JSON.stringify(told)}`);
  });

  it("a settled deposit's last dust of every owner leaves in one final sweep after REFUND_HOLD_DAYS: the customer's under the 0.01 line and the merchant's change to the treasury, Kassa's gas home", async () => {
    const { treasury, p, dust, change, later } = await settledWithDust();
    const treasuryBefore = app.arrived(treasury, p.wallet);
    assert.ok((await planDueSweeps(app.pool, { holdDays: 30, now: later })) >= 1);
    // Every deposit's final sweep the planner found (earlier tests' too) is sent.
    const planned = await app.pool.anyFirst(
      sql.type(z.object({ from: z.string() }))`select distinct from_address as from from outgoing_transfers where state = 'planned'`,
    );
    await app.drain(...planned);
    const rows = (await outgoingOfPayment(app.pool, p.id, 'sweep')).filter((row) => row.reason !== 'payment');
    // The largest share carries the rest; the other rides with it, paying only its own forwarding.
    const primary = rows.find((row) => row.closing_of === null)!;
    const other = rows.find((row) => row.closing_of === primary.id)!;
    assert.deepEqual([primary.reason, other.reason].sort(), ['held_money', 'leftover']);
    assert.deepEqual([primary.final_sweep, other.final_sweep], [true, false], 'the primary is marked as the final sweep, its share is not');
    assert.deepEqual([primary.state, other.state], ['confirmed', 'confirmed']);
    assert.equal(BigInt(primary.amount_base_units) + BigInt(other.amount_base_units), dust + change);
    const fees = BigInt(primary.fee_base_units!) + BigInt(other.fee_base_units!);
    assert.equal(app.arrived(treasury, p.wallet) - treasuryBefore, dust + change - fees);
    assert.equal((await balances(p.wallet)).TON ?? '0', '0');
    await assertBooksMatchChain(app, p.id, p.wallet);
    // Nothing is left: the next run plans nothing for it and marks the deposit settled.
    await planDueSweeps(app.pool, { holdDays: 30, now: later });
    assert.equal((await outgoingOfPayment(app.pool, p.id, 'sweep')).filter((row) => row.state === 'planned').length, 0);
    const settled = await app.pool.oneFirst(sql.type(z.object({ at: z.date().nullable() }))`select deposit_settled_at as at from payments where id = ${p.id}`);
    assert.ok(settled !== null);
  });

  it('money landing in the seconds between the balance check and the final sweep leaving goes with it to the treasury: booked as money that arrived since, and reported', async () => {
    const { treasury, p, dust, change, later } = await settledWithDust();
    const treasuryBefore = app.arrived(treasury, p.wallet);
    assert.ok((await planDueSweeps(app.pool, { holdDays: 30, now: later })) >= 1);
    const reported = async () => (await transfersCarriedMore.get()).values.find((v) => v.labels.kind === 'final_sweep')?.value ?? 0;
    const reportedBefore = await reported();
    // Signed while the deposit held only the dust; 0.5 TON lands before the message is broadcast.
    const landing = async (_boc: Buffer, send: () => Promise<void>) => {
      await app.pay(p.address, 'TON', '0.5');
      await send();
    };
    assert.equal((await sendFromWallet({ ...app.signer(), hooks: { broadcast: landing } }, p.wallet)).outcome, 'sent');
    await app.settle();
    const planned = await app.pool.anyFirst(
      sql.type(z.object({ from: z.string() }))`select distinct from_address as from from outgoing_transfers where state = 'planned'`,
    );
    await app.drain(...planned);
    const rows = (await outgoingOfPayment(app.pool, p.id, 'sweep')).filter((row) => row.reason !== 'payment');
    const primary = rows.find((row) => row.final_sweep)!;
    assert.ok(
      rows.every((row) => row.state === 'confirmed'),
      JSON.stringify(rows),
    );
    const fees = rows.reduce((sum, row) => sum + BigInt(row.fee_base_units!), 0n);
    const late = await app.pool.oneFirst(sql.type(z.object({ fee: z.string() }))`
      select coalesce(fee_base_units, 0)::text as fee from transfers where payment_id = ${p.id} and amount_base_units = ${toNano('0.5').toString()}
    `);
    assert.equal(app.arrived(treasury, p.wallet) - treasuryBefore, dust + change + toNano('0.5') - BigInt(late) - fees);
    // The primary booked its own share; the late money (less its receiving fee) is a row of its own, the customer's, swept to the treasury.
    assert.equal(BigInt(primary.sent_amount_base_units!) + BigInt(primary.fee_base_units!), BigInt(primary.amount_base_units));
    const carried = rows.find((row) => row.closing_of === primary.id && BigInt(row.amount_base_units) === toNano('0.5') - BigInt(late));
    assert.ok(carried && carried.reason === 'held_money' && carried.to_address === treasury && carried.fee_base_units === '0', JSON.stringify(rows));
    assert.ok(rows.every((row) => BigInt(row.fee_base_units!) >= 0n));
    assert.equal((await balances(p.wallet)).TON ?? '0', '0');
    await assertBooksMatchChain(app, p.id, p.wallet);
    assert.equal(await reported(), reportedBefore + 1);
  });

  it("a jetton sale's deposit: Kassa's unused gas goes home in the final sweep, the deposit empty", async () => {
    const treasury = freshAddress();
    const store = await newStore('USDT/TON', treasury);
    const p = await payment(store.token, '2', 'USDT');
    await app.pay(p.address, 'USDT', '2');
    await app.settle();
    await app.drain(p.wallet); // the USDT swept, its TON topped up from the gas wallet
    assert.equal((await balances(treasury)).USDT, '2');
    const [ton] = await depositMoney(app.pool, p.id);
    const left = BigInt(ton!.gas!);
    assert.ok(left > 0n && left === toNano((await balances(p.wallet)).TON ?? '0'), JSON.stringify(ton));
    const gasBefore = app.arrived(gas, p.wallet);
    assert.ok((await planDueSweeps(app.pool, { holdDays: 30, now: new Date(Date.now() + 31 * 86_400_000) })) >= 1);
    // Every deposit's final sweep the planner found (earlier tests' too) is sent.
    const planned = await app.pool.anyFirst(
      sql.type(z.object({ from: z.string() }))`select distinct from_address as from from outgoing_transfers where state = 'planned'`,
    );
    await app.drain(...planned);
    const back = (await outgoingOfPayment(app.pool, p.id, 'sweep')).find((row) => row.reason === 'gas_return')!;
    assert.deepEqual([back.state, back.to_address, back.amount_base_units], ['confirmed', gas, left.toString()]);
    assert.equal(app.arrived(gas, p.wallet) - gasBefore, left - BigInt(back.fee_base_units!));
    assert.equal((await balances(p.wallet)).TON ?? '0', '0');
    await assertBooksMatchChain(app, p.id, p.wallet);
  });

  it('refunds in many pieces from a store without a treasury, then the treasury: the sweep of the counted money succeeds', async () => {
    const store = await newStore('TON/TON', null);
    const p = await payment(store.token, '1', 'TON');
    await app.pay(p.address, 'TON', '1.5');
    await app.settle();
    for (let i = 0; i < 5; i += 1) {
      const r = await app.request('POST', `/v1/payments/${p.id}/refunds`, {
        token: store.token,
        body: { coin: 'TON', amount: '0.09', address: freshAddress() },
      });
      assert.equal(r.status, 201, r.text);
    }
    const sixth = await app.request('POST', `/v1/payments/${p.id}/refunds`, {
      token: store.token,
      body: { coin: 'TON', amount: '0.09', address: freshAddress() },
    });
    assert.equal(sixth.json.error.code, 'refund_exceeds_balance');
    await app.drain(p.wallet);
    await assertBooksMatchChain(app, p.id, p.wallet);
    const [ton] = await depositMoney(app.pool, p.id);
    // The merchant's counted TON is whole: the refunds' fees came out of the refundable money.
    assert.equal(ton!.merchant_unswept, toNano('1').toString());
    const treasury = freshAddress();
    await updateStore(app.pool, store.id, { treasury });
    assert.equal(await planDueSweeps(app.pool, { holdDays: 30, now: new Date() }), 1);
    await app.drain(p.wallet);
    const sweep = (await outgoingOfPayment(app.pool, p.id, 'sweep'))[0]!;
    assert.equal(sweep.state, 'confirmed', JSON.stringify(sweep));
    assert.equal(app.arrived(treasury, p.wallet), BigInt(sweep.sent_amount_base_units!));
    assert.ok(BigInt(sweep.sent_amount_base_units!) >= toNano('0.99'), sweep.sent_amount_base_units!);
    await assertBooksMatchChain(app, p.id, p.wallet);
  });

  it("a jetton refund beside a TON refund: the jetton refund's TON is Kassa's gas, the customer's TON comes back", async () => {
    const treasury = freshAddress();
    const store = await newStore('USDT/TON', treasury);
    const p = await payment(store.token, '2', 'USDT');
    await app.pay(p.address, 'USDT', '3');
    await app.pay(p.address, 'TON', '1'); // by mistake
    await app.settle();
    const customer = freshAddress();
    await recordRefundGasPayment(app.pool, { storeId: store.id, amountBaseUnits: toNano('1'), note: null, now: new Date() });
    const usdt = await app.request('POST', `/v1/payments/${p.id}/refunds`, { token: store.token, body: { coin: 'USDT', amount: '1', address: customer } });
    assert.equal(usdt.status, 201, usdt.text);
    assert.equal(usdt.json.receives, '1');
    assert.equal(usdt.json.fee, '0.06');
    const ton = await app.request('POST', `/v1/payments/${p.id}/refunds`, { token: store.token, body: { coin: 'TON', amount: '0.98', address: customer } });
    assert.equal(ton.status, 201, ton.text);
    // Dust refunds against the gas wallet are refused: a refund never costs more than it moves.
    const gasBefore = (await balances(gas)).TON;
    for (let i = 0; i < 5; i += 1) {
      const dust = await app.request('POST', `/v1/payments/${p.id}/refunds`, {
        token: store.token,
        body: { coin: 'USDT', amount: '0.000001', address: customer },
      });
      assert.equal(dust.json.error.code, 'refund_below_minimum');
    }
    await app.drain(p.wallet);
    const refunds = (await app.request('GET', `/v1/payments/${p.id}/refunds`, { token: store.token })).json.data;
    assert.deepEqual(
      refunds.map((r: any) => r.status),
      ['confirmed', 'confirmed'],
    );
    const got = await balances(customer);
    assert.equal(got.USDT, '1');
    assert.equal(app.arrived(Address.parse(customer).toRawString(), p.wallet), toNano('0.98'));
    assert.equal((await balances(treasury)).USDT, '2');
    assert.ok(toNano((await balances(gas)).TON!) < toNano(gasBefore!)); // the top-ups were Kassa's
    await assertBooksMatchChain(app, p.id, p.wallet);
  });

  it("dust jetton refunds against the shared gas wallet: each refund's gas is paid for by its store or refused; the gas wallet's books equal the chain to the nanoTON", async () => {
    const store = await newStore('USDT/TON', null);
    const p = await payment(store.token, '1', 'USDT');
    await app.pay(p.address, 'USDT', '2');
    await app.settle();
    const ask = () =>
      app.request('POST', `/v1/payments/${p.id}/refunds`, { token: store.token, body: { coin: 'USDT', amount: '0.1', address: freshAddress() } });
    // Nothing paid for refund gas: refused, and the gas wallet is not touched.
    const unpaid = await ask();
    assert.equal(unpaid.status, 409, unpaid.text);
    assert.equal(unpaid.json.error.code, 'refund_gas_unpaid');
    // Paid for two refunds' reserves (0.06 TON each) and a little: two go, the third is refused.
    await recordRefundGasPayment(app.pool, { storeId: store.id, amountBaseUnits: toNano('0.13'), note: 'paid by the merchant', now: new Date() });
    const answers = await Promise.all([ask(), ask(), ask(), ask()]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [201, 201, 409, 409], JSON.stringify(answers.map((a) => a.text)));
    const gasTxsBefore = app.sandbox.chain.transactionsOf(Address.parse(gas)).length;
    const gasBefore = toNano((await balances(gas)).TON!);
    await app.drain(p.wallet);
    const rows = await outgoingOfPayment(app.pool, p.id);
    const refunds = rows.filter((r) => r.kind === 'refund');
    assert.deepEqual(
      refunds.map((r) => r.state),
      ['confirmed', 'confirmed'],
    );
    // The store's account: what its refunds cost (the chain's figures) and the top-ups' fees, no more.
    const topUps = rows.filter((r) => r.kind === 'gas_top_up');
    assert.ok(topUps.length >= 1);
    const account = await storeRefundGas(app.pool, store.id);
    const cost = refunds.reduce((sum, r) => sum + BigInt(r.fee_base_units!), 0n) + topUps.reduce((sum, r) => sum + BigInt(r.fee_base_units!), 0n);
    assert.equal(account.spent, cost);
    assert.equal(account.paid, toNano('0.13'));
    assert.equal(account.available, toNano('0.13') - cost);
    assert.ok(account.available >= 0n);
    // Still less than a refund's reserve: the next is refused.
    assert.equal((await ask()).json.error.code, 'refund_gas_unpaid');
    // The merchant sees the account beside the payment's money.
    const balance = (await app.request('GET', `/v1/payments/${p.id}/balance`, { token: store.token })).json;
    assert.deepEqual(
      [toNano(balance.refundGas.paid), toNano(balance.refundGas.spent), toNano(balance.refundGas.available)],
      [account.paid, account.spent, account.available],
    );
    // The gas wallet's chain balance moved by exactly what the books say it sent (top-ups and
    // their fees), plus the excess its jetton transfers returned (read from the chain, less the fee of receiving it).
    const returned = app.sandbox.chain
      .transactionsOf(Address.parse(gas))
      .slice(gasTxsBefore)
      .filter((tx) => tx.inMessage?.info.type === 'internal')
      .reduce((sum, tx) => sum + (tx.inMessage!.info as { value: { coins: bigint } }).value.coins - tx.totalFees.coins, 0n);
    const sent = topUps.reduce((sum, r) => sum + BigInt(r.sent_amount_base_units!) + BigInt(r.fee_base_units!), 0n);
    assert.equal(toNano((await balances(gas)).TON!), gasBefore - sent + returned);
    // What the gas wallet lost is the store's charge, less what came back, plus what stays in the
    // store's deposit as gas for its next jetton transfer (on the books: deposit_money's gas).
    const [ton] = await depositMoney(app.pool, p.id);
    assert.equal(gasBefore - toNano((await balances(gas)).TON!), sent - returned);
    assert.ok(sent - returned <= cost + BigInt(ton!.gas!) + toNano('0.01'), `${sent - returned} vs ${cost} + ${ton!.gas}`);
    await assertBooksMatchChain(app, p.id, p.wallet);
    assert.equal((await balances(p.address)).USDT, '1.8');
  });

  it("a refund asked in the payment's currency: converted at the payment's own rate (the whole price is exactly what the customer was asked) or today's; the destination gets it to the nanoTON", async () => {
    const store = await newStore('TON/TON', null);
    const created = await app.request('POST', '/v1/payments', {
      token: store.token,
      body: { amount: '10', currency: 'USD', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
    });
    assert.equal(created.status, 201, created.text);
    const p = { id: created.json.id as string, address: created.json.paymentDetails.address as string };
    const wallet = Address.parse(p.address).toRawString();
    const priced = await app.pool.one(sql.type(z.object({ coin_amount: z.string(), exchange_rate: z.string() }))`
      select coin_amount::text as coin_amount, exchange_rate::text as exchange_rate from payments where id = ${p.id}
    `);
    // The customer pays twice the price (and a little): the price once is refundable.
    await app.pay(p.address, 'TON', (Number(priced.coin_amount) * 2 + 0.1).toFixed(9));
    await app.settle();
    const first = freshAddress();
    const own = await app.request('POST', `/v1/payments/${p.id}/refunds`, {
      token: store.token,
      body: { coin: 'TON', amount: '10', currency: 'USD', address: first },
    });
    assert.equal(own.status, 201, own.text);
    assert.equal(own.json.amount, priced.coin_amount);
    assert.deepEqual(own.json.requested, { amount: '10', currency: 'USD', rate: priced.exchange_rate, rateSource: 'payment' });
    const second = freshAddress();
    const today = await app.request('POST', `/v1/payments/${p.id}/refunds`, {
      token: store.token,
      body: { coin: 'TON', amount: '0.25', currency: 'USD', rate: 'current', address: second },
    });
    assert.equal(today.status, 201, today.text);
    assert.equal(today.json.requested.rateSource, 'fixed');
    assert.equal(today.json.amount, coinAmountFor('0.25', today.json.requested.rate, 9));
    // Another currency than the payment's is refused; so is more than the refundable money.
    const eur = await app.request('POST', `/v1/payments/${p.id}/refunds`, {
      token: store.token,
      body: { coin: 'TON', amount: '1', currency: 'EUR', address: first },
    });
    assert.equal(eur.status, 400, eur.text);
    assert.equal(eur.json.error.param, 'currency');
    // A rate with no currency to convert is refused, not ignored; so is a rate that is neither.
    for (const body of [
      { coin: 'TON', amount: '1', rate: 'current', address: first },
      { coin: 'TON', amount: '1', currency: 'TON', rate: 'payment', address: first },
      { coin: 'TON', amount: '1', currency: 'USD', rate: 'yesterday', address: first },
    ]) {
      const refused = await app.request('POST', `/v1/payments/${p.id}/refunds`, { token: store.token, body });
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.json.error.code, 'invalid_request');
      assert.equal(refused.json.error.param, 'rate');
    }
    const over = await app.request('POST', `/v1/payments/${p.id}/refunds`, {
      token: store.token,
      body: { coin: 'TON', amount: '10', currency: 'USD', address: first },
    });
    assert.equal(over.json.error.code, 'refund_exceeds_balance');
    await app.drain(wallet);
    assert.equal(app.arrived(first, wallet), toNano(priced.coin_amount));
    assert.equal(app.arrived(second, wallet), toNano(today.json.amount));
    const listed = (await app.request('GET', `/v1/payments/${p.id}/refunds`, { token: store.token })).json.data;
    assert.deepEqual(
      listed.map((r: any) => [r.status, r.requested.currency]),
      [
        ['confirmed', 'USD'],
        ['confirmed', 'USD'],
      ],
    );
    await assertBooksMatchChain(app, p.id, wallet);
  });

  it("masterchain and Kassa's own destinations (this deposit, another payment's, the gas wallet) are refused; nothing leaves; the books equal the chain", async () => {
    const store = await newStore('TON/TON', null);
    const p = await payment(store.token, '1', 'TON');
    const other = await payment(store.token, '1', 'TON');
    await app.pay(p.address, 'TON', '1.5');
    await app.settle();
    const before = toNano((await balances(p.address)).TON!);
    const masterchain = `-1:${'cd'.repeat(32)}`;
    for (const address of [masterchain, p.address, p.wallet, other.address, gas]) {
      const r = await app.request('POST', `/v1/payments/${p.id}/refunds`, { token: store.token, body: { coin: 'TON', amount: '0.1', address } });
      assert.equal(r.status, 400, `${address}: ${r.text}`);
      assert.equal(r.json.error.code, 'invalid_address');
    }
    await app.drain(p.wallet);
    assert.equal((await outgoingOfPayment(app.pool, p.id)).length, 0);
    assert.equal(toNano((await balances(p.address)).TON!), before);
    await assertBooksMatchChain(app, p.id, p.wallet);
    const [ton] = await depositMoney(app.pool, p.id);
    assert.ok(BigInt(ton!.refundable) > toNano('0.49'), ton!.refundable);
  });

  it("one store's jetton refunds at once on different payments cannot both take the last of its refund gas account", async () => {
    const store = await newStore('USDT/TON', null);
    const payments = [await payment(store.token, '1', 'USDT'), await payment(store.token, '1', 'USDT')];
    for (const p of payments) await app.pay(p.address, 'USDT', '2');
    await app.settle();
    // Paid for exactly one jetton refund's reserve (0.06 TON).
    await recordRefundGasPayment(app.pool, { storeId: store.id, amountBaseUnits: toNano('0.06'), note: null, now: new Date() });
    const answers = await Promise.all(
      payments.flatMap((p) =>
        Array.from({ length: 4 }, () =>
          app.request('POST', `/v1/payments/${p.id}/refunds`, { token: store.token, body: { coin: 'USDT', amount: '0.1', address: freshAddress() } }),
        ),
      ),
    );
    assert.equal(answers.filter((r) => r.status === 201).length, 1, answers.map((r) => r.status).join(','));
    assert.ok(
      answers.every((r) => r.status === 201 || r.json.error.code === 'refund_gas_unpaid'),
      answers.map((r) => r.text).join('\n'),
    );
    assert.deepEqual(await storeRefundGas(app.pool, store.id), { paid: toNano('0.06'), spent: toNano('0.06'), available: 0n });
  });

  it("a deposit's jetton wallet is Kassa's own too: refused as a refund's destination and as a treasury (what reaches it cannot be got back)", async () => {
    const store = await newStore('USDT/TON', null);
    const p = await payment(store.token, '1', 'USDT');
    await app.pay(p.address, 'USDT', '2');
    await app.settle();
    await recordRefundGasPayment(app.pool, { storeId: store.id, amountBaseUnits: toNano('1'), note: null, now: new Date() });
    const jettonWallet = await app.pool.oneFirst(sql.type(z.object({ account: z.string() }))`
      select account from chain_watches where payment_id = ${p.id} and kind = 'jetton_wallet'
    `);
    for (const coin of ['USDT', 'TON']) {
      const r = await app.request('POST', `/v1/payments/${p.id}/refunds`, { token: store.token, body: { coin, amount: '0.5', address: jettonWallet } });
      assert.equal(r.status, 400, `${coin}: ${r.text}`);
      assert.equal(r.json.error.code, 'invalid_address');
      assert.match(r.json.error.message, /jetton wallet/);
    }
    await assert.rejects(updateStore(app.pool, store.id, { treasury: jettonWallet }), /jetton wallet/);
    assert.equal((await outgoingOfPayment(app.pool, p.id)).length, 0);
  });

  it("a deposit's jetton wallet of a token Kassa never saw or accepted (no notification ever) is refused as a refund's destination too: asked of the wallet itself", async () => {
    const store = await newStore('TON/TON', null);
    const p = await payment(store.token, '1', 'TON');
    await app.pay(p.address, 'TON', '1.5');
    // The look-alike "USDT" (a master Kassa does not know), sent without a notification: the block
    // stream shows the deposit nothing, the books know no such wallet.
    await app.pay(p.address, 'USDT', '3', { fromLookalike: true, notify: false });
    await app.settle();
    const strange = (await app.sandbox.chain.jettonWalletOf(Address.parseRaw(app.sandbox.chain.lookalikeMaster), Address.parseRaw(p.wallet))).toRawString();
    assert.equal(await app.pool.exists(sql.unsafe`select 1 from jetton_wallets where address = ${strange}`), false, 'unknown to the books');
    const before = toNano((await balances(p.address)).TON!);
    for (const address of [strange, Address.parseRaw(strange).toString({ bounceable: true, testOnly: true })]) {
      const r = await app.request('POST', `/v1/payments/${p.id}/refunds`, { token: store.token, body: { coin: 'TON', amount: '0.1', address } });
      assert.equal(r.status, 400, `${address}: ${r.text}`);
      assert.equal(r.json.error.code, 'invalid_address');
      assert.equal(r.json.error.param, 'address');
      assert.match(r.json.error.message, /jetton wallet of one of Kassa's own deposits/);
    }
    // Another owner's jetton wallet of the same token is no wallet of Kassa's: a refund may go there.
    const customers = (
      await app.sandbox.chain.jettonWalletOf(Address.parseRaw(app.sandbox.chain.lookalikeMaster), Address.parseRaw(app.sandbox.chain.customerAddress))
    ).toRawString();
    const allowed = await app.request('POST', `/v1/payments/${p.id}/refunds`, { token: store.token, body: { coin: 'TON', amount: '0.1', address: customers } });
    assert.equal(allowed.status, 201, allowed.text);
    await app.drain(p.wallet);
    assert.equal(app.arrived(customers, p.wallet), toNano('0.1'));
    assert.equal(app.arrived(strange, p.wallet), 0n);
    assert.ok(toNano((await balances(p.address)).TON!) < before);
    await assertBooksMatchChain(app, p.id, p.wallet);
  });

  it('a store whose treasury is on the masterchain (set before it was refused): the USDT sweep fails once and stays failed; mending the treasury sweeps it', async () => {
    const store = await newStore('USDT/TON', null);
    const masterchain = `-1:${Buffer.from(Array.from({ length: 32 }, () => Math.floor(Math.random() * 256))).toString('hex')}`;
    await app.pool.query(sql.unsafe`update stores set treasury = ${masterchain} where id = ${store.id}`);
    const p = await payment(store.token, '2', 'USDT');
    await app.pay(p.address, 'USDT', '2');
    await app.settle();
    await app.drain(p.wallet);
    const [failed] = await outgoingOfPayment(app.pool, p.id, 'sweep');
    assert.equal(failed!.state, 'failed', JSON.stringify(failed));
    assert.equal(failed!.failure_kind, 'permanent');
    assert.match(failed!.failure_reason!, /jetton wallet refused/);
    // Not planned again by itself, however often the planner runs.
    const gasBefore = (await balances(gas)).TON;
    for (let i = 0; i < 3; i += 1) assert.equal(await planDueSweeps(app.pool, { holdDays: 30, now: new Date(Date.now() + i * 3_600_000) }), 0);
    await app.drain(p.wallet);
    assert.equal((await outgoingOfPayment(app.pool, p.id, 'sweep')).length, 1);
    assert.equal((await balances(gas)).TON, gasBefore);
    assert.equal((await balances(p.address)).USDT, '2');
    // The TON its refused transfer bounced back is Kassa's own (not_counted): books equal the chain.
    const bounced = await app.pool.anyFirst(sql.type(z.object({ effect: z.string() }))`
      select effect from transfers where payment_id = ${p.id} and detail = 'bounced_message'
    `);
    assert.deepEqual(bounced, ['not_counted']);
    await assertBooksMatchChain(app, p.id, p.wallet);
    const doctor = await checkFailedTransfers(app.pool);
    assert.equal(doctor.status, 'warn');
    assert.match(doctor.detail, /sweep\(s\) of 2 USDT/);
    assert.match(doctor.detail, /kassa store update ID --treasury/);
    // Mended: the sweep goes to the new treasury.
    const treasury = freshAddress();
    await updateStore(app.pool, store.id, { treasury });
    assert.equal(await planDueSweeps(app.pool, { holdDays: 30, now: new Date() }), 1);
    await app.drain(p.wallet);
    assert.equal((await balances(treasury)).USDT, '2');
  });
});
