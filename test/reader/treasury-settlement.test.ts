// Settling straight to the store's treasury by reference (issue 43, CONTRACT §12) on the real sandbox
// chain: sandbox wallets play the treasury and the customer (POST /sandbox/v1/wallets, transfers with
// `from` and `payload`), the chain reader reads the treasury block by block. Every way of writing the
// reference is booked on its payment as a deposit's transfer would be; money that names no payment is
// kept as unmatched with its suggestions and told to the store; the treasury's own spending is no
// payment; a deposit store is unchanged; switching a store strands no open payment; a reader that
// restarts loses and doubles nothing. Books = chain: every nanoTON the customer sent the treasury is
// on the books (transfers and unmatched transfers), to the base unit.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Address, beginCell, type Cell } from '@ton/core';
import { pino } from 'pino';
import { createChainClient } from '../../src/chain/client.ts';
import { OP_ENCRYPTED_COMMENT } from '../../src/chain/detect.ts';
import { toncenterV3History } from '../../src/chain/history.ts';
import { holdOutOfBlockStream } from '../../src/chain/sandbox/history.ts';
import { SANDBOX_JSON_RPC_PATH, SANDBOX_TONCENTER_PATH } from '../../src/chain/sandbox/path.ts';
import { accountHealer } from '../../src/reader/heal.ts';
import { reconcileDeposits } from '../../src/treasury/reconcile.ts';
import { sql, z } from '../../src/db/pool.ts';
import { formatReference } from '../../src/payments/reference.ts';
import { updateStore } from '../../src/stores/stores.ts';
import { FormProblem } from '../../src/errors.ts';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { runDeliveries, startEventReceiver, verifiedEvents, type EventReceiver } from '../helpers/eventReceiver.ts';
import { assertError } from '../helpers/payments.ts';

let app: ChainTestApp;
let store: Awaited<ReturnType<ChainTestApp['store']>>;
let depositStore: Awaited<ReturnType<ChainTestApp['store']>>;
let treasury: string;
let customer: string;
let receiver: EventReceiver;

const TON = { methods: [{ coin: 'TON', chain: 'TON' }] };
const raw = (address: string) => Address.parse(address).toRawString();
const comment = (text: string): Cell => beginCell().storeUint(0, 32).storeStringTail(text).endCell();
const b64 = (cell: Cell) => cell.toBoc().toString('base64');

async function newPayment(token: string, amount: string, extra: Record<string, unknown> = {}) {
  const created = await app.request('POST', '/v1/payments', { token, body: { amount, currency: 'TON', payment_options: TON, ttl: 3600, ...extra } });
  assert.equal(created.status, 201, created.text);
  return created.json;
}
const get = async (id: string, token = store.token) => (await app.request('GET', `/v1/payments/${id}`, { token })).json;
const books = async (id: string, token = store.token) => (await app.request('GET', `/v1/payments/${id}/transfers`, { token })).json.data as any[];
const unmatched = async (state?: string) =>
  (await app.request('GET', `/v1/unmatched-transfers${state ? `?state=${state}` : ''}`, { token: store.token })).json.data as any[];
/** The customer's wallet sends `amount` TON to the treasury with this body (base64 BoC), as a wallet does. */
const payTreasury = (amount: string, body: Cell | string | null) =>
  app.pay(treasury, 'TON', amount, { from: customer, ...(body === null ? {} : { payload: typeof body === 'string' ? body : b64(body) }) });
const unmatchedOf = async (hash: string) => (await unmatched()).find((u) => u.transactionHash === hash);

/** Every nanoTON the customer sent the treasury is on the books: booked on payments, or kept as unmatched. */
async function assertTreasuryBooksMatchChain() {
  const onBooks = await app.pool.oneFirst(sql.type(z.object({ total: z.string() }))`
    select ((select coalesce(sum(amount_base_units), 0) from transfers where account = ${treasury})
          + (select coalesce(sum(amount_base_units), 0) from unmatched_transfers where account = ${treasury} and store_id = ${store.id} and state <> 'assigned'))::text as total
  `);
  assert.equal(BigInt(onBooks), app.arrived(treasury, customer));
}

