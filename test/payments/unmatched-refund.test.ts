// Unmatched money sent back (issue 43, CONTRACT §12: POST /v1/unmatched-transfers/{id}/refund) on the
// real sandbox chain: sandbox wallets play the treasury and the customer. A transfer into the treasury
// that names no payment is kept as unmatched; its refund is a treasury refund like a sale's
// (awaiting_signature, the TON Connect request the treasury's wallet signs through
// POST /sandbox/v1/transfers); the chain reader sees it leave and confirms it, the unmatched transfer
// is refunded and the customer has the money back — TON and USDT, to the sender or a given address.
// Refused with the error envelope: a transfer not open (a refund of it awaiting its signature
// included), a bad address. A refund nobody signs expires after its hold and the transfer is open
// again. Books = chain to the base unit after each.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Address, toNano } from '@ton/core';
import { LATE_COMMIT_MARGIN_MS } from '../../src/chain/clock.ts';
import { sql, z } from '../../src/db/pool.ts';
import { toBaseUnits } from '../../src/money.ts';
import { updateStore } from '../../src/stores/stores.ts';
import { WALLET_LONGEST_LIFETIME_MS } from '../../src/treasury/treasuryRefunds.ts';
import { freshAddress, sandboxBalances, startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { runDeliveries, startEventReceiver, verifiedEvents, type EventReceiver } from '../helpers/eventReceiver.ts';
import { assertError } from '../helpers/payments.ts';

let app: ChainTestApp;
let store: Awaited<ReturnType<ChainTestApp['store']>>;
let treasury: string;
let customer: string;
let receiver: EventReceiver;

const raw = (address: string) => Address.parse(address).toRawString();
const unmatched = async () => (await app.request('GET', '/v1/unmatched-transfers', { token: store.token })).json.data as any[];
const unmatchedOf = async (hash: string) => (await unmatched()).find((u) => u.transactionHash === hash);
const refundIt = (id: string, body?: Record<string, unknown>) =>
  app.request('POST', `/v1/unmatched-transfers/${id}/refund`, { token: store.token, ...(body ? { body } : {}) });
const refundsOf = async (id: string) => (await app.request('GET', `/v1/unmatched-transfers/${id}/refunds`, { token: store.token })).json.data as any[];

/** The treasury's wallet signs a TON Connect request, as a wallet app would: each message sent from the treasury with its payload. */
async function sign(request: { from: string; messages: Array<{ address: string; amount: string; payload: string }> }) {
  assert.equal(raw(request.from), treasury);
  for (const message of request.messages)
    await app.pay(message.address, 'TON', (Number(message.amount) / 1e9).toString(), { from: treasury, payload: message.payload });
  await app.settle();
}

/** Moves the sandbox chain (and the reader with it) to `seconds` past `instant` (an ISO time). */
async function chainTo(instant: string, seconds: number) {
  const ahead = Math.ceil((new Date(instant).getTime() - app.sandbox.chain.now * 1000) / 1000) + seconds;
  assert.ok(ahead >= 0);
  await app.advanceChain(ahead);
}

/**
 * Books = chain for the treasury's TON: every nanoTON the customer sent it is on the books (unmatched
 * transfers; this store has no payment paid here), and what left it for the refunds of unmatched
 * money (their confirmed sent amounts) is what reached each destination from the treasury.
 */
async function assertUnmatchedBooksMatchChain(destinations: readonly string[]) {
  const inBooks = await app.pool.oneFirst(sql.type(z.object({ total: z.string() }))`
    select coalesce(sum(amount_base_units), 0)::text as total from unmatched_transfers where store_id = ${store.id} and account = ${treasury}
  `);
  assert.equal(BigInt(inBooks), app.arrived(treasury, customer), 'every nanoTON the customer sent is on the books');
  const out = await app.pool.oneFirst(sql.type(z.object({ total: z.string() }))`
    select coalesce(sum(sent_amount_base_units), 0)::text as total from outgoing_transfers
    where store_id = ${store.id} and unmatched_transfer_id is not null and coin_symbol = 'TON' and state = 'confirmed'
  `);
  assert.equal(
    BigInt(out),
    destinations.reduce((sum, to) => sum + app.arrived(to, treasury), 0n),
    'what left the treasury is on the books',
  );
}

before(async () => {
  app = await startChainApp({ WEBHOOK_ALLOW_INSECURE: 'true' });
  // Kassa's clock follows the chain where a test moved it ahead of the wall clock (advanceChain).
  app.clock.follow(() => new Date(Math.max(Date.now(), app.sandbox.chain.now * 1000)));
  treasury = raw((await app.request('POST', '/sandbox/v1/wallets')).json.address);
  customer = raw((await app.request('POST', '/sandbox/v1/wallets')).json.address);
  store = await app.store({ methods: 'TON/TON,USDT/TON', refundWindowDays: 0 });
  await updateStore(app.pool, store.id, { treasury, settlement: 'treasury' });
  receiver = await startEventReceiver(app);
  const endpoint = await app.request('POST', '/v1/webhook-endpoints', { token: store.token, body: { url: receiver.url, events: ['refund.confirmed'] } });
  assert.equal(endpoint.status, 201, endpoint.text);
  // A first payment, so the treasury is read (and its jetton wallets found) before any money moves.
  const first = await app.request('POST', '/v1/payments', {
    token: store.token,
    body: { amount: '5', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] }, ttl: 3600 },
  });
  assert.equal(first.status, 201, first.text);
  await app.settle();
});
after(async () => {
  await receiver.close();
  await app.close();
});

