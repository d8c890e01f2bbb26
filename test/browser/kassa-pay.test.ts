// <kassa-pay> on a shop's own page in real headless Chromium (issue 30): the shop's page is served by
// its own node:http server on its own port (another origin than Kassa's), under the strict CSP that
// docs/API.md gives, with the element's module from Kassa and a script of its own that listens for
// `kassa-pay:status`. The element shows the payment, the customer pays on the sandbox chain, and the
// page's script hears `completed`; the same page from an origin the store does not list is refused.
// At 320 px, accessible (axe), no CSP violation. A treasury store's payment (issue 43) is paid in the
// element through TON Connect: the wallet (test/helpers/tonconnectWallet.ts, injected into the frame)
// is asked for the transfer to the treasury carrying the reference, and the frame shows QR payers the
// reference, at 375 px. Screenshots go to test-artifacts/kassa-pay/.
// If Chromium cannot be launched this file FAILS.
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Address, Cell } from '@ton/core';
import type { Browser, Page } from 'playwright-core';
import { sql, z } from '../../src/db/pool.ts';
import { updateStore } from '../../src/stores/stores.ts';
import type { TestApp } from '../helpers/app.ts';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { chromiumBrowser } from '../helpers/chromium.ts';
import { assertAccessible, assertNoHorizontalScroll, openPage } from '../helpers/dashboardBrowser.ts';
import { close, listen } from '../helpers/servers.ts';
import { injectTestWallet } from '../helpers/tonconnectWallet.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/kassa-pay');
const PHONE = { width: 320, height: 700 };

let app: ChainTestApp;
let store: Awaited<ReturnType<TestApp['store']>>;
let browser: Browser;
let shop: { server: http.Server; origin: string };
let stranger: { server: http.Server; origin: string };

/**
 * A shop's page: `/?payment=ID` or `/?link=ID` holds the element; `/shop.js` is the shop's own script,
 * which records every kassa-pay:status and kassa-pay:error it hears (window.heard, and a visible list).
 */
async function startShop(kassaUrl: string): Promise<{ server: http.Server; origin: string }> {
  const kassa = new URL(kassaUrl).origin;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://shop');
    if (url.pathname === '/shop.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8' });
      res.end(`window.heard = [];
const log = document.getElementById('heard');
for (const type of ['kassa-pay:status', 'kassa-pay:error']) {
  document.querySelector('kassa-pay').addEventListener(type, (event) => {
    window.heard.push({ type, ...event.detail });
    const item = document.createElement('li');
    item.textContent = type + ': ' + (event.detail.status || event.detail.reason);
    log.append(item);
  });
}`);
      return;
    }
    if (url.pathname !== '/') {
      res.writeHead(404).end();
      return;
    }
    const attribute = url.searchParams.has('link') ? 'link' : 'payment';
    const id = (url.searchParams.get(attribute) ?? '').replace(/[^0-9a-f-]/gi, '');
    // The CSP lines docs/API.md gives a host page, and nothing more for Kassa.
    res.writeHead(200, {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': `default-src 'none'; script-src 'self' ${kassa}; connect-src ${kassa}; frame-src ${kassa}; style-src 'self'; base-uri 'none'`,
    });
    res.end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Corner Shop: checkout</title>
<script type="module" src="${kassaUrl}/v1/kassa-pay.js"></script>
<script type="module" src="/shop.js"></script></head>
<body><main><h1>Your order</h1>
<kassa-pay ${attribute}="${id}"></kassa-pay>
<h2>Events</h2><ol id="heard"></ol></main></body></html>`);
  });
  const { port } = await listen(server);
  return { server, origin: `http://127.0.0.1:${port}` };
}

// Chromium and the sandbox chain start slowly on a loaded machine.
before(
  async () => {
    browser = await chromiumBrowser();
    app = await startChainApp();
    store = await app.store({ name: 'Corner Shop', methods: 'TON/TON,USDT/TON' });
    shop = await startShop(`${app.url}/pay`);
    stranger = await startShop(`${app.url}/pay`);
    await updateStore(app.pool, store.id, { 'embed-origins': `https://shop.example,${shop.origin}` });
  },
  { timeout: 600_000 },
);
after(async () => {
  await browser?.close();
  if (shop) await close(shop.server);
  if (stranger) await close(stranger.server);
  await app?.close();
});

const heard = (page: Page): Promise<Array<{ type: string; status?: string; paymentId?: string; reason?: string }>> =>
  page.evaluate(() => (window as unknown as { heard: never[] }).heard ?? []);

async function depositOf(paymentId: string): Promise<string> {
  return app.pool.oneFirst(sql.type(z.object({ address_friendly: z.string() }))`
    select address_friendly from deposit_addresses where payment_id = ${paymentId}
  `);
}

