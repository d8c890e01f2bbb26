// A payment link's end ends its open payments (issue 48 item 10; docs/API.md, Payment links): a
// payment opened on the link expires no later than the link's expiresAt, and deactivating the link
// moves every open payment's expiresAt to the deactivation. On the sandbox chain: money sent before
// the deactivation still completes its payment; money sent after the deactivation, or after the
// link's expiresAt (the chain's clock moved on), never does — the payment expires and the transfer
// is booked `after_expiry`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';

let app: ChainTestApp;
let token: string;

before(async () => {
  app = await startChainApp();
  token = (await app.store({ methods: 'TON/TON' })).token;
});
after(() => app.close());

const TON = { methods: [{ coin: 'TON', chain: 'TON' }] };

async function createLink(body: Record<string, unknown>) {
  const created = await app.request('POST', '/v1/payment-links', { token, body });
  assert.equal(created.status, 201, created.text);
  return created.json;
}

/** A customer presses the link's button (no cookie: each press is a new visitor): the payment made. */
async function press(url: string) {
  const { pathname } = new URL(url);
  const response = await fetch(`${app.url}${pathname}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: '',
  });
  assert.equal(response.status, 303, await response.text());
  const id = response.headers.get('location')!.split('/').pop()!.split('?')[0]!;
  return (await app.request('GET', `/v1/payments/${id}`, { token })).json;
}

const payment = async (id: string) => (await app.request('GET', `/v1/payments/${id}`, { token })).json;
const effects = async (id: string) =>
  ((await app.request('GET', `/v1/payments/${id}/transfers`, { token })).json.data as Array<{ effect: string }>).map((t) => t.effect);

describe('a payment link’s end ends its open payments', () => {
  // First: the next test pins the chain's clock ahead of the wall clock.
  it('deactivating a link expires its open payments at that moment: money sent before completes, money sent after does not', async () => {
    const link = await createLink({ currency: 'TON', amount: '0.5', payment_options: TON });
    const paidInTime = await press(link.url);
    const paidLate = await press(link.url);
    const neverPaid = await press(link.url);
    assert.equal(paidLate.status, 'pending');
    await app.pay(paidInTime.paymentDetails.address, 'TON', '0.5');
    const deactivated = await app.request('POST', `/v1/payment-links/${link.id}/deactivate`, { token });
    assert.equal(deactivated.status, 200, deactivated.text);
    const end = deactivated.json.deactivatedAt;
    for (const open of [paidLate, neverPaid]) assert.equal(new Date((await payment(open.id)).timer.expiresAt).getTime(), new Date(end).getTime());
    await app.advanceChain(5);
    await app.pay(paidLate.paymentDetails.address, 'TON', '0.5');
    await app.settle();
    // A pending payment expires once the chain is read a minute past its expiresAt.
    await app.advanceChain(70);
    assert.equal((await payment(paidInTime.id)).status, 'completed');
    assert.equal((await payment(paidLate.id)).status, 'expired');
    assert.deepEqual(await effects(paidLate.id), ['after_expiry']);
    assert.equal((await payment(neverPaid.id)).status, 'expired');
    const shown = await app.request('GET', `/v1/payment-links/${link.id}`, { token });
    assert.equal(shown.json.payments, 1);
  });

  it('a link’s payment expires no later than the link: money sent after the link’s expiresAt never completes it', async () => {
    const expiresAt = new Date(Math.ceil((Date.now() + 600_000) / 1000) * 1000);
    const link = await createLink({ currency: 'TON', amount: '0.5', payment_options: TON, expiresAt: expiresAt.toISOString() });
    const opened = await press(link.url);
    assert.equal(new Date(opened.timer.expiresAt).getTime(), expiresAt.getTime());
    await app.advanceChain(700);
    await app.pay(opened.paymentDetails.address, 'TON', '0.5');
    await app.advanceChain(70);
    assert.equal((await payment(opened.id)).status, 'expired');
    assert.deepEqual(await effects(opened.id), ['after_expiry']);
  });
});
