// The checkout as a Telegram Mini App over real HTTP (issue 30 §6–8): the store's settings, the
// payment's telegramURL, Telegram's init data checked with Telegram's Ed25519 third-party validation
// (a test key pair stands in for Telegram's: TELEGRAM_PUBLIC_KEY) — the payer recorded; forged,
// tampered, stale, another payment's and unconfigured init data refused — and the Mini App route's
// framing policy. The page in Chromium inside a Telegram harness: test/browser/telegram.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql, z } from '../../src/db/pool.ts';
import { updateStore } from '../../src/stores/stores.ts';
import { FormProblem } from '../../src/errors.ts';
import { checkInitData, dataCheckString, TELEGRAM_PUBLIC_KEYS } from '../../src/telegram/initData.ts';
import type { TestApp } from '../helpers/app.ts';
import { assertError, startPaymentsApp } from '../helpers/payments.ts';
import { signInitData, telegramKeys } from '../helpers/telegram.ts';

const BOT_ID = 7_000_000_001;
const keys = telegramKeys();
const TELEGRAM_WEB = 'https://web.telegram.org';
/** The CSP hash of the empty string (`printf '' | openssl dgst -sha256 -binary | base64`). */
const EMPTY_STYLE_HASH = "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='";
let app: TestApp;
let store: Awaited<ReturnType<TestApp['store']>>;
let plain: Awaited<ReturnType<TestApp['store']>>;

before(async () => {
  app = await startPaymentsApp({ env: { TELEGRAM_PUBLIC_KEY: keys.publicKeyHex, TELEGRAM_WEB_ORIGINS: `${TELEGRAM_WEB},http://127.0.0.1:5999` } });
  store = await app.store({ name: 'Telegram Shop' });
  plain = await app.store({ name: 'No Telegram' });
  await updateStore(app.pool, store.id, { 'telegram-bot': '@KassaTestBot', 'telegram-app': 'pay', 'telegram-bot-id': String(BOT_ID) });
});
after(() => app.close());

async function createPayment(token: string): Promise<any> {
  const response = await app.request('POST', '/v1/payments', { token, body: { amount: '2', currency: 'TON' } });
  assert.equal(response.status, 201, response.text);
  return response.json;
}

const launch = (paymentId: string, initData: string) => app.request('POST', `/pay/v1/checkout/payments/${paymentId}/telegram`, { body: { initData } });
const recorded = (paymentId: string) =>
  app.pool.one(
    sql.type(z.object({ telegram_user_id: z.string().nullable(), telegram_username: z.string().nullable() }))`
      select telegram_user_id::text, telegram_username from payments where id = ${paymentId}`,
  );

describe('store settings', () => {
  it('keeps the bot, the short name and the bot id; refuses what Telegram would not accept', async () => {
    const row = await app.pool.one(sql.type(z.object({ telegram_bot: z.string(), telegram_app: z.string(), telegram_bot_id: z.string() }))`
      select telegram_bot, telegram_app, telegram_bot_id::text from stores where id = ${store.id}`);
    assert.deepEqual(row, { telegram_bot: 'KassaTestBot', telegram_app: 'pay', telegram_bot_id: String(BOT_ID) });
    for (const [flag, value] of [
      ['telegram-bot', 'KassaTest'], // a bot's username ends in "bot"
      ['telegram-bot', 'x;bot'],
      ['telegram-app', 'a/b'],
      ['telegram-bot-id', '123:ABC-token'], // the token itself is never taken
    ] as const) {
      await assert.rejects(updateStore(app.pool, store.id, { [flag]: value }), (error: unknown) => error instanceof FormProblem && error.field === flag);
    }
  });
});

describe('telegramURL', () => {
  it("is the Mini App's t.me link with the payment as its start parameter; null for a store without one", async () => {
    const payment = await createPayment(store.token);
    assert.equal(payment.telegramURL, `https://t.me/KassaTestBot/pay?startapp=${payment.id}`);
    const read = await app.request('GET', `/v1/payments/${payment.id}`, { token: store.token });
    assert.equal(read.json.telegramURL, payment.telegramURL);
    assert.equal(read.json.telegramUser, undefined);
    const other = await createPayment(plain.token);
    assert.equal(other.telegramURL, null);
    const invoice = await app.request('POST', '/v1/payments/create', {
      token: store.token,
      body: { invoiceType: 'FIAT', fiatAmount: '5', fiatCurrency: 'USD' },
    });
    assert.equal(invoice.status, 201, invoice.text);
    const listed = await app.request('GET', '/v1/payments?limit=5', { token: store.token });
    assert.ok(listed.json.data.every((p: { id: string; telegramURL: string }) => p.telegramURL === `https://t.me/KassaTestBot/pay?startapp=${p.id}`));
  });
});