before(async () => {
  app = await startChainApp({ WEBHOOK_ALLOW_INSECURE: 'true' });
  treasury = raw((await app.request('POST', '/sandbox/v1/wallets')).json.address);
  customer = raw((await app.request('POST', '/sandbox/v1/wallets')).json.address);
  store = await app.store({ methods: 'TON/TON,USDT/TON', refundWindowDays: 0 });
  await updateStore(app.pool, store.id, { treasury, settlement: 'treasury' });
  depositStore = await app.store({ methods: 'TON/TON', refundWindowDays: 0 });
  await updateStore(app.pool, depositStore.id, { treasury: raw((await app.request('POST', '/sandbox/v1/wallets')).json.address) });
  receiver = await startEventReceiver(app);
  const endpoint = await app.request('POST', '/v1/webhook-endpoints', {
    token: store.token,
    body: { url: receiver.url, events: ['money.unmatched', 'money.assigned', 'payment.completed'] },
  });
  assert.equal(endpoint.status, 201, endpoint.text);
});
after(async () => {
  await receiver.close();
  await app.close();
});

describe('the store setting', () => {
  it('treasury settlement needs a treasury: refused naming the option, nothing changed', async () => {
    const bare = await app.store({ methods: 'TON/TON' });
    await assert.rejects(updateStore(app.pool, bare.id, { settlement: 'treasury' }), (error: unknown) => {
      assert.ok(error instanceof FormProblem);
      assert.equal(error.field, 'settlement');
      assert.match(error.message, /needs a treasury/);
      return true;
    });
    await assert.rejects(updateStore(app.pool, bare.id, { settlement: 'sideways' }), /--settlement must be deposit or treasury/);
    await assert.rejects(updateStore(app.pool, store.id, { treasury: '' }), (error: unknown) => error instanceof FormProblem && error.field === 'treasury');
    const both = await updateStore(app.pool, bare.id, { settlement: 'treasury', treasury });
    assert.equal(both.settlement, 'treasury');
    assert.equal((await updateStore(app.pool, bare.id, { settlement: 'deposit' })).settlement, 'deposit');
  });
});

describe('a payment settled to the treasury', () => {
  it('carries the reference, the treasury as its address and the payload; no deposit wallet, no watch of its own', async () => {
    const payment = await newPayment(store.token, '1');
    const details = payment.paymentDetails;
    assert.match(details.reference, /^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{5}$/);
    assert.equal(raw(details.address), treasury);
    assert.equal(Address.parseFriendly(details.address).isBounceable, false);
    const body = beginCell().storeUint(0, 32).storeStringTail(details.reference).endCell();
    assert.equal(details.payload, b64(body));
    const [deposits, watches] = await Promise.all([
      app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from deposit_addresses where payment_id = ${payment.id}`),
      app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from chain_watches where payment_id = ${payment.id}`),
    ]);
    assert.deepEqual([deposits, watches], [0, 0]);
    // The hosted checkout's wallet link carries the reference as the comment.
    const page = await app.request('GET', `/pay/${payment.id}`);
    assert.match(page.text, new RegExp(`ton://transfer/[^"]*text=${details.reference}`));
  });

  it('paid with the payload a wallet sends through TON Connect: completed, told to the store, nothing swept', async () => {
    const payment = await newPayment(store.token, '1.25');
    const { hash } = await payTreasury('1.25', payment.paymentDetails.payload);
    await app.settle();
    const paid = await get(payment.id);
    assert.equal(paid.status, 'completed');
    assert.deepEqual(paid.paymentDetails.transactionSignatures, [hash]);
    const [transfer] = await books(payment.id);
    assert.equal(transfer.effect, 'completed');
    assert.equal(transfer.account, treasury);
    assert.equal(transfer.sender, customer);
    assert.equal(transfer.amountBaseUnits, '1250000000');
    assert.equal(transfer.comment, payment.paymentDetails.reference);
    const outgoing = await app.pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`select count(*)::int as n from outgoing_transfers where payment_id = ${payment.id}`,
    );
    assert.equal(outgoing, 0, 'no sweep is planned for money already in the treasury');
    // No deposit holds it: the deposit's money (refunds, sweeps, reporting, the dashboard) has nothing of it.
    const balance = await app.request('GET', `/v1/payments/${payment.id}/balance`, { token: store.token });
    assert.deepEqual(balance.json.coins, []);
    const inDeposits = await app.pool.maybeOneFirst(sql.type(z.object({ n: z.string() }))`
      select in_deposits::text as n from reporting.store_money where store_id = ${store.id} and coin_symbol = 'TON'
    `);
    assert.equal(inDeposits, null);
    await assertTreasuryBooksMatchChain();
  });

  it('a text comment inline, in a ref cell, without the zero prefix, or in lower case without the dash: each completes its payment', async () => {
    const ways: Array<[string, (reference: string) => Cell]> = [
      ['inline', (reference) => comment(reference)],
      ['in a ref cell', (reference) => beginCell().storeRef(comment(reference)).endCell()],
      ['without the prefix', (reference) => beginCell().storeStringTail(reference).endCell()],
      ['lower case, no dash', (reference) => comment(reference.replace('-', '').toLowerCase())],
    ];
    const payments = [];
    for (const [what, body] of ways) {
      const payment = await newPayment(store.token, '0.5');
      await payTreasury('0.5', body(payment.paymentDetails.reference));
      payments.push([what, payment.id] as const);
    }
    await app.settle();
    for (const [what, id] of payments) assert.equal((await get(id)).status, 'completed', what);
    await assertTreasuryBooksMatchChain();
  });

  it('partial, then overpaid; a reference reused after completion is booked as after completion; fiat at the payment’s rate', async () => {
    const payment = await newPayment(store.token, '2');
    const body = comment(payment.paymentDetails.reference);
    await payTreasury('0.5', body);
    await app.settle();
    assert.equal((await get(payment.id)).status, 'pending');
    assert.equal((await get(payment.id)).paymentDetails.receivedAmount, '0.5');
    await payTreasury('2', body);
    await app.settle();
    const paid = await get(payment.id);
    assert.equal(paid.status, 'completed');
    assert.ok(paid.anomalies.includes('overpaid'));
    await payTreasury('0.1', body);
    await app.settle();
    assert.deepEqual(
      (await books(payment.id)).map((t) => t.effect),
      ['partial', 'overpaid', 'after_completion'],
    );
    const fiat = await newPayment(store.token, '3', { currency: 'USD' });
    await payTreasury(fiat.paymentDetails.coinAmount, comment(fiat.paymentDetails.reference));
    await app.settle();
    assert.equal((await get(fiat.id)).status, 'completed');
    await assertTreasuryBooksMatchChain();
  });

  it('after expiry: booked on its payment as paid late', async () => {
    const payment = await newPayment(store.token, '1', { ttl: 900 });
    await app.advanceChain(1000);
    await payTreasury('1', comment(payment.paymentDetails.reference));
    await app.settle();
    const [transfer] = await books(payment.id);
    assert.equal(transfer.effect, 'after_expiry');
    assert.equal((await get(payment.id)).status, 'expired');
  });
});

