// The dashboard's Unmatched money page (issue 43, CONTRACT §12) in real headless Chromium at phone
// width (375 px) against the real app, Postgres and the sandbox chain: a sandbox wallet pays a
// treasury store's payment with a mistyped reference and sends money with no comment at all; both
// appear, open, with what they carried, why in plain words and the suggested payment; the owner
// assigns the first to the suggested payment from the page (the payment completes; audited
// unmatched.assign, via dashboard) and keeps the second with a note (an empty note refused first);
// a viewer sees them and no action. Money with no comment is given back from the page: the owner's
// treasury wallet (a test wallet injected through TON Connect's injected-wallet protocol,
// test/helpers/tonconnectWallet.ts, playing the sandbox's treasury) signs the refund Kassa built; the
// reader sees it leave, the transfer is refunded and the sender has the money back. axe-core finds no
// serious violation and no page scrolls sideways.
// Screenshots go to test-artifacts/dashboard-unmatched/. If Chromium cannot be launched this file FAILS.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Address } from '@ton/core';
import type { Browser } from 'playwright-core';
import { sql, z } from '../../src/db/pool.ts';
import { CROCKFORD, formatReference } from '../../src/payments/reference.ts';
import { updateStore } from '../../src/stores/stores.ts';
import type { TestApp } from '../helpers/app.ts';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { chromiumBrowser } from '../helpers/chromium.ts';
import { invitationPath } from '../helpers/dashboard.ts';
import { assertPageFits, joinByInvitation, openPage } from '../helpers/dashboardBrowser.ts';
import { injectTestWallet, TEST_WALLET_NAME } from '../helpers/tonconnectWallet.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/dashboard-unmatched');
const PASSWORD = 'a long dashboard password';

let app: ChainTestApp;
let store: Awaited<ReturnType<TestApp['store']>>;
let browser: Browser;
let treasury: string;
/** The store whose money is given back (its own treasury). */
let kiosk: { store: Awaited<ReturnType<TestApp['store']>>; treasury: string };

before(
  async () => {
    browser = await chromiumBrowser();
    app = await startChainApp();
    store = await app.store({ name: 'Corner Café', methods: 'TON/TON' });
    treasury = Address.parse((await app.request('POST', '/sandbox/v1/wallets')).json.address).toRawString();
    await updateStore(app.pool, store.id, { treasury, settlement: 'treasury' });
    const kioskStore = await app.store({ name: 'Night Kiosk', methods: 'TON/TON' });
    const kioskTreasury = Address.parse((await app.request('POST', '/sandbox/v1/wallets')).json.address).toRawString();
    await updateStore(app.pool, kioskStore.id, { treasury: kioskTreasury, settlement: 'treasury' });
    const first = await app.request('POST', '/v1/payments', {
      token: kioskStore.token,
      body: { amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] }, ttl: 3600 },
    });
    assert.equal(first.status, 201, first.text);
    kiosk = { store: kioskStore, treasury: kioskTreasury };
    // The wallets' own funding (1,000 TON and each jetton) is the merchant's history, not unmatched money, only when
    // it landed in an earlier second than the store's first payment (payments/treasuryTransfers.ts keepUnmatched):
    // the first test makes its payment at once, so the funding is read and a second passes first.
    await app.settle();
    await new Promise((resolve) => setTimeout(resolve, 1_100));
  },
  { timeout: 600_000 },
);
after(async () => {
  await browser?.close();
  await app?.close();
});

/** One character of the reference changed: its check character then fails (a typo). */
function mistyped(reference: string): string {
  const plain = reference.replace('-', '');
  const changed = plain[2] === 'Q' ? 'R' : 'Q';
  assert.ok(CROCKFORD.includes(changed));
  return formatReference(plain.slice(0, 2) + changed + plain.slice(3));
}

const statusOf = (id: string) => app.pool.oneFirst(sql.type(z.object({ status: z.string() }))`select status from payments where id = ${id}`);

