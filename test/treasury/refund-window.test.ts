// A sale refunded inside its store's refund window (issue 29, CONTRACT §11) on the real sandbox
// chain: the counted amount stays in the deposit until the window ends; a refund of it in part or
// in full reaches the customer exactly; the window's end sweeps what is left; a refund and the
// sweep racing each other settle with chain = books; refund_exceeds_balance says why.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Address, toNano } from '@ton/core';
import { sql, z } from '../../src/db/pool.ts';
import { updateStore } from '../../src/stores/stores.ts';
import { CLOSING_REFUND_FEE } from '../../src/treasury/closing.ts';
import { recordRefundGasPayment } from '../../src/treasury/gas.ts';
import { depositMoney, outgoingOfPayment } from '../../src/treasury/outgoing.ts';
import { planDueSweeps, sweepSaleAfterWindow } from '../../src/treasury/sweeps.ts';
import { decideRefund, largestRefund, whyNoMore } from '../../src/treasury/refunds.ts';
import { freshAddress, startChainApp, type ChainTestApp, assertBooksMatchChain, sandboxBalances } from '../helpers/chain.ts';
import { assertError } from '../helpers/payments.ts';

let app: ChainTestApp;
let store: Awaited<ReturnType<ChainTestApp['store']>>;
let treasury: string;
const DAY = 86_400_000;

const balances = (address: string) => sandboxBalances(app, address);
const refund = (id: string, body: unknown) => app.request('POST', `/v1/payments/${id}/refunds`, { token: store.token, body });
const balance = async (id: string) => (await app.request('GET', `/v1/payments/${id}/balance`, { token: store.token })).json;

async function sale(coin: 'TON' | 'USDT', amount: string, paid = amount) {
  const created = await app.request('POST', '/v1/payments', {
    token: store.token,
    body: { amount, currency: coin, payment_options: { methods: [{ coin, chain: 'TON' }] } },
  });
  assert.equal(created.status, 201, created.text);
  await app.pay(created.json.paymentDetails.address, coin, paid);
  await app.settle();
  const payment = (await app.request('GET', `/v1/payments/${created.json.id}`, { token: store.token })).json;
  assert.equal(payment.status, 'completed');
  return { id: created.json.id as string, wallet: Address.parse(created.json.paymentDetails.address).toRawString(), paidAt: new Date(payment.timer.paidAt) };
}

before(async () => {
  app = await startChainApp();
  treasury = freshAddress();
  store = await app.store({ methods: 'TON/TON,USDT/TON', refundWindowDays: 3 });
  await updateStore(app.pool, store.id, { treasury });
});
after(() => app.close());