describe('init data (POST {checkout}/v1/checkout/payments/{id}/telegram)', () => {
  it("records the Telegram user Telegram signed for the store's bot, and shows it on the payment", async () => {
    const payment = await createPayment(store.token);
    const initData = signInitData(keys, { botId: BOT_ID, user: { id: 279058397, username: 'vdkfrost' }, startParam: payment.id });
    const response = await launch(payment.id, initData);
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.json, { telegramUser: { id: 279058397, username: 'vdkfrost' } });
    assert.deepEqual(await recorded(payment.id), { telegram_user_id: '279058397', telegram_username: 'vdkfrost' });
    const read = await app.request('GET', `/v1/payments/${payment.id}`, { token: store.token });
    assert.deepEqual(read.json.telegramUser, { id: 279058397, username: 'vdkfrost' });
    // In the reporting schema too.
    const reported = await app.pool.oneFirst(sql.type(z.object({ id: z.string() }))`
      select telegram_user_id::text as id from reporting.telegram_payers where payment_id = ${payment.id}`);
    assert.equal(reported, '279058397');
  });

  it('refuses init data signed by another key, tampered with, for another bot or another payment, or without a signature', async () => {
    const payment = await createPayment(store.token);
    const user = { id: 42, username: 'mallory' };
    const cases: Array<[string, string]> = [
      ['another key', signInitData(telegramKeys(), { botId: BOT_ID, user, startParam: payment.id })],
      [
        'the user changed after signing',
        signInitData(keys, { botId: BOT_ID, user, startParam: payment.id, tamper: (f) => f.set('user', JSON.stringify({ id: 1, username: 'durov' })) }),
      ],
      ['another bot', signInitData(keys, { botId: BOT_ID + 1, user, startParam: payment.id })],
      ['launched for another payment', signInitData(keys, { botId: BOT_ID, user, startParam: (await createPayment(store.token)).id })],
      ['launched without a payment', signInitData(keys, { botId: BOT_ID, user })],
      ['no signature', signInitData(keys, { botId: BOT_ID, user, startParam: payment.id, tamper: (f) => f.delete('signature') })],
      ['a repeated field', `${signInitData(keys, { botId: BOT_ID, user, startParam: payment.id })}&auth_date=1`],
      // Even repeated with the value that was signed: a reader taking the first and one taking the last must never differ.
      ['a field repeated with its own value', `${signInitData(keys, { botId: BOT_ID, user, startParam: payment.id })}&start_param=${payment.id}`],
      ["Telegram's production key's data for a test key", 'user=%7B%22id%22%3A1%7D&auth_date=1&signature=AAAA&hash=00'],
    ];
    for (const [what, initData] of cases) {
      const response = await launch(payment.id, initData);
      assertError(response, 400, 'invalid_request_error', 'telegram_init_data_invalid', 'initData');
      assert.ok(response.status === 400, what);
    }
    assert.deepEqual(await recorded(payment.id), { telegram_user_id: null, telegram_username: null });
  });

  it('refuses stale init data (auth_date over an hour old), and data from the future', async () => {
    const payment = await createPayment(store.token);
    const now = Math.floor(Date.now() / 1000);
    const stale = signInitData(keys, { botId: BOT_ID, user: { id: 7 }, startParam: payment.id, authDate: now - 3601 });
    assertError(await launch(payment.id, stale), 400, 'invalid_request_error', 'telegram_init_data_expired', 'initData');
    const future = signInitData(keys, { botId: BOT_ID, user: { id: 7 }, startParam: payment.id, authDate: now + 600 });
    assertError(await launch(payment.id, future), 400, 'invalid_request_error', 'telegram_init_data_expired', 'initData');
    // 59 minutes old: still fresh.
    const fresh = signInitData(keys, { botId: BOT_ID, user: { id: 7 }, startParam: payment.id, authDate: now - 59 * 60 });
    assert.equal((await launch(payment.id, fresh)).status, 200);
    assert.deepEqual(await recorded(payment.id), { telegram_user_id: '7', telegram_username: null });
  });

  it('answers telegram_not_configured for a store without a bot id, payment_not_found for an unknown payment, payment_not_open once it ended', async () => {
    const other = await createPayment(plain.token);
    const initData = signInitData(keys, { botId: BOT_ID, user: { id: 9 }, startParam: other.id });
    assertError(await launch(other.id, initData), 409, 'invalid_request_error', 'telegram_not_configured');
    const unknown = '00000000-0000-4000-8000-000000000000';
    assertError(
      await launch(unknown, signInitData(keys, { botId: BOT_ID, user: { id: 9 }, startParam: unknown })),
      404,
      'not_found_error',
      'payment_not_found',
    );
    const payment = await createPayment(store.token);
    assert.equal((await app.request('POST', `/v1/payments/${payment.id}/cancel`, { token: store.token })).status, 200);
    assertError(
      await launch(payment.id, signInitData(keys, { botId: BOT_ID, user: { id: 9 }, startParam: payment.id })),
      409,
      'invalid_request_error',
      'payment_not_open',
    );
    assertError(
      await app.request('POST', `/pay/v1/checkout/payments/${payment.id}/telegram`, { body: { initData: 'x', extra: 1 } }),
      400,
      'invalid_request_error',
      'unknown_parameter',
      'extra',
    );
  });

  it("checks with Telegram's documented production key unless configured", () => {
    assert.equal(TELEGRAM_PUBLIC_KEYS.production, 'e7bf03a2fa4602af4580703d88dda5bb59f32ed8b02a56c187fe7d34caed242d');
    const fields = new Map([
      ['user', '{"id":1}'],
      ['auth_date', '1'],
      ['signature', 'x'],
      ['hash', 'y'],
    ]);
    assert.equal(dataCheckString(5, fields), '5:WebAppData\nauth_date=1\nuser={"id":1}');
    const initData = signInitData(keys, { botId: BOT_ID, user: { id: 3 }, startParam: 'p' });
    assert.deepEqual(checkInitData(initData, { botId: BOT_ID, publicKeyHex: TELEGRAM_PUBLIC_KEYS.production, now: new Date() }), {
      ok: false,
      problem: 'signature',
    });
  });
});

