// A subscription's money besides a payment's completion (issue 45; docs/API.md, Subscriptions), on
// the sandbox chain with the real chain reader: money that arrives after the renewal completed is
// credited (the plan's currency, the payment's rate), once; a refund of the renewal writes a ledger
// `refund` row that takes from credit and never ends the period; on a treasury store, an unmatched
// transfer a person assigns to a renewal credits the subscription as the reader's booking does;
// reporting.subscriptions and reporting.subscription_ledger sum and list it; a refund that fails (its
// transfer failed, or a refund from the treasury expired unsigned) gives its amount back once, and
// one signed after all takes it again. Money of a payment that expired: late-money.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Address, beginCell } from '@ton/core';
import { sql, z } from '../../src/db/pool.ts';
import { updateStore } from '../../src/stores/stores.ts';
import { settleRefundLedger } from '../../src/subscriptions/engine.ts';
import { type ChainTestApp, startChainApp } from '../helpers/chain.ts';

let app: ChainTestApp;

before(async () => {
  app = await startChainApp();
});
after(() => app?.close());

const raw = (address: string) => Address.parse(address).toRawString();

/** A store's API, a TON plan of `amount` a month, and a subscription past_due with its first renewal open (method TON chosen). */
async function subscribed(token: string, amount: string) {
  const post = (path: string, body: unknown) => app.request('POST', path, { token, body });
  const get = (path: string) => app.request('GET', path, { token });
  const plan = await post('/v1/plans', { name: 'VPN', currency: 'TON', amount, interval: 'month' });
  assert.equal(plan.status, 201, plan.text);
  const sub = await post('/v1/subscriptions', { planID: plan.json.id, customer: { reference: `u-${Math.random()}` } });
  assert.equal(sub.status, 201, sub.text);
  const paymentId: string = sub.json.renewalPaymentID;
  const methods = (await get('/v1/payment-methods')).json.data;
  const ton = methods.find((m: { coin: { symbol: string } }) => m.coin.symbol === 'TON').id;
  const chosen = await app.request('POST', `/pay/v1/checkout/payments/${paymentId}/method`, { body: { paymentMethodID: ton } });
  assert.equal(chosen.status, 200, chosen.text);
  const ledger = async () =>
    ((await get(`/v1/subscriptions/${sub.json.id}/ledger`)).json.data as Array<{ kind: string; amount: string; paymentID?: string; note?: string }>).map(
      (e) => [e.kind, e.amount, e.paymentID === paymentId ? 'renewal' : e.paymentID],
    );
  return {
    post,
    get,
    id: sub.json.id as string,
    portalURL: sub.json.portalURL as string,
    paymentId,
    payment: (await get(`/v1/payments/${paymentId}`)).json,
    ledger,
  };
}