describe('the refund window', () => {
  it('a new store gets 7 days; the store update takes 0 to 90 and refuses the rest', async () => {
    const fresh = await app.pool.oneFirst(sql.type(z.object({ d: z.number() }))`insert into stores (name) values ('Fresh') returning refund_window_days as d`);
    assert.equal(fresh, 7);
    assert.equal((await updateStore(app.pool, store.id, { 'refund-window-days': '90' })).refundWindowDays, 90);
    for (const bad of ['91', '-1', '1.5', 'seven', ''])
      await assert.rejects(updateStore(app.pool, store.id, { 'refund-window-days': bad }), /refund-window-days must be a whole number of days from 0 to 90/);
    assert.equal((await updateStore(app.pool, store.id, { 'refund-window-days': '3' })).refundWindowDays, 3);
  });

  it('a TON sale: refunded in part inside the window (exactly the amount arrives); the window ends and the sweep takes the rest', async () => {
    const p = await sale('TON', '2.5');
    // Nothing is swept at completion: the sweep waits for the window's end (its job, run_at = refundableUntil).
    assert.deepEqual(await outgoingOfPayment(app.pool, p.id, 'sweep'), []);
    const until = new Date(p.paidAt.getTime() + 3 * DAY);
    const job = await app.pool.one(sql.type(z.object({ run_at: z.date(), payload: z.any() }))`
      select run_at, payload from graphile_worker._private_jobs where key = ${`treasury__sweep_sale:${p.id}`}
    `);
    assert.equal(job.run_at.getTime(), until.getTime());
    assert.deepEqual(job.payload, { paymentId: p.id });
    const before = await balance(p.id);
    assert.equal(before.refundableUntil, until.toISOString());
    const [ton] = await depositMoney(app.pool, p.id);
    assert.equal(toNano(before.coins[0].refundable), BigInt(ton!.refundable) + BigInt(ton!.merchant_unswept));
    // The largest refund the balance states is accepted (here only after others; checked below on the last one).
    const customer = freshAddress();
    const part = await refund(p.id, { coin: 'TON', amount: '1', address: customer });
    assert.equal(part.status, 201, part.text);
    assert.equal(part.json.receives, '1');
    await app.drain(p.wallet);
    assert.equal(app.arrived(Address.parse(customer).toRawString(), p.wallet), toNano('1'));
    await assertBooksMatchChain(app, p.id, p.wallet);
    // More than there is: the error says what is refundable and until when.
    const over = await refund(p.id, { coin: 'TON', amount: '2', address: customer });
    assertError(over, 400, 'invalid_request_error', 'refund_exceeds_balance', 'amount');
    assert.match(
      over.json.error.message,
      /at most 1\.4\d+ TON is refundable now: all of it, its fee taken from it \(1\.4\d+ TON arrives; .*\), or at most 1\.4\d+ TON with its fee paid on top \(0\.01 TON reserved for it\); that includes what is left of the sale \(1\.4\d+ TON\), refundable until /,
    );
    // Inside the window nothing sweeps it, neither the job run early nor the recurring planner.
    assert.equal(await sweepSaleAfterWindow(app.pool, p.id, new Date(until.getTime() - 1_000)), false);
    await planDueSweeps(app.pool, { holdDays: 30, now: new Date(until.getTime() - 1_000) });
    assert.deepEqual(await outgoingOfPayment(app.pool, p.id, 'sweep'), []);
    // The window ends: the sweep takes what is left, all of it (the deposit holds only the merchant's money).
    const left = BigInt((await depositMoney(app.pool, p.id))[0]!.merchant_unswept);
    assert.equal(await sweepSaleAfterWindow(app.pool, p.id, until), true);
    const [sweep] = await outgoingOfPayment(app.pool, p.id, 'sweep');
    assert.equal(BigInt(sweep!.amount_base_units), left);
    await app.drain(p.wallet);
    const [swept] = await outgoingOfPayment(app.pool, p.id, 'sweep');
    assert.equal(swept!.state, 'confirmed');
    // The treasury gets what was left less exactly the sweep's fee; the deposit is empty.
    assert.equal(app.arrived(treasury, p.wallet), left - BigInt(swept!.fee_base_units!));
    assert.equal((await balances(p.wallet)).TON ?? '0', '0');
    await assertBooksMatchChain(app, p.id, p.wallet);
    // After the window: the sale is the merchant's, and the error says so and what to do.
    app.clock.set(new Date(until.getTime() + 1_000));
    try {
      const late = await refund(p.id, { coin: 'TON', amount: '0.5', address: customer });
      assertError(late, 400, 'invalid_request_error', 'refund_exceeds_balance', 'amount');
      assert.match(late.json.error.message, /nothing is refundable now/);
      assert.match(
        late.json.error.message,
        /the sale's counted 2\.5 TON is the merchant's: its refund window ended on .* and it was swept to the treasury on /,
      );
      assert.match(late.json.error.message, /--refund-window-days N/);
      assert.equal((await balance(p.id)).coins[0].largestRefund, '0');
    } finally {
      app.clock.real();
    }
  });

  it('a TON sale refunded in full inside the window: the refund of everything arrives as its exact value; nothing is left to sweep', async () => {
    const p = await sale('TON', '1.2', '1.5'); // overpaid: the customer's 0.3 and the sale's 1.2
    const stated = await balance(p.id);
    const largest = stated.coins[0].largestRefund;
    assert.equal(largest, stated.coins[0].refundable);
    const customer = freshAddress();
    const all = await refund(p.id, { coin: 'TON', amount: largest, address: customer });
    assert.equal(all.status, 201, all.text);
    await app.drain(p.wallet);
    const [done] = (await app.request('GET', `/v1/payments/${p.id}/refunds`, { token: store.token })).json.data;
    assert.equal(done.status, 'confirmed');
    // A closing message: the refund its exact value, the 0.01 TON reserve less; what its fee did not use went with the carry-all.
    assert.equal(app.arrived(Address.parse(customer).toRawString(), p.wallet), toNano(largest) - CLOSING_REFUND_FEE);
    assert.equal(toNano(done.receives), toNano(largest) - CLOSING_REFUND_FEE);
    assert.equal((await balances(p.wallet)).TON ?? '0', '0');
    await assertBooksMatchChain(app, p.id, p.wallet);
    // The window's end finds nothing to sweep.
    const end = new Date(p.paidAt.getTime() + 3 * DAY);
    assert.equal(await sweepSaleAfterWindow(app.pool, p.id, end), false);
    // Settled once for good: the recurring planner does not ask deposit_money of it again (issue 29: that set only grows).
    const settled = await app.pool.oneFirst(
      sql.type(z.object({ at: z.date().nullable() }))`select sale_sweep_settled_at as at from payments where id = ${p.id}`,
    );
    assert.equal(settled?.getTime(), end.getTime());
    await planDueSweeps(app.pool, { holdDays: 30, now: end });
    assert.deepEqual(
      (await outgoingOfPayment(app.pool, p.id, 'sweep')).filter((row) => row.closing_of !== done.id),
      [],
    );
  });

  it('a USDT sale: refunded in part, then the rest in full, inside the window; the customer gets exactly each amount', async () => {
    await recordRefundGasPayment(app.pool, { storeId: store.id, amountBaseUnits: 200_000_000n, note: 'test', now: new Date() });
    const p = await sale('USDT', '10');
    const customer = freshAddress();
    const first = await refund(p.id, { coin: 'USDT', amount: '4', address: customer });
    assert.equal(first.status, 201, first.text);
    await app.drain(p.wallet);
    const stated = await balance(p.id);
    const usdt = stated.coins.find((c: { coin: string }) => c.coin === 'USDT');
    assert.equal(usdt.refundable, '6');
    assert.equal(usdt.largestRefund, '6');
    assert.equal(usdt.merchantUnswept, '6');
    const rest = await refund(p.id, { coin: 'USDT', amount: '6', address: customer });
    assert.equal(rest.status, 201, rest.text);
    await app.drain(p.wallet);
    const refunds = (await app.request('GET', `/v1/payments/${p.id}/refunds`, { token: store.token })).json.data as any[];
    assert.deepEqual(
      refunds.map((r) => [r.amount, r.status]),
      [
        ['4', 'confirmed'],
        ['6', 'confirmed'],
      ],
    );
    // The customer's jetton wallet holds exactly the 10 USDT; the deposit none; the books agree.
    assert.equal((await balances(customer)).USDT, '10');
    assert.equal((await balances(p.wallet)).USDT ?? '0', '0');
    const [, money] = await depositMoney(app.pool, p.id);
    assert.deepEqual([money!.coin_symbol, money!.refundable, money!.merchant_unswept, money!.refunded], ['USDT', '0', '0', '10000000']);
    assert.equal(await sweepSaleAfterWindow(app.pool, p.id, new Date(p.paidAt.getTime() + 3 * DAY)), false);
  });

  it('a refund of the sale and its sweep racing at the window end settle with chain = books', async () => {
    const p = await sale('TON', '2');
    const until = new Date(p.paidAt.getTime() + 3 * DAY);
    app.clock.set(new Date(until.getTime() - 1));
    try {
      const customer = freshAddress();
      const [asked, swept] = await Promise.all([refund(p.id, { coin: 'TON', amount: '1.5', address: customer }), sweepSaleAfterWindow(app.pool, p.id, until)]);
      // Whichever took the payment's lock first, the other saw it: the refund and the sweep of what it left, or the sweep alone.
      if (asked.status === 201) assert.equal(swept, true);
      else assertError(asked, 400, 'invalid_request_error', 'refund_exceeds_balance', 'amount');
      await app.drain(p.wallet);
      const out = await outgoingOfPayment(app.pool, p.id);
      assert.ok(
        out.every((o) => o.state === 'confirmed'),
        JSON.stringify(out.map((o) => [o.kind, o.state, o.failure_reason])),
      );
      if (asked.status === 201) assert.equal(app.arrived(Address.parse(customer).toRawString(), p.wallet), toNano('1.5'));
      await assertBooksMatchChain(app, p.id, p.wallet);
    } finally {
      app.clock.real();
    }
  });
});

