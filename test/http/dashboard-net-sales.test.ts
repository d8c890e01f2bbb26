// Sales that are true (issue 47 item 4), over real HTTP against the real app, database and the
// sandbox chain: four sales priced in USD and paid in TON — one refunded in full from its payment
// address, one in part, one in part from the store's treasury (its refund window over, the sale
// swept, the refund signed by the treasury's wallet) and one kept. The API answers `refunded` beside
// the seed's `status`; the home page's sales are net of the refunds and equal what the API says; the
// list and the payment page say "refunded in full / in part"; the list shows each description and
// its search finds a payment by a word of it; the home page totals every coin in USD at today's rate; the payment page's Refunded counts the treasury's. The
// audit log is in time order (was the order entries were written in).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Address } from '@ton/core';
import { CLI_ACTOR, listAudit, recordAudit } from '../../src/dashboard/audit.ts';
import { sql } from '../../src/db/pool.ts';
import { fromBaseUnits, priceShare, toBaseUnits } from '../../src/money.ts';
import { getRate, ratePolicy } from '../../src/rates/rates.ts';
import { updateStore } from '../../src/stores/stores.ts';
import { outgoingOfPayment } from '../../src/treasury/outgoing.ts';
import { sweepSaleAfterWindow } from '../../src/treasury/sweeps.ts';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { type DashboardClient, member } from '../helpers/dashboard.ts';

let app: ChainTestApp;
let store: Awaited<ReturnType<ChainTestApp['store']>>;
let owner: DashboardClient;
let treasury: string;

before(async () => {
  app = await startChainApp();
  treasury = (await app.request('POST', '/sandbox/v1/wallets')).json.address;
  store = await app.store({ name: 'Net Shop', methods: 'TON/TON', refundWindowDays: 7 });
  await updateStore(app.pool, store.id, { treasury });
  owner = await member(app.url, app.pool, store.id, 'owner@net.example', 'owner');
});
after(() => app?.close());