describe('the Mini App route ({checkout}/tg)', () => {
  it("may be framed by Telegram's web clients only; the ordinary checkout by nobody", async () => {
    const payment = await createPayment(store.token);
    // Its page with the launch the boot page puts in the query: Telegram's init data for the store's bot (issue 47 item 9).
    const initData = signInitData(keys, { botId: BOT_ID, user: { id: 42 }, startParam: payment.id });
    const framed = await app.request('GET', `/pay/tg/${payment.id}?tgWebAppData=${encodeURIComponent(initData)}`);
    assert.equal(framed.status, 200);
    assert.match(framed.headers.get('content-security-policy')!, /frame-ancestors https:\/\/web\.telegram\.org http:\/\/127\.0\.0\.1:5999(;|$)/);
    assert.match(framed.headers.get('content-security-policy')!, /script-src 'self';/);
    assert.equal(framed.headers.get('x-frame-options'), null);
    // Telegram's own script, then Kassa's glue; in a web client's frame Telegram's script appends an
    // empty <style>, which the CSP allows by the hash of the empty string, and no other inline style.
    assert.match(
      framed.text,
      /<script src="\/pay\/assets\/telegram-web-app\.js\?v=[0-9a-f]+" defer><\/script><script src="\/pay\/assets\/telegram\.js\?v=[0-9a-f]+" defer><\/script>/,
    );
    const styleSrc = (csp: string | null) => csp?.split('; ').find((directive) => directive.startsWith('style-src '));
    assert.match(styleSrc(framed.headers.get('content-security-policy'))!, /^style-src 'self' 'nonce-[^']+' 'sha256-[^']+'$/);
    assert.ok(styleSrc(framed.headers.get('content-security-policy'))!.endsWith(` ${EMPTY_STYLE_HASH}`));
    assert.match(framed.text, /id="kassa-telegram"/);
    assert.match(framed.text, new RegExp(`"twaReturnUrl":"https://t.me/KassaTestBot/pay\\?startapp=${payment.id}"`));
    // Outside Telegram the same payment's ordinary checkout: not framable, no Telegram script.
    const ordinary = await app.request('GET', `/pay/${payment.id}`);
    assert.match(ordinary.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
    assert.equal(ordinary.headers.get('x-frame-options'), 'DENY');
    assert.doesNotMatch(ordinary.text, /telegram(-web-app)?\.js/);
    assert.doesNotMatch(ordinary.headers.get('content-security-policy')!, /sha256-/);
    // BotFather's URL: the payment id from the launch's query (when a client sends it there) leads to
    // its boot page (nothing of the payment until the launch is checked), which goes on with the launch.
    const redirected = await app.request('GET', `/pay/tg?tgWebAppStartParam=${payment.id}`);
    assert.equal(redirected.status, 200);
    assert.match(redirected.text, /data-telegram-boot/);
    assert.match(redirected.text, new RegExp(`"paymentId":"${payment.id}","checkoutPath":"/pay/${payment.id}"`));
    assert.doesNotMatch(redirected.text, /initDataEndpoint/);
    const boot = await app.request('GET', '/pay/tg');
    assert.equal(boot.status, 200);
    assert.match(boot.headers.get('content-security-policy')!, /frame-ancestors https:\/\/web\.telegram\.org/);
    assert.equal(styleSrc(boot.headers.get('content-security-policy')), `style-src 'self' ${EMPTY_STYLE_HASH}`);
    assert.match(boot.text, /data-telegram-boot/);
    const script = await app.request('GET', '/pay/assets/telegram.js');
    assert.equal(script.status, 200);
    assert.match(script.headers.get('content-type')!, /javascript/);
    const telegramScript = await app.request('GET', '/pay/assets/telegram-web-app.js');
    assert.equal(telegramScript.status, 200);
    assert.match(telegramScript.headers.get('content-type')!, /javascript/);
    assert.match(telegramScript.text, /window\.Telegram\.WebApp = WebApp;/);
    assert.doesNotMatch(telegramScript.text, /sourceMappingURL/);
  });
});
