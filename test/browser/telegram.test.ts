// The checkout as a Telegram Mini App in real headless Chromium (issue 30 §6–8): a harness page on
// another local origin plays Telegram's web client (test/helpers/telegram.ts) — it frames BotFather's
// URL ({checkout}/tg) with the launch in the fragment (init data signed with a test key pair, the
// payment id as start parameter, theme parameters), and speaks the web_app_* events both ways by
// postMessage with Telegram's own script in the page (telegram-web-app.js, @twa-dev/sdk), under the
// page's strict CSP (any violation fails). The page takes Telegram's theme, puts its main action on the MainButton, shows the
// BackButton while the wallet list is open, opens TON Connect's wallet list when the MainButton is
// pressed (in TON Connect's own Telegram mode, which test/helpers/tonconnectWallet.ts's injected
// extension wallet does not drive: the payment itself is a sandbox transfer here),
// and Kassa records the Telegram user from the signed init data. A treasury store's payment (issue 43)
// is paid from the Mini App through TON Connect by a wallet injected into its frame as the browser of
// a wallet app (isWalletBrowser): the wallet is asked for the transfer to the treasury carrying the
// reference; the page shows QR payers the reference. Fails (never skips) without Chromium.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Address, Cell } from '@ton/core';
import type { Browser, Frame, Page } from 'playwright-core';
import { sql, z } from '../../src/db/pool.ts';
import { updateStore } from '../../src/stores/stores.ts';
import type { TestApp } from '../helpers/app.ts';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { chromiumBrowser } from '../helpers/chromium.ts';
import { DARK_THEME, launchUrl, signInitData, startTelegramHarness, type TelegramHarness, telegramKeys, WEB_CLIENT_STYLE } from '../helpers/telegram.ts';
import { assertNoHorizontalScroll, seriousAxeViolations } from '../helpers/dashboardBrowser.ts';
import { injectTestWallet, TEST_WALLET_NAME } from '../helpers/tonconnectWallet.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/telegram');
const BOT_ID = 7_000_000_002;
const keys = telegramKeys();
const step = (what: string) => process.env.TELEGRAM_TEST_TRACE && process.stderr.write(`${new Date().toISOString()} ${what}\n`);

let app: ChainTestApp;
let harness: TelegramHarness;
let store: Awaited<ReturnType<TestApp['store']>>;
let browser: Browser;

before(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  browser = await chromiumBrowser();
  // The harness's origin is the app's TELEGRAM_WEB_ORIGINS: it starts first, on its own port.
  harness = await startTelegramHarness();
  app = await startChainApp({ TELEGRAM_PUBLIC_KEY: keys.publicKeyHex, TELEGRAM_WEB_ORIGINS: harness.origin });
  harness.appOrigin = new URL(app.url).origin;
  store = await app.store({ name: 'Blue Bottle Café', methods: 'TON/TON' });
  await updateStore(app.pool, store.id, { 'telegram-bot': 'BlueBottleBot', 'telegram-app': 'pay', 'telegram-bot-id': String(BOT_ID) });
});
after(async () => {
  await browser?.close();
  await harness?.close();
  await app?.close();
});

type Event = { eventType: string; eventData: any };
const events = (page: Page): Promise<Event[]> => page.evaluate(() => (window as unknown as { telegramEvents: Event[] }).telegramEvents);
const send = (page: Page, eventType: string, eventData: unknown = null) =>
  page.evaluate(([type, data]) => (window as unknown as { sendToMiniApp(t: unknown, d: unknown): void }).sendToMiniApp(type, data), [
    eventType,
    eventData,
  ] as const);

