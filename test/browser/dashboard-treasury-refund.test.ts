// A refund from the treasury signed from the dashboard (issue 29 item 2) in real headless Chromium
// (its page checked at phone width, 375 px, signed at a desktop's): the store's treasury is a wallet the sandbox holds the key of; a test
// wallet injected into the page through TON Connect's injected-wallet protocol plays it
// (test/helpers/tonconnectWallet.ts) and signs the request Kassa built, through the page's real
// @tonconnect/ui. The reader sees the transfer leave the treasury and the refund turns confirmed;
// the customer gets exactly the amount. axe finds no serious violation; no CSP violation.
//
// If Chromium cannot be launched this file FAILS (it never skips).
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { Address, Cell, toNano } from '@ton/core';
import type { Browser } from 'playwright-core';
import { friendlyAddress } from '../../src/chain/addresses.ts';
import { commentOf } from '../../src/chain/detect.ts';
import { sql } from '../../src/db/pool.ts';
import { updateStore } from '../../src/stores/stores.ts';
import { outgoingOfPayment } from '../../src/treasury/outgoing.ts';
import { freshAddress, startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { chromiumBrowser } from '../helpers/chromium.ts';
import { invitationPath } from '../helpers/dashboard.ts';
import { assertPageFits, type BrowserPage, joinByInvitation, openPage } from '../helpers/dashboardBrowser.ts';
import { injectTestWallet, TEST_WALLET_NAME } from '../helpers/tonconnectWallet.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/dashboard-treasury-refund');

let app: ChainTestApp;
let browser: Browser;
let owner: BrowserPage;
let store: Awaited<ReturnType<ChainTestApp['store']>>;
let treasury: string;

before(async () => {
  browser = await chromiumBrowser();
  app = await startChainApp();
  // Kassa's clock follows the chain where a test moved it ahead of the wall clock (advanceChain).
  app.clock.follow(() => new Date(Math.max(Date.now(), app.sandbox.chain.now * 1000)));
  treasury = (await app.request('POST', '/sandbox/v1/wallets')).json.address;
  store = await app.store({ name: 'Corner Shop', methods: 'TON/TON', refundWindowDays: 0 });
  await updateStore(app.pool, store.id, { treasury });
  owner = await openPage(browser);
  await joinByInvitation(owner.page, app.url, store.id, await invitationPath(app.pool, store.id, 'owner@corner.example', 'owner'), 'a long dashboard password');
});
after(async () => {
  await browser?.close();
  await app?.close();
});

/**
 * What the console may say beyond the page's own doing, all from @tonconnect/ui (as on the
 * checkout, test/browser/checkout.test.ts): its decorative images on raw.githubusercontent.com
 * (refused by the CSP), its QR code's bridges this offline machine cannot resolve, and an image it
 * asks for at the relative URL "undefined" once a wallet is connected.
 */
const ownProblems = (problems: string[]) =>
  problems.filter(
    (p) =>
      !/raw\.githubusercontent\.com\/ton-connect\/sdk\//.test(p) &&
      !/ERR_NAME_NOT_RESOLVED|ERR_INTERNET_DISCONNECTED|TON_CONNECT_SDK_ERROR\] \w+\nAborted after attempts/.test(p) &&
      !/status of 404 \(Not Found\) \(http:\/\/127\.0\.0\.1:\d+\/dashboard\/stores\/[^)]*\/undefined\)$/.test(p),
  );