describe('every maximum stated is accepted (pure)', () => {
  it('the largest refund stated is accepted: all that is refundable, its fee taken from it, whatever else the deposit holds', () => {
    // Issue 29: after a refund of "the rest", 0.011041998 TON refundable beside other money was
    // stated as at most 0.001041998 and refused as under the 0.01 smallest refund. Now all of it is
    // refundable (0.001041998 arrives), and the answer says so.
    const money = { refundable: 11_041_998n, sale: null, held: 0n, inFlight: 0n };
    assert.equal(largestRefund(money, 'TON', 10_000_000n), 11_041_998n);
    assert.deepEqual(decideRefund({ coin: 'TON', amount: 11_041_998n, refundable: 11_041_998n }), { ok: true, feeReserved: 0n });
    const why = whyNoMore({ coin: { symbol: 'TON', decimals: 9, minimum: '10000000' }, money, available: 1_041_998n });
    assert.equal(
      why,
      'at most 0.011041998 TON is refundable now: all of it, its fee taken from it (0.001041998 TON arrives; what the fee does not use arrives too when this empties the deposit, else it is refundable again), never less (less than all leaves 0.001041998 TON once 0.01 TON is reserved for its fee, and is under the smallest refund, 0.01 TON).',
    );
    // No more than the reserve: nothing would arrive, so nothing is stated.
    assert.equal(largestRefund({ ...money, refundable: 10_000_000n }, 'TON', 10_000_000n), 0n);
  });
});
