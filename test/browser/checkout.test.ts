// The hosted checkout end to end in real headless Chromium (Debian's `chromium`, driven by
// playwright-core) against the real app, real Postgres and the sandbox chain read by the chain
// reader: choose USDT, see the address, amount and QR, pay through the sandbox and watch the page
// turn to paid without a reload; an expired payment; the Russian page. Screenshots of every state
// go to test-artifacts/checkout/ (git-ignored).
//
// If Chromium cannot be launched this file FAILS (it never skips): install it with
// `apt-get install -y chromium` (.ci/run does).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql, z } from '../../src/db/pool.ts';
import {
  app,
  assertAccessible,
  createPayment,
  markDocument,
  open,
  sameDocument,
  shot,
  store,
  useCheckoutBrowser,
  watchChain,
} from '../helpers/checkoutBrowser.ts';

useCheckoutBrowser({ ownClipboard: true }); // the copied address is read back from the clipboard

describe('checkout in headless Chromium', () => {
  it('Customer Choice: pick USDT, see address, amount and QR; pay through the sandbox; the page turns to paid without a reload', async () => {
    const payment = await createPayment({
      amount: '10.50',
      currency: 'USD',
      description: 'Two flat whites\nTable 7',
      returnURL: 'https://shop.example.com/thanks',
    });
    const { context, page, problems } = await open();
    try {
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.url });
      const response = await page.goto(`${app.url}/pay/${payment.id}`);
      assert.equal(response?.status(), 200);
      assert.equal(await page.getAttribute('html', 'lang'), 'en');
      assert.equal(await page.locator('h1').innerText(), 'Blue Bottle Café');
      assert.match(await page.locator('#description').innerText(), /Two flat whites\s+Table 7/);
      assert.equal(await page.locator('#amount').innerText(), '10.50 USD');
      // The countdown runs (the script is allowed by the CSP and ticking).
      const first = await page.locator('#countdown').innerText();
      assert.match(first, /^(59|60):\d\d$|^1:00:00$/);
      await page.waitForFunction((before) => document.getElementById('countdown')?.textContent !== before, first, { timeout: 3000 });
      // Every enabled method with its exact price now.
      const usdt = page.getByRole('button', { name: /USDT/ });
      const ton = page.getByRole('button', { name: /GRAM, Gram \(GRAM\), formerly Toncoin on TON/ });
      assert.match(await usdt.innerText(), /10\.5 USDT/);
      assert.match(await ton.innerText(), /2\.1 GRAM/);
      await assertAccessible(page, 'created, phone, en');
      await shot(page, '01-created-en');

      await markDocument(page);
      await usdt.click();
      const address = page.locator('#address-value');
      await address.waitFor({ state: 'visible', timeout: 10_000 });
      const row = await app.pool.one(sql.type(z.object({ status: z.string(), address_friendly: z.string() }))`
        select p.status, d.address_friendly from payments p join deposit_addresses d on d.payment_id = p.id where p.id = ${payment.id}
      `);
      assert.equal(row.status, 'pending');
      assert.equal(await address.innerText(), row.address_friendly);
      assert.match(row.address_friendly, /^UQ/, 'the non-bounceable form');
      assert.equal(await page.locator('#amount-value').innerText(), '10.5');
      assert.equal(await page.locator('#send-amount').innerText(), '10.5 USDT');
      const qr = page.locator('svg.qr');
      await qr.waitFor({ state: 'visible' });
      const box = (await qr.boundingBox())!;
      assert.ok(box.width >= 150 && Math.abs(box.width - box.height) < 2, `a square QR code of a usable size: ${JSON.stringify(box)}`);
      const walletLink = await page.locator('#wallet-link').getAttribute('href');
      assert.match(walletLink!, new RegExp(`^ton://transfer/${row.address_friendly}\\?jetton=EQ[\\w-]{46}&amount=10500000&exp=\\d+$`));
      assert.equal(await page.locator('#tonkeeper-link').getAttribute('href'), walletLink!.replace('ton://', 'https://app.tonkeeper.com/'));
      assert.equal(await page.locator('#mytonwallet-link').getAttribute('href'), walletLink!.replace('ton://', 'https://my.tt/'));
      assert.ok(await sameDocument(page), 'choosing a method updated the page in place');
      // TON Connect's widget is mounted on the pending page; the touch that iOS needs for :active is a
      // listener, not the inline handler it writes (refused by the CSP): no violation, even on a tap.
      await page.waitForFunction(() => customElements.get('tc-root') !== undefined, undefined, { timeout: 10_000 });
      assert.equal(await page.evaluate(() => document.body.hasAttribute('ontouchstart')), false);
      await page.touchscreen.tap(5, 5);

      // Copy the address.
      await page.getByRole('button', { name: 'Copy the address' }).click();
      // The label says "Copied" for 2 s: looked for first (waiting for it to appear, not racing its
      // 2 s on a busy machine), then the clipboard is read back.
      // While it says Copied, its name says so too (axe: the name holds the visible text).
      await page.getByRole('button', { name: 'Copied', exact: true }).filter({ hasText: 'Copied' }).waitFor({ timeout: 5000 });
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), row.address_friendly);
      await shot(page, '02-pending-usdt-en');

      // Choosing again from a stale view never gives a second address.
      const again = await page.evaluate(
        async ([url, body]) => {
          const r = await fetch(url!, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
          return { status: r.status, json: await r.json() };
        },
        [
          `/pay/v1/checkout/payments/${payment.id}/method`,
          JSON.stringify({
            paymentMethodID: await app.pool.oneFirst(sql.type(z.object({ id: z.string() }))`select id from payment_methods where coin_symbol = 'TON'`),
          }),
        ],
      );
      assert.equal(again.status, 409);
      assert.equal(again.json.error.code, 'method_already_selected');

      // Underpay first: the page shows what arrived and asks for the rest, by itself.
      const part = await app.pay(row.address_friendly, 'USDT', '4');
      await watchChain();
      await page.locator('#received-amount').waitFor({ timeout: 10_000 });
      assert.equal(await page.locator('#received-amount').innerText(), '4 USDT');
      assert.equal(await page.locator('#remaining-amount').innerText(), '6.5 USDT');
      assert.match((await page.locator('#wallet-link').getAttribute('href'))!, /&amount=6500000&/);
      assert.ok(await sameDocument(page));
      await shot(page, '03-underpaid-en');

      // Pay the rest through the sandbox chain; the chain reader records it; the page turns to paid.
      const rest = await app.pay(row.address_friendly, 'USDT', '6.5');
      await watchChain();
      await page.getByRole('heading', { name: 'Paid' }).waitFor({ timeout: 10_000 });
      assert.ok(await sameDocument(page), 'turned to paid without a reload');
      const hashes = await page.locator('.hashes code').allInnerTexts();
      assert.deepEqual(hashes, [part.hash, rest.hash]);
      assert.equal(await page.locator('#paid-amount').innerText(), '10.5 USDT');
      assert.equal(await page.locator('#return-link').getAttribute('href'), 'https://shop.example.com/thanks');
      assert.equal(await page.locator('#countdown').count(), 0);
      assert.equal(await page.locator('#wallet-link').count(), 0);
      await page.waitForFunction(() => document.getElementById('announce')?.textContent === 'Paid', undefined, { timeout: 2000 }); // announced to screen readers
      await shot(page, '04-paid-en');
      assert.deepEqual(
        problems.filter((p) => !p.includes('status of 409')),
        [],
        'no CSP violation or script error (the 409 is the stale choice above)',
      );
    } finally {
      await context.close();
    }
  });

  it("a pending payment that expires turns to expired live, and an expired payment's page says what to do", async () => {
    const payment = await createPayment({ amount: '1.5', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } });
    const { context, page, problems } = await open();
    try {
      await page.goto(`${app.url}/pay/${payment.id}`);
      assert.match((await page.locator('#wallet-link').getAttribute('href'))!, /\?amount=1500000000&exp=\d+$/);
      await markDocument(page);
      const expired = await app.request('POST', `/sandbox/v1/payments/${payment.id}/expire`, { token: store.token });
      assert.equal(expired.status, 200, expired.text);
      assert.equal(expired.json.status, 'expired');
      await page.getByRole('heading', { name: 'This payment has expired' }).waitFor({ timeout: 10_000 });
      assert.ok(await sameDocument(page));
      assert.match(await page.locator('#sent-anyway').innerText(), /not lost.*Contact Blue Bottle Café/);
      assert.equal(await page.locator('#wallet-link').count(), 0, 'no way to pay an expired payment');
      assert.equal(await page.locator('#countdown').count(), 0);

      // Opened afresh.
      await page.reload();
      await page.getByRole('heading', { name: 'This payment has expired' }).waitFor();
      await assertAccessible(page, 'expired');
      await shot(page, '05-expired-en');
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  it('Russian: chosen from the browser language, switchable, and usable with the keyboard alone', async () => {
    const payment = await createPayment({ amount: '25', currency: 'USD', description: 'Заказ №42' });
    const { context, page, problems } = await open({ locale: 'ru-RU' });
    try {
      await page.goto(`${app.url}/pay/${payment.id}`);
      assert.equal(await page.getAttribute('html', 'lang'), 'ru');
      await page.getByRole('heading', { name: 'Выберите способ оплаты' }).waitFor();
      assert.equal(await page.locator('#countdown-label').innerText(), 'Осталось времени');
      await assertAccessible(page, 'created, ru');
      await shot(page, '06-created-ru');

      // Keyboard only: Tab to the TON method and press Enter.
      let focused = '';
      for (let i = 0; i < 12 && !focused.includes('GRAM, Gram (GRAM)'); i += 1) {
        await page.keyboard.press('Tab');
        focused = await page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? '');
      }
      // The name reads as the button shows (axe: the visible text is part of the accessible name).
      assert.match(focused, /^Оплатить 5 GRAM, Gram \(GRAM\), прежде Toncoin в сети TON$/);
      await page.keyboard.press('Enter');
      await page.locator('#address-value').waitFor({ timeout: 10_000 });
      assert.equal(await page.getByRole('heading', { level: 2 }).innerText(), 'Ожидаем оплату');
      assert.equal(await page.locator('#send-amount').innerText(), '5 GRAM');
      assert.equal(await page.getByRole('link', { name: 'Открыть в кошельке' }).count(), 1);
      await shot(page, '07-pending-ton-ru');

      // The visible switch.
      await page.getByRole('link', { name: 'English' }).click();
      await page.waitForURL(/\?lang=en$/);
      assert.equal(await page.getAttribute('html', 'lang'), 'en');
      await page.getByRole('heading', { name: 'Waiting for your payment' }).waitFor();
      // The coin's new name (issue 47 item 8): Gram (GRAM), the network's own coin, not the jetton also called GRAM.
      assert.equal(await page.locator('#send-amount').innerText(), '5 GRAM');
      assert.match(
        await page.locator('.warning').filter({ hasText: 'Gram (GRAM)' }).innerText(),
        /^Send Gram \(GRAM\), the TON network’s own coin \(formerly Toncoin\), only\. The jetton also called GRAM is a different coin: it is not counted toward this payment/,
      );
      await shot(page, '08-pending-gram-en');
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  it('without server-sent events (a buffering proxy, say) the page polls and still turns to the new state', async () => {
    const payment = await createPayment({ amount: '2', currency: 'TON', returnURL: 'https://shop.example.com/cart' });
    const { context, page, problems } = await open();
    try {
      const polls: string[] = [];
      await page.route('**/events', (route) => route.abort());
      page.on('request', (request) => {
        if (request.url().endsWith(`/pay/v1/checkout/payments/${payment.id}`)) polls.push(request.url());
      });
      await page.goto(`${app.url}/pay/${payment.id}`);
      await page.getByRole('heading', { name: 'Choose how to pay' }).waitFor();
      await markDocument(page);
      assert.equal((await app.request('POST', `/v1/payments/${payment.id}/cancel`, { token: store.token })).status, 200);
      await page.getByRole('heading', { name: 'This payment was cancelled' }).waitFor({ timeout: 15_000 });
      assert.ok(await sameDocument(page));
      assert.ok(polls.length >= 1, 'it polled the public JSON view');
      assert.equal(await page.locator('#return-link').getAttribute('href'), 'https://shop.example.com/cart');
      await assertAccessible(page, 'cancelled');
      await shot(page, '10-cancelled-en');
      assert.deepEqual(
        problems.filter((p) => !p.includes('ERR_FAILED')),
        [],
      );
    } finally {
      await context.close();
    }
  });

  it('dark colour scheme', async () => {
    const payment = await createPayment({ amount: '2', currency: 'USD', payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } });
    const { context, page, problems } = await open({ colorScheme: 'dark' });
    try {
      await page.goto(`${app.url}/pay/${payment.id}`);
      await page.locator('svg.qr').waitFor();
      // The QR code keeps its white quiet zone on a dark page.
      assert.equal(await page.locator('.qr-box').evaluate((element) => getComputedStyle(element).backgroundColor), 'rgb(255, 255, 255)');
      await assertAccessible(page, 'pending, dark');
      await shot(page, '11-pending-dark');
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  it('desktop width and the 404 page', async () => {
    const payment = await createPayment({
      amount: '3',
      currency: 'TON',
      payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] },
      description: 'Annual plan',
    });
    const { context, page, problems } = await open({ viewport: { width: 1280, height: 900 } });
    try {
      await page.goto(`${app.url}/pay/${payment.id}`);
      await page.locator('svg.qr').waitFor();
      assert.equal(await page.locator('#send-amount').innerText(), '15 USDT');
      await shot(page, '08-pending-desktop');
      const missing = await page.goto(`${app.url}/pay/00000000-0000-4000-8000-000000000000`);
      assert.equal(missing?.status(), 404);
      await page.getByRole('heading', { name: 'Payment not found' }).waitFor();
      await assertAccessible(page, '404');
      await shot(page, '09-not-found');
      assert.deepEqual(
        problems.filter((p) => !p.includes('404')),
        [],
      );
    } finally {
      await context.close();
    }
  });
});
