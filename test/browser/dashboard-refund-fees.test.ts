// Money for refund fees added from the owner's wallet (issue 47 item 3) in real headless Chromium,
// at a phone's width (375 px) and a desktop's (1280 px), axe on each page: a new store that takes
// USDT lands on a home page that does not open on refund fees; on the Money page the owner asks for
// a top-up, and the page asks their wallet — a sandbox wallet injected through TON Connect's
// injected-wallet protocol (test/helpers/tonconnectWallet.ts), through the page's real
// @tonconnect/ui — to send it to Kassa's fee wallet with the top-up's reference; the chain reader
// books it, and the page shows the balance and how many USDT refunds it pays for.
//
// If Chromium cannot be launched this file FAILS (it never skips).
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { Cell, toNano } from '@ton/core';
import type { Browser, Page } from 'playwright-core';
import { commentOf } from '../../src/chain/detect.ts';
import { sql, z } from '../../src/db/pool.ts';
import { storeRefundGas } from '../../src/treasury/gas.ts';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { chromiumBrowser } from '../helpers/chromium.ts';
import { invitationPath } from '../helpers/dashboard.ts';
import { assertPageFits, type BrowserPage, joinByInvitation, openPage } from '../helpers/dashboardBrowser.ts';
import { injectTestWallet, TEST_WALLET_NAME } from '../helpers/tonconnectWallet.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/dashboard-refund-fees');

let app: ChainTestApp;
let browser: Browser;
let owner: BrowserPage;
let store: Awaited<ReturnType<ChainTestApp['store']>>;

before(async () => {
  browser = await chromiumBrowser();
  app = await startChainApp();
  app.clock.follow(() => new Date(Math.max(Date.now(), app.sandbox.chain.now * 1000)));
  store = await app.store({ name: 'Tea Room', methods: 'TON/TON,USDT/TON' });
  owner = await openPage(browser);
});
after(async () => {
  await browser?.close();
  await app?.close();
});

/** What the console may say beyond the page's own doing, all from @tonconnect/ui (as dashboard-treasury-refund.test.ts says). */
const ownProblems = (problems: string[]) =>
  problems.filter(
    (p) =>
      !/raw\.githubusercontent\.com\/ton-connect\/sdk\//.test(p) &&
      !/ERR_NAME_NOT_RESOLVED|ERR_INTERNET_DISCONNECTED|TON_CONNECT_SDK_ERROR\] \w+\nAborted after attempts/.test(p) &&
      !/status of 404 \(Not Found\) \(http:\/\/127\.0\.0\.1:\d+\/dashboard\/stores\/[^)]*\/undefined\)$/.test(p),
  );

async function chooseWallet(page: Page) {
  const modal = page.locator('#tc-widget-root');
  const entry = modal.getByText(TEST_WALLET_NAME, { exact: true }).first();
  await entry.waitFor({ timeout: 10_000 });
  await entry.click();
  const extension = modal.getByRole('button', { name: /Browser Extension/ });
  await extension.waitFor({ timeout: 20_000 });
  await extension.click();
}

it('the owner adds money for refund fees from their wallet through TON Connect (375 px and 1280 px, axe): booked on arrival, the balance and the USDT refunds it pays for shown', {
  timeout: 300_000,
}, async () => {
  const { page } = owner;
  const from = (await app.request('POST', '/sandbox/v1/wallets')).json.address;
  const wallet = await injectTestWallet(page, app, { address: from });
  await joinByInvitation(page, app.url, store.id, await invitationPath(app.pool, store.id, 'owner@tearoom.example', 'owner'), 'a long dashboard password');
  // A new store that takes USDT and has refunded none: its home page does not open on refund fees.
  assert.equal(await page.locator('#attention-gas').count(), 0);
  assert.doesNotMatch(await page.locator('main').innerText(), /refund fee/i);

  await page.goto(`${app.url}/dashboard/stores/${store.id}/money`);
  const section = page.locator('#refund-fees');
  await section.getByRole('heading', { name: 'Money for refund fees' }).waitFor();
  assert.match(await page.locator('#refund-fees-balance').innerText(), /^0 GRAM left: not enough for a refund in USDT/);
  assert.doesNotMatch(await section.innerText(), /\bgas\b|jetton|operator/i);
  await assertPageFits(page, 'Money page, no money for refund fees yet (375 px)', ARTIFACTS);
  const amount = page.getByLabel('Amount to add (GRAM)');
  assert.equal(await amount.inputValue(), '0.6');
  await amount.fill('0,12');
  await section.getByRole('button', { name: 'Add money for refund fees' }).click();
  await page.getByText('Top-up asked: send it from your wallet below.').waitFor();
  await page.waitForFunction(() => customElements.get('tc-root') !== undefined, undefined, { timeout: 10_000 });
  const topUp = await app.pool.one(sql.type(z.object({ id: z.string(), reference: z.string() }))`
    select id, reference from refund_fee_top_ups where store_id = ${store.id}
  `);
  const item = page.locator(`#top-up-${topUp.id}`);
  assert.match(await item.innerText(), /Not arrived yet/);
  assert.match(await item.innerText(), new RegExp(topUp.reference));
  await assertPageFits(page, 'Money page with a top-up to send (375 px)', ARTIFACTS);

  // Sent at a desktop's width (at a phone's TON Connect's list sends the owner to the wallet's app, which this machine has not).
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.reload();
  await page.waitForFunction(() => customElements.get('tc-root') !== undefined, undefined, { timeout: 10_000 });
  await assertPageFits(page, 'Money page with a top-up to send (1280 px)', ARTIFACTS);
  await item.getByRole('button', { name: 'Send 0.12 GRAM from your wallet' }).click();
  await chooseWallet(page);
  await item.getByText('Sent from your wallet').waitFor({ timeout: 15_000 });
  assert.equal(wallet.requests.length, 1);
  const [request] = wallet.requests;
  assert.equal(request.messages.length, 1);
  assert.equal(request.messages[0].amount, toNano('0.12').toString());
  assert.equal(commentOf(Cell.fromBase64(request.messages[0].payload)), topUp.reference);

  await app.settle();
  assert.equal((await storeRefundGas(app.pool, store.id)).available, toNano('0.12'));
  await page.reload();
  assert.match(await page.locator('#refund-fees-balance').innerText(), /^0\.12 GRAM left: enough for about 2 refunds in USDT \(each uses about 0\.06 GRAM\)/);
  assert.match(await item.innerText(), /It arrived:\s*0\.12 GRAM arrived/);
  assert.equal(await item.getByRole('button', { name: /Send/ }).count(), 0);
  await assertPageFits(page, 'Money page after the top-up arrived (1280 px)', ARTIFACTS);
  await page.setViewportSize({ width: 375, height: 812 });
  await assertPageFits(page, 'Money page after the top-up arrived (375 px)', ARTIFACTS);
  assert.deepEqual(ownProblems(owner.problems), []);
});
