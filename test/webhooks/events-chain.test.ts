// Every event type reaches a store's webhook endpoint, signed, and verified by the receiver kit — on the
// sandbox chain with real TVM, the chain reader booking, the signer sending and confirming (issue 29.6).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Address } from '@ton/core';
import { sql, z } from '../../src/db/pool.ts';
import { updateStore } from '../../src/stores/stores.ts';
import { EVENT_TYPES } from '../../src/webhooks/events.ts';
import { freshAddress, startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { runDeliveries, startEventReceiver, verifiedEvents } from '../helpers/eventReceiver.ts';

let app: ChainTestApp;

before(async () => {
  app = await startChainApp({ WEBHOOK_ALLOW_INSECURE: 'true' });
});
after(() => app.close());

async function payment(token: string, amount: string) {
  const created = await app.request('POST', '/v1/payments', {
    token,
    body: { amount, currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
  });
  assert.equal(created.status, 201, created.text);
  return {
    id: created.json.id as string,
    address: created.json.paymentDetails.address as string,
    wallet: Address.parse(created.json.paymentDetails.address).toRawString(),
  };
}

/** Books an outgoing transfer the deposit cannot pay (as a bug would): the signer will not send it, and fails it. */
async function unpayable(kind: 'refund' | 'sweep', p: { id: string; wallet: string }, storeId: string): Promise<void> {
  await app.pool.query(sql.unsafe`
    insert into outgoing_transfers (kind, reason, payment_id, store_id, from_address, to_address, coin_symbol, amount, amount_base_units)
    values (${kind}, ${kind === 'refund' ? 'refund' : 'payment'}, ${p.id}, ${storeId}, ${p.wallet}, ${freshAddress()}, 'TON', 50, 50000000000)
  `);
}

describe('store webhook endpoints on the sandbox chain: a sale completing, expiring, cancelled, late money, a refund confirmed and one failed, a sweep confirmed and one failed, a ping', () => {
  let receiver: Awaited<ReturnType<typeof startEventReceiver>>;
  let store: Awaited<ReturnType<ChainTestApp['store']>>;
  let sale: Awaited<ReturnType<typeof payment>>;
  let expiring: Awaited<ReturnType<typeof payment>>;
  let cancelled: Awaited<ReturnType<typeof payment>>;
  let refundId: string;
  let events: ReturnType<typeof verifiedEvents>;
  const of = (paymentId: string) => events.filter((e) => e.payload.paymentID === paymentId);
  const typesAndEffects = (paymentId: string) =>
    of(paymentId).map((e) => [e.type, (e.payload.transfer as { effect?: string } | undefined)?.effect ?? e.payload.status]);

  before(async () => {
    receiver = await startEventReceiver(app);
    store = await app.store({ methods: 'TON/TON' });
    await updateStore(app.pool, store.id, { treasury: freshAddress() });
    const endpoint = await app.request('POST', '/v1/webhook-endpoints', { token: store.token, body: { url: receiver.url, events: [...EVENT_TYPES] } });
    assert.equal(endpoint.status, 201, endpoint.text);

    // A sale, overpaid: completed, swept, the overpayment refunded through the API.
    sale = await payment(store.token, '1');
    await app.pay(sale.address, 'TON', '1.5');
    await app.settle();
    const refund = await app.request('POST', `/v1/payments/${sale.id}/refunds`, {
      token: store.token,
      body: { coin: 'TON', amount: '0.3', address: freshAddress() },
    });
    assert.equal(refund.status, 201, refund.text);
    refundId = refund.json.id;
    await app.drain(sale.wallet);

    // Expired, then paid late; cancelled, then paid after the cancel.
    expiring = await payment(store.token, '1');
    assert.equal((await app.request('POST', `/sandbox/v1/payments/${expiring.id}/expire`, { token: store.token })).status, 200);
    cancelled = await payment(store.token, '1');
    assert.equal((await app.request('POST', `/v1/payments/${cancelled.id}/cancel`, { token: store.token })).status, 200);
    await app.pay(expiring.address, 'TON', '0.2');
    await app.pay(cancelled.address, 'TON', '0.2');
    await app.settle();

    // A refund and a sweep the deposits cannot pay: the signer fails them.
    await unpayable('refund', expiring, store.id);
    await unpayable('sweep', cancelled, store.id);
    await app.drain(expiring.wallet, cancelled.wallet);

    const ping = await app.request('POST', `/v1/webhook-endpoints/${endpoint.json.id}/test`, { token: store.token });
    assert.equal(ping.status, 202, ping.text);
    await runDeliveries(app);
    events = verifiedEvents(receiver);
  });
  after(() => receiver?.close());

  it('every event type of a deposit reaches the endpoint once, and the ping, each body signed and verified by the kit', () => {
    assert.ok(
      receiver.received.every((r) => r.verified.ok),
      'every body verified by the kit',
    );
    // money.unmatched and money.assigned are a treasury-settlement store's (test/reader/treasury-settlement.test.ts);
    // subscription.* a subscription's (test/subscriptions/).
    const deposits = EVENT_TYPES.filter((type) => !type.startsWith('money.') && !type.startsWith('subscription.'));
    assert.deepEqual(new Set(events.map((e) => e.type)), new Set([...deposits, 'ping']), JSON.stringify(events.map((e) => e.type)));
    assert.equal(new Set(events.map((e) => e.eventID)).size, events.length, 'each event once');
  });

  it('an overpaid sale: pending, money received (overpaid), completed in that order, then its sweep and its refund confirmed with the hash', () => {
    const saleEvents = of(sale.id);
    assert.deepEqual(
      saleEvents.slice(0, 3).map((e) => e.type),
      ['payment.pending', 'payment.money_received', 'payment.completed'],
    );
    assert.deepEqual(new Set(saleEvents.slice(3).map((e) => e.type)), new Set(['sweep.confirmed', 'refund.confirmed']));
    assert.deepEqual((saleEvents[1]!.payload.transfer as { effect: string; amount: string }).effect, 'overpaid');
    const refunded = saleEvents.find((e) => e.type === 'refund.confirmed')!.payload;
    assert.equal(refunded.refundID, refundId);
    assert.equal(refunded.amount, '0.3');
    assert.match(String(refunded.transactionHash), /^[0-9a-f]{64}$/);
    assert.equal(saleEvents.find((e) => e.type === 'sweep.confirmed')!.payload.status, 'confirmed');
  });

  it('a payment expired, then paid late, its refund failing: expired, money received after expiry, refund.failed (permanent, with its reason)', () => {
    assert.deepEqual(typesAndEffects(expiring.id), [
      ['payment.pending', 'pending'],
      ['payment.expired', 'expired'],
      ['payment.money_received', 'after_expiry'],
      ['refund.failed', 'failed'],
    ]);
    const failedRefund = of(expiring.id).at(-1)!.payload;
    assert.equal(failedRefund.failureKind, 'permanent');
    assert.match(String(failedRefund.failureReason), /less than/);
  });

  it('a payment cancelled, then paid, its sweep failing: cancelled, money received after the cancel, sweep.failed', () => {
    assert.deepEqual(typesAndEffects(cancelled.id), [
      ['payment.pending', 'pending'],
      ['payment.cancelled', 'cancelled'],
      ['payment.money_received', 'after_cancel'],
      ['sweep.failed', 'failed'],
    ]);
  });

  it("the API's refund is in the store's audit log, its actor the token's jti (29.7)", async () => {
    const jti = JSON.parse(Buffer.from(store.token.split('.')[1]!, 'base64url').toString('utf8')).jti as string;
    const audit = await app.pool.one(sql.type(z.object({ actor: z.string(), subject: z.string(), refund: z.string() }))`
      select actor, subject, detail->>'refund' as refund from audit_log where store_id = ${store.id} and action = 'refund.create'
    `);
    assert.deepEqual(audit, { actor: jti, subject: sale.id, refund: refundId });
  });
});