describe('the dashboard’s Unmatched money', { timeout: 600_000 }, () => {
  it('a mistyped reference appears with its suggestion and is assigned from the page to that payment, which completes; money with no comment is kept with a note; a viewer only sees', {
    timeout: 300_000,
  }, async () => {
    const created = await app.request('POST', '/v1/payments', {
      token: store.token,
      body: { amount: '1.5', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] }, ttl: 3600, description: 'Two flat whites' },
    });
    assert.equal(created.status, 201, created.text);
    const payment = created.json;
    const typo = mistyped(payment.paymentDetails.reference);
    await app.pay(treasury, 'TON', '1.5', { comment: typo });
    await app.pay(treasury, 'TON', '0.2');
    await app.settle();
    assert.equal(await statusOf(payment.id), 'pending', 'a typo completes nothing by itself');

    const owner = await openPage(browser, { width: 375, height: 812 });
    const viewer = await openPage(browser, { width: 375, height: 812 });
    try {
      const { page, problems } = owner;
      await joinByInvitation(page, app.url, store.id, await invitationPath(app.pool, store.id, 'owner@corner.example', 'owner'), PASSWORD);
      // At phone width the store's menu is folded: go by the nav link's own address.
      const unmatchedPath = await page.locator('nav a[href$="/unmatched"]').getAttribute('href');
      assert.equal((await page.locator('nav a[href$="/unmatched"]').textContent())?.trim(), 'Unmatched money');
      await page.goto(`${app.url}${unmatchedPath}`);
      assert.equal(await page.locator('h1').innerText(), 'Unmatched money');
      assert.match(await page.locator('#open-heading').innerText(), /Waiting for you \(2\)/);

      const cards = page.locator('article.unmatched');
      const typoCard = cards.filter({ hasText: typo });
      assert.equal(await typoCard.count(), 1);
      assert.match(await typoCard.locator('.unmatched-reason').innerText(), /looks like a reference with a typo/);
      assert.match(await typoCard.locator('h3').first().innerText(), /^1\.5 GRAM · /);
      // The sender in the network's friendly form, not raw.
      assert.doesNotMatch(await typoCard.locator('.address').innerText(), /^0:/);
      const suggestion = typoCard.locator(`li.suggestion[data-payment-id="${payment.id}"]`);
      assert.equal(await suggestion.count(), 1, 'the payment one character away is suggested');
      assert.match(await suggestion.innerText(), new RegExp(`${payment.paymentDetails.reference}[\\s\\S]*1\\.5 GRAM[\\s\\S]*pending[\\s\\S]*Two flat whites`));
      assert.match(await suggestion.innerText(), /one character away/);
      const bare = cards.filter({ hasText: 'no reference' });
      assert.equal(await bare.count(), 1);
      assert.match(await bare.locator('.unmatched-reason').innerText(), /came without a payment’s reference/);
      assert.equal(await bare.getByRole('button', { name: 'Give it back' }).isEnabled(), true, 'an owner may give it back');
      await assertPageFits(page, 'unmatched open', ARTIFACTS);

      // A viewer sees the money and no action.
      await joinByInvitation(viewer.page, app.url, store.id, await invitationPath(app.pool, store.id, 'viewer@corner.example', 'viewer'), PASSWORD);
      await viewer.page.goto(`${app.url}${unmatchedPath}`);
      assert.equal(await viewer.page.locator('article.unmatched').count(), 2);
      assert.equal(await viewer.page.locator('article.unmatched form').count(), 0);
      assert.match(await viewer.page.locator('article.unmatched').first().innerText(), /Only the store’s owners can assign, keep or give back this money/);
      await assertPageFits(viewer.page, 'unmatched as a viewer', ARTIFACTS);
      // Nor can a viewer post the owner's form: refused (403), nothing booked.
      const unmatchedId = (await typoCard.getAttribute('id'))!.replace('unmatched-', '');
      const refused = await viewer.page.evaluate(
        async ({ url, paymentId }) =>
          (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `paymentID=${paymentId}` })).status,
        { url: `${unmatchedPath}/${unmatchedId}/assign`, paymentId: payment.id },
      );
      assert.equal(refused, 403);
      assert.equal(await statusOf(payment.id), 'pending');

      // The owner assigns it to the suggested payment: booked on it, which completes.
      await suggestion.getByRole('button', { name: 'Assign to this payment' }).click();
      await page.locator('p.success').filter({ hasText: 'Assigned' }).waitFor({ timeout: 10_000 });
      assert.equal(await statusOf(payment.id), 'completed');
      assert.match(await page.locator('#open-heading').innerText(), /Waiting for you \(1\)/);
      assert.match(await page.locator('.resolved-list').innerText(), new RegExp(`1\\.5 GRAM.*assigned to ${payment.paymentDetails.reference}`));
      const audit = await app.pool.one(sql.type(z.object({ actor: z.string(), detail: z.record(z.string(), z.unknown()) }))`
        select actor, detail from audit_log where store_id = ${store.id} and action = 'unmatched.assign'
      `);
      assert.equal(audit.actor, 'owner@corner.example');
      assert.equal(audit.detail.payment, payment.id);
      assert.equal(audit.detail.via, 'dashboard');
      await assertPageFits(page, 'unmatched after assign', ARTIFACTS);

      // Keep the money with no comment: an empty note is refused beside its field, then kept.
      const keepCard = page.locator('article.unmatched');
      await keepCard.getByRole('button', { name: 'Keep it' }).click();
      await page.locator('#note-problem').waitFor({ timeout: 10_000 });
      assert.equal(await page.locator('input[name="note"]').getAttribute('aria-invalid'), 'true');
      await assertPageFits(page, 'unmatched keep refused', ARTIFACTS);
      await page.locator('input[name="note"]').fill('Our own top-up');
      await page.locator('article.unmatched').getByRole('button', { name: 'Keep it' }).click();
      await page.locator('p.success').filter({ hasText: 'Kept' }).waitFor({ timeout: 10_000 });
      assert.equal(await page.locator('#no-unmatched').count(), 1);
      assert.match(await page.locator('.resolved-list').innerText(), /0\.2 GRAM.*kept: “Our own top-up”/);
      const kept = await app.request('GET', '/v1/unmatched-transfers?state=kept', { token: store.token });
      assert.equal(kept.json.data[0].note, 'Our own top-up');
      await assertPageFits(page, 'unmatched all resolved', ARTIFACTS);
      assert.deepEqual(problems, []);
      assert.deepEqual(viewer.problems, []);
    } finally {
      await owner.context.close();
      await viewer.context.close();
    }
  });

  it('money with no comment is given back from the page: signed with the treasury’s wallet through TON Connect, confirmed, the sender has it back', {
    timeout: 300_000,
  }, async () => {
    // A store of its own, made before either test (the test above counts its store's unmatched money, and runs beside this one).
    const { store, treasury } = kiosk;
    await app.pay(treasury, 'TON', '0.35');
    await app.settle();
    const [open] = (await app.request('GET', '/v1/unmatched-transfers?state=open', { token: store.token })).json.data;
    assert.equal(open.amount, '0.35');
    const sender: string = open.sender;
    const sentBack = app.arrived(sender, treasury);

    const owner = await openPage(browser, { width: 375, height: 812 });
    try {
      const { page } = owner;
      const wallet = await injectTestWallet(page, app, { address: treasury });
      await joinByInvitation(page, app.url, store.id, await invitationPath(app.pool, store.id, 'second-owner@corner.example', 'owner'), PASSWORD);
      const unmatchedPath = `/dashboard/stores/${store.id}/unmatched`;
      await page.goto(`${app.url}${unmatchedPath}`);
      const card = page.locator(`#unmatched-${open.id}`);
      assert.match(await card.locator('label[for$="-address"]').innerText(), /give it back, all of it, from your treasury: to the wallet that sent it/);
      // A bad address is refused beside its field; nothing is asked.
      await card.locator('input[name="address"]').fill('not an address');
      await card.getByRole('button', { name: 'Give it back' }).click();
      await page.locator('#address-problem').waitFor({ timeout: 10_000 });
      assert.match(await page.locator('#address-problem').innerText(), /Kassa cannot send there/);
      await assertPageFits(page, 'unmatched give back refused', ARTIFACTS);
      // Empty: back to the sender.
      await page.locator(`#unmatched-${open.id} input[name="address"]`).fill('');
      await page.locator(`#unmatched-${open.id}`).getByRole('button', { name: 'Give it back' }).click();
      await page.locator('p.success').filter({ hasText: 'Refund asked' }).waitFor({ timeout: 10_000 });
      await page.getByRole('heading', { name: 'Money to give back: approve it with your wallet' }).waitFor();
      assert.match(await page.locator('.refunding-list').innerText(), /0\.35 GRAM.*being given back/);
      const [refund] = (await app.request('GET', `/v1/unmatched-transfers/${open.id}/refunds`, { token: store.token })).json.data;
      assert.equal(refund.status, 'awaiting_signature');
      const item = page.locator(`#treasury-${refund.id}`);
      assert.match(await item.innerText(), /0\.35 GRAM to /);
      await page.waitForFunction(() => customElements.get('tc-root') !== undefined, undefined, { timeout: 10_000 });
      await assertPageFits(page, 'unmatched refund to sign', ARTIFACTS);

      // Signed at a desktop's width (at a phone's, TON Connect's list sends the owner to the wallet's app).
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.reload();
      await page.waitForFunction(() => customElements.get('tc-root') !== undefined, undefined, { timeout: 10_000 });
      await item.getByRole('button', { name: 'Sign with your wallet' }).click();
      const modal = page.locator('#tc-widget-root');
      const entry = modal.getByText(TEST_WALLET_NAME, { exact: true }).first();
      await entry.waitFor({ timeout: 10_000 });
      await entry.click();
      const extension = modal.getByRole('button', { name: /Browser Extension/ });
      await extension.waitFor({ timeout: 20_000 });
      await extension.click();
      await item.getByText('Signed and sent from your wallet').waitFor({ timeout: 15_000 });
      assert.equal(wallet.requests.length, 1);
      assert.deepEqual(wallet.requests[0].messages, refund.tonconnect.messages);
      const audit = await app.pool.any(sql.type(z.object({ action: z.string(), actor: z.string() }))`
        select action, actor from audit_log where store_id = ${store.id} and action like 'unmatched.refund%' order by at
      `);
      assert.deepEqual(
        audit.map((row) => [row.action, row.actor]),
        [
          ['unmatched.refund', 'second-owner@corner.example'],
          ['unmatched.refund_request_sent', 'second-owner@corner.example'],
        ],
      );

      await app.settle();
      const [done] = (await app.request('GET', `/v1/unmatched-transfers/${open.id}/refunds`, { token: store.token })).json.data;
      assert.equal(done.status, 'confirmed', JSON.stringify(done));
      assert.equal(app.arrived(sender, treasury) - sentBack, 350_000_000n, 'the sender has it back');
      await page.setViewportSize({ width: 375, height: 812 });
      await page.reload();
      assert.equal(await page.getByRole('heading', { name: 'Money to give back: approve it with your wallet' }).count(), 0);
      assert.match(await page.locator('.resolved-list').innerText(), /0\.35 GRAM.*refunded/);
      await assertPageFits(page, 'unmatched refunded', ARTIFACTS);
    } finally {
      await owner.context.close();
    }
  });
});
