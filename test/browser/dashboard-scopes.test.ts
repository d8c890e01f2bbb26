// Token scopes from the dashboard in real headless Chromium (Debian's `chromium`, driven by
// playwright-core): an owner issues a read-only token on the API tokens page, sees its scope in the
// list, and the API refuses a refund with it (403 insufficient_scope) while it still reads. axe-core
// finds no serious violation on the page. Screenshots go to test-artifacts/dashboard/ (git-ignored).
//
// If Chromium cannot be launched this file FAILS (it never skips).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { sql, z } from '../../src/db/pool.ts';
import type { TestApp } from '../helpers/app.ts';
import { chromiumBrowser } from '../helpers/chromium.ts';
import { invitationPath } from '../helpers/dashboard.ts';
import { assertAccessible, openPage, clickInMenu } from '../helpers/dashboardBrowser.ts';
import { buildPayment } from '../helpers/factories.ts';
import { assertError, startPaymentsApp } from '../helpers/payments.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/dashboard');
const PASSWORD = 'a long dashboard password';
const REFUND_TO = `0:${'ab'.repeat(32)}`;

let app: TestApp;
let browser: Browser;

before(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  browser = await chromiumBrowser({ ownClipboard: true }); // the copied token is read back from the clipboard
  app = await startPaymentsApp();
});
after(async () => {
  await browser?.close();
  await app?.close();
});

describe('token scopes from the dashboard in headless Chromium', () => {
  it('an owner issues a read-only token; the list shows its scope; the API refuses a refund with it', async () => {
    const store = await app.store({ name: 'Blue Bottle Café' });
    const payment = await buildPayment(app, store, {
      status: 'completed',
      transfers: [
        { amount: '1', baseUnits: 1_000_000_000n, effect: 'completed' },
        { amount: '2', baseUnits: 2_000_000_000n, effect: 'overpaid' },
      ],
      body: { amount: '1', currency: 'TON' },
    });
    const { context, page, problems } = await openPage(browser, { width: 390, height: 844 }, ['clipboard-read', 'clipboard-write']);
    await page.goto(`${app.url}${await invitationPath(app.pool, store.id, 'owner@bluebottle.example', 'owner')}`);
    await page.fill('#password', PASSWORD);
    await page.fill('#confirm', PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL(`${app.url}/dashboard/stores/${store.id}`);
    await clickInMenu(page, 'nav a[href$="/tokens"]');
    await page.selectOption('#scope', 'read_only');
    await page.fill('#token-name', 'reports job');
    await page.click('form[action$="/tokens"] button[type=submit]');
    const token = await page.locator('#new-token').inputValue();
    assert.match(await page.locator('[role=status]').first().innerText(), /issued \(read-only\)/);
    const jti = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).jti as string;
    // The copy button (shown by the script) puts the token on the clipboard.
    await page.click('button[data-copy="new-token"]');
    await page.locator('#new-token-copied', { hasText: 'Copied.' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), token);
    const row = page.locator('#tokens tbody tr', { hasText: jti });
    assert.equal(await row.locator('.token-scope').innerText(), 'read-only');
    assert.equal(await row.locator('.token-name').innerText(), 'reports job');
    await assertAccessible(page, 'API tokens with a read-only token', ARTIFACTS);

    // The API: the token reads, and a refund with it is refused without a trace in the books.
    assert.equal((await app.request('GET', `/v1/payments/${payment.id}/balance`, { token })).status, 200);
    const refund = await app.request('POST', `/v1/payments/${payment.id}/refunds`, {
      token,
      body: { coin: 'TON', amount: '1', address: REFUND_TO },
    });
    assertError(refund, 403, 'authentication_error', 'insufficient_scope');
    assert.match(refund.json.error.message, /read_only/);
    const refunds = await app.pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`select count(*)::int as n from outgoing_transfers where payment_id = ${payment.id}`,
    );
    assert.equal(refunds, 0);
    // The same request with the store's full token is a refund: the refusal was the scope's.
    const full = await app.request('POST', `/v1/payments/${payment.id}/refunds`, {
      token: store.token,
      body: { coin: 'TON', amount: '1', address: REFUND_TO },
    });
    assert.equal(full.status, 201, full.text);
    assert.deepEqual(problems, []);
    await context.close();
  });
});
