// A subscription's customer's portal in real headless Chromium (issue 45 item 5): at 375 px, with
// axe, the portal shows the status, the next date, the credit and the history; "Pay the next period"
// makes an ordinary payment of the subscription and goes to its checkout, paid there through TON
// Connect (the injected test wallet, test/helpers/tonconnectWallet.ts) on the sandbox chain; back in
// the portal the payment is credit and, the billing clock moved to the trial's end, the period is
// charged from it (active). And the portal inside the Telegram harness (test/helpers/telegram.ts):
// launched with startapp=s_<token>, it shows the portal, its MainButton is "Pay the next period", and
// pressing it opens the payment's checkout in the Mini App (the launch, which names the portal, is
// accepted for a payment of that subscription); launched from another shop's bot, the portal's own
// refusal in both languages. Fails (never skips) without Chromium.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Frame, Page } from 'playwright-core';
import { pino } from 'pino';
import { presentSubscription } from '../../src/presenters/subscription.ts';
import { runDueSubscriptions } from '../../src/subscriptions/engine.ts';
import type { SubscriptionRow } from '../../src/subscriptions/records.ts';
import { updateStore } from '../../src/stores/stores.ts';
import type { TestApp } from '../helpers/app.ts';
import { type ChainTestApp, startChainApp } from '../helpers/chain.ts';
import { chromiumBrowser } from '../helpers/chromium.ts';
import { assertNoHorizontalScroll, seriousAxeViolations } from '../helpers/dashboardBrowser.ts';
import { launchUrl, signInitData, startTelegramHarness, type TelegramHarness, telegramKeys } from '../helpers/telegram.ts';
import { injectTestWallet } from '../helpers/tonconnectWallet.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/portal');
const PHONE = { width: 375, height: 812 };
const BOT_ID = 7_000_000_045;
const keys = telegramKeys();

let app: ChainTestApp;
let harness: TelegramHarness;
let store: Awaited<ReturnType<TestApp['store']>>;
let browser: Browser;

before(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  browser = await chromiumBrowser();
  harness = await startTelegramHarness();
  app = await startChainApp({ TELEGRAM_PUBLIC_KEY: keys.publicKeyHex, TELEGRAM_WEB_ORIGINS: harness.origin });
  harness.appOrigin = new URL(app.url).origin;
  store = await app.store({ name: 'Blue Bottle VPN', methods: 'TON/TON' });
  await updateStore(app.pool, store.id, { 'telegram-bot': 'BlueVpnBot', 'telegram-app': 'pay', 'telegram-bot-id': String(BOT_ID) });
});
after(async () => {
  await browser?.close();
  await harness?.close();
  await app?.close();
});

const api = (method: 'GET' | 'POST', path: string, body?: unknown) => app.request(method, path, { token: store.token, ...(body ? { body } : {}) });
const shot = (page: Page, name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });

/** A trial subscription to a 1 GRAM monthly plan, with 0.25 added by the shop. */
async function subscription(reference: string) {
  const plan = await api('POST', '/v1/plans', { name: 'VPN monthly', currency: 'TON', amount: '1', interval: 'month' });
  assert.equal(plan.status, 201, plan.text);
  const sub = await api('POST', '/v1/subscriptions', { planID: plan.json.id, customer: { reference }, trialDays: 7 });
  assert.equal(sub.status, 201, sub.text);
  const credited = await api('POST', `/v1/subscriptions/${sub.json.id}/credits`, { amount: '0.25', note: 'welcome' });
  assert.equal(credited.status, 200, credited.text);
  return sub.json;
}

async function assertAccessible(page: Page, what: string) {
  assert.deepEqual(await seriousAxeViolations(page), [], `${what}: axe-core found serious violations`);
  await assertNoHorizontalScroll(page, what);
}