async function sale(amount: string, description: string): Promise<any> {
  const created = await app.request('POST', '/v1/payments', {
    token: store.token,
    body: { amount, currency: 'USD', description, payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
  });
  assert.equal(created.status, 201, created.text);
  await app.pay(created.json.paymentDetails.address, 'TON', created.json.paymentDetails.coinAmount);
  return created.json;
}
const refund = (id: string, body: Record<string, string>) => app.request('POST', `/v1/payments/${id}/refunds`, { token: store.token, body });
const cellValue = (page: string, currency: string, window: string) =>
  new RegExp(`<tr data-currency="${currency}">[\\s\\S]*?<td[^>]*data-window="${window}"[^>]*><data[^>]*value="([^"]+)"`).exec(page)?.[1];

/** What the API's figures make of a sale net of its refunds: the price less its refunded share (to 9 decimals, half up), the coin amount less what was refunded. */
function net(p: any): { price: bigint; coin: bigint } {
  const coin = toBaseUnits(p.paymentDetails.coinAmount, 9);
  const refunded = toBaseUnits(p.refunded, 9);
  const price = toBaseUnits(p.amount, 9);
  const share = (price * refunded * 2n + coin) / (2n * coin);
  return { price: price - share, coin: coin - refunded };
}

it('home figures are net of a full, a partial and a treasury refund and equal the API; the list and the page say what was refunded', {
  timeout: 240_000,
}, async () => {
  const full = await sale('10', 'Flat white, oat milk');
  const part = await sale('20', 'Two croissants');
  const fromTreasury = await sale('30', 'Coffee beans 1 kg');
  const kept = await sale('4.5', 'Espresso');
  await app.settle();
  // The full refund: all of the sale (its network fee taken from it), back to the payer.
  const fullAsked = await refund(full.id, { coin: 'TON', amount: full.paymentDetails.coinAmount, address: 'payer' });
  assert.equal(fullAsked.status, 201, fullAsked.text);
  const partAsked = await refund(part.id, { coin: 'TON', amount: '0.25', address: 'payer' });
  assert.equal(partAsked.status, 201, partAsked.text);
  // The third sale's refund window ends: it is swept to the treasury, then refunded in part from there.
  await app.pool.query(sql.unsafe`update payments set refundable_until = now() - interval '1 second' where id = ${fromTreasury.id}`);
  assert.equal(await sweepSaleAfterWindow(app.pool, fromTreasury.id, new Date()), true);
  await app.drain(
    Address.parse(full.paymentDetails.address).toRawString(),
    Address.parse(part.paymentDetails.address).toRawString(),
    Address.parse(fromTreasury.paymentDetails.address).toRawString(),
  );
  const asked = await refund(fromTreasury.id, { coin: 'TON', amount: '0.3', address: 'payer', from: 'treasury' });
  assert.equal(asked.status, 201, asked.text);
  for (const message of asked.json.tonconnect.messages)
    await app.pay(message.address, 'TON', fromBaseUnits(BigInt(message.amount), 9), { from: treasury, payload: message.payload });
  await app.settle();
  for (const id of [full.id, part.id]) assert.equal((await outgoingOfPayment(app.pool, id, 'refund'))[0]?.state, 'confirmed');
  assert.equal((await outgoingOfPayment(app.pool, fromTreasury.id, 'refund'))[0]?.state, 'confirmed');

  // The API: the status stays the seed's, `refunded` beside it.
  const listed = (await app.request('GET', '/v1/payments?limit=100', { token: store.token })).json.data as any[];
  const of = (id: string) => listed.find((p) => p.id === id);
  assert.deepEqual(
    [full, part, fromTreasury, kept].map((p) => [of(p.id).status, of(p.id).refunded]),
    [
      ['completed', full.paymentDetails.coinAmount],
      ['completed', '0.25'],
      ['completed', '0.3'],
      ['completed', '0'],
    ],
  );
  const one = await app.request('GET', `/v1/payments/${fromTreasury.id}`, { token: store.token });
  assert.equal(one.json.refunded, '0.3');

  // The home page: sales net of the refunds, as the API's figures make them.
  let price = 0n;
  let coin = 0n;
  for (const p of listed.filter((p) => p.status === 'completed')) {
    price += net(p).price;
    coin += net(p).coin;
  }
  assert.ok(price < toBaseUnits('64.5', 9), 'the refunds took from the sales');
  const home = await owner.get(`/dashboard/stores/${store.id}`);
  assert.equal(home.status, 200);
  assert.equal(cellValue(home.text, 'USD', '30d'), fromBaseUnits(price, 9));
  assert.equal(cellValue(home.text, 'TON', '30d'), fromBaseUnits(coin, 9));
  // Every coin together in the main fiat (USD) at today's rate (coins per dollar), to cents.
  const rate = (await getRate(app.pool, 'USD', 'TON', new Date(), ratePolicy(app.config)))!.rate;
  assert.equal(
    /<data data-window="30d" value="([^"]+)"/.exec(/<p id="sales-total">[\s\S]*?<\/p>/.exec(home.text)![0])?.[1],
    priceShare(fromBaseUnits(coin, 9), '1', rate, 2),
  );

  // The list: refunded in full / in part beside the status, each description; search by a word of it.
  const list = await owner.get(`/dashboard/stores/${store.id}/payments`);
  const rowOf = (page: string, id: string) => new RegExp(`<tr>\\s*<td>[^\\n]*${id}[\\s\\S]*?</tr>`).exec(page)?.[0] ?? '';
  assert.match(rowOf(list.text, full.id), /refunded in full/);
  assert.match(rowOf(list.text, part.id), /refunded in part/);
  assert.match(rowOf(list.text, fromTreasury.id), /refunded in part/);
  assert.doesNotMatch(rowOf(list.text, kept.id), /refunded/);
  assert.match(rowOf(list.text, part.id), /Two croissants/);
  const found = await owner.get(`/dashboard/stores/${store.id}/payments?q=croissant`);
  assert.match(found.text, new RegExp(part.id));
  for (const other of [full, fromTreasury, kept]) assert.doesNotMatch(found.text, new RegExp(other.id));

  // The payment page: its status line, and the refund from the treasury counted as refunded.
  const page = await owner.get(`/dashboard/stores/${store.id}/payments/${fromTreasury.id}`);
  assert.match(/<dd id="status">([\s\S]*?)<\/dd>/.exec(page.text)?.[1] ?? '', /completed[\s\S]*refunded in part/);
  assert.match(page.text, /<td class="num refunded"><data class="amount" value="0\.3"/);
});

it('the audit log is in time order, newest first, also when entries were written out of it, and pages on in that order', async () => {
  const other = await app.store({ name: 'Audit Shop', methods: 'TON/TON' });
  const reader = await member(app.url, app.pool, other.id, 'owner@audit.example', 'owner');
  // Written in this order, at these times: the id order is not the time order.
  const times = ['2026-03-01T10:00:00Z', '2026-01-15T09:00:00Z', '2026-02-10T08:00:00Z', '2025-12-31T23:00:00Z'];
  for (const [i, at] of times.entries())
    await recordAudit(app.pool, CLI_ACTOR, { storeId: other.id, action: 'store.update', subject: `entry-${i}` }, new Date(at));
  const page = await reader.get(`/dashboard/stores/${other.id}/audit`);
  assert.equal(page.status, 200);
  const subjects = [...page.text.matchAll(/<td class="mono">(entry-\d)<\/td>/g)].map((m) => m[1]);
  assert.deepEqual(subjects, ['entry-0', 'entry-2', 'entry-1', 'entry-3']);
  const rows = await listAudit(app.pool, other.id, { limit: 2 });
  const rest = await listAudit(app.pool, other.id, { limit: 100, beforeId: rows.rows.at(-1)!.id });
  assert.deepEqual(
    [...rows.rows, ...rest.rows].map((r) => r.subject).filter((s) => s?.startsWith('entry-')),
    ['entry-0', 'entry-2', 'entry-1', 'entry-3'],
  );
});
