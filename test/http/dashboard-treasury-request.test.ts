// One request per treasury refund across browsers and devices (issue 44 §1), over real HTTP against
// the real app, database and the sandbox chain: a refund from the treasury awaits the owner's
// signature; two sessions of the same owner (two browsers) load its payment page. The first records
// handing the TON Connect request to a wallet and wins; the second's recording is refused (409, with
// until when the held request can land) and its page no longer offers "Sign with your wallet" but
// says the request is in a wallet. Only the wallet's own refusal, reported by a page, frees it: then
// a recording is taken again. A viewer may do neither; each recording and release is audited.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Address } from '@ton/core';
import { listAudit } from '../../src/dashboard/audit.ts';
import { sql } from '../../src/db/pool.ts';
import { updateStore } from '../../src/stores/stores.ts';
import { heldUntil } from '../../src/treasury/treasuryRefunds.ts';
import { freshAddress, startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { type DashboardClient, dashboardClient, member } from '../helpers/dashboard.ts';

let app: ChainTestApp;
let store: Awaited<ReturnType<ChainTestApp['store']>>;
let first: DashboardClient;
let second: DashboardClient;
let viewer: DashboardClient;

before(async () => {
  app = await startChainApp();
  const treasury = (await app.request('POST', '/sandbox/v1/wallets')).json.address;
  store = await app.store({ name: 'Two Tabs', methods: 'TON/TON', refundWindowDays: 0 });
  await updateStore(app.pool, store.id, { treasury });
  first = await member(app.url, app.pool, store.id, 'owner@two.example', 'owner');
  // The same owner in another browser: a second session of their own.
  second = dashboardClient(app.url);
  const signedIn = await second.post('/dashboard/sign-in', { email: 'owner@two.example', password: 'correct horse battery' });
  assert.equal(signedIn.status, 303, signedIn.text);
  assert.notEqual(second.cookie, first.cookie);
  viewer = await member(app.url, app.pool, store.id, 'viewer@two.example', 'viewer');
});
after(() => app?.close());

it("the first page to hand the request to a wallet wins; the second is refused (409) and not offered Sign; the wallet's refusal frees it", {
  timeout: 240_000,
}, async () => {
  const created = await app.request('POST', '/v1/payments', {
    token: store.token,
    body: { amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
  });
  assert.equal(created.status, 201, created.text);
  const deposit = Address.parse(created.json.paymentDetails.address).toRawString();
  await app.pay(created.json.paymentDetails.address, 'TON', '1');
  await app.settle();
  await app.drain(deposit);
  const asked = await app.request('POST', `/v1/payments/${created.json.id}/refunds`, {
    token: store.token,
    body: { coin: 'TON', amount: '0.4', address: freshAddress(), from: 'treasury' },
  });
  assert.equal(asked.status, 201, asked.text);
  const refundId: string = asked.json.id;
  const paymentPath = `/dashboard/stores/${store.id}/payments/${created.json.id}`;
  const sent = `${paymentPath}/treasury-refunds/${refundId}/request-sent`;
  const declined = `${paymentPath}/treasury-refunds/${refundId}/request-declined`;
  const offersSign = (page: string) => /<button type="button" class="sign-treasury"/.test(page);

  // Both browsers load the page: both are offered "Sign with your wallet".
  assert.ok(offersSign((await first.get(paymentPath)).text));
  assert.ok(offersSign((await second.get(paymentPath)).text));

  // A viewer may not record one (and nothing is recorded).
  assert.equal((await viewer.post(sent)).status, 403);
  // Another site's post is refused before anything (CSRF: the Origin).
  assert.equal((await first.post(sent, {}, { origin: 'https://evil.example' })).status, 403);

  // Both press "Sign" at once: exactly one recording wins.
  const [a, b] = await Promise.all([first.post(sent), second.post(sent)]);
  assert.deepEqual([a.status, b.status].sort(), [200, 409], `${a.text} / ${b.text}`);
  const refused = JSON.parse((a.status === 409 ? a : b).text);
  const { valid_until } = (await app.pool.one(sql.unsafe`select valid_until from outgoing_transfers where id = ${refundId}`)) as { valid_until: Date };
  assert.equal(refused.problem, 'request_in_wallet');
  assert.equal(refused.heldUntil, heldUntil(valid_until).toISOString());
  // Once more from either: still refused.
  assert.equal((await first.post(sent)).status, 409);

  // Every page load reads it from the server: neither browser is offered Sign; both say why and until when.
  for (const client of [first, second]) {
    const page = (await client.get(paymentPath)).text;
    assert.ok(!offersSign(page), 'a held request offers no Sign');
    assert.match(page, /data-request-sent="yes"/);
    assert.match(page, /The request is already in a wallet, which can still pay it until/);
  }

  // The wallet's own refusal (UserRejectsError), reported by a viewer: refused; by the owner's page: frees it.
  assert.equal((await viewer.post(declined)).status, 403);
  const freed = await second.post(declined);
  assert.equal(freed.status, 200, freed.text);
  assert.equal(JSON.parse(freed.text).released, true);
  assert.ok(offersSign((await first.get(paymentPath)).text));
  const again = await second.post(sent);
  assert.equal(again.status, 200, again.text);
  assert.equal(JSON.parse(again.text).heldUntil, heldUntil(valid_until).toISOString());
  assert.equal((await first.post(sent)).status, 409);

  // Audited: two recordings and one release, by the owner.
  const audit = (await listAudit(app.pool, store.id, { limit: 50 })).rows.filter((e: any) => /^refund\.request_/.test(e.action));
  assert.deepEqual(audit.map((e: any) => e.action).sort(), ['refund.request_declined', 'refund.request_sent', 'refund.request_sent']);
  // A refund of another payment (or none) is not found.
  assert.equal((await first.post(`${paymentPath}/treasury-refunds/00000000-0000-4000-8000-000000000000/request-sent`)).status, 404);
});
