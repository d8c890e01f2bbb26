// The dashboard's Subscriptions pages in real headless Chromium against the real app, Postgres and
// the sandbox chain (issue 45): at 375 px an owner finds Subscriptions in the store's navigation,
// makes a plan (a refused price first, beside its field), subscribes a customer (no trial: the first
// period's payment is opened at once), copies the customer's portal link, adds credit with a note
// (the period is charged from it: the history shows both), cancels at the period's end, then now;
// the same pages at 1280 px. axe-core finds no serious violation and no page scrolls sideways.
// Screenshots go to test-artifacts/dashboard-subscriptions/. If Chromium cannot be launched this file FAILS.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { sql, z } from '../../src/db/pool.ts';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { chromiumBrowser } from '../helpers/chromium.ts';
import { invitationPath } from '../helpers/dashboard.ts';
import { assertPageFits, joinByInvitation, openPage } from '../helpers/dashboardBrowser.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/dashboard-subscriptions');
const PASSWORD = 'a long dashboard password';

let app: ChainTestApp;
let store: Awaited<ReturnType<ChainTestApp['store']>>;
let browser: Browser;

before(
  async () => {
    browser = await chromiumBrowser({ ownClipboard: true }); // the copied portal link is read back from the clipboard
    app = await startChainApp();
    store = await app.store({ name: 'Night VPN', methods: 'TON/TON' });
  },
  { timeout: 600_000 },
);
after(async () => {
  await browser?.close();
  await app?.close();
});

const check = (page: Page, what: string): Promise<void> => assertPageFits(page, what, ARTIFACTS);

