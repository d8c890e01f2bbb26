// The dashboard's Notifications page (issue 47 item 7) in real headless Chromium at 375 px and 1280 px
// against the real app, Postgres, the sandbox chain, a real SMTP server and an imitation of Telegram's
// Bot API: an owner gives the store its bot, chooses sales and failed refunds by email, links Telegram
// by sending the bot the code the page shows, and then a sale and a failed refund reach them both ways
// and are listed on the page. axe-core finds no serious violation and the page does not scroll
// sideways. Screenshots go to test-artifacts/dashboard-notifications/. If Chromium cannot be launched
// this file FAILS.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Address } from '@ton/core';
import type { Browser } from 'playwright-core';
import { sql } from '../../src/db/pool.ts';
import { freshAddress, startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { chromiumBrowser } from '../helpers/chromium.ts';
import { invitationPath, member } from '../helpers/dashboard.ts';
import { assertPageFits, joinByInvitation, openPage } from '../helpers/dashboardBrowser.ts';
import { type BotApi, type MailServer, runNotifications, startBotApi, startMailServer } from '../helpers/notifications.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/dashboard-notifications');
const PASSWORD = 'a long dashboard password';
const BOT_TOKEN = '7000000002:AAF-corner_cafe_bot_token_abcdefghijklmnop';
const CHAT_ID = 777001;

let app: ChainTestApp;
let browser: Browser;
let mail: MailServer;
let bot: BotApi;

before(
  async () => {
    browser = await chromiumBrowser();
    mail = await startMailServer();
    bot = await startBotApi([BOT_TOKEN]);
    app = await startChainApp({ SMTP_URL: mail.url, SMTP_FROM: 'Kassa <kassa@corner.example>', TELEGRAM_API_URL: bot.url });
  },
  { timeout: 600_000 },
);
after(async () => {
  await browser?.close();
  await app?.close();
  await mail?.close();
  await bot?.close();
});

