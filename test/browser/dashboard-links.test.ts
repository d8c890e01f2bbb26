// The dashboard's Payment links pages in real headless Chromium at phone width (375 px) against the
// real app, Postgres and the sandbox chain (issue 30): an owner makes a link (a refused limit first),
// copies it; a customer opens it, pays on the sandbox chain, and the link's page shows that payment;
// the owner makes a one-off payment and gets its link and QR code to share. axe-core finds no serious
// violation and no page scrolls sideways. Screenshots go to test-artifacts/dashboard-links/.
// If Chromium cannot be launched this file FAILS.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { sql, z } from '../../src/db/pool.ts';
import type { TestApp } from '../helpers/app.ts';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { chromiumBrowser } from '../helpers/chromium.ts';
import { invitationPath } from '../helpers/dashboard.ts';
import { assertPageFits, joinByInvitation, openPage } from '../helpers/dashboardBrowser.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/dashboard-links');
const PASSWORD = 'a long dashboard password';

let app: ChainTestApp;
let store: Awaited<ReturnType<TestApp['store']>>;
let browser: Browser;

// Chromium and the sandbox chain start slowly on a loaded machine.
before(
  async () => {
    browser = await chromiumBrowser({ ownClipboard: true }); // the copied link is read back from the clipboard
    app = await startChainApp({}, { baseUrlHost: '127.0.0.1' }); // the links' URLs name the port the app listens on
    store = await app.store({ name: 'Corner Café', methods: 'TON/TON' });
  },
  { timeout: 600_000 },
);
after(async () => {
  await browser?.close();
  await app?.close();
});

const check = (page: Page, what: string): Promise<void> => assertPageFits(page, what, ARTIFACTS);

