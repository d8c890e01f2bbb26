// The hosted checkout paid from a connected wallet (TON Connect) in real headless Chromium: a test
// wallet injected in the page signs what Kassa built; desktop, a phone inside the wallet's browser, a
// refusal, and the last minutes' warning. Shared setup: test/helpers/checkoutBrowser.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Address, Cell } from '@ton/core';
import type { Page } from 'playwright-core';
import { sql, z } from '../../src/db/pool.ts';
import { injectTestWallet, TEST_WALLET_NAME } from '../helpers/tonconnectWallet.ts';
import {
  app,
  assertAccessible,
  createPayment,
  DESKTOP,
  markDocument,
  open,
  sameDocument,
  shot,
  useCheckoutBrowser,
  watchChain,
} from '../helpers/checkoutBrowser.ts';

useCheckoutBrowser();

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
   * @tonconnect/ui (its images are Kassa's own: no refusal of a third-party image is tolerated): its QR code of the wallet list connects to
   * every offered bridge, which this offline machine cannot resolve (and it reports the aborted
   * attempts once a wallet is chosen); and once a wallet is connected through its browser
   * extension it asks for an image at the relative URL "undefined" (a 404 of no consequence).
   */
  const ownProblems = (problems: string[]) =>
    problems.filter(
      (p) =>
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

  it('the wallet list’s images all come from Kassa: no request to another host for an image, none refused by the CSP, every one drawn', async () => {
    const payment = await createPayment({ amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } });
    const { context, page, problems } = await open({ viewport: DESKTOP });
    const images: string[] = [];
    const elsewhere: string[] = [];
    page.on('request', (request) => {
      const url = request.url();
      if (request.resourceType() === 'image') images.push(url);
      // Bridges are the wallets' own (connect-src); anything else on another host is not Kassa's.
      if (!url.startsWith(app.url) && !url.startsWith('data:') && request.resourceType() !== 'eventsource' && request.resourceType() !== 'fetch')
        elsewhere.push(url);
    });
    try {
      assert.equal((await page.goto(`${app.url}/pay/${payment.id}`))?.status(), 200);
      await page.locator('#tonconnect-pay').click();
      const modal = page.locator('#tc-widget-root');
      await modal.getByText('Tonkeeper', { exact: true }).first().waitFor({ timeout: 10_000 });
      await page.waitForTimeout(500);
      await shot(page, 'tonconnect-wallet-list-images');
      const drawn = await page.evaluate(() =>
        Array.from(document.querySelectorAll('#tc-widget-root img')).map((img) => ({
          src: (img as HTMLImageElement).currentSrc || (img as HTMLImageElement).src,
          ok: (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth > 0,
        })),
      );
      assert.ok(drawn.length >= 4, `the list shows its wallets' images (${drawn.length})`);
      for (const image of drawn) {
        assert.ok(image.src.startsWith(app.url) || image.src.startsWith('data:image/svg+xml'), image.src.slice(0, 80));
        assert.equal(image.ok, true, `drawn: ${image.src.slice(0, 80)}`);
      }
      assert.deepEqual(
        images.filter((url) => !url.startsWith(app.url) && !url.startsWith('data:')),
        [],
      );
      assert.deepEqual(elsewhere, []);
      assert.deepEqual(
        problems.filter((p) => /Content Security Policy|img-src|raw\.githubusercontent/.test(p)),
        [],
      );
    } finally {
      await context.close();
    }
  });

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
      assert.equal(await page.locator('#exchange-rate').innerText(), '1 GRAM = 5.00 USD');
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
      assert.equal(await page.locator('#paid-amount').innerText(), '2.1 GRAM');
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
      assert.match(await page.locator('#gas-note').innerText(), /около 0,05 GRAM/);
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