// Each test pays on the sandbox chain in a real browser: minutes on a loaded machine.
describe('<kassa-pay> on a shop’s own page', { timeout: 900_000 }, () => {
  it('payment="ID": shows the amount and method, pays on the sandbox chain, and the shop’s script hears completed (320 px, axe, strict CSP)', {
    timeout: 300_000,
  }, async () => {
    const created = await app.request('POST', '/v1/payments', {
      token: store.token,
      body: { amount: '2.5', currency: 'TON', description: 'Two croissants', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
    });
    assert.equal(created.status, 201, created.text);
    const payment = created.json;
    const { context, page, problems } = await openPage(browser, PHONE);
    try {
      await page.goto(`${shop.origin}/?payment=${payment.id}`);
      const element = page.locator('kassa-pay');
      await element.locator('.status[data-status="pending"]').waitFor({ timeout: 30_000 });
      assert.equal(await element.locator('.amount').innerText(), '2.5 GRAM');
      assert.equal(await element.locator('.description').innerText(), 'Two croissants');
      assert.match(await element.locator('.methods').innerText(), /2\.5 GRAM/);
      // The checkout, framed for this origin only: its address and QR code.
      const frame = page.frameLocator('kassa-pay iframe');
      await frame.locator('svg.qr').waitFor({ timeout: 30_000 });
      const address = await depositOf(payment.id);
      assert.equal(await frame.locator('#address-value').innerText(), address);
      assert.deepEqual(await heard(page), [{ type: 'kassa-pay:status', status: 'pending', paymentId: payment.id }]);
      await assertAccessible(page, 'element pending at 320 px', ARTIFACTS);
      await assertNoHorizontalScroll(page, 'element pending at 320 px');

      await app.pay(address, 'TON', '2.5');
      await app.settle();
      await page.waitForFunction(() => (window as unknown as { heard: { status: string }[] }).heard.some((e) => e.status === 'completed'), undefined, {
        timeout: 15_000,
      });
      assert.deepEqual(
        (await heard(page)).map((e) => e.status),
        ['pending', 'completed'],
      );
      assert.equal(await element.locator('.status').innerText(), 'Paid. Thank you!');
      await assertAccessible(page, 'element completed at 320 px', ARTIFACTS);
      assert.deepEqual(problems, [], 'no CSP violation or script error on the shop’s page');
    } finally {
      await context.close();
    }
  });

  it('link="ID": the link’s payment is made in the frame, the element follows it to completed; a reload shows the same payment', {
    timeout: 300_000,
  }, async () => {
    const created = await app.request('POST', '/v1/payment-links', {
      token: store.token,
      body: { amount: '1.25', currency: 'TON', description: 'Gift card', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
    });
    assert.equal(created.status, 201, created.text);
    const link = created.json;
    const { context, page, problems } = await openPage(browser, PHONE);
    try {
      await page.goto(`${shop.origin}/?link=${link.id}`);
      const element = page.locator('kassa-pay');
      // The frame shows the link's page; the person's press makes the payment (showing it made none).
      await page.frameLocator('kassa-pay iframe').getByRole('button', { name: 'Continue to payment' }).click();
      await element.locator('.status[data-status="pending"]').waitFor({ timeout: 30_000 });
      assert.equal(await element.locator('.amount').innerText(), '1.25 GRAM');
      const [first] = await heard(page);
      const paymentId = first!.paymentId!;
      assert.equal(
        await app.pool.oneFirst(sql.type(z.object({ payment_link_id: z.string() }))`select payment_link_id from payments where id = ${paymentId}`),
        link.id,
      );
      await page.frameLocator('kassa-pay iframe').locator('svg.qr').waitFor({ timeout: 30_000 });
      await assertAccessible(page, 'element of a link at 320 px', ARTIFACTS);

      // A reload shows the payment already made, not a new one.
      await page.reload();
      await element.locator('.status[data-status="pending"]').waitFor({ timeout: 30_000 });
      assert.equal((await heard(page))[0]!.paymentId, paymentId);
      assert.equal(
        await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from payments where payment_link_id = ${link.id}`),
        1,
      );

      await app.pay(await depositOf(paymentId), 'TON', '1.25');
      await app.settle();
      await page.waitForFunction(() => (window as unknown as { heard: { status: string }[] }).heard.some((e) => e.status === 'completed'), undefined, {
        timeout: 15_000,
      });
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  it('the same page from an origin the store does not list is refused: no payment shown, no frame, an error event', { timeout: 300_000 }, async () => {
    const created = await app.request('POST', '/v1/payments', {
      token: store.token,
      body: { amount: '3', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
    });
    const payment = created.json;
    const { context, page, problems } = await openPage(browser, PHONE);
    try {
      await page.goto(`${stranger.origin}/?payment=${payment.id}`);
      const element = page.locator('kassa-pay');
      await element.locator('.status[data-status="refused"]').waitFor({ timeout: 30_000 });
      assert.match(await element.locator('.status').innerText(), /not allowed by the store/);
      assert.equal(await element.locator('.amount').innerText(), 'Payment', 'nothing of the payment is shown');
      assert.equal(await element.locator('iframe[src]').count(), 0);
      assert.deepEqual(await heard(page), [{ type: 'kassa-pay:error', reason: 'origin_not_allowed' }]);
      // The page's own script cannot read the payment either, and Kassa will not be framed by it.
      const read = await page.evaluate(async (url) => {
        try {
          await fetch(url);
          return 'read';
        } catch {
          return 'refused';
        }
      }, `${app.url}/pay/v1/checkout/payments/${payment.id}`);
      assert.equal(read, 'refused');
      await assertAccessible(page, 'element refused', ARTIFACTS);
      // The only console errors are the refused reads.
      assert.deepEqual(
        problems.filter((p) => !/CORS policy|Failed to load resource: net::ERR_FAILED/.test(p)),
        [],
      );
    } finally {
      await context.close();
    }
  });
});

describe('<kassa-pay> for a store settled to its treasury (payments told apart by their reference)', { timeout: 900_000 }, () => {
  it('paid through TON Connect in the element at 375 px: the wallet sends the reference to the treasury, the shop hears completed; the frame shows QR payers the reference (axe)', {
    timeout: 300_000,
  }, async () => {
    const raw = (address: string) => Address.parse(address).toRawString();
    const treasury = raw((await app.request('POST', '/sandbox/v1/wallets')).json.address);
    const shopStore = await app.store({ name: 'Treasury Bakery', methods: 'TON/TON' });
    await updateStore(app.pool, shopStore.id, { treasury, settlement: 'treasury', 'embed-origins': shop.origin });
    const created = await app.request('POST', '/v1/payments', {
      token: shopStore.token,
      body: { amount: '1.5', currency: 'TON', description: 'A loaf', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
    });
    assert.equal(created.status, 201, created.text);
    const payment = created.json;
    const reference: string = payment.paymentDetails.reference;
    assert.equal(raw(payment.paymentDetails.address), treasury);
    const { context, page, problems } = await openPage(browser, { width: 375, height: 812 });
    try {
      // The wallet the frame's TON Connect finds (its init script runs in every frame of the page).
      const wallet = await injectTestWallet(page, app, { embedded: true });
      await page.goto(`${shop.origin}/?payment=${payment.id}`);
      const element = page.locator('kassa-pay');
      await element.locator('.status[data-status="pending"]').waitFor({ timeout: 30_000 });
      assert.equal(await element.locator('.amount').innerText(), '1.5 GRAM');
      const frame = page.frameLocator('kassa-pay iframe');
      // For QR and manual payers: the treasury, and the reference the customer must send, with the link carrying it.
      await frame.locator('svg.qr').waitFor({ timeout: 30_000 });
      assert.equal(raw(await frame.locator('#address-value').innerText()), treasury);
      assert.equal(await frame.locator('#reference-value').innerText(), reference);
      assert.match(await frame.locator('#reference-box').innerText(), /The comment is required/);
      const link = new URL((await frame.locator('#wallet-link').getAttribute('href'))!);
      assert.equal(link.searchParams.get('text'), reference);
      await assertAccessible(page, 'element of a treasury payment at 375 px', ARTIFACTS);
      await assertNoHorizontalScroll(page, 'element of a treasury payment at 375 px');

      const pay = frame.locator('#tonconnect-pay');
      await pay.waitFor({ state: 'visible', timeout: 15_000 });
      await pay.click();
      await frame.locator('#notice').filter({ hasText: 'Sent from your wallet' }).waitFor({ timeout: 15_000 });
      assert.equal(wallet.requests.length, 1);
      const [message] = wallet.requests[0].messages;
      assert.equal(raw(message.address), treasury, 'to the treasury itself, no deposit');
      assert.equal(message.amount, '1500000000');
      assert.equal(message.payload, payment.paymentDetails.payload, 'paymentDetails.payload: the reference as a text comment');
      const body = Cell.fromBase64(message.payload).beginParse();
      assert.equal(body.loadUint(32), 0);
      assert.equal(body.loadStringTail(), reference);

      await app.settle();
      await page.waitForFunction(() => (window as unknown as { heard: { status: string }[] }).heard.some((e) => e.status === 'completed'), undefined, {
        timeout: 15_000,
      });
      assert.deepEqual(
        (await heard(page)).map((e) => e.status),
        ['pending', 'completed'],
      );
      assert.equal(await element.locator('.status').innerText(), 'Paid. Thank you!');
      const paid = (await app.request('GET', `/v1/payments/${payment.id}`, { token: shopStore.token })).json;
      assert.equal(paid.status, 'completed');
      const [transfer] = (await app.request('GET', `/v1/payments/${payment.id}/transfers`, { token: shopStore.token })).json.data;
      assert.deepEqual([transfer.account, transfer.comment, transfer.amountBaseUnits], [treasury, reference, '1500000000']);
      await assertAccessible(page, 'element of a treasury payment completed at 375 px', ARTIFACTS);
      assert.deepEqual(
        problems.filter((p) => !/ERR_NAME_NOT_RESOLVED|ERR_INTERNET_DISCONNECTED|Aborted after attempts/.test(p)),
        [],
        'no CSP violation or script error on the shop’s page',
      );
    } finally {
      await context.close();
    }
  });
});