describe('money of a subscription besides completion', () => {
  it('late money after completion is credited once; a refund of the renewal takes from credit and leaves the period', async () => {
    const store = await app.store({ methods: 'TON/TON', refundWindowDays: 0 });
    const s = await subscribed(store.token, '1');
    await app.pay(s.payment.paymentDetails.address, 'TON', '1');
    await app.settle();
    assert.equal((await s.get(`/v1/payments/${s.paymentId}`)).json.status, 'completed');
    // Money sent again after it completed (a second click in the wallet): the subscriber's, credited.
    await app.pay(s.payment.paymentDetails.address, 'TON', '0.4');
    await app.settle();
    assert.deepEqual(await s.ledger(), [
      ['credit', '1', 'renewal'],
      ['credit', '0.4', 'renewal'],
    ]);
    // The reader booking the same block again credits nothing more.
    await app.settle();
    assert.equal((await s.ledger()).length, 2);

    // The shop refunds 0.3 TON of the late money: a ledger refund row takes it from credit; the subscription stays as it was.
    const before = (await s.get(`/v1/subscriptions/${s.id}`)).json;
    const refund = await s.post(`/v1/payments/${s.paymentId}/refunds`, { coin: 'TON', amount: '0.3', address: 'payer' });
    assert.equal(refund.status, 201, refund.text);
    const ledger = await s.ledger();
    assert.deepEqual(ledger.at(-1), ['refund', '-0.3', 'renewal']);
    const afterRefund = (await s.get(`/v1/subscriptions/${s.id}`)).json;
    assert.equal(afterRefund.status, before.status);
    assert.equal(afterRefund.currentPeriodEnd, before.currentPeriodEnd);
    // The period's charge waits for its job (not run here): 1.4 credited, 0.3 of it refunded.
    assert.deepEqual([before.credit, afterRefund.credit], ['1.4', '1.1']);

    // The merchant's reports in SQL: the subscription's sums by kind, and its ledger in the order written.
    const report = await app.pool.one(sql.type(z.object({ credited: z.string(), charged: z.string(), refunded: z.string(), credit: z.string() }))`
      select trim_scale(credited)::text as credited, trim_scale(charged)::text as charged, trim_scale(refunded)::text as refunded,
             trim_scale(credit)::text as credit
      from reporting.subscriptions where store_id = ${store.id} and subscription_id = ${s.id}
    `);
    assert.deepEqual(report, { credited: '1.4', charged: '0', refunded: '0.3', credit: '1.1' });
    const rows = await app.pool.anyFirst(sql.type(z.object({ kind: z.string() }))`
      select kind from reporting.subscription_ledger where store_id = ${store.id} and subscription_id = ${s.id} order by position
    `);
    assert.deepEqual(rows, ['credit', 'credit', 'refund']);
  });

  it('an unmatched treasury transfer assigned to a renewal credits the subscription', async () => {
    const treasury = raw((await app.request('POST', '/sandbox/v1/wallets')).json.address);
    const customer = raw((await app.request('POST', '/sandbox/v1/wallets')).json.address);
    const store = await app.store({ methods: 'TON/TON', refundWindowDays: 0 });
    await updateStore(app.pool, store.id, { treasury, settlement: 'treasury' });
    const s = await subscribed(store.token, '0.5');
    assert.ok(s.payment.paymentDetails.reference);
    // The customer forgot the reference: kept as unmatched money.
    const comment = beginCell().storeUint(0, 32).storeStringTail('for my vpn').endCell().toBoc().toString('base64');
    const { hash } = await app.pay(treasury, 'TON', '0.5', { from: customer, payload: comment });
    await app.settle();
    const kept = (await s.get('/v1/unmatched-transfers')).json.data.find((u: { transactionHash: string }) => u.transactionHash === hash);
    assert.ok(kept, 'kept as unmatched');
    assert.deepEqual(await s.ledger(), []);
    const assigned = await s.post(`/v1/unmatched-transfers/${kept.id}/assign`, { paymentID: s.paymentId });
    assert.equal(assigned.status, 200, assigned.text);
    assert.equal((await s.get(`/v1/payments/${s.paymentId}`)).json.status, 'completed');
    assert.deepEqual(await s.ledger(), [['credit', '0.5', 'renewal']]);
  });

  it('a refund of the renewal that fails gives its amount back to the credit, once', async () => {
    const store = await app.store({ methods: 'TON/TON', refundWindowDays: 0 });
    const s = await subscribed(store.token, '1');
    await app.pay(s.payment.paymentDetails.address, 'TON', '1.4');
    await app.settle();
    assert.deepEqual(await s.ledger(), [['credit', '1.4', 'renewal']]);
    const refund = await s.post(`/v1/payments/${s.paymentId}/refunds`, { coin: 'TON', amount: '0.3', address: 'payer' });
    assert.equal(refund.status, 201, refund.text);
    // The deposit cannot pay what the transfer now asks (as a deposit emptied meanwhile): the wallet sends nothing, the refund fails.
    await app.pool.query(sql.unsafe`update outgoing_transfers set amount = 50, amount_base_units = 50000000000 where id = ${refund.json.id}`);
    await app.drain(raw(s.payment.paymentDetails.address));
    const [ended] = (await s.get(`/v1/payments/${s.paymentId}/refunds`)).json.data;
    assert.equal(ended.status, 'failed', JSON.stringify(ended));
    assert.deepEqual(await s.ledger(), [
      ['credit', '1.4', 'renewal'],
      ['refund', '-0.3', 'renewal'],
      ['refund', '0.3', 'renewal'],
    ]);
    const given = (await s.get(`/v1/subscriptions/${s.id}/ledger`)).json.data.at(-1);
    assert.equal(given.actor, 'kassa');
    assert.match(given.note, new RegExp(`refund ${refund.json.id} failed: 0.3 TON given back to the credit`));
    assert.equal((await s.get(`/v1/subscriptions/${s.id}`)).json.credit, '1.4');
    // The customer's portal says so in its history.
    const portal = await (await fetch(`${app.url}${new URL(s.portalURL).pathname}`)).text();
    assert.match(portal, /Refund failed: given back/);
    // Once: the end settled again (a retry, the reader booking the block again) writes nothing more.
    assert.equal(await app.pool.transaction((tx) => settleRefundLedger(tx, refund.json.id)), false);
    await app.settle();
    assert.equal((await s.ledger()).length, 3);
    const report = await app.pool.one(sql.type(z.object({ refunded: z.string(), credit: z.string() }))`
      select trim_scale(refunded)::text as refunded, trim_scale(credit)::text as credit
      from reporting.subscriptions where store_id = ${store.id} and subscription_id = ${s.id}
    `);
    assert.deepEqual(report, { refunded: '0', credit: '1.4' });
  });

  it('a refund from the treasury nobody signs gives its amount back when it expires; signed after all, it is taken again', async () => {
    const treasuryWallet = (await app.request('POST', '/sandbox/v1/wallets')).json.address as string;
    const treasury = raw(treasuryWallet);
    const customer = (await app.request('POST', '/sandbox/v1/wallets')).json.address as string;
    const store = await app.store({ methods: 'TON/TON', refundWindowDays: 0 });
    await updateStore(app.pool, store.id, { treasury, settlement: 'treasury' });
    const s = await subscribed(store.token, '1');
    const reference = beginCell().storeUint(0, 32).storeStringTail(s.payment.paymentDetails.reference).endCell().toBoc().toString('base64');
    await app.pay(treasury, 'TON', '1', { from: raw(customer), payload: reference });
    await app.settle();
    assert.deepEqual(await s.ledger(), [['credit', '1', 'renewal']]);
    const refund = await s.post(`/v1/payments/${s.paymentId}/refunds`, { coin: 'TON', amount: '0.4', address: customer, from: 'treasury' });
    assert.equal(refund.status, 201, refund.text);
    assert.equal(refund.json.status, 'awaiting_signature');
    assert.deepEqual((await s.ledger()).at(-1), ['refund', '-0.4', 'renewal']);
    // Nobody signs: past its hold (the chain's clock), the reader expires it and the credit gets the 0.4 back.
    const ahead = Math.ceil((new Date(refund.json.heldUntil).getTime() - app.sandbox.chain.now * 1000) / 1000) + 5;
    await app.advanceChain(ahead);
    assert.equal((await s.get(`/v1/payments/${s.paymentId}/refunds`)).json.data[0].status, 'expired');
    assert.deepEqual((await s.ledger()).slice(1), [
      ['refund', '-0.4', 'renewal'],
      ['refund', '0.4', 'renewal'],
    ]);
    assert.equal((await s.get(`/v1/subscriptions/${s.id}`)).json.credit, '1');
    await app.settle();
    assert.equal((await s.ledger()).length, 3, 'given back once');
    // The merchant's wallet signs the old request anyway: the money left, so it is taken from the credit again, once.
    for (const message of refund.json.tonconnect.messages as Array<{ address: string; amount: string; payload: string }>) {
      await app.pay(message.address, 'TON', (Number(message.amount) / 1e9).toString(), { from: treasury, payload: message.payload });
    }
    await app.settle();
    assert.equal((await s.get(`/v1/payments/${s.paymentId}/refunds`)).json.data[0].status, 'confirmed');
    const ledger = await s.ledger();
    assert.deepEqual(ledger.at(-1), ['refund', '-0.4', 'renewal']);
    assert.equal(ledger.length, 4);
    assert.equal((await s.get(`/v1/subscriptions/${s.id}`)).json.credit, '0.6');
    assert.match((await s.get(`/v1/subscriptions/${s.id}/ledger`)).json.data.at(-1).note, /left after all: 0.4 TON taken from the credit again/);
  });
});