describe('the dashboard’s Subscriptions', { timeout: 600_000 }, () => {
  it('at 375 px an owner makes a plan, subscribes a customer, copies the portal link, adds credit, reads the history, cancels; at 1280 px the pages fit', {
    timeout: 300_000,
  }, async () => {
    const owner = await openPage(browser, { width: 375, height: 812 }, ['clipboard-read', 'clipboard-write']);
    const { page } = owner;
    await joinByInvitation(page, app.url, store.id, await invitationPath(app.pool, store.id, 'owner@nightvpn.example', 'owner'), PASSWORD);
    // At phone width the store's menu is folded: go by the nav link's own address.
    await page.goto(`${app.url}${await page.locator('nav[aria-label="Store"] a[href$="/subscriptions"]').getAttribute('href')}`);
    assert.equal(await page.locator('h1').innerText(), 'Subscriptions');
    assert.equal(await page.locator('#no-plans').count(), 1, 'a plan comes first');
    await check(page, 'subscriptions without a plan');

    // A plan: a price the coin cannot hold is refused beside its field, what was typed kept.
    await page.getByRole('navigation', { name: 'Subscriptions' }).getByRole('link', { name: 'Plans' }).click();
    await page.waitForURL(/\/plans$/);
    assert.equal((await page.locator('#currency option[value="TON"]').innerText()).trim(), 'Gram (GRAM)');
    await page.fill('#name', 'VPN monthly');
    await page.fill('#amount', '2.0000000001');
    await page.selectOption('#currency', 'TON');
    await page.fill('#trialDays', '0');
    await page.click('#new-plan button[type=submit]');
    assert.ok((await page.locator('#amount-problem').innerText()).length > 0);
    assert.equal(await page.locator('#name').inputValue(), 'VPN monthly');
    await check(page, 'plans with a refused plan');
    await page.fill('#amount', '2');
    await page.click('#new-plan button[type=submit]');
    await page.waitForURL(/\/plans\?notice=plan_created$/);
    assert.match(await page.locator('#plans tbody tr').innerText(), /VPN monthly[\s\S]*2 GRAM[\s\S]*every month/);
    await check(page, 'plans with a plan');

    // A subscription without a trial: its first period is asked for at once.
    await page.getByRole('navigation', { name: 'Subscriptions' }).getByRole('link', { name: 'Subscriptions' }).click();
    await page.fill('#reference', 'tg-1001');
    await page.fill('#email', 'ana@customer.example');
    await page.click('#new-subscription button[type=submit]');
    // Its page at once (not a redirect: the portal link is shown this once).
    await page.locator('#portal-url').waitFor();
    const id = /\/subscriptions\/([0-9a-f-]{36})\/portal$/.exec((await page.locator('#reissue-portal').getAttribute('action'))!)![1]!;
    assert.equal(await page.locator('#subscription-status').innerText(), 'Waiting for payment');
    assert.equal(await page.locator('#subscription-payments tbody tr').count(), 1, 'its first payment');
    assert.match(await page.locator('#subscription-payments tbody tr').innerText(), /VPN monthly[\s\S]*2 GRAM/);
    await check(page, 'a new subscription');

    // The portal link, copied.
    const portal = await page.locator('#portal-url').inputValue();
    const hash = await app.pool.oneFirst(
      sql.type(z.object({ hash: z.string() }))`select encode(portal_token_hash, 'hex') as hash from subscriptions where id = ${id}`,
    );
    assert.equal(createHash('sha256').update(portal.split('/s/')[1]!).digest('hex'), hash, portal);
    await page.getByRole('button', { name: 'Copy the link' }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), portal);

    // Credit with a note: the period is charged from it; the history says both in words.
    await page.fill('#amount', '2');
    await page.fill('#note', 'Paid by bank transfer');
    await page.click('#add-credit button[type=submit]');
    await page.waitForURL(/notice=credit_added$/);
    assert.equal(await page.locator('#subscription-status').innerText(), 'Paid');
    assert.match(await page.locator('#subscription-period').innerText(), /^Paid until \d{4}-/);
    const history = await page.locator('#subscription-history tbody tr').allInnerTexts();
    assert.equal(history.length, 2, history.join(' | '));
    assert.match(history[0]!, /Credit added by owner@nightvpn\.example[\s\S]*Paid by bank transfer[\s\S]*\+2 GRAM[\s\S]*2 GRAM/);
    assert.match(history[1]!, /Period charged: \d{4}-[\s\S]* to \d{4}-[\s\S]*−2 GRAM[\s\S]*0 GRAM/);
    await check(page, 'a subscription with its history');

    // Cancel at the period's end, then now.
    await page.check('#when-period-end');
    await page.click('#cancel-subscription button[type=submit]');
    await page.waitForURL(/notice=cancel_at_period_end$/);
    assert.match(await page.locator('#subscription-period').innerText(), /then it ends$/);
    await page.check('#when-now');
    await page.click('#cancel-subscription button[type=submit]');
    await page.waitForURL(/notice=cancelled$/);
    assert.equal(await page.locator('#subscription-status').innerText(), 'Cancelled');
    assert.equal(await page.locator('#cancel-subscription').count(), 0, 'nothing left to cancel');
    await check(page, 'a cancelled subscription');
    await page.goto(`${app.url}/dashboard/stores/${store.id}/subscriptions?status=cancelled`);
    assert.match(await page.locator('#subscriptions tbody tr').innerText(), /tg-1001[\s\S]*VPN monthly[\s\S]*Cancelled/);
    await check(page, 'subscriptions, cancelled ones');
    assert.deepEqual(owner.problems, []);
    await owner.context.close();

    // The same pages on a desktop.
    const wide = await openPage(browser, { width: 1280, height: 900 });
    await joinByInvitation(wide.page, app.url, store.id, await invitationPath(app.pool, store.id, 'second@nightvpn.example', 'owner'), PASSWORD);
    for (const [address, what] of [
      [`/dashboard/stores/${store.id}/subscriptions`, 'subscriptions at 1280 px'],
      [`/dashboard/stores/${store.id}/plans`, 'plans at 1280 px'],
      [`/dashboard/stores/${store.id}/subscriptions/${id}`, 'a subscription at 1280 px'],
    ] as const) {
      await wide.page.goto(`${app.url}${address}`);
      await check(wide.page, what);
    }
    assert.deepEqual(wide.problems, []);
    await wide.context.close();
  });
});