it('"Sign with your wallet" asks the treasury wallet (TON Connect) to sign; the refund is confirmed; the customer gets exactly the amount', {
  timeout: 300_000,
}, async () => {
  const mark = (what: string) => process.env.TRACE && process.stderr.write(`[treasury-refund] ${new Date().toISOString()} ${what}\n`);
  const created = await app.request('POST', '/v1/payments', {
    token: store.token,
    body: { amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
  });
  const deposit = Address.parse(created.json.paymentDetails.address).toRawString();
  await app.pay(created.json.paymentDetails.address, 'TON', '1');
  await app.settle();
  await app.drain(deposit);
  mark('swept');
  const customer = freshAddress();
  const asked = await app.request('POST', `/v1/payments/${created.json.id}/refunds`, {
    token: store.token,
    body: { coin: 'TON', amount: '0.6', address: customer, from: 'treasury' },
  });
  assert.equal(asked.status, 201, asked.text);

  const { page } = owner;
  const wallet = await injectTestWallet(page, app, { address: treasury });
  await page.goto(`${app.url}/dashboard/stores/${store.id}/payments/${created.json.id}`);
  await page.getByRole('heading', { name: 'Refunds from the treasury to sign' }).waitFor();
  const item = page.locator(`#treasury-${asked.json.id}`);
  assert.match(await item.innerText(), /0\.6 GRAM to /);
  assert.equal(await item.getByRole('link', { name: 'Open in a wallet app', includeHidden: true }).getAttribute('href'), asked.json.link);
  await page.waitForFunction(() => customElements.get('tc-root') !== undefined, undefined, { timeout: 10_000 });
  await assertPageFits(page, 'payment page with a treasury refund to sign', ARTIFACTS);
  // Signed at a desktop's width: at a phone's, TON Connect's list sends the owner to the wallet's app
  // (its universal link), which this machine has not; the injected wallet plays a browser extension.
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.reload();
  await page.waitForFunction(() => customElements.get('tc-root') !== undefined, undefined, { timeout: 10_000 });

  const sign = item.getByRole('button', { name: 'Sign with your wallet' });
  mark('page ready');
  await sign.click();
  const modal = page.locator('#tc-widget-root');
  const entry = modal.getByText(TEST_WALLET_NAME, { exact: true }).first();
  await entry.waitFor({ timeout: 10_000 });
  await entry.click();
  const extension = modal.getByRole('button', { name: /Browser Extension/ });
  await extension.waitFor({ timeout: 20_000 });
  await extension.click();
  mark('wallet chosen');
  await item.getByText('Signed and sent from your wallet').waitFor({ timeout: 15_000 });
  // Clicked again: the wallet is not asked twice (a request signed twice pays twice).
  assert.equal(await item.getByRole('button', { name: 'Signed' }).isDisabled(), true);
  assert.equal(wallet.requests.length, 1);
  // The wallet was asked exactly what the API answered: from the treasury, its one message with the refund's reference.
  const [request] = wallet.requests;
  assert.equal(request.from, treasury);
  assert.deepEqual(request.messages, asked.json.tonconnect.messages);
  assert.equal(commentOf(Cell.fromBase64(request.messages[0].payload)), `Kassa refund ${asked.json.id}`);

  await app.settle();
  const [refund] = await outgoingOfPayment(app.pool, created.json.id, 'refund');
  assert.equal(refund?.state, 'confirmed');
  assert.equal(app.arrived(customer, treasury), toNano('0.6'));
  await page.reload();
  assert.equal(await page.getByRole('heading', { name: 'Refunds from the treasury to sign' }).count(), 0);
  assert.match(await page.locator('#timeline').innerText(), /Refund from the treasury of 0\.6 GRAM done/);
  assert.deepEqual(ownProblems(owner.problems), []);
});

it('after the refund window the payment page offers the refund from the treasury (issue 47 item 2): back to the sender by default, no raw address, reviewed, then signed with the wallet and confirmed', {
  timeout: 300_000,
}, async () => {
  const created = await app.request('POST', '/v1/payments', {
    token: store.token,
    body: { amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
  });
  await app.pay(created.json.paymentDetails.address, 'TON', '1');
  await app.settle();
  await app.drain(Address.parse(created.json.paymentDetails.address).toRawString());
  const payer = (await app.pool.oneFirst(sql.unsafe`select sender from transfers where payment_id = ${created.json.id}`)) as string;
  const payerFriendly = friendlyAddress(Address.parse(payer), 'sandbox');
  const page = await owner.context.newPage();
  await page.setViewportSize({ width: 375, height: 800 });
  const wallet = await injectTestWallet(page, app, { address: treasury });
  await page.goto(`${app.url}/dashboard/stores/${store.id}/payments/${created.json.id}`);
  const refundCard = page.locator('section[aria-labelledby="refund-heading"]');
  assert.doesNotMatch(await refundCard.innerText(), /Nothing can be refunded now/);
  const form = page.locator('#treasury-refund-form');
  await form.getByRole('heading', { name: 'Refund from your wallet' }).waitFor();
  assert.equal(await page.locator('#treasury-refundable').getAttribute('value'), '1');
  // Back to the sender by default, in the form the owner's wallet shows.
  assert.equal(await page.getByLabel('To address').inputValue(), payerFriendly);
  await assertPageFits(page, 'payment page offering a refund from the treasury', ARTIFACTS);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.getByLabel('Amount (GRAM)').fill('0.4');
  await form.getByRole('button', { name: 'Review the refund from your wallet' }).click();
  await page.getByRole('heading', { name: 'Confirm the refund' }).waitFor();
  assert.match(await page.locator('#confirm-send').innerText(), /^0\.4 GRAM$/);
  assert.match(await page.locator('#confirm-address').innerText(), new RegExp(payerFriendly));
  await page.getByRole('button', { name: 'Confirm: ask my wallet to send 0.4 GRAM' }).click();
  await page.getByText('Refund asked: sign it with your wallet below').waitFor();
  await page.getByRole('heading', { name: 'Refunds from the treasury to sign' }).waitFor();
  await assertPageFits(page, 'payment page with the treasury refund asked, desktop', ARTIFACTS);
  assert.doesNotMatch(await page.locator('main').innerText(), /\b0:[0-9a-f]{64}/i);
  const [asked] = await outgoingOfPayment(app.pool, created.json.id, 'refund');
  assert.equal(asked?.source, 'treasury');
  const item = page.locator(`#treasury-${asked!.id}`);
  assert.match(await item.innerText(), new RegExp(`0\\.4 GRAM to ${payerFriendly}`));
  await page.waitForFunction(() => customElements.get('tc-root') !== undefined, undefined, { timeout: 10_000 });
  await item.getByRole('button', { name: 'Sign with your wallet' }).click();
  await chooseWallet(page);
  await item.getByText('Signed and sent from your wallet').waitFor({ timeout: 15_000 });
  assert.equal(wallet.requests.length, 1);
  await app.settle();
  const [refund] = await outgoingOfPayment(app.pool, created.json.id, 'refund');
  assert.equal(refund?.state, 'confirmed');
  assert.equal(app.arrived(payer, treasury), toNano('0.4'));
  // What is left of the sale is still offered from the treasury.
  await page.reload();
  assert.equal(await page.locator('#treasury-refundable').getAttribute('value'), '0.6');
  await page.close();
});

it('two browsers of the same owner (issue 44 §1): the first hands the request to the wallet, which holds it; the second, loaded before, is refused by the server and says why; reloaded it offers no Sign; never two requests reach a wallet', {
  timeout: 300_000,
}, async () => {
  const sale = await sweptSaleRefund('0.2');
  // The first browser: the owner's, the test wallet holding what it is asked.
  const { page, wallet } = await walletPage(sale.paymentId);
  wallet.mode = 'hold';
  // The second: another browser (its own context, cookies and local storage) of the same owner, signed in with the password, its own wallet of the treasury.
  const other = await openPage(browser, { width: 1280, height: 900 });
  await other.page.goto(`${app.url}/dashboard/sign-in`);
  await other.page.fill('#email', 'owner@corner.example');
  await other.page.fill('#password', 'a long dashboard password');
  await other.page.click('form[action$="/sign-in"] button[type=submit]');
  await other.page.waitForURL(`${app.url}/dashboard/stores/${store.id}`);
  const otherWallet = await injectTestWallet(other.page, app, { address: treasury });
  await other.page.goto(`${app.url}/dashboard/stores/${store.id}/payments/${sale.paymentId}`);
  await other.page.waitForFunction(() => customElements.get('tc-root') !== undefined, undefined, { timeout: 10_000 });
  const otherItem = other.page.locator(`#treasury-${sale.refund.id}`);
  const otherSign = otherItem.getByRole('button', { name: 'Sign with your wallet' });
  assert.equal(await otherSign.isDisabled(), false);

  // The first sends it: the wallet holds it.
  await page.locator(`#treasury-${sale.refund.id}`).getByRole('button', { name: 'Sign with your wallet' }).click();
  await chooseWallet(page);
  for (let i = 0; i < 200 && wallet.held() === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(wallet.held(), 1);

  // The second, its page loaded before: Sign is refused by the server; it says the request is in a wallet and until when.
  await otherSign.click();
  await chooseWallet(other.page);
  await otherItem.getByText('The request is already in a wallet').waitFor({ timeout: 10_000 });
  const said = await otherItem.locator('.sign-status').innerText();
  assert.match(said, /which can still pay it until .+: approve or decline it there/);
  assert.equal(await otherSign.isDisabled(), true);
  assert.equal(otherWallet.requests.length, 0);
  // Reloaded, it is not offered Sign at all.
  await other.page.reload();
  await otherItem.getByText('The request is already in a wallet').waitFor({ timeout: 10_000 });
  assert.equal(await otherSign.count(), 0);
  assert.equal(otherWallet.requests.length + wallet.requests.length, 1);
  const [refund] = await outgoingOfPayment(app.pool, sale.paymentId, 'refund');
  assert.ok(refund?.request_sent_at instanceof Date);
  assert.deepEqual(ownProblems(other.problems), []);
  await other.context.close();
  await page.close();
});

/** A TON sale of 1 TON completed and swept to the treasury; a treasury refund of `amount` asked through the API. */
async function sweptSaleRefund(amount: string) {
  const created = await app.request('POST', '/v1/payments', {
    token: store.token,
    body: { amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
  });
  await app.pay(created.json.paymentDetails.address, 'TON', '1');
  await app.settle();
  await app.drain(Address.parse(created.json.paymentDetails.address).toRawString());
  const customer = freshAddress();
  const asked = await app.request('POST', `/v1/payments/${created.json.id}/refunds`, {
    token: store.token,
    body: { coin: 'TON', amount, address: customer, from: 'treasury' },
  });
  assert.equal(asked.status, 201, asked.text);
  return { paymentId: created.json.id as string, customer, refund: asked.json };
}

/** The owner's dashboard in a new tab (the same session) with the test wallet injected, at a desktop's width, on the payment's page. */
async function walletPage(paymentId: string) {
  const page = await owner.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  const wallet = await injectTestWallet(page, app, { address: treasury });
  await page.goto(`${app.url}/dashboard/stores/${store.id}/payments/${paymentId}`);
  await page.waitForFunction(() => customElements.get('tc-root') !== undefined, undefined, { timeout: 10_000 });
  return { page, wallet };
}

/** Picks the test wallet in TON Connect's list (as the browser extension). */
async function chooseWallet(page: import('playwright-core').Page) {
  const modal = page.locator('#tc-widget-root');
  const entry = modal.getByText(TEST_WALLET_NAME, { exact: true }).first();
  await entry.waitFor({ timeout: 10_000 });
  await entry.click();
  const extension = modal.getByRole('button', { name: /Browser Extension/ });
  await extension.waitFor({ timeout: 20_000 });
  await extension.click();
}

it('the "confirm in your wallet" dialog closed while the wallet (Tonkeeper: its own 300-s lifetime) holds the request: no second request — not on a click, not after a reload; approved late, landing after validUntil + 60 s, it is confirmed, the money held meanwhile', {
  timeout: 300_000,
}, async () => {
  const sale = await sweptSaleRefund('1');
  const { page, wallet } = await walletPage(sale.paymentId);
  wallet.mode = 'hold';
  wallet.lifetime = { ownSeconds: 300 };
  const item = page.locator(`#treasury-${sale.refund.id}`);
  const sign = item.getByRole('button', { name: 'Sign with your wallet' });
  await sign.click();
  await chooseWallet(page);
  // The request reached the wallet; the owner closes TON Connect's "confirm in your wallet" dialog.
  for (let i = 0; i < 200 && wallet.held() === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(wallet.held(), 1);
  const dialog = page.locator('#tc-widget-root [data-tc-confirm-modal="true"]');
  await dialog.waitFor({ timeout: 10_000 });
  await page.locator('#tc-widget-root button[data-tc-icon-button="true"]').last().click();
  await item.getByText('The request is already in a wallet').waitFor({ timeout: 10_000 });
  assert.match(await item.locator('.sign-status').innerText(), /Do not send it again — a second request would pay the customer twice/);
  assert.equal(await sign.isDisabled(), true);
  // A reload offers no new request either: the server says it is in a wallet.
  await page.reload();
  await page.waitForFunction(() => customElements.get('tc-root') !== undefined, undefined, { timeout: 10_000 });
  await item.getByText('The request is already in a wallet').waitFor({ timeout: 10_000 });
  assert.equal(await sign.count(), 0);
  assert.equal(wallet.requests.length, 1);

  // The owner approves in the wallet just before validUntil; its message (valid 300 s from then) lands 90 s after validUntil.
  const validUntil = sale.refund.tonconnect.validUntil as number;
  await app.advanceChain(validUntil - 20 - app.sandbox.chain.now);
  await wallet.approve({ landLater: true });
  await app.advanceChain(validUntil + 90 - app.sandbox.chain.now);
  const [held] = await outgoingOfPayment(app.pool, sale.paymentId, 'refund');
  assert.equal(held?.state, 'awaiting_signature');
  const again = await app.request('POST', `/v1/payments/${sale.paymentId}/refunds`, {
    token: store.token,
    body: { coin: 'TON', amount: '0.1', address: sale.customer, from: 'treasury' },
  });
  assert.equal(again.status, 400, again.text);
  assert.equal(again.json.error.code, 'refund_exceeds_balance');
  await wallet.land();
  await app.settle();
  const [refund] = await outgoingOfPayment(app.pool, sale.paymentId, 'refund');
  assert.equal(refund?.state, 'confirmed');
  assert.equal(app.arrived(sale.customer, treasury), toNano('1'));
  assert.equal(wallet.requests.length, 1);
  await page.close();
});

it("a wallet other than the treasury connected: the page says so and asks it nothing; reconnected to the treasury's, a refusal in the wallet frees the request, and it is signed once", {
  timeout: 300_000,
}, async () => {
  const sale = await sweptSaleRefund('0.3');
  const { page, wallet } = await walletPage(sale.paymentId);
  const other = (await app.request('POST', '/sandbox/v1/wallets')).json.address;
  await wallet.connectAs(other);
  const item = page.locator(`#treasury-${sale.refund.id}`);
  const sign = item.getByRole('button', { name: 'Sign with your wallet' });
  await sign.click();
  await chooseWallet(page);
  await item.getByText("is not the store's treasury").waitFor({ timeout: 10_000 });
  const said = await item.locator('.sign-status').innerText();
  assert.match(said, new RegExp(`\\(${friendlyAddress(Address.parse(treasury), 'sandbox')}\\)`));
  assert.equal(wallet.requests.length, 0);
  assert.equal(await sign.isDisabled(), false);

  // The treasury's wallet connected instead; the owner declines in the wallet: nothing sent, it may be signed again.
  await wallet.connectAs(treasury);
  wallet.mode = 'reject';
  await item.getByRole('button', { name: "Disconnect it and connect the treasury's wallet" }).click();
  await chooseWallet(page);
  // The refusal is reported to the server, which frees the request: only then is Sign offered again.
  await item.getByText('Your wallet declined it: nothing was sent. You can sign it again.').waitFor({ timeout: 10_000 });
  const [freed] = await outgoingOfPayment(app.pool, sale.paymentId, 'refund');
  assert.equal(freed?.request_sent_at, null);
  assert.equal(wallet.requests.length, 1);
  assert.equal(await sign.isDisabled(), false);
  wallet.mode = 'sign';
  await sign.click();
  await item.getByText('Signed and sent from your wallet').waitFor({ timeout: 15_000 });
  assert.equal(wallet.requests.length, 2);
  await app.settle();
  const [refund] = await outgoingOfPayment(app.pool, sale.paymentId, 'refund');
  assert.equal(refund?.state, 'confirmed');
  assert.equal(app.arrived(sale.customer, treasury), toNano('0.3'));
  assert.equal(app.arrived(sale.customer, other), 0n);
  await page.close();
});
