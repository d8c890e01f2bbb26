// Token scopes from the dashboard in real headless Chromium (Debian's `chromium`, driven by
// playwright-core): an owner issues a read-only token on the API tokens page, sees its scope in the
// list, and the API refuses a refund with it (403 insufficient_scope) while it still reads. axe-core
// finds no serious violation on the page. Screenshots go to test-artifacts/dashboard/ (git-ignored).
//
// If Chromium cannot be launched this file FAILS (it never skips).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { sql, z } from '../../src/db/pool.ts';
import type { TestApp } from '../helpers/app.ts';
import { invitationPath } from '../helpers/dashboard.ts';
import { buildPayment } from '../helpers/factories.ts';
import { assertError, startPaymentsApp } from '../helpers/payments.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/dashboard');
const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PASSWORD = 'a long dashboard password';
const REFUND_TO = `0:${'ab'.repeat(32)}`;

let app: TestApp;
let browser: Browser;

before(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  try {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  } catch (error) {
    throw new Error(
      `Chromium could not be launched from ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH. ${(error as Error).message}`,
    );
  }
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
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'en-US', permissions: ['clipboard-read', 'clipboard-write'] });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    page.on('pageerror', (error) => problems.push(error.message));

    await page.goto(`${app.url}${await invitationPath(app.pool, store.id, 'owner@bluebottle.example', 'owner')}`);
    await page.fill('#password', PASSWORD);
    await page.fill('#confirm', PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL(`${app.url}/dashboard/stores/${store.id}/payments`);
    await page.click('nav a[href$="/tokens"]');
    await page.selectOption('#scope', 'read_only');
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
    if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
    const violations = await page.evaluate(async () => {
      const axe = (window as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: { id: string; impact: string }[] }> } }).axe;
      const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
      return result.violations.map((v) => ({ id: v.id, impact: v.impact }));
    });
    assert.deepEqual(
      violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'),
      [],
    );
    await page.screenshot({ path: path.join(ARTIFACTS, 'API-tokens-with-a-read-only-token.png'), fullPage: true });

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