describe('the customer’s portal in Chromium', () => {
  it('at 375 px: status, next date, credit, history; pay the next period through TON Connect; the credit, then the renewal', async () => {
    const sub = await subscription('vpn-user-1');
    const portalURL = `${app.url}${new URL(sub.portalURL).pathname}`;
    const context = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 2, isMobile: true, hasTouch: true, locale: 'en-US' });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' && !/ERR_NAME_NOT_RESOLVED|ERR_INTERNET_DISCONNECTED|Aborted after attempts|\/pay\/undefined/.test(message.text()))
        problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    try {
      // On a phone, inside the wallet app's own browser: the page's button asks that wallet at once.
      const wallet = await injectTestWallet(page, app, { embedded: true });
      assert.equal((await page.goto(portalURL))?.status(), 200);
      assert.equal(await page.locator('#portal-status').innerText(), 'Free trial');
      assert.equal(await page.locator('#portal-credit').innerText(), '0.25 GRAM');
      assert.equal(await page.locator('#portal-price').innerText(), '1 GRAM per month');
      assert.match(await page.locator('#portal-date').innerText(), /\d{4}/);
      assert.deepEqual(await page.locator('#portal-history .entry-what').evaluateAll((els) => els.map((e) => e.firstChild?.textContent)), [
        'Added by the shop',
      ]);
      await assertAccessible(page, 'portal, trial');
      await shot(page, '1-portal-trial');

      // Pay the next period: what the credit lacks (0.75), an ordinary payment of the subscription, its checkout.
      await page.getByRole('button', { name: 'Pay the next period' }).click();
      await page.waitForURL(/\/pay\/[0-9a-f-]{36}$/);
      const paymentId = page.url().split('/').pop()!;
      const payment = (await api('GET', `/v1/payments/${paymentId}`)).json;
      assert.equal(payment.subscriptionID, sub.id);
      assert.equal(payment.amount, '0.75');
      const method = page.locator('button.method[data-coin="TON"]');
      if (await method.count()) await method.click();
      const pay = page.locator('#tonconnect-pay');
      await pay.waitFor({ state: 'visible', timeout: 10_000 });
      await assertAccessible(page, 'the renewal’s checkout');
      await pay.click();
      await page.locator('#notice').filter({ hasText: 'Sent from your wallet' }).waitFor({ timeout: 15_000 });
      assert.equal(wallet.requests.length, 1);
      await app.settle();
      await page.getByRole('heading', { name: 'Paid' }).waitFor({ timeout: 15_000 });
      await shot(page, '2-renewal-paid');

      // Back in the portal: the payment is credit (1 GRAM: the next period is covered), the history says so.
      await page.goto(portalURL);
      assert.equal(await page.locator('#portal-credit').innerText(), '1 GRAM');
      assert.equal(
        await page
          .locator('#portal-history .entry-what')
          .first()
          .evaluate((e) => e.firstChild?.textContent),
        'Payment received',
      );
      assert.equal(await page.locator('#portal-pay').innerText(), 'Top up one period');

      // The trial ends (the sandbox's billing clock): the period is charged from the credit, active.
      const moved = await api('POST', '/sandbox/v1/clock/advance', { seconds: 7 * 86_400 + 60 });
      assert.equal(moved.status, 200, moved.text);
      await runDueSubscriptions({
        pool: app.pool,
        config: app.config,
        now: app.clock.now,
        log: pino({ level: 'silent' }),
        present: (row: SubscriptionRow) => presentSubscription(row, app.config),
      });
      await page.reload();
      assert.equal(await page.locator('#portal-status').innerText(), 'Active');
      assert.equal(await page.locator('#portal-credit').innerText(), '0 GRAM');
      assert.equal(
        await page
          .locator('#portal-history .entry-what')
          .first()
          .evaluate((e) => e.firstChild?.textContent),
        'Period paid',
      );
      assert.equal(await page.locator('#portal-pay').innerText(), 'Pay the next period');
      await assertAccessible(page, 'portal, active');
      await shot(page, '3-portal-renewed');

      // In Russian, the same portal.
      await page.goto(`${portalURL}?lang=ru`);
      assert.equal(await page.locator('#portal-status').innerText(), 'Действует');
      await assertAccessible(page, 'portal, ru');
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  it('inside the Telegram harness: startapp=s_<token> shows the portal; its MainButton opens the payment in the Mini App', async () => {
    const sub = await subscription('vpn-user-2');
    const secret = new URL(sub.portalURL).pathname.split('/').pop()!;
    const context = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      // The harness's own origin has no favicon.
      if (message.type() === 'error' && !message.location().url.startsWith(`${harness.origin}/favicon`))
        problems.push(`${message.text()} ${message.location().url}`);
    });
    try {
      const initData = signInitData(keys, { botId: BOT_ID, user: { id: 5_500_000_045, username: 'bob_tg' }, startParam: `s_${secret}` });
      await page.goto(harness.url(launchUrl(`${app.url}/pay/tg`, { initData, startParam: `s_${secret}` })));
      const frameAt = async (part: string): Promise<Frame> => {
        for (let i = 0; i < 150; i++) {
          const found = page.frames().find((f) => f.url().includes(part));
          if (found) return found;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        throw new Error(`no frame at ${part}: ${page.frames().map((f) => f.url())}`);
      };
      const portal = await frameAt(`/pay/tg/s/${secret}?`);
      await portal.locator('#portal-status').waitFor({ timeout: 15_000 });
      assert.equal(await portal.locator('#portal-status').innerText(), 'Free trial');
      assert.equal(await portal.locator('#portal-credit').innerText(), '0.25 GRAM');
      // The MainButton carries the portal's payment.
      const deadline = Date.now() + 15_000;
      const main = async () =>
        (await page.evaluate(() => (window as unknown as { telegramEvents: { eventType: string; eventData: any }[] }).telegramEvents))
          .filter((e) => e.eventType === 'web_app_setup_main_button')
          .at(-1)?.eventData;
      while ((await main())?.text !== 'Pay the next period' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal((await main())?.is_visible, true);
      assert.equal((await main())?.text, 'Pay the next period');
      await page.screenshot({ path: path.join(ARTIFACTS, '4-portal-in-telegram.png') });

      await page.evaluate(() =>
        (document.getElementById('miniapp') as HTMLIFrameElement).contentWindow!.postMessage(
          JSON.stringify({ eventType: 'main_button_pressed', eventData: null }),
          '*',
        ),
      );
      const checkout = await frameAt('tgWebAppData=');
      await checkout.waitForURL(/\/pay\/tg\/[0-9a-f-]{36}\?/, { timeout: 15_000 });
      await checkout.locator('#checkout[data-status]').waitFor({ timeout: 15_000 });
      const paymentId = new URL(checkout.url()).pathname.split('/').pop()!;
      assert.equal((await api('GET', `/v1/payments/${paymentId}`)).json.subscriptionID, sub.id);
      assert.equal(await checkout.locator('[data-telegram-refused]').count(), 0);
      await page.screenshot({ path: path.join(ARTIFACTS, '5-portal-payment-in-telegram.png') });
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
  it('opened in another shop’s bot: the portal’s own refusal (not the payment’s), in both languages, nothing of the subscription; the MainButton closes it (axe)', async () => {
    const sub = await subscription('vpn-user-3');
    const secret = new URL(sub.portalURL).pathname.split('/').pop()!;
    // Another shop's bot launches its Mini App with this portal's start parameter: Telegram signs the launch for that bot.
    const initData = signInitData(keys, { botId: 7_000_000_099, user: { id: 5_500_000_046, username: 'eve_tg' }, startParam: `s_${secret}` });
    const leaks = (text: string) => ['Blue Bottle VPN', 'VPN monthly', '0.25', 'vpn-user-3'].filter((word) => text.includes(word));
    for (const [lang, title, payment] of [
      ['en', 'This subscription belongs to another shop’s bot', 'This payment cannot be opened in this bot'],
      ['ru', 'Эта подписка принадлежит боту другого магазина', 'Этот платёж нельзя открыть в этом боте'],
    ] as const) {
      const refused = await fetch(`${app.url}/pay/tg/s/${secret}?lang=${lang}&tgWebAppData=${encodeURIComponent(initData)}`);
      const text = await refused.text();
      assert.equal(refused.status, 403);
      // What the page says (its <main>; the Mini App script's settings carry every Telegram text).
      const shown = /<main[\s\S]*<\/main>/.exec(text)?.[0] ?? '';
      assert.ok(shown.includes(title), `${lang}: ${shown}`);
      assert.ok(!shown.includes(payment), `${lang}: not the payment's refusal`);
      assert.match(text, new RegExp(`<title>${title}`));
      assert.deepEqual(leaks(text), [], lang);
    }

    // In Telegram's web client, at 375 px.
    const context = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true, locale: 'en-US' });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.location().url.startsWith(`${harness.origin}/favicon`)) problems.push(message.text());
    });
    try {
      await page.goto(harness.url(launchUrl(`${app.url}/pay/tg`, { initData, startParam: `s_${secret}` })));
      let frame: Frame | undefined;
      for (let i = 0; i < 150 && !frame; i++) {
        frame = page.frames().find((f) => f.url().includes(`/pay/tg/s/${secret}?`) && f.url().includes('tgWebAppData='));
        if (!frame) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(frame, 'the boot page went on with the launch');
      await frame.getByRole('heading', { name: 'This subscription belongs to another shop’s bot' }).waitFor({ timeout: 15_000 });
      assert.equal(await frame.locator('[data-telegram-refused="portal"]').count(), 1);
      assert.deepEqual(leaks(await frame.content()), []);
      assert.deepEqual(await seriousAxeViolations(frame as unknown as Page), [], 'the portal refusal in the Mini App: axe-core found serious violations');
      const deadline = Date.now() + 15_000;
      const main = async () =>
        (await page.evaluate(() => (window as unknown as { telegramEvents: { eventType: string; eventData: any }[] }).telegramEvents))
          .filter((e) => e.eventType === 'web_app_setup_main_button')
          .at(-1)?.eventData;
      while ((await main())?.text !== 'Close' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal((await main())?.text, 'Close');
      await page.screenshot({ path: path.join(ARTIFACTS, '6-portal-other-bot.png') });
      // Its refusal is the answer's 403, which Chromium logs; nothing else.
      assert.deepEqual(
        problems.filter((p) => !/status of 403/.test(p)),
        [],
      );
    } finally {
      await context.close();
    }
  });
});