// One journey through two browsers and the sandbox chain: minutes on a loaded machine.
describe('the dashboard’s Payment links', { timeout: 600_000 }, () => {
  it('an owner makes a link; a customer opens it and pays on the sandbox chain; the link’s page shows the payment; a one-off payment to share', {
    timeout: 300_000,
  }, async () => {
    const owner = await openPage(browser, { width: 375, height: 812 }, ['clipboard-read', 'clipboard-write']);
    const customer = await openPage(browser);
    try {
      const { page } = owner;
      await joinByInvitation(page, app.url, store.id, await invitationPath(app.pool, store.id, 'owner@corner.example', 'owner'), PASSWORD);
      // At phone width the store's menu is folded (the phone layout): go by the nav link's own address.
      await page.goto(`${app.url}${await page.locator('nav a[href$="/links"]').getAttribute('href')}`);
      assert.equal(await page.locator('#no-links').count(), 1);
      await check(page, 'links without links');

      // A price more precise than the coin is refused by the API's own command, beside its field, the form kept.
      await page.fill('#link-amount', '1.0000000001');
      // The native coin by its new name (issue 47 item 8); the form still sends TON.
      assert.equal((await page.locator('#link-currency option[value="TON"]').innerText()).trim(), 'Gram (GRAM)');
      await page.selectOption('#link-currency', 'TON');
      await page.fill('#link-description', 'Breakfast for two');
      await page.click('#new-link button[type=submit]');
      assert.ok((await page.locator('#amount-problem').innerText()).length > 0);
      assert.equal(await page.locator('#link-description').inputValue(), 'Breakfast for two');
      await check(page, 'links with a refused link');

      await page.fill('#link-amount', '1.5');
      await page.click('#new-link button[type=submit]');
      await page.waitForURL(/\/links\/[0-9a-f-]{36}\?notice=link_created$/);
      const link = await app.pool.one(sql.type(z.object({ id: z.string(), created_via: z.string(), amount: z.string() }))`
        select id, created_via, amount::text as amount from payment_links where store_id = ${store.id}
      `);
      assert.deepEqual({ via: link.created_via, amount: link.amount }, { via: 'dashboard', amount: '1.5' });
      const url = await page.locator('#link-url').inputValue();
      assert.equal(url, `${app.url}/pay/l/${link.id}`);
      await page.locator('svg.qr').waitFor();
      await page.getByRole('button', { name: 'Copy the link' }).click();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), url);
      assert.equal(await page.locator('#no-link-payments').count(), 1);
      await check(page, 'a new link');

      // The customer opens the link (the shop's name and the price), asks to pay, chooses TON and pays on the sandbox chain.
      await customer.page.goto(url);
      await customer.page.getByRole('heading', { level: 1 }).waitFor();
      assert.match(await customer.page.locator('#amount').innerText(), /1\.5 GRAM/);
      await customer.page.getByRole('button', { name: 'Continue to payment' }).click();
      await customer.page.waitForURL(/\/pay\/[0-9a-f-]{36}$/);
      const paymentId = customer.page.url().split('/').pop()!;
      await customer.page.getByRole('button', { name: /GRAM, Gram \(GRAM\), formerly Toncoin on TON/ }).click();
      await customer.page.locator('#address-value').waitFor({ timeout: 30_000 });
      await app.pay(await customer.page.locator('#address-value').innerText(), 'TON', '1.5');
      await app.settle();
      await customer.page.getByRole('heading', { name: 'Paid' }).waitFor({ timeout: 15_000 });
      assert.equal(
        await app.pool.oneFirst(sql.type(z.object({ created_via: z.string() }))`select created_via from payments where id = ${paymentId}`),
        'payment_link',
      );

      // The link's page shows it.
      await page.reload();
      assert.equal(await page.locator(`#link-payments a[href$="/payments/${paymentId}"]`).count(), 1);
      assert.equal(await page.locator('#link-payments .status').innerText(), 'completed');
      assert.equal(await page.locator('#link-paid').innerText(), '1 payment, 1.5 GRAM');
      await check(page, 'a link with its payment');
      await page.goto(`${app.url}${await page.locator('nav a[href$="/links"]').getAttribute('href')}`);
      assert.match(await page.locator('#links tbody tr').innerText(), /Breakfast for two[\s\S]*1\.5 GRAM[\s\S]*active[\s\S]*1 · 1\.5 GRAM/);
      await check(page, 'links with a link');

      // A one-off payment: its link and QR code to send.
      await page.fill('#payment-amount', '0.75');
      await page.selectOption('#payment-currency', 'TON');
      await page.fill('#payment-description', 'Forgotten croissant');
      await page.selectOption('#payment-expires', '3d');
      await page.click('#new-payment button[type=submit]');
      await page.waitForURL(/\/payments\/[0-9a-f-]{36}\/share$/);
      const oneOff = page.url().split('/').at(-2)!;
      const row = await app.pool.one(sql.type(z.object({ created_via: z.string(), ttl: z.number(), payment_link_id: z.string().nullable() }))`
        select created_via, extract(epoch from expires_at - created_at)::int as ttl, payment_link_id from payments where id = ${oneOff}
      `);
      assert.deepEqual(row, { created_via: 'dashboard', ttl: 3 * 86_400, payment_link_id: null });
      assert.equal(await page.locator('#payment-url').inputValue(), `${app.url}/pay/${oneOff}`);
      await page.locator('svg.qr').waitFor();
      await check(page, 'a one-off payment to share');

      const audit = await app.pool.anyFirst(sql.type(z.object({ action: z.string() }))`
        select action from audit_log where store_id = ${store.id} and action in ('payment_link.create', 'payment.create') order by id
      `);
      assert.deepEqual(audit, ['payment_link.create', 'payment.create']);

      // Switched off, the link says so and makes no more payments.
      await page.goto(`${app.url}/dashboard/stores/${store.id}/links/${link.id}`);
      await page.click('form[action$="/deactivate"] button');
      await page.waitForURL(/notice=link_deactivated$/);
      assert.equal(await page.locator('#link-state').innerText(), 'switched off');
      const closed = await customer.page.goto(url);
      assert.equal(closed?.status(), 410);
      assert.deepEqual(owner.problems, []);
      assert.deepEqual(
        customer.problems.filter((p) => !/status of 410/.test(p)),
        [],
      );
    } finally {
      await owner.context.close();
      await customer.context.close();
    }
  });
});
