// Notifications (issue 47 item 7) end to end on the sandbox chain: a member chooses on the dashboard's
// Notifications page, links their Telegram chat with a one-time code sent to the store's bot, and is
// told of a sale and of a failed refund — by email (received by a real SMTP server) and by Telegram
// (an imitation of the Bot API at TELEGRAM_API_URL); a failed sending is retried and logged; no
// message holds a secret.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Address } from '@ton/core';
import { pino } from 'pino';
import { sql, z } from '../../src/db/pool.ts';
import { sendNotification } from '../../src/webhooks/notify.ts';
import { freshAddress, startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { member } from '../helpers/dashboard.ts';
import { type BotApi, type MailServer, runNotifications, startBotApi, startMailServer } from '../helpers/notifications.ts';

const BOT_TOKEN = '7000000001:AAH-kassa_notifications_bot_token_0123456789';
const CHAT_ID = 4242;

let app: ChainTestApp;
let mail: MailServer;
let bot: BotApi;

before(async () => {
  mail = await startMailServer();
  bot = await startBotApi([BOT_TOKEN]);
  app = await startChainApp({ SMTP_URL: mail.url, SMTP_FROM: 'Kassa <kassa@shop.test>', TELEGRAM_API_URL: bot.url });
});
after(async () => {
  await app.close();
  await mail.close();
  await bot.close();
});

describe('notifications by email and Telegram', () => {
  it('a sale and a failed refund reach the member by email and Telegram, as they chose, with no secret in them; a failed sending is retried and logged', async () => {
    const store = await app.store({ methods: 'TON/TON', name: 'Corner Coffee' });
    const owner = await member(app.url, app.pool, store.id, 'owner@shop.test', 'owner');
    const at = `/dashboard/stores/${store.id}/notifications`;

    // The owner gives the store its bot, then chooses: sales of at least 1 GRAM, failed refunds, by email.
    assert.equal((await owner.post(`${at}/bot`, { botToken: BOT_TOKEN, action: 'set' })).location, `${at}?notice=bot_set`);
    const saved = await owner.post(`${at}/choices`, { events: 'sale', saleAtLeast: '1', saleCurrency: 'GRAM', by: 'email' });
    assert.equal(saved.status, 303, saved.text);
    const form = new URLSearchParams([
      ['events', 'sale'],
      ['events', 'refund_failed'],
      ['saleAtLeast', '1'],
      ['saleCurrency', 'GRAM'],
      ['by', 'email'],
    ]);
    const response = await fetch(`${app.url}${at}/choices`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.url, cookie: owner.cookie! },
      body: form.toString(),
      redirect: 'manual',
    });
    assert.equal(response.status, 303);
    // A viewer who chose Telegram but linked no chat is told nothing: no notification for a channel
    // not chosen (email) or not linked (Telegram).
    const viewer = await member(app.url, app.pool, store.id, 'viewer@shop.test', 'viewer');
    assert.equal((await viewer.post(`${at}/choices`, { events: 'sale', saleAtLeast: '1', saleCurrency: 'GRAM', by: 'telegram' })).status, 303);

    // Linking Telegram: a code shown once, sent to the bot as /start <code>, then "I have sent it".
    const coded = await owner.post(`${at}/telegram/code`);
    assert.equal(coded.status, 200, coded.text);
    const code = /\/start ([A-Za-z0-9_-]+)</.exec(coded.text)?.[1];
    assert.ok(code, 'the page shows the code');
    bot.userSends(CHAT_ID, '/start wrong-code');
    assert.equal((await owner.post(`${at}/telegram/check`)).location, `${at}?notice=not_linked`, 'a wrong code links nothing');
    bot.userSends(CHAT_ID, `/start ${code}`);
    assert.equal((await owner.post(`${at}/telegram/check`)).location, `${at}?notice=linked`);
    assert.equal(bot.sent.length, 1, 'the chat is told it is linked');
    assert.equal(bot.sent[0]!.chatId, String(CHAT_ID));
    // The code is spent: sent again, it links nothing (and the page says so).
    bot.userSends(CHAT_ID, `/start ${code}`);
    assert.equal((await owner.post(`${at}/telegram/check`)).location, `${at}?notice=not_linked`);
    // One bot for two stores: a code of the other store's member, read by this store's check, links them.
    const other = await app.store({ methods: 'TON/TON', name: 'Back Room' });
    const two = await member(app.url, app.pool, other.id, 'two@shop.test', 'owner');
    const atOther = `/dashboard/stores/${other.id}/notifications`;
    await two.post(`${atOther}/bot`, { botToken: BOT_TOKEN, action: 'set' });
    const otherCode = /\/start ([A-Za-z0-9_-]+)</.exec((await two.post(`${atOther}/telegram/code`)).text)![1]!;
    bot.userSends(5151, `/start ${otherCode}`);
    assert.equal((await owner.post(`${at}/telegram/check`)).location, `${at}?notice=not_linked`);
    assert.match((await two.get(atOther)).text, /Your Telegram chat is linked/);
    assert.deepEqual(
      bot.sent.slice(1).map((m) => [m.chatId, m.text.split(' · ')[0]]),
      [['5151', 'Back Room']],
    );
    bot.sent.splice(1);
    const page = await owner.get(at);
    assert.match(page.text, /Your Telegram chat is linked/);
    assert.doesNotMatch(page.text, new RegExp(BOT_TOKEN.split(':')[1]!), 'the token is never shown back');

    // A small sale (under the amount chosen) tells nothing; a sale of 2 GRAM does.
    const pay = async (amount: string) => {
      const created = await app.request('POST', '/v1/payments', {
        token: store.token,
        body: { amount, currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
      });
      assert.equal(created.status, 201, created.text);
      await app.pay(created.json.paymentDetails.address, 'TON', amount);
      return { id: created.json.id as string, wallet: Address.parse(created.json.paymentDetails.address).toRawString() };
    };
    const small = await pay('0.5');
    const sale = await pay('2');
    await app.settle();
    // A refund the deposit cannot pay (as a bug would book it): the signer fails it.
    await app.pool.query(sql.unsafe`
      insert into outgoing_transfers (kind, reason, payment_id, store_id, from_address, to_address, coin_symbol, amount, amount_base_units)
      values ('refund', 'refund', ${sale.id}, ${store.id}, ${sale.wallet}, ${freshAddress()}, 'TON', 50, 50000000000)
    `);
    await app.drain(sale.wallet);

    bot.failNext(1);
    await runNotifications(app, { hurry: true });

    const rows = await app.pool.any(sql.type(
      z.object({ channel: z.string(), event: z.string(), payment_id: z.string(), status: z.string(), attempts: z.number() }),
    )`
      select channel, event, payment_id, status, attempts from notifications where store_id = ${store.id} order by event, channel
    `);
    assert.deepEqual(
      rows.map((r) => [r.event, r.channel, r.payment_id, r.status]),
      [
        ['payment.completed', 'email', sale.id, 'sent'],
        ['payment.completed', 'telegram', sale.id, 'sent'],
        ['refund.failed', 'email', sale.id, 'sent'],
        ['refund.failed', 'telegram', sale.id, 'sent'],
      ],
      `the 0.5 sale (${small.id}) is under the amount chosen`,
    );
    assert.equal(rows.filter((r) => r.attempts === 2).length, 1, 'one Telegram message failed once and was sent on its second attempt');
    const attempts = await app.pool.any(sql.type(z.object({ attempt: z.number(), error: z.string().nullable(), finished: z.boolean() }))`
      select a.attempt, a.error, a.finished_at is not null as finished from notification_attempts a join notifications n on n.id = a.notification_id
      where n.store_id = ${store.id} and n.attempts = 2 order by a.attempt
    `);
    assert.deepEqual(
      attempts.map((a) => [a.attempt, a.finished, a.error === null]),
      [
        [1, true, false],
        [2, true, true],
      ],
    );
    assert.match(attempts[0]!.error!, /Telegram refused sendMessage: Internal Server Error/);
    assert.doesNotMatch(attempts[0]!.error!, /AAH-kassa/, 'the error never holds the token');

    // By email: two messages to the member's address, from SMTP_FROM, in the shop's words.
    assert.equal(mail.received.length, 2);
    for (const m of mail.received) {
      assert.deepEqual(m.to, ['owner@shop.test']);
      assert.equal(m.from, 'kassa@shop.test');
    }
    const saleMail = mail.received.find((m) => m.subject.includes('Sale'))!;
    assert.equal(saleMail.subject, 'Corner Coffee · Sale: 2 Gram (GRAM)');
    assert.match(saleMail.text, /A payment of 2 Gram \(GRAM\) to Corner Coffee is paid in full\./);
    assert.match(saleMail.text, new RegExp(`/dashboard/stores/${store.id}/payments/${sale.id}`), 'a link to the payment in the dashboard');
    const refundMail = mail.received.find((m) => m.subject.includes('Refund failed'))!;
    assert.equal(refundMail.subject, 'Corner Coffee · Refund failed: 50 Gram (GRAM)');
    assert.match(refundMail.text, /A refund of 50 Gram \(GRAM\) from Corner Coffee could not be sent\./);

    // By Telegram: the same two, to the linked chat, through the store's bot.
    const told = bot.sent.slice(1);
    assert.equal(told.length, 2);
    assert.ok(told.every((m) => m.chatId === String(CHAT_ID) && m.token === BOT_TOKEN));
    assert.ok(told.some((m) => m.text.startsWith('Corner Coffee · Sale: 2 Gram (GRAM)')));
    assert.ok(told.some((m) => m.text.startsWith('Corner Coffee · Refund failed: 50 Gram (GRAM)')));

    // Never a secret in a message: no bot token, no API token, no session cookie.
    const secrets = [BOT_TOKEN, BOT_TOKEN.split(':')[1]!, store.token, owner.cookie!.split('=')[1]!];
    for (const text of [...mail.received.map((m) => m.raw), ...bot.sent.map((m) => m.text)]) {
      for (const secret of secrets) assert.ok(!text.includes(secret), 'no secret in a message');
    }

    // The page lists them for the member.
    const listed = await owner.get(at);
    assert.equal((listed.text.match(/class="notification-sent"/g) ?? []).length, 4);

    // The last attempt Graphile Worker makes marks the notification failed (no retry follows); one
    // whose channel the member no longer chose is failed without an attempt.
    const copy = (channel: string) =>
      app.pool.oneFirst(sql.type(z.object({ id: z.string() }))`
        insert into notifications (store_id, user_id, channel, event, event_id, payment_id, payload, created_at)
        select store_id, user_id, channel, event, gen_random_uuid(), payment_id, payload, now() from notifications
        where store_id = ${store.id} and channel = ${channel} and event = 'payment.completed' and status = 'sent' returning id
      `);
    const deps = { config: app.config, pool: app.pool, log: pino({ level: 'silent' }), now: () => new Date() };
    const last = await copy('telegram');
    bot.failNext(1);
    assert.deepEqual(await sendNotification(deps, last, { job: { attempts: 10, max_attempts: 10 } }), { result: 'failed', attempt: 1 });
    assert.equal((await owner.post(`${at}/telegram/unlink`)).location, `${at}?notice=unlinked`);
    const unchosen = await copy('telegram');
    assert.deepEqual(await sendNotification(deps, unchosen, { job: { attempts: 1, max_attempts: 10 } }), { result: 'failed', attempt: null });
    const states = await app.pool.any(sql.type(z.object({ id: z.string(), status: z.string(), attempts: z.number() }))`
      select id, status, attempts from notifications where id in (${last}, ${unchosen}) order by attempts desc
    `);
    assert.deepEqual(
      states.map((n) => [n.id, n.status, n.attempts]),
      [
        [last, 'failed', 1],
        [unchosen, 'failed', 0],
      ],
    );
    assert.equal(bot.sent.length, 3, 'nothing more reached Telegram');
  });
});
