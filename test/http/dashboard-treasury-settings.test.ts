// Set your own wallet (issue 47 item 6), over real HTTP against the real app, database and the
// sandbox chain: a store without a treasury says first on its home page that every sale stays in
// Kassa's wallets, and its Settings page says it in one sentence; a treasury address typed in any
// form is shown back as the owner's wallet app writes it (and bounceable) and saved only by the post
// that confirms it; an address Kassa knows to be wrong is refused in plain words and nothing is
// saved — another network's (testnet) form, a token balance's contract inside a wallet (a jetton
// wallet: get_wallet_data on the sandbox chain), a token's own contract (a jetton master:
// get_jetton_data), one of Kassa's own payment addresses.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Address } from '@ton/core';
import { friendlyAddress } from '../../src/chain/addresses.ts';
import { createJettonWalletLookup } from '../../src/checkout/jettonWallets.ts';
import { sql, z } from '../../src/db/pool.ts';
import { findStore } from '../../src/stores/stores.ts';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { type DashboardClient, member } from '../helpers/dashboard.ts';

let app: ChainTestApp;
let store: Awaited<ReturnType<ChainTestApp['store']>>;
let owner: DashboardClient;

before(async () => {
  app = await startChainApp();
  store = await app.store({ name: 'Wallet Shop', methods: 'TON/TON,USDT/TON' });
  owner = await member(app.url, app.pool, store.id, 'owner@wallet.example', 'owner');
});
after(() => app?.close());

const settings = () => `/dashboard/stores/${store.id}/settings`;
const saved = async () => (await findStore(app.pool, store.id))!.treasury;
const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ');

it("until a treasury is set the home page says first that sales stay in Kassa's wallets; Settings says it in one sentence", async () => {
  const home = await owner.get(`/dashboard/stores/${store.id}`);
  assert.equal(home.status, 200);
  const first = home.text.indexOf('id="no-treasury"');
  assert.ok(first > 0, 'the home page says it');
  assert.ok(first < home.text.indexOf('id="attention-heading"'), 'before anything else');
  assert.match(text(home.text), /Until you set your own wallet, every sale stays in Kassa's wallets/);
  const page = await owner.get(settings());
  assert.match(text(/<p id="treasury-why">[\s\S]*?<\/p>/.exec(page.text)![0]), /Until you set your own wallet here, every sale stays in Kassa's wallets/);
});

it('an address Kassa knows to be wrong is refused in plain words, and nothing is saved', async () => {
  const master = Address.parse(app.sandbox.chain.jettonMasters().USDT!);
  const customer = app.sandbox.chain.customer.address;
  const jettonWallet = await createJettonWalletLookup(app.config, app.pool).walletOf(master, customer, app.url);
  const created = await app.request('POST', '/v1/payments', {
    token: store.token,
    body: { amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
  });
  const wallet = Address.parse((await app.request('POST', '/sandbox/v1/wallets')).json.address);
  for (const [given, said] of [
    [wallet.toString({ urlSafe: true, bounceable: false, testOnly: true }), /written for the test network \(testnet\), not this one/],
    [jettonWallet.toString({ urlSafe: true, bounceable: true }), /the address of a token balance inside a wallet, not of the wallet itself/],
    [master.toRawString(), /the address of a token, not of a wallet/],
    [created.json.paymentDetails.address, /one of Kassa's own wallets, not yours/],
    ['not an address', /This is not a TON wallet address/],
  ] as const) {
    for (const confirmed of [{}, { confirmed: 'yes' }] as Record<string, string>[]) {
      const refused = await owner.post(`${settings()}/treasury`, { treasury: given, ...confirmed });
      assert.equal(refused.status, 400, given);
      assert.match(text(refused.text), said);
      assert.doesNotMatch(text(refused.text), /jetton|basechain/i);
      assert.equal(await saved(), null);
    }
  }
});

it("a treasury is shown back as the owner's wallet writes it and saved only once confirmed; then the home page says nothing of it", async () => {
  const wallet = Address.parse((await app.request('POST', '/sandbox/v1/wallets')).json.address);
  const shown = friendlyAddress(wallet, 'sandbox');
  // Typed raw: shown back user-friendly (and bounceable), nothing saved.
  const check = await owner.post(`${settings()}/treasury`, { treasury: wallet.toRawString() });
  assert.equal(check.status, 200);
  assert.equal(/id="treasury-confirm-address">([^<]+)</.exec(check.text)?.[1], shown);
  assert.equal(/id="treasury-confirm-bounceable">([^<]+)</.exec(check.text)?.[1], wallet.toString({ urlSafe: true, bounceable: true }));
  assert.match(check.text, /Yes, this is my wallet: save it/);
  assert.equal(await saved(), null);
  // Confirmed: saved, audited.
  const confirmed = await owner.post(`${settings()}/treasury`, { treasury: shown, confirmed: 'yes' });
  assert.equal(confirmed.status, 303, confirmed.text);
  assert.equal(await saved(), wallet.toRawString());
  const audited = await app.pool.oneFirst(
    sql.type(z.object({ n: z.number() }))`select count(*)::int as n from audit_log where store_id = ${store.id} and action = 'treasury.change'`,
  );
  assert.equal(audited, 1);
  const page = await owner.get(settings());
  assert.match(page.text, new RegExp(`id="settings-treasury"[^>]*value="${shown}"`));
  assert.doesNotMatch(text(page.text), /\b0:[0-9a-f]{64}/);
  const home = await owner.get(`/dashboard/stores/${store.id}`);
  assert.doesNotMatch(home.text, /id="no-treasury"/);
});