describe('the dashboard’s Notifications page', { timeout: 600_000 }, () => {
  it('an owner sets the bot, chooses, links Telegram with the code; a sale and a failed refund reach them by email and Telegram and are listed; the page fits a phone and a desktop', {
    timeout: 300_000,
  }, async () => {
    const store = await app.store({ name: 'Corner Café', methods: 'TON/TON' });
    const { page, problems, context } = await openPage(browser, { width: 375, height: 812 });
    try {
      await joinByInvitation(page, app.url, store.id, await invitationPath(app.pool, store.id, 'owner@corner.example', 'owner'), PASSWORD);
      const notificationsPath = await page.locator('nav a[href$="/notifications"]').getAttribute('href');
      assert.equal((await page.locator('nav a[href$="/notifications"]').textContent())?.trim(), 'Notifications');
      await page.goto(`${app.url}${notificationsPath}`);
      await assertPageFits(page, 'notifications-new-375', ARTIFACTS);

      // The store's bot: a wrong token is refused beside its field, the right one saved (never shown back).
      await page.fill('#bot-token', 'not a token');
      await page.click('button[name=action][value=set]');
      assert.match((await page.locator('#botToken-problem').textContent()) ?? '', /not a bot token/);
      await page.fill('#bot-token', BOT_TOKEN);
      await page.click('button[name=action][value=set]');
      await page.waitForSelector('text=The notifications bot is saved.');
      assert.equal(await page.inputValue('#bot-token'), '');

      // What and how.
      await page.check('#topic-sale');
      await page.check('#topic-refund_failed');
      await page.check('#by-email');
      await page.click('#notification-choices button[type=submit]');
      await page.waitForSelector('text=Saved: you are told of what you ticked.');
      assert.ok(await page.isChecked('#topic-refund_failed'));

      // Telegram: the page shows the code once; the member sends it to the bot; "I have sent it".
      await page.click('text=Get a code to link Telegram');
      const message = (await page.locator('#telegram-code').textContent())?.trim() ?? '';
      assert.match(message, /^\/start [A-Za-z0-9_-]{16}$/);
      await assertPageFits(page, 'notifications-code-375', ARTIFACTS);
      bot.userSends(CHAT_ID, message);
      await page.click('text=I have sent it');
      await page.waitForSelector('text=Telegram is linked');
      assert.ok(await page.isChecked('#by-telegram'), 'Telegram is ticked once linked');

      // A sale and a refund the deposit cannot pay (the signer fails it).
      const created = await app.request('POST', '/v1/payments', {
        token: store.token,
        body: { amount: '3', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
      });
      assert.equal(created.status, 201, created.text);
      const wallet = Address.parse(created.json.paymentDetails.address).toRawString();
      await app.pay(created.json.paymentDetails.address, 'TON', '3');
      await app.settle();
      await app.pool.query(sql.unsafe`
        insert into outgoing_transfers (kind, reason, payment_id, store_id, from_address, to_address, coin_symbol, amount, amount_base_units)
        values ('refund', 'refund', ${created.json.id}, ${store.id}, ${wallet}, ${freshAddress()}, 'TON', 40, 40000000000)
      `);
      await app.drain(wallet);
      await runNotifications(app, { hurry: true });

      assert.deepEqual(mail.received.map((m) => m.subject).sort(), ['Corner Café · Refund failed: 40 Gram (GRAM)', 'Corner Café · Sale: 3 Gram (GRAM)']);
      assert.deepEqual(
        bot.sent
          .slice(1)
          .map((m) => m.text.split('\n')[0])
          .sort(),
        ['Corner Café · Refund failed: 40 Gram (GRAM)', 'Corner Café · Sale: 3 Gram (GRAM)'],
      );

      await page.reload();
      assert.equal(await page.locator('#recent-notifications tbody tr.notification-sent').count(), 4);
      await assertPageFits(page, 'notifications-sent-375', ARTIFACTS);
      await page.setViewportSize({ width: 1280, height: 900 });
      await assertPageFits(page, 'notifications-sent-1280', ARTIFACTS);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  it('forgotten password: the sign-in page links to it, the page asks for the address and answers the same for any; it fits a phone and a desktop', {
    timeout: 120_000,
  }, async () => {
    const store = await app.store({ name: 'Reset Café' });
    await member(app.url, app.pool, store.id, 'reset@corner.example', 'owner', PASSWORD);
    const { page, problems, context } = await openPage(browser, { width: 375, height: 812 });
    try {
      await page.goto(`${app.url}/dashboard/sign-in`);
      await page.click('#forgot-password');
      await page.waitForURL(`${app.url}/dashboard/forgot-password`);
      await assertPageFits(page, 'forgot-password-375', ARTIFACTS);
      await page.fill('#email', 'reset@corner.example');
      await page.click('button[type=submit]');
      await page.waitForSelector('#reset-sent');
      await assertPageFits(page, 'forgot-password-sent-375', ARTIFACTS);
      await page.setViewportSize({ width: 1280, height: 900 });
      await assertPageFits(page, 'forgot-password-sent-1280', ARTIFACTS);
      for (let i = 0; i < 100 && !mail.received.some((m) => m.to.includes('reset@corner.example')); i += 1) await page.waitForTimeout(50);
      const sent = mail.received.find((m) => m.to.includes('reset@corner.example'));
      assert.ok(sent, 'the link was emailed');
      // The link's path (the test app's BASE_URL names port 0: it listens on another).
      await page.goto(`${app.url}${new URL(/(http\S+\/dashboard\/invite\/\S+)/.exec(sent.text)![1]!).pathname}`);
      await page.fill('#password', 'a brand new password');
      await page.fill('#confirm', 'a brand new password');
      await page.click('button[type=submit]');
      await page.waitForURL(`${app.url}/dashboard/stores/${store.id}`);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
});
