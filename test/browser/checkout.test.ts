// The hosted checkout end to end in real headless Chromium (Debian's `chromium`, driven by
// playwright-core) against the real app, real Postgres and the sandbox chain read by the chain
// reader: choose USDT, see the address, amount and QR, pay through the sandbox and watch the page
// turn to paid without a reload; an expired payment; the Russian page. Screenshots of every state
// go to test-artifacts/checkout/ (git-ignored).
//
// If Chromium cannot be launched this file FAILS (it never skips): install it with
// `apt-get install -y chromium` (.ci/run does).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createRequire } from 'node:module';
import { Address, Cell } from '@ton/core';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { sql, z } from '../../src/db/pool.ts';
import type { TestApp } from '../helpers/app.ts';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { injectTestWallet, TEST_WALLET_NAME } from '../helpers/tonconnectWallet.ts';
import { updateStore } from '../../src/stores/stores.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/checkout');
const MOBILE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };
const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let app: ChainTestApp;
let store: Awaited<ReturnType<TestApp['store']>>;
let browser: Browser;

before(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  try {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  } catch (error) {
    throw new Error(
      `Chromium could not be launched from ${CHROMIUM}: the browser tests cannot run. Install it (apt-get install -y chromium) or set CHROMIUM_PATH. ${(error as Error).message}`,
    );
  }
  app = await startChainApp();
  store = await app.store({ name: 'Blue Bottle Café', methods: 'TON/TON,USDT/TON' });
});
after(async () => {
  await browser?.close();
  await app?.close();
});

async function createPayment(body: Record<string, unknown>): Promise<any> {
  const response = await app.request('POST', '/v1/payments', { token: store.token, body });
  assert.equal(response.status, 201, response.text);
  return response.json;
}

