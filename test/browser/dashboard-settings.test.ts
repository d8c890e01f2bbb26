// The dashboard's Store settings in real headless Chromium (Debian's `chromium`, driven by
// playwright-core) against the real app and Postgres, at a phone's width (375 px): an owner's
// preview follows the typing (the page's script, under the dashboard's CSP), each setting saved is
// what the hosted checkout shows, a bad treasury is a message on the form and changes nothing, and a
// viewer sees the settings read-only. axe-core finds no serious violation and no page scrolls
// sideways. Screenshots go to test-artifacts/dashboard/ (git-ignored).
//
// If Chromium cannot be launched this file FAILS (it never skips).
import assert from 'node:assert/strict';
import { Address } from '@ton/core';
import { friendlyAddress } from '../../src/chain/addresses.ts';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { findStore } from '../../src/stores/stores.ts';
import type { TestApp } from '../helpers/app.ts';
import type { Role } from '../../src/dashboard/roles.ts';
import { chromiumBrowser } from '../helpers/chromium.ts';
import { invitationPath } from '../helpers/dashboard.ts';
import { assertAccessible, assertNoHorizontalScroll, clickInMenu, openPage } from '../helpers/dashboardBrowser.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/dashboard');
const PASSWORD = 'a long dashboard password';
const PHONE = { width: 375, height: 740 };

let app: TestApp;
let store: Awaited<ReturnType<TestApp['store']>>;
let browser: Browser;

before(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  browser = await chromiumBrowser();
  app = await startPaymentsApp();
  store = await app.store({ name: 'Harbour Books', methods: 'TON/TON' });
});
after(async () => {
  await browser?.close();
  await app?.close();
});

/** A member signed in through their invitation, on a phone-sized page that records console errors and CSP violations. */
async function signedIn(email: string, role: Role): Promise<{ page: Page; problems: string[] }> {
  const { page, problems } = await openPage(browser, PHONE);
  await page.goto(`${app.url}${await invitationPath(app.pool, store.id, email, role)}`);
  await page.fill('#password', PASSWORD);
  await page.fill('#confirm', PASSWORD);
  await Promise.all([page.waitForURL(new RegExp(`/stores/${store.id}$`)), page.click('button[type=submit]')]);
  return { page, problems };
}

/** axe-core (no serious or critical violation), no sideways scroll at the phone's width, and a screenshot. */
async function assertUsable(page: Page, what: string): Promise<void> {
  await assertNoHorizontalScroll(page, what);
  await assertAccessible(page, `settings ${what}`, ARTIFACTS);
}

/** A new payment's hosted checkout, in the owner's browser. */
async function openCheckout(page: Page): Promise<void> {
  const created = await app.request('POST', '/v1/payments', { token: store.token, body: { amount: '10.50', currency: 'USD' } });
  assert.equal(created.status, 201, created.text);
  await page.goto(`${app.url}/pay/${created.json.id}`);
}

describe('dashboard in Chromium: store settings', () => {
  it('an owner previews as they type, saves each setting and sees it on the checkout; a bad treasury is refused with a message', async () => {
    const { page, problems } = await signedIn('owner@harbour.example', 'owner');
    const settings = `${app.url}/dashboard/stores/${store.id}/settings`;
    await clickInMenu(page, 'nav[aria-label="Store"] >> text=Settings');
    await page.waitForURL(settings);
    await assertUsable(page, 'owner');

    // The preview follows the typing; nothing is saved by it.
    await page.fill('#settings-display-name', 'Harbour Books & Maps');
    await page.fill('#settings-accent-color', '#2e7d32');
    await page.waitForFunction(() => document.getElementById('preview-name')?.textContent === 'Harbour Books & Maps');
    await page.waitForFunction(() => getComputedStyle(document.getElementById('preview-button')!).backgroundColor === 'rgb(46, 125, 50)');
    assert.equal((await findStore(app.pool, store.id))!.displayName, null);

    // Saved: the checkout shows the display name and the colour.
    await Promise.all([page.waitForURL(/settings\?saved=appearance$/), page.click('button[value=save]')]);
    assert.match((await page.textContent('p.success')) ?? '', /Appearance saved/);
    assert.equal(await page.inputValue('#settings-display-name'), 'Harbour Books & Maps');
    await openCheckout(page);
    assert.equal(await page.textContent('#store-name'), 'Harbour Books & Maps');
    assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('.card')!).borderTopColor), 'rgb(46, 125, 50)');
    assert.equal(await page.locator('button.method[data-coin="TON"]').count(), 1);
    assert.equal(await page.locator('button.method[data-coin="USDT"]').count(), 0);

    // Methods: USDT on, TON off — the checkout offers USDT only.
    await page.goto(settings);
    await page.check('#method-USDT-TON');
    await page.uncheck('#method-TON-TON');
    await Promise.all([page.waitForURL(/saved=methods$/), page.click('text=Save methods')]);
    await openCheckout(page);
    assert.equal(await page.locator('button.method[data-coin="USDT"]').count(), 1);
    assert.equal(await page.locator('button.method[data-coin="TON"]').count(), 0);

    // A masterchain treasury: the form says why, keeps what was typed, nothing is changed.
    await page.goto(settings);
    const masterchain = `-1:${'ab'.repeat(32)}`;
    await page.fill('#settings-treasury', masterchain);
    await page.click('text=Check this wallet');
    await page.waitForSelector('#treasury-problem');
    assert.match((await page.textContent('#treasury-problem')) ?? '', /Kassa cannot send the store's money to this address/);
    assert.equal(await page.getAttribute('#settings-treasury', 'aria-invalid'), 'true');
    assert.equal(await page.inputValue('#settings-treasury'), masterchain);
    await assertUsable(page, 'owner-refused-treasury');
    assert.equal((await findStore(app.pool, store.id))!.treasury, null);
    // A basechain one is shown back as the owner's wallet writes it, and saved once confirmed.
    const treasury = `0:${'cd'.repeat(32)}`;
    await page.fill('#settings-treasury', treasury);
    await page.click('text=Check this wallet');
    await page.waitForSelector('#treasury-confirm');
    assert.equal(await page.textContent('#treasury-confirm-address'), friendlyAddress(Address.parseRaw(treasury), 'sandbox'));
    await assertUsable(page, 'owner-confirm-treasury');
    assert.equal((await findStore(app.pool, store.id))!.treasury, null);
    await Promise.all([page.waitForURL(/saved=treasury$/), page.click('text=Yes, this is my wallet: save it')]);
    assert.equal((await findStore(app.pool, store.id))!.treasury, treasury);

    // The audit log shows each change.
    await clickInMenu(page, 'nav[aria-label="Store"] >> text=Audit log');
    const actions = await page.locator('#audit td.action').evaluateAll((cells) => cells.map((cell) => cell.getAttribute('data-action')));
    assert.deepEqual(actions.slice(0, 3), ['treasury.change', 'store.update', 'store.update']);
    await assertUsable(page, 'audit-after-settings');
    assert.deepEqual(problems, []);
  });

  it('a viewer sees the settings read-only, with the preview', async () => {
    const { page, problems } = await signedIn('viewer@harbour.example', 'viewer');
    await page.goto(`${app.url}/dashboard/stores/${store.id}/settings`);
    assert.equal(await page.locator('main form').count(), 0);
    assert.match((await page.textContent('main')) ?? '', /Only the store's owners can change these/);
    assert.equal(await page.textContent('#preview-name'), 'Harbour Books & Maps');
    await assertUsable(page, 'viewer');
    assert.deepEqual(problems, []);
  });
});