describe('unmatched money', () => {
  it('a mistyped reference is kept as malformed, suggesting the payment one character away and not booking it', async () => {
    const payment = await newPayment(store.token, '0.7');
    const reference: string = payment.paymentDetails.reference;
    const at = 2;
    const typo = `${reference.slice(0, at)}${reference[at] === '7' ? '8' : '7'}${reference.slice(at + 1)}`;
    const { hash } = await payTreasury('0.3', comment(typo));
    await app.settle();
    assert.equal((await get(payment.id)).status, 'pending');
    assert.deepEqual(await books(payment.id), []);
    const kept = await unmatchedOf(hash);
    assert.equal(kept.reason, 'malformed_reference');
    assert.equal(kept.reference, typo);
    assert.equal(kept.amount, '0.3');
    assert.equal(kept.coin, 'TON');
    assert.equal(kept.sender, customer);
    assert.equal(kept.state, 'open');
    assert.deepEqual(kept.suggestions[0], { paymentID: payment.id, why: 'reference_one_character_away' });
    assert.deepEqual(
      Object.keys(kept).sort(),
      ['amount', 'coin', 'id', 'reason', 'receivedAt', 'reference', 'sender', 'state', 'suggestions', 'transactionHash'].sort(),
    );
  });

  it('no comment: kept as no_reference, suggesting the open payment of the same amount and the earlier payer', async () => {
    const payment = await newPayment(store.token, '0.777');
    const { hash } = await payTreasury('0.777', null);
    await app.settle();
    const kept = await unmatchedOf(hash);
    assert.equal(kept.reason, 'no_reference');
    assert.equal(kept.reference, null);
    assert.ok(
      kept.suggestions.some((s: any) => s.paymentID === payment.id && s.why === 'same_amount_open'),
      JSON.stringify(kept.suggestions),
    );
    assert.ok(
      kept.suggestions.some((s: any) => s.why === 'same_sender'),
      'the customer paid earlier payments of the store',
    );
    assert.equal((await get(payment.id)).status, 'pending', 'a suggestion is never applied by itself');
  });

  it('an encrypted comment, binary junk and an unknown but well-formed reference: each kept with its reason', async () => {
    const encrypted = await payTreasury('0.2', beginCell().storeUint(OP_ENCRYPTED_COMMENT, 32).storeUint(42n, 64).storeUint(7n, 64).endCell());
    const junk = await payTreasury('0.21', beginCell().storeUint(0xdeadbeef, 32).storeUint(1n, 64).endCell());
    const unknown = await payTreasury('0.22', comment(formatReference('000000000')));
    await app.settle();
    assert.equal((await unmatchedOf(encrypted.hash)).reason, 'encrypted');
    assert.equal((await unmatchedOf(junk.hash)).reason, 'no_reference');
    assert.equal((await unmatchedOf(unknown.hash)).reason, 'unknown_reference');
    assert.equal((await unmatchedOf(unknown.hash)).reference, '0000-00000');
    await assertTreasuryBooksMatchChain();
  });

  it('GET /v1/unmatched-transfers filters by state and refuses an unknown one; every store sees only its own', async () => {
    const open = await unmatched('open');
    assert.ok(open.length >= 5);
    assert.deepEqual(await unmatched('kept'), []);
    const refused = await app.request('GET', '/v1/unmatched-transfers?state=lost', { token: store.token });
    assertError(refused, 400, 'invalid_request_error', 'invalid_unmatched_state', 'state');
    const other = await app.request('GET', '/v1/unmatched-transfers', { token: depositStore.token });
    assert.deepEqual(other.json, { data: [] });
  });

  it('money.unmatched reaches the store’s endpoint, signed, with the unmatched transfer', async () => {
    await runDeliveries(app);
    const events = verifiedEvents(receiver).filter((event) => event.type === 'money.unmatched');
    const listed = await unmatched();
    assert.equal(events.length, listed.length);
    const encrypted = listed.find((u) => u.reason === 'encrypted');
    // The body names its store (storeID, added when it is signed), beside the unmatched transfer as the API lists it.
    assert.deepEqual(
      events.map((event) => event.payload).find((payload: any) => payload.id === encrypted.id),
      { ...encrypted, storeID: store.id },
    );
  });

  it('a flood of 50 dust transfers (below the store’s 0.01 TON) is kept and listed as dust, every nanoTON booked, and alerts nobody', async () => {
    const sent = [];
    for (let i = 0; i < 50; i += 1) {
      const body = i % 3 === 0 ? null : i % 3 === 1 ? comment(`spam ${i}`) : comment(formatReference('000000000'));
      sent.push((await payTreasury(`0.00${1 + (i % 9)}`, body)).hash);
    }
    const edge = await payTreasury('0.01', null);
    await app.settle();
    await runDeliveries(app);
    const listed = await app.pool.any(sql.type(z.object({ hash: z.string(), dust: z.boolean() }))`
      select hash, dust from unmatched_transfers where store_id = ${store.id} and hash = any(${sql.array([...sent, edge.hash], 'text')})
    `);
    assert.equal(listed.length, 51, 'every transfer kept');
    assert.ok(listed.filter((row) => row.hash !== edge.hash).every((row) => row.dust));
    const shown = await unmatchedOf(sent[0]!);
    assert.equal(shown.dust, true);
    assert.equal(shown.state, 'open');
    assert.equal((await unmatchedOf(edge.hash)).dust, undefined, '0.01 itself is not below the threshold');
    const told = new Set(
      verifiedEvents(receiver)
        .filter((event) => event.type === 'money.unmatched')
        .map((event) => (event.payload as any).transactionHash),
    );
    assert.deepEqual(
      sent.filter((hash) => told.has(hash)),
      [],
      'no money.unmatched for dust',
    );
    assert.ok(told.has(edge.hash), 'money.unmatched for 0.01 TON');
    await assertTreasuryBooksMatchChain();
    // A store that wants every transfer told sets the threshold to 0.
    await updateStore(app.pool, store.id, { 'unmatched-dust': '0' });
    const tiny = await payTreasury('0.001', null);
    await app.settle();
    assert.equal((await unmatchedOf(tiny.hash)).dust, undefined);
    await updateStore(app.pool, store.id, { 'unmatched-dust': '0.01' });
    await assert.rejects(updateStore(app.pool, store.id, { 'unmatched-dust': '-1' }), (error: unknown) => {
      assert.ok(error instanceof FormProblem);
      assert.equal(error.field, 'unmatched-dust');
      return true;
    });
  });

  it('assign books a transfer on the payment it was meant for, at its chain time, audited and told; once only; never on a deposit payment', async () => {
    const payment = await newPayment(store.token, '0.3');
    const reference: string = payment.paymentDetails.reference;
    const typo = `${reference.slice(0, 6)}${reference[6] === 'K' ? 'M' : 'K'}${reference.slice(7)}`;
    const { hash } = await payTreasury('0.3', comment(typo));
    await app.settle();
    const kept = await unmatchedOf(hash);
    assert.equal(kept.suggestions[0]?.paymentID, payment.id);
    const assign = (id: string, paymentID: string, token = store.token) =>
      app.request('POST', `/v1/unmatched-transfers/${id}/assign`, { token, body: { paymentID } });

    // Refused: a payment of another store, a deposit payment of this one, an unknown transfer, a bad id, no paymentID.
    const deposit = await newPayment(depositStore.token, '0.3');
    assertError(await assign(kept.id, deposit.id), 404, 'not_found_error', 'payment_not_found', 'paymentID');
    await updateStore(app.pool, store.id, { settlement: 'deposit' });
    const ownDeposit = await newPayment(store.token, '0.3');
    await updateStore(app.pool, store.id, { settlement: 'treasury' });
    assertError(await assign(kept.id, ownDeposit.id), 400, 'invalid_request_error', 'payment_not_paid_to_treasury', 'paymentID');
    assertError(await assign('3c9e2d1f-7a4b-4e8c-9d51-4f2e1a3b5c6d', payment.id), 404, 'not_found_error', 'unmatched_transfer_not_found', 'id');
    assertError(await assign('nope', payment.id), 400, 'invalid_request_error', 'invalid_unmatched_transfer_id', 'id');
    assertError(
      await app.request('POST', `/v1/unmatched-transfers/${kept.id}/assign`, { token: store.token, body: {} }),
      400,
      'invalid_request_error',
      'missing_parameter',
      'paymentID',
    );
    assertError(await assign(kept.id, payment.id, depositStore.token), 404, 'not_found_error', 'unmatched_transfer_not_found', 'id');
    assert.equal((await unmatchedOf(hash)).state, 'open', 'nothing changed');

    const assigned = await assign(kept.id, payment.id);
    assert.equal(assigned.status, 200, assigned.text);
    assert.equal(assigned.json.state, 'assigned');
    assert.equal(assigned.json.paymentID, payment.id);
    const paid = await get(payment.id);
    assert.equal(paid.status, 'completed');
    assert.equal(paid.timer.paidAt, kept.receivedAt, 'booked at its chain time');
    const [transfer] = await books(payment.id);
    assert.deepEqual([transfer.hash, transfer.effect, transfer.amount], [hash, 'completed', '0.3']);
    assertError(await assign(kept.id, payment.id), 409, 'invalid_request_error', 'unmatched_transfer_not_open', 'id');
    assert.equal((await books(payment.id)).length, 1);
    assert.deepEqual(
      (await unmatched('assigned')).map((u) => u.id),
      [kept.id],
    );
    const audit = await app.pool.any(sql.type(z.object({ action: z.string(), subject: z.string(), detail: z.record(z.string(), z.unknown()) }))`
      select action, subject, detail from audit_log where store_id = ${store.id} and action = 'unmatched.assign'
    `);
    assert.deepEqual(audit, [
      { action: 'unmatched.assign', subject: kept.id, detail: { payment: payment.id, amount: '0.3', coin: 'TON', effect: 'completed', via: 'api' } },
    ]);
    await runDeliveries(app);
    const told = verifiedEvents(receiver).filter((event) => event.type === 'money.assigned');
    assert.deepEqual(
      told.map((event) => event.payload),
      [{ ...assigned.json, storeID: store.id }],
    );
    await assertTreasuryBooksMatchChain();
  });

  it('keep leaves the money in the treasury with a note, audited, booked on no payment; once only', async () => {
    const { hash } = await payTreasury('0.123', comment('thanks for the coffee'));
    await app.settle();
    const open = await unmatchedOf(hash);
    assert.equal(open.reason, 'no_reference');
    const keep = (body: unknown) => app.request('POST', `/v1/unmatched-transfers/${open.id}/keep`, { token: store.token, body });
    assertError(await keep({}), 400, 'invalid_request_error', 'missing_parameter', 'note');
    assertError(await keep({ note: '' }), 400, 'invalid_request_error', 'invalid_note', 'note');
    const kept = await keep({ note: 'A tip' });
    assert.equal(kept.status, 200, kept.text);
    assert.equal(kept.json.state, 'kept');
    assert.equal(kept.json.note, 'A tip');
    assert.equal(kept.json.paymentID, undefined);
    assertError(await keep({ note: 'again' }), 409, 'invalid_request_error', 'unmatched_transfer_not_open', 'id');
    assert.deepEqual(
      (await unmatched('kept')).map((u) => u.id),
      [open.id],
    );
    const audit = await app.pool.any(sql.type(z.object({ subject: z.string(), detail: z.record(z.string(), z.unknown()) }))`
      select subject, detail from audit_log where store_id = ${store.id} and action = 'unmatched.keep'
    `);
    assert.deepEqual(audit, [{ subject: open.id, detail: { note: 'A tip', amount: '0.123', coin: 'TON', via: 'api' } }]);
    await assertTreasuryBooksMatchChain();
  });

  it("the treasury's own spending is no payment and no unmatched money", async () => {
    const before = (await unmatched()).length;
    await app.pay(customer, 'TON', '3', { from: treasury });
    await app.settle();
    assert.equal((await unmatched()).length, before);
    await assertTreasuryBooksMatchChain();
  });
});