/** The last event of `type` the Mini App posted, once `accept` takes it. */
async function waitForEvent(page: Page, type: string, accept: (data: any) => boolean = () => true): Promise<Event> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const found = (await events(page)).filter((e) => e.eventType === type);
    const last = found.at(-1);
    if (last && accept(last.eventData)) return last;
    if (Date.now() > deadline) throw new Error(`no ${type} event accepted; events: ${JSON.stringify(await events(page))}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('the checkout as a Telegram Mini App', () => {
  it("inside Telegram's web client: Telegram's theme, the MainButton opens TON Connect's wallet list, the BackButton closes it, paid: back to the store, the Telegram user is recorded", async () => {
    const created = await app.request('POST', '/v1/payments', {
      token: store.token,
      body: { amount: '2.5', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] }, returnURL: 'https://shop.example.com/back' },
    });
    assert.equal(created.status, 201, created.text);
    const payment = created.json;
    assert.equal(payment.telegramURL, `https://t.me/BlueBottleBot/pay?startapp=${payment.id}`);

    const context = await browser.newContext({ viewport: { width: 390, height: 760 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      step(`console ${message.type()}: ${message.text()}`);
      if (message.type() === 'error') problems.push(message.text());
    });
    try {
      const initData = signInitData(keys, { botId: BOT_ID, user: { id: 5_512_345_678, username: 'alice_tg' }, startParam: payment.id });
      // Telegram opens BotFather's URL with the launch in the fragment; the page goes on to /tg/{id}.
      step('await page.goto(harness.url(');
      await page.goto(harness.url(launchUrl(`${app.url}/pay/tg`, { initData, startParam: payment.id, theme: { bg_color: '#ffffff' } })));
      const frameOf = (): Frame | undefined => page.frames().find((f) => f.url().includes(`/pay/tg/${payment.id}`));
      await page.waitForFunction(() => true);
      for (let i = 0; !frameOf() && i < 100; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      const frame = frameOf();
      assert.ok(frame, 'the boot page went on to the payment');
      step("await frame.locator('#checkout').waitFor");
      await frame.locator('#checkout').waitFor({ timeout: 15_000 });

      // The host protocol: the frame ready, the Mini App ready, expand, theme and viewport asked for; the MainButton shows the page's main action.
      step("await waitForEvent(page, 'web_app_ready'");
      await waitForEvent(page, 'web_app_ready');
      const kinds = new Set((await events(page)).map((e) => e.eventType));
      for (const kind of ['iframe_ready', 'web_app_expand', 'web_app_request_theme', 'web_app_request_viewport']) assert.ok(kinds.has(kind), kind);
      step('const main = await waitForEvent(');
      const main = await waitForEvent(page, 'web_app_setup_main_button', (d) => d.is_visible && d.color === DARK_THEME.button_color);
      assert.equal(main.eventData.text, 'Pay with a connected wallet');
      assert.equal(main.eventData.is_active, true);
      assert.equal(main.eventData.text_color, DARK_THEME.button_text_color);

      // Telegram's theme (theme_changed, answered to web_app_request_theme) on the page.
      step('const colours = await frame.evaluate(');
      const colours = await frame.evaluate(() => ({
        card: getComputedStyle(document.getElementById('checkout')!).backgroundColor,
        page: getComputedStyle(document.body).backgroundColor,
        text: getComputedStyle(document.getElementById('store-name')!).color,
        viewport: document.documentElement.style.getPropertyValue('--tg-viewport-stable-height'),
      }));
      assert.deepEqual(colours, { card: 'rgb(23, 33, 43)', page: 'rgb(35, 46, 60)', text: 'rgb(245, 245, 245)', viewport: '640px' });

      // The web client's own CSS (set_custom_style), which Telegram's script takes only from
      // https://web.telegram.org (so not from the harness): sent as from there, it is neither applied
      // nor refused by the CSP (no violation); the page's own scrollbars stay (checkout.css).
      await frame.evaluate((style) => {
        const data = JSON.stringify({ eventType: 'set_custom_style', eventData: style });
        window.dispatchEvent(new MessageEvent('message', { data, origin: 'https://web.telegram.org', source: window.parent }));
      }, WEB_CLIENT_STYLE);
      const scrollbars = await frame.evaluate(() => ({
        width: getComputedStyle(document.documentElement).scrollbarWidth,
        inlineStyles: Array.from(document.querySelectorAll('style')).filter((style) => !style.hasAttribute('nonce')).length,
      }));
      assert.deepEqual(scrollbars, { width: 'thin', inlineStyles: 0 });
      assert.equal(await frame.locator('#tonconnect-pay').isHidden(), true, 'the MainButton replaces the page button');

      // Kassa checked the init data (Telegram's signature) and recorded the payer.
      const payer = async () =>
        app.pool.one(sql.type(z.object({ id: z.string().nullable(), username: z.string().nullable() }))`
          select telegram_user_id::text as id, telegram_username as username from payments where id = ${payment.id}`);
      for (let i = 0; (await payer()).id === null && i < 50; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(await payer(), { id: '5512345678', username: 'alice_tg' });
      step('await page.screenshot({ path: path.join(');
      await page.screenshot({ path: path.join(ARTIFACTS, '1-mini-app-pending.png') });

      // MainButton pressed: the wallet list opens, and the BackButton with it; BackButton closes it.
      step("await send(page, 'main_button_pressed');");
      await send(page, 'main_button_pressed');
      const modal = frame.locator('#tc-widget-root');
      await modal.getByText(TEST_WALLET_NAME, { exact: true }).first().waitFor({ timeout: 10_000 });
      // Its images are Kassa's own (issue 47 item 9): none from another host, each drawn.
      const images = await frame.evaluate(() =>
        Array.from(document.querySelectorAll('#tc-widget-root img')).map((img) => ({
          own: (img as HTMLImageElement).src.startsWith(window.location.origin) || (img as HTMLImageElement).src.startsWith('data:image/svg+xml'),
          drawn: (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth > 0,
        })),
      );
      assert.ok(images.length > 0);
      assert.deepEqual(
        images.filter((image) => !image.own || !image.drawn),
        [],
      );
      await waitForEvent(page, 'web_app_setup_back_button', (d) => d.is_visible === true);
      step("await send(page, 'back_button_pressed');");
      await send(page, 'back_button_pressed');
      await waitForEvent(page, 'web_app_setup_back_button', (d) => d.is_visible === false);
      // The list closed and the MainButton active again (not pressable while it shows progress), as a person would see it.
      await modal.getByText(TEST_WALLET_NAME, { exact: true }).first().waitFor({ state: 'hidden', timeout: 10_000 });
      await waitForEvent(page, 'web_app_setup_main_button', (d) => d.is_visible === true && d.is_active === true && d.is_progress_visible === false);

      // Again: the wallet list opens (TON Connect, here in its Telegram mode), and closes with the BackButton.
      await send(page, 'main_button_pressed');
      await modal.getByText(TEST_WALLET_NAME, { exact: true }).first().waitFor({ timeout: 10_000 });
      await waitForEvent(page, 'web_app_setup_back_button', (d) => d.is_visible === true);
      await send(page, 'back_button_pressed');
      await waitForEvent(page, 'web_app_setup_back_button', (d) => d.is_visible === false);

      // Paid (a sandbox transfer to the deposit): the page turns to paid in place.
      const transfer = await app.request('POST', '/sandbox/v1/transfers', { body: { to: payment.paymentDetails.address, coin: 'TON', amount: '2.5' } });
      assert.equal(transfer.status, 201, transfer.text);
      await app.settle();
      await frame.getByRole('heading', { name: 'Paid' }).waitFor({ timeout: 15_000 });
      // Paid: the MainButton takes the customer back to the store.
      step('const back = await waitForEvent(');
      const back = await waitForEvent(page, 'web_app_setup_main_button', (d) => d.is_visible && /Blue Bottle/.test(d.text));
      assert.equal(back.eventData.text, 'Back to Blue Bottle Café');
      await send(page, 'main_button_pressed');
      await waitForEvent(page, 'web_app_open_link', (d) => d.url === 'https://shop.example.com/back');
      await page.screenshot({ path: path.join(ARTIFACTS, '2-mini-app-paid.png') });
      assert.equal((await payer()).id, '5512345678');
      assert.deepEqual(
        problems.filter((p) => !/status of 404 \(Not Found\)$|ERR_NAME_NOT_RESOLVED|ERR_INTERNET_DISCONNECTED|Aborted after attempts|\/pay\/undefined/.test(p)),
        [],
      );
    } finally {
      await context.close();
    }
  });

  it('outside Telegram the same page is the ordinary checkout: no theme, no events, its own pay button', async () => {
    const created = await app.request('POST', '/v1/payments', {
      token: store.token,
      body: { amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
    });
    const context = await browser.newContext({ viewport: { width: 390, height: 760 } });
    const page = await context.newPage();
    try {
      await page.goto(`${app.url}/pay/tg/${created.json.id}`);
      await page.locator('#tonconnect-pay').waitFor({ state: 'visible', timeout: 10_000 });
      assert.equal(await page.evaluate(() => document.documentElement.classList.contains('tg')), false);
      assert.equal(await page.evaluate(() => document.documentElement.style.getPropertyValue('--card')), '');
    } finally {
      await context.close();
    }
  });

  it('another store’s payment opened in this store’s bot is refused: a clear page in the Mini App, nothing of that payment (amount, address, store name)', async () => {
    // Store B has a bot of its own; store C none. Someone sends t.me/BlueBottleBot/pay?startapp=<B's or C's payment>.
    const other = await app.store({ name: 'Mallory Imports', methods: 'TON/TON' });
    await updateStore(app.pool, other.id, { 'telegram-bot': 'MalloryBot', 'telegram-app': 'pay', 'telegram-bot-id': '7000000099' });
    const botless = await app.store({ name: 'Quiet Corner', methods: 'TON/TON' });
    const make = async (token: string) => {
      const created = await app.request('POST', '/v1/payments', {
        token,
        body: { amount: '7.77', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
      });
      assert.equal(created.status, 201, created.text);
      return created.json;
    };
    const foreign = await make(other.token);
    const noBot = await make(botless.token);
    const leaks = (text: string, payment: { paymentDetails: { address: string } }, storeName: string) =>
      [storeName, '7.77', payment.paymentDetails.address].filter((secret) => text.includes(secret));

    for (const [payment, storeName] of [
      [foreign, 'Mallory Imports'],
      [noBot, 'Quiet Corner'],
    ] as const) {
      const initData = signInitData(keys, { botId: BOT_ID, user: { id: 5_512_345_678, username: 'alice_tg' }, startParam: payment.id });
      // What the page's address answers, with and without the launch (the server's side).
      const refused = await fetch(`${app.url}/pay/tg/${payment.id}?tgWebAppData=${encodeURIComponent(initData)}`);
      const refusedText = await refused.text();
      assert.equal(refused.status, 403);
      assert.match(refusedText, /This payment cannot be opened in this bot/);
      assert.deepEqual(leaks(refusedText, payment, storeName), []);
      for (const url of [`${app.url}/pay/tg/${payment.id}`, `${app.url}/pay/tg?tgWebAppStartParam=${payment.id}`]) {
        const boot = await fetch(url);
        assert.equal(boot.status, 200, url);
        assert.deepEqual(leaks(await boot.text(), payment, storeName), [], url);
      }

      // In Telegram's web client: the Mini App shows the refusal and closes on its MainButton.
      const context = await browser.newContext({ viewport: { width: 390, height: 760 }, isMobile: true, hasTouch: true });
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      try {
        await page.goto(harness.url(launchUrl(`${app.url}/pay/tg`, { initData, startParam: payment.id })));
        let frame: Frame | undefined;
        for (let i = 0; i < 100; i++) {
          frame = page.frames().find((f) => f.url().includes(`/pay/tg/${payment.id}?`));
          if (frame) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        assert.ok(frame, 'the boot page went on with the launch');
        await frame.getByRole('heading', { name: 'This payment cannot be opened in this bot' }).waitFor({ timeout: 15_000 });
        assert.deepEqual(leaks(await frame.content(), payment, storeName), []);
        assert.deepEqual(await seriousAxeViolations(frame as unknown as Page), [], 'the refusal in the Mini App: axe-core found serious violations');
        const close = await waitForEvent(page, 'web_app_setup_main_button', (d) => d.is_visible);
        assert.equal(close.eventData.text, 'Close');
        await page.screenshot({ path: path.join(ARTIFACTS, `3-mini-app-other-store-${storeName === 'Quiet Corner' ? 'no-bot' : 'bot'}.png`) });
        // Its refusal is the answer's 403, which Chromium logs; nothing else.
        assert.deepEqual(
          problems.filter((p) => !/status of 403/.test(p)),
          [],
        );
      } finally {
        await context.close();
      }
      // Nobody was recorded as its payer.
      assert.equal(
        await app.pool.oneFirst(sql.type(z.object({ id: z.string().nullable() }))`select telegram_user_id::text as id from payments where id = ${payment.id}`),
        null,
      );
    }
  });

  it("a treasury store's payment paid from the Mini App through TON Connect at 375 px: the wallet sends the reference to the treasury, the payment completes; the reference is shown for QR payers (axe)", async () => {
    const raw = (address: string) => Address.parse(address).toRawString();
    const treasury = raw((await app.request('POST', '/sandbox/v1/wallets')).json.address);
    const shop = await app.store({ name: 'Harbour Tea', methods: 'TON/TON' });
    await updateStore(app.pool, shop.id, {
      'telegram-bot': 'HarbourTeaBot',
      'telegram-app': 'pay',
      'telegram-bot-id': '7000000003',
      treasury,
      settlement: 'treasury',
    });
    const created = await app.request('POST', '/v1/payments', {
      token: shop.token,
      body: { amount: '0.8', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
    });
    assert.equal(created.status, 201, created.text);
    const payment = created.json;
    const reference: string = payment.paymentDetails.reference;
    assert.equal(raw(payment.paymentDetails.address), treasury);

    const context = await browser.newContext({ viewport: { width: 375, height: 760 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      step(`console ${message.type()}: ${message.text()}`);
      if (message.type() === 'error') problems.push(message.text());
    });
    try {
      // Opened in a wallet app's own browser (its init script runs in the Mini App's frame too).
      const wallet = await injectTestWallet(page, app, { embedded: true });
      const initData = signInitData(keys, { botId: 7_000_000_003, user: { id: 5_512_345_679, username: 'bob_tg' }, startParam: payment.id });
      await page.goto(harness.url(launchUrl(`${app.url}/pay/tg`, { initData, startParam: payment.id })));
      let frame: Frame | undefined;
      for (let i = 0; !frame && i < 100; i++) {
        frame = page.frames().find((f) => f.url().includes(`/pay/tg/${payment.id}`));
        if (!frame) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(frame, 'the boot page went on to the payment');
      await frame.locator('#checkout').waitFor({ timeout: 15_000 });
      // For QR and manual payers: the reference the customer must send, and the link carrying it.
      assert.equal(await frame.locator('#reference-value').innerText(), reference);
      assert.match(await frame.locator('#reference-box').innerText(), /The comment is required/);
      assert.equal(new URL((await frame.locator('#wallet-link').getAttribute('href'))!).searchParams.get('text'), reference);
      const main = await waitForEvent(page, 'web_app_setup_main_button', (d) => d.is_visible && d.is_active);
      assert.equal(main.eventData.text, 'Pay with a connected wallet');
      await assertNoHorizontalScroll(frame as unknown as Page, 'the Mini App of a treasury payment at 375 px');
      assert.deepEqual(await seriousAxeViolations(frame as unknown as Page), [], 'the Mini App of a treasury payment: axe-core found serious violations');
      await page.screenshot({ path: path.join(ARTIFACTS, '4-mini-app-treasury-pending.png') });

      // The MainButton pays: the wallet is asked for the transfer to the treasury with the reference.
      await send(page, 'main_button_pressed');
      await frame.locator('#notice').filter({ hasText: 'Sent from your wallet' }).waitFor({ timeout: 15_000 });
      assert.equal(wallet.requests.length, 1);
      const [message] = wallet.requests[0].messages;
      assert.equal(raw(message.address), treasury, 'to the treasury itself, no deposit');
      assert.equal(message.amount, '800000000');
      assert.equal(message.payload, payment.paymentDetails.payload, 'paymentDetails.payload: the reference as a text comment');
      const body = Cell.fromBase64(message.payload).beginParse();
      assert.equal(body.loadUint(32), 0);
      assert.equal(body.loadStringTail(), reference);

      await app.settle();
      await frame.getByRole('heading', { name: 'Paid' }).waitFor({ timeout: 15_000 });
      const paid = (await app.request('GET', `/v1/payments/${payment.id}`, { token: shop.token })).json;
      assert.equal(paid.status, 'completed');
      assert.equal(
        await app.pool.oneFirst(sql.type(z.object({ id: z.string().nullable() }))`select telegram_user_id::text as id from payments where id = ${payment.id}`),
        '5512345679',
        'the Telegram user who paid',
      );
      await page.screenshot({ path: path.join(ARTIFACTS, '5-mini-app-treasury-paid.png') });
      assert.deepEqual(
        problems.filter((p) => !/status of 404 \(Not Found\)$|ERR_NAME_NOT_RESOLVED|ERR_INTERNET_DISCONNECTED|Aborted after attempts|\/pay\/undefined/.test(p)),
        [],
      );
    } finally {
      await context.close();
    }
  });
});