/** A new browser context (fresh profile state) with a page that records console errors and CSP violations. */
async function open(
  options: { locale?: string; viewport?: { width: number; height: number }; colorScheme?: 'light' | 'dark' } = {},
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({
    viewport: options.viewport ?? MOBILE,
    deviceScaleFactor: 2,
    locale: options.locale ?? 'en-US',
    isMobile: (options.viewport ?? MOBILE).width < 600,
    hasTouch: true,
    colorScheme: options.colorScheme ?? 'light',
  });
  // Every CSP violation, with what caused it, on the console (and so in `problems`).
  await context.addInitScript(() =>
    document.addEventListener('securitypolicyviolation', (event) => {
      const target = event.target instanceof Element ? event.target.outerHTML.slice(0, 200) : '';
      console.error(
        `CSP violation: ${event.violatedDirective} of ${event.blockedURI} at ${event.sourceFile}:${event.lineNumber}:${event.columnNumber} ${event.sample} ${target}`,
      );
    }),
  );
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    // Every CSP violation is a problem: @tonconnect/ui's inline `<body ontouchstart="">` (an iOS
    // :active workaround) is served as a touchstart listener instead (src/checkout/static.ts).
    if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(`console: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return { context, page, problems };
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/**
 * axe-core run in the page (evaluated through the debugging protocol: the page's CSP stays as
 * served). Fails on any serious or critical violation (WCAG 2.x A/AA rules and best practices).
 */
async function assertAccessible(page: Page, what: string): Promise<void> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(context: unknown, options: unknown): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }>;
        };
      }
    ).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
  });
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(serious, [], `${what}: axe-core found serious violations`);
}

/** Marks the document; the mark survives in-place updates and is lost on any reload or navigation. */
const markDocument = (page: Page) => page.evaluate(() => ((window as unknown as { kassaMark: string }).kassaMark = 'same-document'));
const sameDocument = (page: Page) => page.evaluate(() => (window as unknown as { kassaMark?: string }).kassaMark === 'same-document');

/** What the chain reader does at every block in production: read the chain until nothing new. */
async function watchChain(): Promise<void> {
  await app.settle();
}

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
      const ton = page.getByRole('button', { name: /TON, Toncoin on TON/ });
      assert.match(await usdt.innerText(), /10\.5 USDT/);
      assert.match(await ton.innerText(), /2\.1 TON/);
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
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), row.address_friendly);
      await page.getByRole('button', { name: 'Copy the address' }).filter({ hasText: 'Copied' }).waitFor({ timeout: 2000 });
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
      for (let i = 0; i < 12 && !focused.includes('TON, Toncoin'); i += 1) {
        await page.keyboard.press('Tab');
        focused = await page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? '');
      }
      // The name reads as the button shows (axe: the visible text is part of the accessible name).
      assert.match(focused, /^Оплатить 5 TON, Toncoin в сети TON$/);
      await page.keyboard.press('Enter');
      await page.locator('#address-value').waitFor({ timeout: 10_000 });
      assert.equal(await page.getByRole('heading', { level: 2 }).innerText(), 'Ожидаем оплату');
      assert.equal(await page.locator('#send-amount').innerText(), '5 TON');
      assert.equal(await page.getByRole('link', { name: 'Открыть в кошельке' }).count(), 1);
      await shot(page, '07-pending-ton-ru');

      // The visible switch.
      await page.getByRole('link', { name: 'English' }).click();
      await page.waitForURL(/\?lang=en$/);
      assert.equal(await page.getAttribute('html', 'lang'), 'en');
      await page.getByRole('heading', { name: 'Waiting for your payment' }).waitFor();
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

describe('paying from a connected wallet (TON Connect) in headless Chromium', () => {
  /** Opens a pending payment's page with the test wallet injected. */
  async function openWithWallet(paymentId: string, options: Parameters<typeof open>[0] & { embedded?: boolean } = {}) {
    const opened = await open(options);
    const wallet = await injectTestWallet(opened.page, app, { embedded: options.embedded ?? false });
    const response = await opened.page.goto(`${app.url}/pay/${paymentId}`);
    assert.equal(response?.status(), 200);
    return { ...opened, wallet };
  }

  /** Through the page's TON Connect UI: open its wallet list, pick the injected test wallet (its browser extension). */
  async function connectAndPay(page: Page, screenshot?: string): Promise<void> {
    await page.locator('#tonconnect-pay').click();
    if (screenshot === 'embedded') return; // inside the wallet's own browser: no list to choose from
    const modal = page.locator('#tc-widget-root');
    const entry = modal.getByText(TEST_WALLET_NAME, { exact: true }).first();
    await entry.waitFor({ timeout: 10_000 });
    if (screenshot) await shot(page, screenshot);
    await entry.click();
    const extension = modal.getByRole('button', { name: /Browser Extension|Расширение/ });
    await extension.waitFor({ timeout: 5_000 });
    await extension.click();
  }

  /**
   * What the page's console may say in these tests beyond the page's own doing, all from
   * @tonconnect/ui: it hard-codes two decorative images on raw.githubusercontent.com, which the
   * page's CSP refuses (the modal works without them); its QR code of the wallet list connects to
   * every offered bridge, which this offline machine cannot resolve (and it reports the aborted
   * attempts once a wallet is chosen); and once a wallet is connected through its browser
   * extension it asks for an image at the relative URL "undefined" (a 404 of no consequence).
   */
  const ownProblems = (problems: string[]) =>
    problems.filter(
      (p) =>
        !/raw\.githubusercontent\.com\/ton-connect\/sdk\//.test(p) &&
        !/ERR_NAME_NOT_RESOLVED|ERR_INTERNET_DISCONNECTED|TON_CONNECT_SDK_ERROR\] \w+\nAborted after attempts/.test(p) &&
        !/status of 404 \(Not Found\) \(http:\/\/127\.0\.0\.1:\d+\/pay\/undefined\)$/.test(p),
    );

  /** Waits for the page's notice to say `text`; on a timeout, says what the page and its console showed. */
  async function waitForNotice(page: Page, text: string, problems: string[], name: string): Promise<void> {
    try {
      await page.locator('#notice').filter({ hasText: text }).waitFor({ timeout: 15_000 });
    } catch (error) {
      await shot(page, `failed-${name}`);
      throw new Error(`no notice "${text}"; notice: ${JSON.stringify(await page.locator('#notice').textContent())}; console: ${JSON.stringify(problems)}`, {
        cause: error,
      });
    }
  }

  const depositOf = (paymentId: string) =>
    app.pool.oneFirst(sql.type(z.object({ address_friendly: z.string() }))`select address_friendly from deposit_addresses where payment_id = ${paymentId}`);

  it('TON on a desktop: the wallet signs the transfer Kassa built, the page says sent, and turns to paid when the chain has it', async () => {
    const payment = await createPayment({
      amount: '10.50',
      currency: 'USD',
      payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] },
      returnURL: 'https://shop.example.com/back',
    });
    const { context, page, problems, wallet } = await openWithWallet(payment.id, { viewport: DESKTOP });
    try {
      // The facts: the rate used, a short reference, the way back while it is open.
      assert.equal(await page.locator('#exchange-rate').innerText(), '1 TON = 5.00 USD');
      assert.equal(await page.locator('#reference').innerText(), `${payment.id.slice(0, 4)}-${payment.id.slice(4, 8)}`.toUpperCase());
      assert.equal(await page.locator('#back-link').getAttribute('href'), 'https://shop.example.com/back');
      assert.equal(await page.locator('#gas-note').count(), 0, 'no gas notice for TON itself');
      // TON Connect first; the QR and the wallet links stay as the fallback.
      const pay = page.locator('#tonconnect-pay');
      await pay.waitFor({ state: 'visible', timeout: 10_000 });
      assert.equal(await pay.innerText(), 'Pay with a connected wallet');
      assert.equal(await page.locator('svg.qr').count(), 1);
      assert.equal(await page.locator('#wallet-link').count(), 1);
      await assertAccessible(page, 'pending TON, desktop');
      await shot(page, '12-tonconnect-ton-desktop');
      await markDocument(page);

      // The chain holds its blocks back meanwhile, so "pending until the chain has it" is observable.
      app.sandbox.chain.holdBlocks();
      await connectAndPay(page, '13-tonconnect-wallet-list');
      await waitForNotice(page, 'Sent from your wallet', problems, 'ton');
      assert.equal(await pay.innerText(), 'Sent, confirming…');
      await shot(page, '14-tonconnect-sent-confirming');

      // What the wallet was asked to sign: what is due, to the deposit address, valid until the expiry.
      assert.equal(wallet.requests.length, 1);
      const [request] = wallet.requests;
      const deposit = await depositOf(payment.id);
      assert.deepEqual(request.messages, [{ address: deposit, amount: '2100000000' }]);
      assert.equal(request.valid_until, Math.floor(Date.parse(payment.timer.expiresAt) / 1000));
      assert.equal(request.from, app.sandbox.chain.customerAddress);
      // Completion only from the chain: still pending until the chain reader reads the transfer.
      assert.equal(await app.pool.oneFirst(sql.type(z.object({ status: z.string() }))`select status from payments where id = ${payment.id}`), 'pending');
      app.sandbox.chain.releaseBlocks();

      await watchChain();
      await page.getByRole('heading', { name: 'Paid' }).waitFor({ timeout: 10_000 });
      assert.ok(await sameDocument(page), 'turned to paid without a reload');
      assert.equal(await page.locator('#paid-amount').innerText(), '2.1 TON');
      assert.match(await page.locator('#paid-at').innerText(), /\d{4}.*\d\d:\d\d/);
      assert.equal(await page.locator('.hashes code').count(), 1);
      assert.equal(await page.locator('.hashes a').count(), 0, 'no block explorer for the sandbox chain');
      assert.equal(await page.locator('#back-link').count(), 0);
      assert.equal(await page.locator('#return-link').getAttribute('href'), 'https://shop.example.com/back');
      await assertAccessible(page, 'paid, desktop');
      await shot(page, '15-tonconnect-paid-desktop');
      assert.deepEqual(ownProblems(problems), []);
    } finally {
      await context.close();
    }
  });

  it("USDT on a phone inside the wallet's browser, in Russian: the jetton transfer goes from the customer's own jetton wallet, with the gas notice first", async () => {
    const payment = await createPayment({ amount: '3', currency: 'USD', payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } });
    const { context, page, problems, wallet } = await openWithWallet(payment.id, { locale: 'ru-RU', embedded: true });
    try {
      assert.equal(await page.getAttribute('html', 'lang'), 'ru');
      assert.match(await page.locator('#gas-note').innerText(), /около 0,05 TON/);
      assert.equal(await page.locator('#exchange-rate').innerText(), '1 USDT = 1.00 USD');
      const pay = page.locator('#tonconnect-pay');
      await pay.waitFor({ state: 'visible', timeout: 10_000 });
      assert.equal(await pay.innerText(), 'Оплатить подключённым кошельком');
      await assertAccessible(page, 'pending USDT, phone, ru');
      await shot(page, '16-tonconnect-usdt-phone-ru');

      await connectAndPay(page, 'embedded');
      await waitForNotice(page, 'Отправлено из кошелька', problems, 'usdt');
      await shot(page, '18-tonconnect-usdt-sent-ru');

      // TEP-74 transfer, sent to the customer's USDT wallet (asked of the master), never to the deposit.
      const [request] = wallet.requests;
      const chain = app.sandbox.chain;
      const customer = chain.customer.address;
      const master = Address.parseRaw(chain.jettonMasters().USDT!);
      const customerJettonWallet = await chain.jettonWalletOf(master, customer);
      assert.equal(request.messages.length, 1);
      const [message] = request.messages;
      assert.ok(Address.parse(message.address).equals(customerJettonWallet));
      assert.equal(message.amount, '50000000', '0.05 TON for the fees');
      const body = Cell.fromBase64(message.payload).beginParse();
      assert.equal(body.loadUint(32), 0x0f8a7ea5);
      body.loadUintBig(64);
      assert.equal(body.loadCoins(), 3_000_000n, 'the amount in base units');
      assert.ok(body.loadAddress().equals(Address.parse(await depositOf(payment.id))), 'destination: the deposit address (its owner)');
      assert.ok(body.loadAddress().equals(customer), 'response destination: the customer');
      assert.equal(body.loadBit(), false);
      assert.ok(body.loadCoins() > 0n, 'forward_ton_amount > 0');

      await watchChain();
      await page.getByRole('heading', { name: 'Оплачено' }).waitFor({ timeout: 10_000 });
      assert.equal(await page.locator('#notice').isHidden(), true, 'the "sent" notice gives way to the result');
      assert.equal(await page.locator('#paid-amount').innerText(), '3 USDT');
      await assertAccessible(page, 'paid, phone, ru');
      await shot(page, '19-tonconnect-usdt-paid-ru');
      assert.deepEqual(ownProblems(problems), []);
    } finally {
      await context.close();
    }
  });

  it('a wallet that refuses leaves the page usable: it says so, and the QR code and links still pay', async () => {
    const payment = await createPayment({ amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } });
    const { context, page, problems, wallet } = await openWithWallet(payment.id, { viewport: DESKTOP });
    try {
      wallet.mode = 'reject';
      await page.locator('#tonconnect-pay').waitFor({ state: 'visible', timeout: 10_000 });
      await connectAndPay(page);
      await waitForNotice(page, 'The wallet did not send the payment', problems, 'rejected');
      assert.equal(wallet.requests.length, 1);
      assert.equal(await page.locator('#tonconnect-pay').isEnabled(), true, 'can try again');
      assert.match(await page.locator('#tonconnect-account-text').innerText(), new RegExp(`^Connected: ${TEST_WALLET_NAME}, `));
      assert.equal(await page.locator('svg.qr').count(), 1);
      // @tonconnect/ui closes its "confirm in your wallet" modal (an icon-only close button without a
      // name) with an animation after the refusal: the page is checked once that modal is gone.
      await page.locator('[data-tc-actions-modal-container]').waitFor({ state: 'hidden', timeout: 10_000 });
      await assertAccessible(page, 'after a refusal');
      await shot(page, '20-tonconnect-rejected');

      // Paid another way (as with the QR code): the page still turns to paid.
      await app.pay(await depositOf(payment.id), 'TON', '1');
      await watchChain();
      await page.getByRole('heading', { name: 'Paid' }).waitFor({ timeout: 10_000 });
      assert.deepEqual(ownProblems(problems), []);
    } finally {
      await context.close();
    }
  });

  it('less than 5 minutes left: a visible warning, told to screen readers politely', async () => {
    // 4½ minutes before its end (the shortest TTL the API takes is 15 minutes).
    const payment = await createPayment({ amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } });
    await app.pool.query(sql.unsafe`update payments set expires_at = now() + interval '270 seconds' where id = ${payment.id}`);
    const { context, page, problems } = await open({ viewport: DESKTOP });
    try {
      await page.goto(`${app.url}/pay/${payment.id}`);
      const warning = page.locator('#expiry-warning');
      assert.equal(await warning.isVisible(), true);
      assert.equal(await warning.innerText(), 'Less than 5 minutes left to pay.');
      assert.match(await page.locator('#countdown').innerText(), /^04:\d\d$/);
      await page.waitForFunction(() => document.getElementById('announce')?.textContent === '5 minutes left to pay.', undefined, { timeout: 3000 });
      assert.equal(await page.locator('#announce').getAttribute('aria-live'), 'polite');
      await assertAccessible(page, 'expiry warning');
      await shot(page, '21-expiry-warning');
      assert.deepEqual(ownProblems(problems), []);
    } finally {
      await context.close();
    }
  });
});

describe("the shop's face in headless Chromium", () => {
  it("runs the page's own scripts for a store with a logo, and a logo URL that would inject CSP directives is refused (or, stored before, left out)", async () => {
    const shop = await app.store({ name: 'logo-shop', methods: 'TON/TON' });
    const injected = 'https://cdn.example.com;script-src/logo.png';
    await assert.rejects(updateStore(app.pool, shop.id, { 'logo-url': injected }), /--logo-url must name a host/);
    const payment = async () => {
      const created = await app.request('POST', '/v1/payments', {
        token: shop.token,
        body: { amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
      });
      assert.equal(created.status, 201, created.text);
      return created.json.id as string;
    };
    // A logo as `kassa store update` takes it, and one stored before it checked the host.
    const cases: Array<[string, string, boolean]> = [['https://cdn.example.com/brand/logo.svg', '24-logo-scripts-run', true]];
    cases.push([injected, '25-injected-logo-left-out', false]);
    for (const [logoUrl, name, shown] of cases) {
      await app.pool.query(sql.unsafe`update stores set logo_url = ${logoUrl} where id = ${shop.id}`);
      const id = await payment();
      const { context, page, problems } = await open();
      try {
        await context.route(/^https:\/\/cdn\.example\.com/, (route) =>
          route.fulfill({
            contentType: 'image/svg+xml',
            body: '<svg xmlns="http://www.w3.org/2000/svg" width="56" height="56"><rect width="56" height="56" fill="#333"/></svg>',
          }),
        );
        const response = await page.goto(`${app.url}/pay/${id}`);
        const policy = response!.headers()['content-security-policy']!;
        assert.deepEqual(
          policy.split(';').filter((directive) => directive.trim().startsWith('script-src')),
          [" script-src 'self'"],
          policy,
        );
        // The page's script runs: it counts down (the server wrote the first value) and offers TON Connect.
        const first = await page.locator('#countdown').innerText();
        await page.waitForFunction((written) => document.getElementById('countdown')?.textContent !== written, first, { timeout: 10_000 });
        await page.locator('#tonconnect-pay').waitFor({ state: 'visible', timeout: 10_000 });
        assert.equal(await page.locator('#store-logo').count(), shown ? 1 : 0, name);
        await shot(page, name);
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    }
  });

  it('display name, logo and accent colour on a phone and a desktop, in both languages, accessible', async () => {
    const shop = await app.store({ name: 'acct-7781', methods: 'TON/TON,USDT/TON' });
    const updated = await updateStore(app.pool, shop.id, {
      'display-name': 'Green Leaf Tea',
      'logo-url': 'https://cdn.example.com/brand/logo.svg',
      'accent-color': '#2e7d32',
    });
    assert.equal(updated.accentColor, '#2e7d32');
    const created = await app.request('POST', '/v1/payments', {
      token: shop.token,
      body: { amount: '12', currency: 'USD', payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } },
    });
    assert.equal(created.status, 201, created.text);
    // The merchant's logo host, answered here (this machine is offline); the page's CSP allows that origin alone.
    const logo =
      '<svg xmlns="http://www.w3.org/2000/svg" width="56" height="56" viewBox="0 0 56 56"><rect width="56" height="56" rx="12" fill="#2e7d32"/><path d="M28 12c10 6 12 20 0 32-12-12-10-26 0-32z" fill="#c8e6c9"/></svg>';
    for (const [viewport, locale, name] of [
      [MOBILE, 'en-US', '22-branded-phone-en'],
      [DESKTOP, 'ru-RU', '23-branded-desktop-ru'],
    ] as const) {
      const { context, page, problems } = await open({ viewport, locale });
      try {
        await context.route('https://cdn.example.com/brand/logo.svg', (route) => route.fulfill({ contentType: 'image/svg+xml', body: logo }));
        await page.goto(`${app.url}/pay/${created.json.id}`);
        assert.equal(await page.locator('h1').innerText(), 'Green Leaf Tea');
        await page.waitForFunction(
          () => {
            const image = document.getElementById('store-logo') as HTMLImageElement | null;
            return !!image && image.complete && image.naturalWidth > 0;
          },
          undefined,
          { timeout: 5000 },
        );
        const pay = page.locator('#tonconnect-pay');
        await pay.waitFor({ state: 'visible', timeout: 10_000 });
        assert.equal(await pay.evaluate((element) => getComputedStyle(element).backgroundColor), 'rgb(46, 125, 50)');
        assert.equal(await pay.evaluate((element) => getComputedStyle(element).color), 'rgb(255, 255, 255)');
        await assertAccessible(page, name);
        await shot(page, name);
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    }
  });
});

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
      await page.getByLabel('Amount in TON').fill('0.5');
      await page.getByRole('button', { name: 'Continue to payment' }).click();
      await page.getByRole('alert').filter({ hasText: 'at least 1' }).waitFor();
      assert.equal(await page.getByLabel('Amount in TON').getAttribute('aria-invalid'), 'true');
      await assertAccessible(page, 'the form with a refusal');
      await shot(page, 'link-amount-refused');
      await page.getByLabel('Amount in TON').fill('2.5');
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
});
