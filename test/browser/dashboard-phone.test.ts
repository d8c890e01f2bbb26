// The dashboard on a phone (issue 32 outcome 3), in real headless Chromium at 375 × 667 against the
// real app, real Postgres and the sandbox chain: every page — sign-in, an invitation, the stores,
// payments, a payment, Money, Webhooks, API tokens, Team, Audit log, Settings, Password, Passkeys,
// a not-found page — fits the screen (no sideways scroll, nothing reaching past a card's edge) and
// axe-core finds no serious violation; the navigation folds behind a menu button that works with
// the keyboard; the payments list's filters fold; lists are cards; ids are shortened with a copy
// button; a payment page's actions begin within two screens. `/dashboard`, with or without its
// slash, leads to sign-in or to the store. Screenshots go to test-artifacts/dashboard-phone/.
//
// If Chromium cannot be launched this file FAILS (it never skips).
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Address } from '@ton/core';
import type { Browser, Page } from 'playwright-core';
import { freshAddress, overpaidTonPayment, startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { chromiumBrowser } from '../helpers/chromium.ts';
import { invitationPath } from '../helpers/dashboard.ts';
import { assertPageFits, type BrowserPage, joinByInvitation, openPage } from '../helpers/dashboardBrowser.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/dashboard-phone');
const PASSWORD = 'a long dashboard password';
const PHONE = { width: 375, height: 667 };

let app: ChainTestApp;
let store: Awaited<ReturnType<ChainTestApp['store']>>;
let browser: Browser;
let owner: BrowserPage;

before(async () => {
  browser = await chromiumBrowser({ ownClipboard: true }); // the copied text is read back from the clipboard
  app = await startChainApp({ WEBHOOK_ALLOW_INSECURE: 'true' });
  store = await app.store({ name: 'Corner Shop on a Phone', methods: 'TON/TON,USDT/TON' });
  owner = await openPage(browser, PHONE, ['clipboard-read', 'clipboard-write']);
});
after(async () => {
  await browser?.close();
  await app?.close();
});

const fits = (page: Page, what: string): Promise<void> => assertPageFits(page, what, ARTIFACTS);

/** A payment of 1 TON paid with 1.5 TON (0.5 refundable), booked by the chain reader; its webhook fails (nothing listens). */
const overpaidPayment = (orderId: string): Promise<any> =>
  overpaidTonPayment(app, store.token, { order_id: orderId, description: 'Two flat whites and a croissant, table by the window' });

