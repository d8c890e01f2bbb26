// A payment link's pages (issues 30, 47) in real headless Chromium: the open-amount form at 375 px, the
// payment it makes, a closed link; a fixed price's page that a person opens and pays (the button
// makes the payment, the visit none). Shared setup: test/helpers/checkoutBrowser.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql, z } from '../../src/db/pool.ts';
import { app, assertAccessible, open, shot, store, useCheckoutBrowser } from '../helpers/checkoutBrowser.ts';

useCheckoutBrowser();

describe('a payment link’s pages (issue 30)', () => {
  it('an open amount at 375 px: the form, a refusal said beside the field, then the checkout of the payment made; a closed link says so; accessible, no CSP problem', async () => {
    const created = await app.request('POST', '/v1/payment-links', {
      token: store.token,
      body: { currency: 'TON', minAmount: '1', maxAmount: '50', description: 'Donation', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
    });
    assert.equal(created.status, 201, created.text);
    const linkPath = new URL(created.json.url).pathname;
    const { context, page, problems } = await open({ viewport: { width: 375, height: 740 } });
    try {
      const first = await page.goto(`${app.url}${linkPath}`);
      assert.equal(first?.status(), 200);
      await assertAccessible(page, 'the open amount form');
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true, 'no sideways scrolling at 375 px');
      await page.getByLabel('Amount in GRAM').fill('0.5');
      await page.getByRole('button', { name: 'Continue to payment' }).click();
      await page.getByRole('alert').filter({ hasText: 'at least 1' }).waitFor();
      assert.equal(await page.getByLabel('Amount in GRAM').getAttribute('aria-invalid'), 'true');
      await assertAccessible(page, 'the form with a refusal');
      await shot(page, 'link-amount-refused');
      await page.getByLabel('Amount in GRAM').fill('2,5');
      await page.getByRole('button', { name: 'Continue to payment' }).click();
      await page.waitForURL(/\/pay\/[0-9a-f-]{36}/);
      const paymentId = page.url().split('/').pop()!.split('?')[0]!;
      const payment = await app.request('GET', `/v1/payments/${paymentId}`, { token: store.token });
      assert.equal(payment.json.paymentLinkID, created.json.id);
      assert.equal(payment.json.amount, '2.5');
      // Back to the link (a reload of it): the same payment, none created.
      await page.goto(`${app.url}${linkPath}`);
      assert.equal(page.url().split('/').pop()!.split('?')[0], paymentId);

      assert.equal((await app.request('POST', `/v1/payment-links/${created.json.id}/deactivate`, { token: store.token })).status, 200);
      const closed = await page.goto(`${app.url}${linkPath}`);
      assert.equal(closed?.status(), 410);
      await page.getByRole('heading', { name: 'This payment link is closed' }).waitFor();
      await assertAccessible(page, 'a closed link');
      // The refusal (400) and the closed link (410) are answered with their status, which Chromium logs; nothing else.
      assert.deepEqual(
        problems.filter((problem) => !/Failed to load resource: the server responded with a status of (400|410)/.test(problem)),
        [],
      );
    } finally {
      await context.close();
    }
  });

  it('a fixed price at 375 px: the page names the shop, the price and what it is for; opening it makes no payment, the button does; the person pays on the sandbox', async () => {
    const created = await app.request('POST', '/v1/payment-links', {
      token: store.token,
      body: { currency: 'TON', amount: '1.5', description: 'Two flat whites', maxPayments: 3, payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
    });
    assert.equal(created.status, 201, created.text);
    const linkPath = new URL(created.json.url).pathname;
    const count = () =>
      app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from payments where payment_link_id = ${created.json.id}`);
    const { context, page, problems } = await open({ viewport: { width: 375, height: 740 } });
    try {
      const first = await page.goto(`${app.url}${linkPath}`);
      assert.equal(first?.status(), 200);
      await page.getByRole('heading', { level: 1, name: 'Blue Bottle Café' }).waitFor();
      assert.equal(await page.locator('#amount').innerText(), '1.5 GRAM');
      await page.getByText('Two flat whites').waitFor();
      await page.reload();
      assert.equal(await count(), 0, 'opening the link (twice) made no payment');
      await assertAccessible(page, 'a fixed price link');
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true, 'no sideways scrolling at 375 px');
      await shot(page, 'link-fixed-price');
      await page.getByRole('button', { name: 'Continue to payment' }).click();
      await page.waitForURL(/\/pay\/[0-9a-f-]{36}/);
      assert.equal(await count(), 1);
      const address = page.locator('#address-value');
      await address.waitFor({ timeout: 30_000 });
      await app.pay(await address.innerText(), 'TON', '1.5');
      await app.settle();
      await page.getByRole('heading', { name: 'Paid' }).waitFor({ timeout: 15_000 });
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
});