describe('refunding unmatched money', () => {
  it('TON with no comment: refunded whole to its sender through the treasury’s signature; the transfer refunding, then refunded; audited', async () => {
    const { hash } = await app.pay(treasury, 'TON', '0.75', { from: customer });
    await app.settle();
    const open = await unmatchedOf(hash);
    assert.equal(open.reason, 'no_reference');
    assert.equal(open.state, 'open');

    const asked = await refundIt(open.id);
    assert.equal(asked.status, 201, asked.text);
    const refund = asked.json;
    assert.equal(refund.status, 'awaiting_signature');
    assert.equal(refund.from, 'treasury');
    assert.equal(refund.unmatchedTransferID, open.id);
    assert.equal(refund.paymentID, undefined);
    assert.equal(refund.coin, 'TON');
    assert.equal(refund.amount, '0.75');
    assert.equal(raw(refund.address), customer, 'to its sender');
    assert.equal(raw(refund.tonconnect.from), treasury);
    assert.equal(refund.tonconnect.messages.length, 1);
    assert.equal(raw(refund.tonconnect.messages[0].address), customer);
    assert.equal(refund.tonconnect.messages[0].amount, toNano('0.75').toString());
    assert.match(refund.link, /^ton:\/\/transfer\//);
    const refunding = await unmatchedOf(hash);
    assert.equal(refunding.state, 'refunding');
    assert.equal(refunding.refundID, refund.id);
    assert.deepEqual(
      (await refundsOf(open.id)).map((r) => [r.id, r.status]),
      [[refund.id, 'awaiting_signature']],
    );

    await sign(refund.tonconnect);
    const [done] = await refundsOf(open.id);
    assert.equal(done.status, 'confirmed', JSON.stringify(done));
    assert.equal(done.tonconnect, undefined);
    assert.equal(done.beyondSale, undefined);
    const refunded = await unmatchedOf(hash);
    assert.equal(refunded.state, 'refunded');
    assert.equal(refunded.refundID, refund.id);
    assert.equal(app.arrived(customer, treasury), toNano('0.75'), 'the customer got the money back');
    assert.equal((await unmatched()).filter((u) => u.transactionHash !== hash).length, 0, 'the refund leaving the treasury is no money in');

    const audit = await app.pool.any(sql.type(z.object({ subject: z.string(), detail: z.record(z.string(), z.unknown()) }))`
      select subject, detail from audit_log where store_id = ${store.id} and action = 'unmatched.refund'
    `);
    assert.deepEqual(audit, [{ subject: open.id, detail: { refund: refund.id, coin: 'TON', amount: '0.75', address: customer, via: 'api' } }]);
    // The store hears refund.confirmed, naming the unmatched transfer instead of a payment.
    await runDeliveries(app);
    const told = verifiedEvents(receiver).filter((event) => event.type === 'refund.confirmed' && (event.payload as any).refundID === refund.id);
    assert.equal(told.length, 1);
    const payload = told[0]!.payload as any;
    assert.equal(payload.unmatchedTransferID, open.id);
    assert.equal(payload.paymentID, undefined);
    assert.equal(payload.amount, '0.75');
    assert.equal(payload.status, 'confirmed');
    await assertUnmatchedBooksMatchChain([customer]);
  });

  it('refused: asked again while the first awaits its signature, an unknown transfer, a bad address, the treasury itself, a refunded one; nothing changes', async () => {
    const { hash } = await app.pay(treasury, 'TON', '0.4', { from: customer });
    await app.settle();
    const open = await unmatchedOf(hash);
    assertError(await refundIt(open.id, { address: 'not an address' }), 400, 'invalid_request_error', 'invalid_address', 'address');
    assertError(await refundIt(open.id, { address: `-1:${'a'.repeat(64)}` }), 400, 'invalid_request_error', 'invalid_address', 'address');
    assertError(await refundIt(open.id, { address: treasury }), 400, 'invalid_request_error', 'invalid_address', 'address');
    assertError(await refundIt(open.id, { address: 42 }), 400, 'invalid_request_error', 'invalid_address', 'address');
    assertError(await refundIt(open.id, { amount: '0.1' }), 400, 'invalid_request_error', 'unknown_parameter', 'amount');
    assertError(await refundIt('3c9e2d1f-7a4b-4e8c-9d51-4f2e1a3b5c6d'), 404, 'not_found_error', 'unmatched_transfer_not_found', 'id');
    assertError(await refundIt('nope'), 400, 'invalid_request_error', 'invalid_unmatched_transfer_id', 'id');
    assert.equal((await unmatchedOf(hash)).state, 'open', 'nothing changed');
    assert.deepEqual(await refundsOf(open.id), []);

    const first = await refundIt(open.id, {});
    assert.equal(first.status, 201, first.text);
    const twice = await refundIt(open.id);
    assertError(twice, 409, 'invalid_request_error', 'unmatched_transfer_not_open', 'id');
    assert.match(twice.json.error.message, /awaiting the treasury's signature \(held until /);
    // Neither assign nor keep takes it while its refund is in a wallet.
    assertError(
      await app.request('POST', `/v1/unmatched-transfers/${open.id}/keep`, { token: store.token, body: { note: 'mine' } }),
      409,
      'invalid_request_error',
      'unmatched_transfer_not_open',
      'id',
    );
    assert.equal((await refundsOf(open.id)).length, 1, 'one request in a wallet at a time');

    await sign(first.json.tonconnect);
    assert.equal((await unmatchedOf(hash)).state, 'refunded');
    const again = await refundIt(open.id);
    assertError(again, 409, 'invalid_request_error', 'unmatched_transfer_not_open', 'id');
    assert.match(again.json.error.message, /it was refunded already/);
    await assertUnmatchedBooksMatchChain([customer]);
  });

  it('to a given address: that address gets it, not the sender', async () => {
    const { hash } = await app.pay(treasury, 'TON', '0.3', { from: customer, comment: 'wrong shop, sorry' });
    await app.settle();
    const open = await unmatchedOf(hash);
    const elsewhere = freshAddress();
    const asked = await refundIt(open.id, { address: elsewhere });
    assert.equal(asked.status, 201, asked.text);
    assert.equal(raw(asked.json.address), elsewhere);
    const sentBefore = app.arrived(customer, treasury);
    await sign(asked.json.tonconnect);
    assert.equal((await refundsOf(open.id))[0].status, 'confirmed');
    assert.equal((await unmatchedOf(hash)).state, 'refunded');
    assert.equal(app.arrived(elsewhere, treasury), toNano('0.3'));
    assert.equal(app.arrived(customer, treasury), sentBefore, 'the sender got nothing more');
    await assertUnmatchedBooksMatchChain([customer, elsewhere]);
  });

  it('USDT with no comment: a TEP-74 transfer from the treasury’s jetton wallet sends it back whole; the customer has every micro-USDT again', async () => {
    const held = toBaseUnits((await sandboxBalances(app, customer)).USDT!, 6);
    const { hash } = await app.pay(treasury, 'USDT', '2.5', { from: customer });
    await app.settle();
    const open = await unmatchedOf(hash);
    assert.ok(open, 'kept as unmatched');
    assert.equal(open.coin, 'USDT');
    assert.equal(open.amount, '2.5');
    assert.equal(toBaseUnits((await sandboxBalances(app, customer)).USDT!, 6), held - 2_500_000n);

    const asked = await refundIt(open.id);
    assert.equal(asked.status, 201, asked.text);
    assert.equal(asked.json.coin, 'USDT');
    assert.equal(asked.json.amount, '2.5');
    const [message] = asked.json.tonconnect.messages;
    assert.notEqual(raw(message.address), customer, "to the treasury's jetton wallet");
    await sign(asked.json.tonconnect);
    await app.settle();
    const [done] = await refundsOf(open.id);
    assert.equal(done.status, 'confirmed', JSON.stringify(done));
    assert.equal((await unmatchedOf(hash)).state, 'refunded');
    assert.equal(toBaseUnits((await sandboxBalances(app, customer)).USDT!, 6), held, 'books = chain: the customer has it all back');
    assert.equal(toBaseUnits((await sandboxBalances(app, treasury)).USDT!, 6), toBaseUnits('10000', 6), 'and the treasury none of it');
  });

  it('a refund nobody signs expires after its hold: the transfer is open again and may be refunded anew', async () => {
    const { hash } = await app.pay(treasury, 'TON', '0.2', { from: customer });
    await app.settle();
    const open = await unmatchedOf(hash);
    const asked = await refundIt(open.id);
    assert.equal(asked.status, 201, asked.text);
    assert.equal(new Date(asked.json.heldUntil).getTime(), new Date(asked.json.validUntil).getTime() + WALLET_LONGEST_LIFETIME_MS + LATE_COMMIT_MARGIN_MS);
    // Past validUntil, inside the hold: a wallet may still pay it, so it stays refunding.
    await chainTo(asked.json.validUntil, LATE_COMMIT_MARGIN_MS / 1000 + 5);
    assert.equal((await unmatchedOf(hash)).state, 'refunding');
    await chainTo(asked.json.heldUntil, 5);
    assert.equal((await refundsOf(open.id))[0].status, 'expired');
    const reopened = await unmatchedOf(hash);
    assert.equal(reopened.state, 'open');
    assert.equal(reopened.refundID, undefined);
    const again = await refundIt(open.id);
    assert.equal(again.status, 201, again.text);
    await sign(again.json.tonconnect);
    assert.equal((await unmatchedOf(hash)).state, 'refunded');
    assert.deepEqual(
      (await refundsOf(open.id)).map((r) => r.status),
      ['expired', 'confirmed'],
    );
    await assertUnmatchedBooksMatchChain([customer, ...(await otherDestinations())]);
  });
});

/** The destinations of this store's confirmed unmatched refunds other than the customer. */
async function otherDestinations(): Promise<string[]> {
  return app.pool.anyFirst(sql.type(z.object({ to_address: z.string() }))`
    select distinct to_address from outgoing_transfers where store_id = ${store.id} and unmatched_transfer_id is not null and to_address <> ${customer}
  `) as Promise<string[]>;
}