describe('the dashboard on a phone (375 px) in headless Chromium', () => {
  let payment: any;

  it('/dashboard and /dashboard/ lead to sign-in when signed out; the sign-in and invitation pages fit', async () => {
    const visitor = await openPage(browser, PHONE);
    for (const address of ['/dashboard', '/dashboard/']) {
      const response = await visitor.page.goto(`${app.url}${address}`);
      assert.equal(response?.status(), 200, address);
      assert.match(visitor.page.url(), /\/dashboard\/sign-in\?next=/, address);
      assert.equal(await visitor.page.locator('h1').innerText(), 'Sign in');
    }
    await fits(visitor.page, 'sign-in');
    await visitor.page.goto(`${app.url}${await invitationPath(app.pool, store.id, 'owner@phone.example', 'owner')}`);
    await fits(visitor.page, 'invitation');
    assert.deepEqual(visitor.problems, []);
    await visitor.context.close();
  });

  it('the owner joins; /dashboard and /dashboard/ lead to the store; the menu folds and works with the keyboard', async () => {
    const { page } = owner;
    await joinByInvitation(page, app.url, store.id, await invitationPath(app.pool, store.id, 'owner@phone.example', 'owner'), PASSWORD);
    for (const address of ['/dashboard', '/dashboard/']) {
      await page.goto(`${app.url}${address}`);
      assert.equal(page.url(), `${app.url}/dashboard/stores/${store.id}`, address);
    }
    const button = page.locator('.menu-button');
    const nav = page.getByRole('navigation', { name: 'Store' });
    assert.equal(await button.isVisible(), true);
    assert.equal(await button.getAttribute('aria-expanded'), 'false');
    assert.equal(await nav.isVisible(), false, 'the navigation is folded');
    const header = await page.locator('header.top').boundingBox();
    assert.ok(header && header.height < 80, `the header is one line (${header?.height} px)`);

    await button.focus();
    await page.keyboard.press('Enter');
    assert.equal(await button.getAttribute('aria-expanded'), 'true');
    assert.equal(await nav.isVisible(), true);
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Home');
    await fits(page, 'menu open');
    await page.keyboard.press('Escape');
    assert.equal(await button.getAttribute('aria-expanded'), 'false');
    assert.equal(await nav.isVisible(), false);
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('menu-button')), true, 'Escape gives the button the focus');
  });

  it('payments: filters folded, the list as cards, ids shortened with a copy button', async () => {
    const { page } = owner;
    payment = await overpaidPayment('PHONE-ORDER-0001');
    await overpaidPayment('PHONE-ORDER-0002');
    await app.settle();
    await page.goto(`${app.url}/dashboard/stores/${store.id}/payments`);
    assert.equal(await page.locator('details.more-filters').getAttribute('open'), null, 'the filters are folded');
    assert.equal(await page.locator('#status').isVisible(), false);
    assert.equal(await page.locator('#q').isVisible(), true, 'the search stays');
    await page.locator('details.more-filters summary').click();
    assert.equal(await page.locator('#status').isVisible(), true);

    const row = page.locator('#payments tbody tr').first();
    assert.equal(await page.locator('#payments table').getAttribute('class'), 'cards');
    const display = await row.evaluate((tr) => window.getComputedStyle(tr).display);
    assert.equal(display, 'block', 'a row is a card');
    assert.match(await row.locator('td').nth(1).getAttribute('data-label').then(String), /Status/);
    const id = row.locator('.copyable .mono');
    const shown = await id.evaluate((a) => ({ client: a.clientWidth, scroll: a.scrollWidth, text: a.textContent }));
    assert.ok(shown.client < shown.scroll, 'the id is shortened on screen');
    assert.match(shown.text ?? '', /^[0-9a-f-]{36}$/, 'the whole id stays in the page');
    const copy = row.locator('button.copy');
    assert.equal(await copy.isVisible(), true);
    await copy.click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), shown.text);
    await fits(page, 'payments');
  });

  it("a payment's page: what happened, money, actions, then the books; the actions within two screens", async () => {
    const { page } = owner;
    await page.goto(`${app.url}/dashboard/stores/${store.id}/payments/${payment.id}`);
    const headings = await page.locator('main section > h2').allInnerTexts();
    const order = ['Summary', 'Timeline', 'Money', 'Refund', 'Webhook deliveries', 'The books'];
    assert.deepEqual(
      headings.filter((h) => order.includes(h)),
      order,
    );
    const refund = await page.locator('#refund-heading').evaluate((h) => h.getBoundingClientRect().top + window.scrollY);
    const heights = await page
      .locator('main > *')
      .evaluateAll((elements) =>
        elements.map(
          (e) => `${e.tagName}${e.id ? `#${e.id}` : ''} ${e.querySelector('h2')?.textContent ?? ''} ${Math.round(e.getBoundingClientRect().height)}`,
        ),
      );
    assert.ok(refund <= 2 * PHONE.height, `the actions begin ${Math.round(refund)} px from the top (at most ${2 * PHONE.height}): ${heights.join(', ')}`);
    await fits(page, 'payment');

    // The refund's confirmation (the first post of the form) fits too.
    await page.fill('#refund-amount', '0.1');
    await page.fill('#refund-address', Address.parse(freshAddress()).toString({ bounceable: false, testOnly: true }));
    await page.click('#refund-amount >> xpath=ancestor::form//button[@type="submit"]');
    await page.locator('#refund-confirm').waitFor();
    await fits(page, 'payment refund confirmation');
  });

  it('Money, Webhooks, API tokens, Team, Audit log, Settings, Password, Passkeys, the stores and a not-found page fit', async () => {
    const { page } = owner;
    const at = `${app.url}/dashboard/stores/${store.id}`;
    await page.goto(`${at}/tokens`);
    await page.fill('#token-name', 'the shop backend on a small screen');
    await page.click('#token-name >> xpath=ancestor::form//button[@type="submit"]');
    await page.locator('#new-token').waitFor();
    for (const [address, what] of [
      [`${at}/money`, 'money'],
      [`${at}/webhooks`, 'webhooks'],
      [`${at}/tokens`, 'tokens'],
      [`${at}/team`, 'team'],
      [`${at}/audit`, 'audit log'],
      [`${at}/settings`, 'settings'],
      [`${app.url}/dashboard/password`, 'password'],
      [`${app.url}/dashboard/passkeys`, 'passkeys'],
      [`${at}/payments/00000000-0000-4000-8000-000000000000`, 'not found'],
    ] as const) {
      await page.goto(address);
      await fits(page, what);
    }

    // A second store: the stores page.
    const second = await app.store({ name: 'A Second Shop With a Rather Long Name' });
    await page.goto(`${app.url}${await invitationPath(app.pool, second.id, 'owner@phone.example', 'viewer')}`);
    await page.click('form button[type=submit]');
    await page.waitForURL(`${app.url}/dashboard/stores/${second.id}`);
    await page.goto(`${app.url}/dashboard/`);
    assert.equal(await page.locator('h1').innerText(), 'Your stores');
    await fits(page, 'stores');
    assert.deepEqual(
      owner.problems.filter((problem) => !problem.includes('status of 404')),
      [],
      'no CSP violation or script error (the 404 is the not-found page above)',
    );
  });

  it('at a desktop width the navigation and the filters are open, with no menu button', async () => {
    const desk = await openPage(browser, { width: 1280, height: 900 });
    await joinByInvitation(desk.page, app.url, store.id, await invitationPath(app.pool, store.id, 'viewer@phone.example', 'viewer'), PASSWORD);
    await desk.page.goto(`${app.url}/dashboard/stores/${store.id}/payments`);
    assert.equal(await desk.page.locator('.menu-button').isVisible(), false);
    assert.equal(await desk.page.getByRole('navigation', { name: 'Store' }).isVisible(), true);
    assert.notEqual(await desk.page.locator('details.more-filters').getAttribute('open'), null);
    assert.equal(
      await desk.page
        .locator('#payments tbody tr')
        .first()
        .evaluate((tr) => window.getComputedStyle(tr).display),
      'table-row',
    );
    await desk.context.close();
  });
});