describe('refunds of a payment paid to the treasury', () => {
  it('are treasury refunds signed by the merchant: the deposit refund says where the money is; up to what reached the treasury; confirmed when it leaves', async () => {
    const payment = await newPayment(store.token, '1');
    await payTreasury('1.4', payment.paymentDetails.payload);
    await app.settle();
    assert.equal((await get(payment.id)).status, 'completed');
    const refund = (body: Record<string, unknown>) =>
      app.request('POST', `/v1/payments/${payment.id}/refunds`, { token: store.token, body: { coin: 'TON', address: customer, ...body } });
    const fromDeposit = await refund({ amount: '0.4' });
    assertError(fromDeposit, 400, 'invalid_request_error', 'invalid_request', 'from');
    assert.match(fromDeposit.json.error.message, /paid to the store's treasury: its money is there, never in a deposit/);
    const over = await refund({ amount: '1.5', from: 'treasury' });
    assertError(over, 400, 'invalid_request_error', 'refund_exceeds_balance', 'amount');
    assert.match(over.json.error.message, /at most 1\.4 TON is refundable from the treasury; 1\.4 TON of this payment was paid to the treasury itself/);
    const asked = await refund({ amount: '0.4', from: 'treasury' });
    assert.equal(asked.status, 201, asked.text);
    assert.equal(asked.json.status, 'awaiting_signature');
    assert.equal(raw(asked.json.tonconnect.from), treasury);
    const unmatchedBefore = (await unmatched()).length;
    // The merchant's wallet (the treasury) signs it.
    for (const message of asked.json.tonconnect.messages) {
      await app.pay(message.address, 'TON', (Number(message.amount) / 1e9).toString(), { from: treasury, payload: message.payload });
    }
    await app.settle();
    const [done] = (await app.request('GET', `/v1/payments/${payment.id}/refunds`, { token: store.token })).json.data;
    assert.equal(done.status, 'confirmed', JSON.stringify(done));
    assert.equal(done.beyondSale, undefined, 'within what reached the treasury: not a sale refunded twice');
    assert.equal((await unmatched()).length, unmatchedBefore, 'the refund leaving the treasury is no money in');
    await assertTreasuryBooksMatchChain();
  });
});

describe('deposits and switching', () => {
  it('a deposit store is unchanged: its own deposit address, completed there', async () => {
    const payment = await newPayment(depositStore.token, '1');
    assert.equal(payment.paymentDetails.reference, undefined);
    assert.equal(payment.paymentDetails.payload, undefined);
    assert.notEqual(raw(payment.paymentDetails.address), treasury);
    await app.pay(payment.paymentDetails.address, 'TON', '1');
    await app.settle();
    assert.equal((await get(payment.id, depositStore.token)).status, 'completed');
  });

  it('switching the store’s settlement leaves each open payment payable where it was created', async () => {
    const toTreasury = await newPayment(store.token, '0.9');
    await updateStore(app.pool, store.id, { settlement: 'deposit' });
    const toDeposit = await newPayment(store.token, '0.9');
    assert.equal(toDeposit.paymentDetails.reference, undefined);
    assert.notEqual(raw(toDeposit.paymentDetails.address), treasury);
    // The open treasury payment is still read at the treasury, though its store now takes deposits.
    await payTreasury('0.9', comment(toTreasury.paymentDetails.reference));
    await app.pay(toDeposit.paymentDetails.address, 'TON', '0.9');
    await app.settle();
    assert.equal((await get(toTreasury.id)).status, 'completed');
    assert.equal((await get(toDeposit.id)).status, 'completed');
    // And back: an open deposit payment stays at its deposit.
    const openDeposit = await newPayment(store.token, '0.4');
    await updateStore(app.pool, store.id, { settlement: 'treasury' });
    const back = await get(openDeposit.id);
    assert.equal(back.paymentDetails.address, openDeposit.paymentDetails.address);
    await app.pay(openDeposit.paymentDetails.address, 'TON', '0.4');
    await app.settle();
    assert.equal((await get(openDeposit.id)).status, 'completed');
    await assertTreasuryBooksMatchChain();
  });

  it("a deposit payment's sweep into the treasury (its store switched since) is Kassa's own money, never unmatched", async () => {
    await updateStore(app.pool, store.id, { settlement: 'deposit' });
    const payment = await newPayment(store.token, '0.7');
    await updateStore(app.pool, store.id, { settlement: 'treasury' });
    const deposit = raw(payment.paymentDetails.address);
    await app.pay(deposit, 'TON', '0.7');
    await app.settle();
    assert.equal((await get(payment.id)).status, 'completed');
    await app.drain(deposit);
    const sweep = await app.pool.one(sql.type(z.object({ state: z.string(), to_address: z.string() }))`
      select state, to_address from outgoing_transfers where payment_id = ${payment.id} and kind = 'sweep' and reason = 'payment'
    `);
    assert.deepEqual(sweep, { state: 'confirmed', to_address: treasury });
    await app.settle();
    const fromDeposit = await app.pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`select count(*)::int as n from unmatched_transfers where sender = ${deposit}`,
    );
    assert.equal(fromDeposit, 0, 'the sweep is booked as it left the deposit, not kept as a customer’s unmatched money');
    await assertTreasuryBooksMatchChain();
  });

  it('a customer-choice payment created by a treasury store chooses its method later and is still paid at the treasury', async () => {
    const created = await app.request('POST', '/v1/payments', { token: store.token, body: { amount: '0.6', currency: 'TON', ttl: 3600 } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.paymentDetails, undefined);
    const methods = (await app.request('GET', '/v1/payment-methods', { token: store.token })).json.data as any[];
    const ton = methods.find((m) => m.coin.symbol === 'TON');
    const chosen = await app.request('POST', `/pay/v1/checkout/payments/${created.json.id}/method`, { body: { paymentMethodID: ton.id } });
    assert.ok(chosen.status < 300, chosen.text);
    const payment = await get(created.json.id);
    assert.equal(raw(payment.paymentDetails.address), treasury);
    await payTreasury('0.6', payment.paymentDetails.payload);
    await app.settle();
    assert.equal((await get(created.json.id)).status, 'completed');
  });
});

describe('reconciliation', () => {
  it('heals the treasury: a transfer the block stream never showed is booked on its payment, once', async () => {
    const payment = await newPayment(store.token, '0.55');
    const chain = app.sandbox.chain;
    chain.stopBlockClock();
    try {
      await payTreasury('0.55', comment(payment.paymentDetails.reference));
      const seqno = chain.sealBlock();
      assert.ok(holdOutOfBlockStream(chain, treasury, seqno) >= 1);
    } finally {
      chain.startBlockClock();
    }
    await app.settle();
    assert.equal((await get(payment.id)).status, 'pending', 'the reader never saw it');
    const log = pino({ level: 'silent' });
    const history = toncenterV3History({ baseUrl: `${app.url}${SANDBOX_TONCENTER_PATH}` });
    const heal = accountHealer({ history, book: app.newBooker().book, log });
    const reconcile = () =>
      reconcileDeposits({ pool: app.pool, client: createChainClient({ endpoint: `${app.url}${SANDBOX_JSON_RPC_PATH}` }), log, now: () => new Date(), heal });
    await reconcile();
    assert.equal((await get(payment.id)).status, 'completed');
    await reconcile();
    assert.equal((await books(payment.id)).length, 1);
    await assertTreasuryBooksMatchChain();
  });
});

describe('safety: booked, never lost, never a crash', () => {
  it('a reference paid twice in full, both in one block: the first completes its payment, the second is booked on it after completion', async () => {
    const payment = await newPayment(store.token, '0.45');
    const chain = app.sandbox.chain;
    chain.stopBlockClock();
    let first: string;
    let second: string;
    try {
      first = (await payTreasury('0.45', comment(payment.paymentDetails.reference))).hash;
      second = (await payTreasury('0.45', payment.paymentDetails.payload)).hash;
    } finally {
      chain.startBlockClock();
    }
    await app.settle();
    const paid = await get(payment.id);
    assert.equal(paid.status, 'completed');
    assert.deepEqual(paid.paymentDetails.transactionSignatures, [first]);
    assert.deepEqual(
      (await books(payment.id)).map((t) => [t.hash, t.effect, t.amountBaseUnits]),
      [
        [first, 'completed', '450000000'],
        [second, 'after_completion', '450000000'],
      ],
    );
    assert.equal(await unmatchedOf(second), undefined, 'on its payment, not unmatched');
    await assertTreasuryBooksMatchChain();
  });

  it("a payment paid with someone else's reference: booked on the payment the reference names, the payer's own stays open; the other's real payment after it is booked too", async () => {
    const theirs = await newPayment(store.token, '0.65');
    const mine = await newPayment(store.token, '0.65');
    // The customer copies the other payment's reference.
    const { hash } = await payTreasury('0.65', comment(theirs.paymentDetails.reference));
    await app.settle();
    assert.equal((await get(theirs.id)).status, 'completed');
    assert.deepEqual(
      (await books(theirs.id)).map((t) => [t.hash, t.effect, t.sender]),
      [[hash, 'completed', customer]],
    );
    assert.equal((await get(mine.id)).status, 'pending');
    assert.deepEqual(await books(mine.id), []);
    // The reference's own payer then pays as asked: booked on that payment after completion (refundable), never lost.
    const own = await payTreasury('0.65', theirs.paymentDetails.payload);
    await app.settle();
    assert.deepEqual(
      (await books(theirs.id)).map((t) => [t.hash, t.effect]),
      [
        [hash, 'completed'],
        [own.hash, 'after_completion'],
      ],
    );
    assert.equal((await get(mine.id)).status, 'pending');
    await assertTreasuryBooksMatchChain();
  });

  it("TON sent with a USDT payment's reference is booked on it as the wrong coin; the payment stays open for its USDT", async () => {
    const created = await app.request('POST', '/v1/payments', {
      token: store.token,
      body: { amount: '2', currency: 'USDT', payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] }, ttl: 3600 },
    });
    assert.equal(created.status, 201, created.text);
    const payment = created.json;
    const { hash } = await payTreasury('0.3', comment(payment.paymentDetails.reference));
    await app.settle();
    const after = await get(payment.id);
    assert.equal(after.status, 'pending');
    assert.ok(after.anomalies.includes('wrong_coin'), JSON.stringify(after.anomalies));
    assert.deepEqual(
      (await books(payment.id)).map((t) => [t.hash, t.coin, t.effect, t.amountBaseUnits]),
      [[hash, 'TON', 'wrong_coin', '300000000']],
    );
    await assertTreasuryBooksMatchChain();
  });
});

describe('a reader that restarts', () => {
  it('loses nothing and doubles nothing: booked from its cursor, and a block read again changes nothing', async () => {
    await app.stopReader();
    const payment = await newPayment(store.token, '0.33');
    await payTreasury('0.33', comment(payment.paymentDetails.reference));
    const { hash } = await payTreasury('0.44', null);
    app.sandbox.chain.sealBlock();
    app.sandbox.chain.sealBlock();
    const before = (await app.cursor())!.last;
    const restarted = app.newReader({ id: 'restarted' });
    assert.equal((await restarted.catchUp()).owner, true);
    assert.equal((await get(payment.id)).status, 'completed');
    assert.ok(await unmatchedOf(hash));
    // As if it had crashed before writing its cursor: the same blocks are read again.
    await app.pool.query(sql.unsafe`update chain_reader set last_block_seqno = ${before} where network = 'sandbox'`);
    const again = app.newReader({ id: 'again' });
    await again.catchUp();
    assert.equal((await books(payment.id)).length, 1);
    assert.equal((await unmatched()).filter((u) => u.transactionHash === hash).length, 1);
    await assertTreasuryBooksMatchChain();
  });
});
