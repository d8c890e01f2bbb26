// The hosted checkout's public endpoints at the HTTP level (no browser): the page in every state,
// its public JSON view, choosing a method, live status events, languages, 404s and rate limits.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Address } from '@ton/core';
import { pino } from 'pino';
import QRCode from 'qrcode';
import { sql, z } from '../../src/db/pool.ts';
import { negotiateLang } from '../../src/checkout/i18n.ts';
import { paymentPageCsp } from '../../src/checkout/page.ts';
import { PAGE_CSP } from '../../src/web/csp.ts';
import { TON_CONNECT_BRIDGE_ORIGINS } from '../../src/checkout/tonconnect.ts';
import { updateStore } from '../../src/stores/stores.ts';
import { createApp } from '../../src/http/app.ts';
import type { TestApp } from '../helpers/app.ts';
import { recordTestTransfer, setTestPaymentStatus } from '../helpers/factories.ts';
import { assertError, startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;
let store: Awaited<ReturnType<TestApp['store']>>;
let methods: Record<string, string>;

before(async () => {
  app = await startPaymentsApp();
  store = await app.store({ name: 'Coffee & Co', methods: 'TON/TON,USDT/TON' });
  const listed = await app.request('GET', '/v1/payment-methods', { token: store.token });
  methods = Object.fromEntries(listed.json.data.map((method: any) => [method.coin.symbol, method.id]));
});
after(() => app.close());

async function createPayment(body: Record<string, unknown> = {}): Promise<any> {
  const response = await app.request('POST', '/v1/payments', { token: store.token, body: { amount: '10.50', currency: 'USD', ...body } });
  assert.equal(response.status, 201, response.text);
  return response.json;
}

const page = (id: string, headers: Record<string, string> = {}, query = '') => app.request('GET', `/pay/${id}${query}`, { headers });
const view = (id: string) => app.request('GET', `/pay/v1/checkout/payments/${id}`);
const choose = (id: string, paymentMethodID: unknown) => app.request('POST', `/pay/v1/checkout/payments/${id}/method`, { body: { paymentMethodID } });

/** Records a transfer in the books the way the chain reader does (its effect already decided). */
const recordTransfer = (paymentId: string, coin: string, baseUnits: bigint, amount: string, effect: string): Promise<string> =>
  recordTestTransfer(app, paymentId, { coin, baseUnits, amount, effect });

async function complete(paymentId: string, coin: string, baseUnits: bigint, amount: string): Promise<string> {
  const hash = await recordTransfer(paymentId, coin, baseUnits, amount, 'completed');
  await setTestPaymentStatus(app, paymentId, 'completed');
  return hash;
}

const SECRETS = ['ORDER-SECRET-17', 'META-SECRET-VALUE', 'meta_secret_key', 'hooks.example.com', 'secret-hook'];

describe('GET {checkout}/v1/checkout/payments/{id}: the public JSON view', () => {
  it('shows only what the page shows: no metadata, no order_id, no webhook URL, no store id', async () => {
    const payment = await createPayment({
      order_id: 'ORDER-SECRET-17',
      metadata: { meta_secret_key: 'META-SECRET-VALUE' },
      webhookURL: 'https://hooks.example.com/secret-hook',
      returnURL: 'https://shop.example.com/thanks',
      description: 'Two coffees',
    });
    const created = await view(payment.id);
    assert.equal(created.status, 200, created.text);
    assert.equal(created.headers.get('cache-control'), 'no-store');
    assert.deepEqual(Object.keys(created.json), ['id', 'status', 'amount', 'currency', 'store', 'description', 'timer']);
    assert.deepEqual(created.json.store, { name: 'Coffee & Co' });
    assert.equal(created.json.amount, '10.50');
    assert.equal(created.json.currency, 'USD');
    assert.deepEqual(Object.keys(created.json.timer), ['expiresAt']);
    assert.equal(created.json.returnURL, undefined, 'returnURL only once the payment has ended');

    assert.equal((await choose(payment.id, methods.USDT)).status, 200);
    const pending = await view(payment.id);
    assert.deepEqual(Object.keys(pending.json.paymentDetails), ['address', 'coinAmount', 'coin', 'chain', 'receivedAmount']);
    assert.equal(pending.json.paymentDetails.receivedAmount, '0');

    assert.equal((await app.request('POST', `/v1/payments/${payment.id}/cancel`, { token: store.token })).status, 200);
    const cancelled = await view(payment.id);
    assert.equal(cancelled.json.status, 'cancelled');
    assert.equal(cancelled.json.returnURL, 'https://shop.example.com/thanks');

    const html = (await page(payment.id)).text;
    for (const response of [created.text, pending.text, cancelled.text, html]) {
      for (const secret of SECRETS) assert.ok(!response.includes(secret), `${secret} must not leak: ${response.slice(0, 300)}`);
      assert.ok(!response.includes(store.id), 'no store id');
      assert.doesNotMatch(response, /metadata|order_id|webhook/i);
    }
  });

  it('answers 404 payment_not_found for an unknown id and 400 invalid_payment_id for a malformed one', async () => {
    assertError(await view(crypto.randomUUID()), 404, 'not_found_error', 'payment_not_found');
    assertError(await view('not-a-uuid'), 400, 'invalid_request_error', 'invalid_payment_id', 'paymentID');
  });
});

describe('POST {checkout}/v1/checkout/payments/{id}/method', () => {
  it('moves a created payment to pending once; choosing again is 409 and never gives a second address', async () => {
    const payment = await createPayment();
    const first = await choose(payment.id, methods.USDT);
    assert.equal(first.status, 200, first.text);
    assert.equal(first.headers.get('cache-control'), 'no-store');
    assert.equal(first.json.status, 'pending');
    assert.equal(first.json.paymentDetails.coinAmount, '10.5');
    assert.equal(first.json.paymentDetails.coin.symbol, 'USDT');
    assert.match(first.json.paymentDetails.address, /^UQ[A-Za-z0-9_-]{46}$/);

    assertError(await choose(payment.id, methods.USDT), 409, 'invalid_request_error', 'method_already_selected');
    assertError(await choose(payment.id, methods.TON), 409, 'invalid_request_error', 'method_already_selected');
    const after = await view(payment.id);
    assert.equal(after.json.paymentDetails.address, first.json.paymentDetails.address);
    assert.equal(after.json.paymentDetails.coin.symbol, 'USDT');
    const addresses = await app.pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`select count(*)::int as n from deposit_addresses where payment_id = ${payment.id}`,
    );
    assert.equal(addresses, 1);
  });

  it('two customers choosing at the same moment: one wins, the other gets 409, one address', async () => {
    const payment = await createPayment();
    const results = await Promise.all([choose(payment.id, methods.USDT), choose(payment.id, methods.TON)]);
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 409]);
    const addresses = await app.pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`select count(*)::int as n from deposit_addresses where payment_id = ${payment.id}`,
    );
    assert.equal(addresses, 1);
  });

  it('refuses payments that are not created: preselected, cancelled, expired', async () => {
    const preselected = await createPayment({ payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } });
    assertError(await choose(preselected.id, methods.USDT), 409, 'invalid_request_error', 'method_already_selected');

    const cancelled = await createPayment();
    await app.request('POST', `/v1/payments/${cancelled.id}/cancel`, { token: store.token });
    assertError(await choose(cancelled.id, methods.USDT), 409, 'invalid_request_error', 'payment_not_open');

    const late = await createPayment();
    await app.pool.query(sql.unsafe`update payments set created_at = now() - interval '2 hours', expires_at = now() - interval '1 hour' where id = ${late.id}`);
    assertError(await choose(late.id, methods.USDT), 409, 'invalid_request_error', 'payment_expired');
    assert.equal((await view(late.id)).json.status, 'created');
  });

  it('validates the body and the ids', async () => {
    const payment = await createPayment();
    assertError(await choose(payment.id, crypto.randomUUID()), 404, 'not_found_error', 'payment_method_not_found', 'paymentMethodID');
    const notEnabled = await app.pool.oneFirst(sql.type(z.object({ id: z.string() }))`select id from payment_methods where coin_symbol = 'NOT'`);
    assertError(await choose(payment.id, notEnabled), 404, 'not_found_error', 'payment_method_not_found', 'paymentMethodID');
    assertError(await choose(payment.id, 'usdt'), 400, 'invalid_request_error', 'invalid_payment_method_id', 'paymentMethodID');
    assertError(
      await app.request('POST', `/pay/v1/checkout/payments/${payment.id}/method`, { body: {} }),
      400,
      'invalid_request_error',
      'missing_parameter',
      'paymentMethodID',
    );
    assertError(
      await app.request('POST', `/pay/v1/checkout/payments/${payment.id}/method`, { body: { paymentMethodID: methods.USDT, coin: 'USDT' } }),
      400,
      'invalid_request_error',
      'unknown_parameter',
      'coin',
    );
    assertError(
      await app.request('POST', `/pay/v1/checkout/payments/${payment.id}/method`, {
        rawBody: 'paymentMethodID=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      415,
      'invalid_request_error',
      'unsupported_media_type',
    );
    assertError(await choose(crypto.randomUUID(), methods.USDT), 404, 'not_found_error', 'payment_not_found');
    assertError(await choose('nope', methods.USDT), 400, 'invalid_request_error', 'invalid_payment_id', 'paymentID');
    assert.equal((await view(payment.id)).json.status, 'created', 'nothing changed');
  });
});

describe('GET {checkout}/{id}: the page', () => {
  it('is HTML with a strict CSP, no-store, and nothing inline or third-party', async () => {
    const payment = await createPayment({ description: '<script>alert("x")</script> & more' });
    const response = await page(payment.id);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
    const csp = response.headers.get('content-security-policy');
    // TON Connect's UI fills one empty <style> element carrying this response's nonce.
    const nonce = /<style id="_goober" nonce="([A-Za-z0-9+/=]{24})"> <\/style>/.exec(response.text)?.[1];
    assert.ok(nonce, "the style element of TON Connect's UI, with a nonce");
    assert.equal(csp, paymentPageCsp({ status: 'created', store_logo_url: null }, nonce));
    for (const directive of [
      "default-src 'none'",
      "img-src 'self' data:",
      `style-src 'self' 'nonce-${nonce}'`,
      "script-src 'self'",
      `connect-src 'self' ${TON_CONNECT_BRIDGE_ORIGINS.join(' ')}`,
      "base-uri 'none'",
      "form-action 'self'",
      "frame-ancestors 'none'",
    ]) {
      assert.ok(csp!.includes(directive), directive);
    }
    assert.doesNotMatch(csp!, /unsafe-inline|unsafe-eval|\*/);
    assert.notEqual(/nonce="([^"]+)"/.exec((await page(payment.id)).text)![1], nonce, 'a new nonce for every response');
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.equal(response.headers.get('x-frame-options'), 'DENY');
    assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
    const html = response.text;
    assert.match(html, /^<!doctype html>\n<html lang="en">/);
    // The merchant's text is escaped, never markup.
    assert.ok(html.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; more'));
    assert.ok(!html.includes('<script>alert'));
    // Every script is either served from 'self' or a JSON data block; no inline styles or handlers.
    for (const tag of html.match(/<script[^>]*>/g) ?? [])
      assert.match(tag, /^<script (src="\/pay\/assets\/(checkout|tonconnect-ui)\.js\?v=[0-9a-f]{12}" defer|type="application\/json" id="kassa-data")>$/);
    assert.doesNotMatch(html.replace(/<style id="_goober" nonce="[^"]+"> <\/style>/, ''), /<style|\sstyle=|\son[a-z]+=/i);
    for (const [, url] of html.matchAll(/\s(?:src|href)="([^"]*)"/g)) {
      assert.ok(url!.startsWith('/pay/') || url!.startsWith('?lang=') || url === 'data:,', `only own assets: ${url}`);
    }
    // Store, description, amount and a countdown.
    assert.ok(html.includes('Coffee &amp; Co'));
    assert.ok(html.includes('10.50 USD'));
    assert.match(html, /<time id="countdown" role="timer"[^>]*data-expires-at="[^"]+">(59:\d\d|1:00:00)<\/time>/);
  });

  it('serves its stylesheet and script from its own origin', async () => {
    const html = (await page((await createPayment()).id)).text;
    const css = /href="(\/pay\/assets\/checkout\.css\?v=[0-9a-f]+)"/.exec(html)![1]!;
    const js = /src="(\/pay\/assets\/checkout\.js\?v=[0-9a-f]+)"/.exec(html)![1]!;
    const style = await app.request('GET', css);
    assert.equal(style.status, 200);
    assert.equal(style.headers.get('content-type'), 'text/css; charset=utf-8');
    assert.match(style.headers.get('cache-control')!, /immutable/);
    const script = await app.request('GET', js);
    assert.equal(script.status, 200);
    assert.equal(script.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal((await app.request('GET', '/pay/assets/nope.js')).status, 404);
  });

  it('created: lists the store methods with the exact coin amount each costs now', async () => {
    const payment = await createPayment();
    const html = (await page(payment.id)).text;
    assert.ok(html.includes(`data-method-id="${methods.USDT}"`));
    assert.ok(html.includes(`data-method-id="${methods.TON}"`));
    assert.ok(html.includes('10.5 USDT'), 'USD 10.50 at the sandbox rate (1 USDT = 1 USD)');
    assert.ok(html.includes('2.1 GRAM'), 'USD 10.50 at the sandbox rate (1 TON = 5 USD)');
    assert.ok(!html.includes('ton://'), 'no address before a method is chosen');
  });

  it('pending (jetton): address, exact amount, QR of the ton:// link with jetton= and base units, wallet links', async () => {
    const payment = await createPayment({ payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } });
    const address = payment.paymentDetails.address as string;
    const html = (await page(payment.id)).text;
    assert.ok(html.includes(`<code class="value address" id="address-value">${address}</code>`));
    assert.ok(html.includes('<code class="value" id="amount-value">10.5</code>'));
    const master = await app.pool.oneFirst(
      sql.type(z.object({ master_address: z.string() }))`select master_address from jetton_masters where coin_symbol = 'USDT' and network = 'sandbox'`,
    );
    const friendlyMaster = Address.parseRaw(master).toString({ urlSafe: true, bounceable: true, testOnly: false });
    const exp = Math.floor(Date.parse(payment.timer.expiresAt) / 1000);
    const link = `ton://transfer/${address}?jetton=${friendlyMaster}&amount=10500000&exp=${exp}`;
    assert.ok(html.includes(`href="${link.replaceAll('&', '&amp;')}"`), `ton link ${link}`);
    assert.ok(html.includes(`href="${link.replace('ton://', 'https://app.tonkeeper.com/').replaceAll('&', '&amp;')}"`), 'Tonkeeper link');
    assert.ok(html.includes(`href="${link.replace('ton://', 'https://my.tt/').replaceAll('&', '&amp;')}"`), 'MyTonWallet link');
    // The QR code is the ton:// link itself.
    const qr = await QRCode.toString(link, { type: 'svg', errorCorrectionLevel: 'M', margin: 2, color: { dark: '#000000', light: '#ffffff' } });
    const modules = /<path stroke="#000000" d="([^"]+)"/.exec(qr)![1]!;
    assert.ok(html.includes(modules), 'the QR encodes the ton:// link');
    assert.match(html, /<svg class="qr" role="img" aria-label="QR code[^"]*"/);
  });

  it('pending (TON): the link amount is in nanoTON, without jetton=', async () => {
    const payment = await createPayment({ amount: '1.25', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } });
    const html = (await page(payment.id)).text;
    assert.match(html, new RegExp(`href="ton://transfer/${payment.paymentDetails.address}\\?amount=1250000000&amp;exp=\\d+"`));
  });

  it('pending and underpaid: shows what was received and asks for the rest', async () => {
    const payment = await createPayment({ payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } });
    await recordTransfer(payment.id, 'USDT', 4_000_000n, '4', 'partial');
    // Not counted: a wrong coin.
    await recordTransfer(payment.id, 'TON', 1_000_000_000n, '1', 'wrong_coin');
    const json = (await view(payment.id)).json;
    assert.equal(json.status, 'pending');
    assert.equal(json.paymentDetails.receivedAmount, '4');
    const html = (await page(payment.id)).text;
    assert.ok(html.includes('<dd id="received-amount">4 USDT</dd>'));
    assert.ok(html.includes('<dd id="remaining-amount">6.5 USDT</dd>'));
    assert.ok(html.includes('Send the rest'));
    assert.match(html, /jetton=[^"]*&amp;amount=6500000&amp;/);
  });

  it('completed: paid, with the transaction hashes and the way back to the store', async () => {
    const payment = await createPayment({ payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] }, returnURL: 'https://shop.example.com/order/42' });
    const hash = await complete(payment.id, 'USDT', 10_500_000n, '10.5');
    const json = (await view(payment.id)).json;
    assert.equal(json.status, 'completed');
    assert.deepEqual(json.paymentDetails.transactionSignatures, [hash]);
    assert.ok(json.timer.paidAt);
    assert.equal(json.returnURL, 'https://shop.example.com/order/42');
    const html = (await page(payment.id)).text;
    assert.ok(html.includes('>Paid</h2>'));
    assert.ok(html.includes(`<code>${hash}</code>`));
    assert.ok(html.includes('href="https://shop.example.com/order/42"'));
    assert.ok(!html.includes('id="countdown"'), 'no countdown once paid');
    assert.ok(!html.includes('ton://'), 'no payment link once paid');
  });

  it('expired and cancelled: say so, and what to do if money was sent anyway', async () => {
    const expired = await createPayment({ payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } });
    await setTestPaymentStatus(app, expired.id, 'expired');
    const expiredHtml = (await page(expired.id)).text;
    assert.ok(expiredHtml.includes('This payment has expired'));
    assert.ok(expiredHtml.includes('id="sent-anyway"'));
    assert.ok(expiredHtml.includes('Contact Coffee &amp; Co'));
    assert.ok(!expiredHtml.includes('ton://'));

    const cancelled = await createPayment({ returnURL: 'https://shop.example.com/cart' });
    await app.request('POST', `/v1/payments/${cancelled.id}/cancel`, { token: store.token });
    const cancelledHtml = (await page(cancelled.id)).text;
    assert.ok(cancelledHtml.includes('This payment was cancelled'));
    assert.ok(!cancelledHtml.includes('id="sent-anyway"'), 'it never had an address');
    assert.ok(cancelledHtml.includes('href="https://shop.example.com/cart"'));
  });

  it('open but past its expiry time (the expiry job not run yet): no way to pay is offered', async () => {
    const payment = await createPayment({ payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } });
    await app.pool.query(
      sql.unsafe`update payments set created_at = now() - interval '2 hours', expires_at = now() - interval '1 second' where id = ${payment.id}`,
    );
    const html = (await page(payment.id)).text;
    assert.ok(html.includes('Time is up'));
    assert.ok(!html.includes('ton://'));
  });
});

describe('languages', () => {
  it('negotiates English or Russian from Accept-Language, ?lang= overriding', () => {
    assert.equal(negotiateLang(undefined, undefined), 'en');
    assert.equal(negotiateLang(undefined, 'ru-RU,ru;q=0.9,en;q=0.8'), 'ru');
    assert.equal(negotiateLang(undefined, 'de-DE, ru;q=0.5, en;q=0.4'), 'ru');
    assert.equal(negotiateLang(undefined, 'en-US, ru;q=0.9'), 'en');
    assert.equal(negotiateLang(undefined, 'ru;q=0, en'), 'en');
    assert.equal(negotiateLang(undefined, 'fr, de'), 'en');
    assert.equal(negotiateLang('en', 'ru'), 'en');
    assert.equal(negotiateLang('ru', 'en'), 'ru');
    assert.equal(negotiateLang('xx', 'ru'), 'ru');
    assert.equal(negotiateLang(['ru', 'en'], 'en'), 'en', 'a repeated ?lang is ignored');
  });

  it('renders the page in Russian for a Russian browser, with a visible switch', async () => {
    const payment = await createPayment();
    const response = await page(payment.id, { 'accept-language': 'ru-RU,ru;q=0.9,en;q=0.8' });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-language'), 'ru');
    assert.match(response.headers.get('vary') ?? '', /Accept-Language/i);
    assert.match(response.text, /<html lang="ru">/);
    assert.ok(response.text.includes('Выберите способ оплаты'));
    assert.ok(response.text.includes('Осталось времени'));
    assert.ok(response.text.includes('<a href="?lang=en" lang="en" hreflang="en">English</a>'));
    assert.ok(response.text.includes('<a href="?lang=ru" lang="ru" hreflang="ru" aria-current="true">Русский</a>'));
    const english = await page(payment.id, { 'accept-language': 'ru-RU' }, '?lang=en');
    assert.match(english.text, /<html lang="en">/);
    assert.ok(english.text.includes('Choose how to pay'));
  });
});

describe('what a customer asks for on the page', () => {
  it('the exchange rate used (priced in fiat), a short reference, and the way back while it is open', async () => {
    const payment = await createPayment({ returnURL: 'https://shop.example.com/cart?x=1&y=2', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } });
    const html = (await page(payment.id)).text;
    assert.ok(html.includes('<dd id="exchange-rate">1 GRAM = 5.00 USD</dd>'));
    assert.ok(html.includes(`<code id="reference">${payment.id.slice(0, 4).toUpperCase()}-${payment.id.slice(4, 8).toUpperCase()}</code>`));
    assert.ok(html.includes('<a id="back-link" href="https://shop.example.com/cart?x=1&amp;y=2" rel="noreferrer">'));
    assert.ok(html.includes('<p class="warning expiry-warning" id="expiry-warning" hidden>'), 'an hour left: the warning is there for the script, hidden');
    // Priced in the coin itself: no rate to show.
    const inTon = await createPayment({ amount: '2', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } });
    assert.ok(!(await page(inTon.id)).text.includes('id="exchange-rate"'));
    // Less than 5 minutes left: the warning shows from the first render.
    await app.pool.query(sql.unsafe`update payments set expires_at = now() + interval '4 minutes' where id = ${inTon.id}`);
    assert.ok((await page(inTon.id)).text.includes('<p class="warning expiry-warning" id="expiry-warning">Less than 5 minutes left to pay.</p>'));
  });

  it('a jetton payment tells about the TON needed for the network fee before the customer tries', async () => {
    const payment = await createPayment({ payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } });
    assert.match(
      (await page(payment.id)).text,
      /<p class="gas-note" id="gas-note">Your wallet also needs a little Gram \(about 0\.05 GRAM\), the TON network’s own coin/,
    );
    assert.match((await page(payment.id, { 'accept-language': 'ru' })).text, /около 0,05 GRAM/);
    const ton = await createPayment({ payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } });
    assert.ok(!(await page(ton.id)).text.includes('gas-note'));
  });

  it('after payment: the paid time and no explorer links in the sandbox', async () => {
    const payment = await createPayment({ payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } });
    await complete(payment.id, 'TON', 2_100_000_000n, '2.1');
    const html = (await page(payment.id)).text;
    assert.match(html, /<time id="paid-at" datetime="[^"]+">\d{1,2} \w{3} \d{4}, \d\d:\d\d UTC<\/time>/);
    assert.ok(!html.includes('class="explorer"'));
    assert.ok(!html.includes('id="back-link"'), "the way back is the ended page's own button");
  });

  it('on mainnet each transaction links to Tonviewer and Tonscan (rendered without any network)', async () => {
    const mainnet = await startPaymentsApp({
      env: { TON_NETWORK: 'mainnet', KASSA_MASTER_KEY: 'ab'.repeat(32), RATES_PROVIDER: 'tonapi', BASE_URL: 'https://pay.example.com' },
    });
    try {
      const shop = await mainnet.store({ name: 'Mainnet shop', methods: 'TON/TON' });
      const created = await mainnet.request('POST', '/v1/payments', {
        token: shop.token,
        body: { amount: '2', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
      });
      assert.equal(created.status, 201, created.text);
      const hash = crypto.randomBytes(32).toString('hex');
      const address = await mainnet.pool.oneFirst(
        sql.type(z.object({ address: z.string() }))`select address from deposit_addresses where payment_id = ${created.json.id}`,
      );
      await mainnet.pool.query(sql.unsafe`
        insert into transfers (account, lt, hash, payment_id, deposit_address, coin_symbol, amount_base_units, amount, chain_time, effect)
        values (${address}, '1000', ${hash}, ${created.json.id}, ${address}, 'TON', '2000000000', '2', now(), 'completed')
      `);
      await setTestPaymentStatus(mainnet, created.json.id, 'completed');
      const html = (await mainnet.request('GET', `/pay/${created.json.id}`)).text;
      assert.ok(
        html.includes(`<a class="explorer" href="https://tonviewer.com/transaction/${hash}" rel="noreferrer noopener" target="_blank">View on Tonviewer</a>`),
      );
      assert.ok(html.includes(`<a class="explorer" href="https://tonscan.org/tx/${hash}" rel="noreferrer noopener" target="_blank">View on Tonscan</a>`));
    } finally {
      await mainnet.close();
    }
  });
});

describe("the shop's face", () => {
  it("shows the display name, the logo (its origin alone added to img-src) and the accent colour (a nonce'd style)", async () => {
    const shop = await app.store({ name: 'internal-name-42', methods: 'TON/TON' });
    await updateStore(app.pool, shop.id, { 'display-name': 'Green Leaf Tea', 'logo-url': 'https://cdn.example.com/brand/logo.svg', 'accent-color': '#2E7D32' });
    const created = await app.request('POST', '/v1/payments', { token: shop.token, body: { amount: '1', currency: 'TON' } });
    const response = await page(created.json.id);
    const html = response.text;
    assert.ok(html.includes('<h1 id="store-name">Green Leaf Tea</h1>'));
    assert.ok(html.includes('<title>Payment to Green Leaf Tea</title>'));
    assert.ok(!html.includes('internal-name-42'), 'the internal name stays internal');
    assert.ok(html.includes('<img class="logo" id="store-logo" src="https://cdn.example.com/brand/logo.svg" alt="" width="56" height="56">'));
    const nonce = /<style nonce="([^"]+)">:root\{--brand:#2e7d32;--brand-text:#ffffff\}\.card\{border-top:4px solid #2e7d32\}<\/style>/.exec(html)?.[1];
    assert.ok(nonce, "the accent colour in a nonce'd style");
    const csp = response.headers.get('content-security-policy')!;
    assert.ok(csp.includes("img-src 'self' data: https://cdn.example.com;"), csp);
    assert.ok(csp.includes(`style-src 'self' 'nonce-${nonce}'`), csp);
    assert.equal((await view(created.json.id)).json.store.name, 'Green Leaf Tea');
    // A light colour gets dark text (contrast).
    await updateStore(app.pool, shop.id, { 'accent-color': '#ffd54f' });
    assert.match((await page(created.json.id)).text, /--brand:#ffd54f;--brand-text:#111111/);
  });

  it('defaults unchanged: no logo, no colour of the store, the store name', async () => {
    const html = (await page((await createPayment()).id)).text;
    assert.ok(!html.includes('--brand'));
    assert.ok(!html.includes('id="store-logo"'));
    assert.ok(html.includes('<h1 id="store-name">Coffee &amp; Co</h1>'));
  });
});

describe('TON Connect', () => {
  it("serves the manifest at a stable URL, its PNG icon, and the wallets the page offers with Kassa's own badges", async () => {
    const manifest = await app.request('GET', '/pay/tonconnect-manifest.json');
    assert.equal(manifest.status, 200);
    const base = app.config.checkoutBaseUrl;
    assert.deepEqual(manifest.json, { url: new URL(base).origin, name: 'Kassa', iconUrl: `${base}/assets/kassa-icon.png` });
    const icon = await fetch(`${app.url}/pay/assets/kassa-icon.png`);
    assert.equal(icon.headers.get('content-type'), 'image/png');
    const png = Buffer.from(await icon.arrayBuffer());
    assert.equal(png.subarray(1, 4).toString('ascii'), 'PNG');
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [180, 180]);

    const wallets = await app.request('GET', '/pay/assets/tonconnect-wallets.json');
    assert.deepEqual(
      wallets.json.map((w: any) => w.app_name),
      ['telegram-wallet', 'tonkeeper', 'mytonwallet', 'tonhub'],
    );
    const bridges = new Set<string>();
    for (const wallet of wallets.json) {
      const badge = await app.request('GET', wallet.image);
      assert.equal(badge.status, 200, wallet.image);
      assert.equal(badge.headers.get('content-type'), 'image/svg+xml');
      for (const bridge of wallet.bridge) if (bridge.type === 'sse') bridges.add(new URL(bridge.url).origin);
    }
    assert.deepEqual([...bridges], [...TON_CONNECT_BRIDGE_ORIGINS], 'connect-src allows exactly these bridges');
    assert.equal((await app.request('GET', '/pay/assets/wallets/unknown.svg')).status, 404);
  });

  const customer = Address.parse('EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N');
  const tonConnect = (id: string, account: string = customer.toString()) =>
    app.request('GET', `/pay/v1/checkout/payments/${id}/ton-connect?account=${encodeURIComponent(account)}`);

  it('builds the TON transfer: what is still due, in nanoTON, to the deposit address, valid until the expiry', async () => {
    const payment = await createPayment({ amount: '1.25', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } });
    const response = await tonConnect(payment.id, customer.toRawString());
    assert.equal(response.status, 200, response.text);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.deepEqual(response.json, {
      validUntil: Math.floor(Date.parse(payment.timer.expiresAt) / 1000),
      from: customer.toRawString(),
      messages: [{ address: payment.paymentDetails.address, amount: '1250000000' }],
    });
    await recordTransfer(payment.id, 'TON', 250_000_000n, '0.25', 'partial');
    assert.equal((await tonConnect(payment.id)).json.messages[0].amount, '1000000000', 'the rest only');
  });

  it('refuses what cannot be paid now, with the envelope', async () => {
    const created = await createPayment();
    assertError(await tonConnect(created.id), 409, 'invalid_request_error', 'method_not_selected');
    const pending = await createPayment({ payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } });
    assertError(await tonConnect(pending.id, 'not-an-address'), 400, 'invalid_request_error', 'invalid_address', 'account');
    assertError(await tonConnect(pending.id, `-1:${'0'.repeat(64)}`), 400, 'invalid_request_error', 'invalid_address', 'account');
    assertError(await tonConnect(crypto.randomUUID()), 404, 'not_found_error', 'payment_not_found');
    await app.request('POST', `/v1/payments/${pending.id}/cancel`, { token: store.token });
    assertError(await tonConnect(pending.id), 409, 'invalid_request_error', 'payment_not_open');
    const late = await createPayment({ payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } });
    await app.pool.query(
      sql.unsafe`update payments set created_at = now() - interval '2 hours', expires_at = now() - interval '1 second' where id = ${late.id}`,
    );
    assertError(await tonConnect(late.id), 409, 'invalid_request_error', 'payment_expired');
  });

  it("a jetton needs the customer's jetton wallet from the chain: when the chain API cannot answer, 503 chain_unavailable", async () => {
    // This app serves no sandbox chain, so the lookup's JSON-RPC call gets a 404.
    const payment = await createPayment({ payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } });
    const response = await tonConnect(payment.id);
    assertError(response, 503, 'api_error', 'chain_unavailable');
    assert.equal(response.headers.get('retry-after'), '5');
  });
});

describe('unknown payments', () => {
  it("answer a 404 HTML page for an unknown or malformed id, in the customer's language", async () => {
    for (const id of [crypto.randomUUID(), 'not-a-payment', '12345']) {
      const response = await page(id);
      assert.equal(response.status, 404, id);
      assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.equal(response.headers.get('content-security-policy'), PAGE_CSP);
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.ok(response.text.includes('Payment not found'));
    }
    const russian = await page(crypto.randomUUID(), { 'accept-language': 'ru' });
    assert.equal(russian.status, 404);
    assert.ok(russian.text.includes('Платёж не найден'));
  });
});

/** Reads server-sent events until `predicate` accepts one (or the time runs out). */
async function readEvents(response: Response, predicate: (event: { event: string; data: any }) => boolean, timeoutMs = 8000) {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: Array<{ event: string; data: any }> = [];
  let buffer = '';
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      const chunk = await Promise.race([reader.read(), new Promise<null>((resolve) => setTimeout(() => resolve(null), deadline - Date.now()))]);
      if (chunk === null || chunk.done) break;
      buffer += chunk.value;
      for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.+)$/m.exec(block)?.[1];
        const data = /^data: (.+)$/m.exec(block)?.[1];
        if (event && data) {
          events.push({ event, data: JSON.parse(data) });
          if (predicate(events.at(-1)!)) return { events, ended: false };
        }
      }
    }
    return { events, ended: true };
  } finally {
    await reader.cancel().catch(() => {});
  }
}

describe('GET {checkout}/v1/checkout/payments/{id}/events', () => {
  it('streams the public view at once and again when the payment changes, then ends', async () => {
    const payment = await createPayment({ returnURL: 'https://shop.example.com/back', metadata: { meta_secret_key: 'META-SECRET-VALUE' } });
    const response = await fetch(`${app.url}/pay/v1/checkout/payments/${payment.id}/events`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('\n\n', text.indexOf('event: payment'))) text += (await reader.read()).value ?? '';
    assert.match(text, /^retry: \d+\n\n/);
    const first = JSON.parse(/^data: (.+)$/m.exec(text)![1]!);
    assert.equal(first.status, 'created');

    const started = Date.now();
    await choose(payment.id, methods.TON);
    while (!/"status":"pending"/.test(text)) text += (await reader.read()).value ?? '';
    assert.ok(Date.now() - started < 3000, 'within a few seconds');
    await app.request('POST', `/v1/payments/${payment.id}/cancel`, { token: store.token });
    let done = false;
    while (!done) {
      const chunk = await reader.read();
      text += chunk.value ?? '';
      done = chunk.done;
    }
    const views = [...text.matchAll(/^data: (.+)$/gm)].map((match) => JSON.parse(match[1]!));
    assert.deepEqual(
      views.map((v) => v.status),
      ['created', 'pending', 'cancelled'],
      'each change once, then the stream ends',
    );
    assert.equal(views[2].returnURL, 'https://shop.example.com/back');
    for (const secret of SECRETS) assert.ok(!text.includes(secret));
  });

  it('reports a received partial transfer while pending', async () => {
    const payment = await createPayment({ payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } });
    const response = await fetch(`${app.url}/pay/v1/checkout/payments/${payment.id}/events`);
    setTimeout(() => void recordTransfer(payment.id, 'USDT', 2_500_000n, '2.5', 'partial'), 300);
    const { events } = await readEvents(response, (event) => event.data.paymentDetails?.receivedAmount === '2.5');
    assert.equal(events.at(-1)!.data.paymentDetails.receivedAmount, '2.5');
    assert.equal(events.at(-1)!.data.status, 'pending');
  });

  it('answers an ended payment once and closes; unknown ids are 404', async () => {
    const payment = await createPayment();
    await app.request('POST', `/v1/payments/${payment.id}/cancel`, { token: store.token });
    const response = await fetch(`${app.url}/pay/v1/checkout/payments/${payment.id}/events`);
    const { events, ended } = await readEvents(response, () => false, 3000);
    assert.equal(ended, true);
    assert.deepEqual(
      events.map((e) => e.data.status),
      ['cancelled'],
    );
    assertError(await app.request('GET', `/pay/v1/checkout/payments/${crypto.randomUUID()}/events`), 404, 'not_found_error', 'payment_not_found');
  });
});

describe('graceful shutdown', () => {
  it('ends open event streams once the server stops listening, so that server.close() completes', async () => {
    const koa = createApp({ config: app.config, pool: app.pool, log: pino({ level: 'silent' }), now: () => new Date() });
    const server = http.createServer(koa.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const payment = await createPayment();
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/pay/v1/checkout/payments/${payment.id}/events`);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('event: payment')) text += (await reader.read()).value ?? '';
    const started = Date.now();
    await new Promise((resolve) => server.close(resolve));
    assert.ok(Date.now() - started < 5000, `closed after ${Date.now() - started} ms`);
    while (!(await reader.read()).done);
  });
});

describe('rate limits on the public endpoints', () => {
  let limited: TestApp;
  before(async () => {
    limited = await startPaymentsApp({ env: { RATE_LIMIT_PER_CLIENT: '1' } });
  });
  after(() => limited.close());

  it('limit every public endpoint per client address (burst twice the rate), static assets excepted', async () => {
    const owner = await limited.store({ name: 'Limited' });
    const payment = (await limited.request('POST', '/v1/payments', { token: owner.token, body: { amount: '1', currency: 'USD' } })).json;
    const first = await limited.request('GET', `/pay/v1/checkout/payments/${payment.id}`);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('ratelimit-limit'), '2');
    assert.equal((await limited.request('GET', `/pay/${payment.id}`)).status, 200);
    const json = await limited.request('GET', `/pay/v1/checkout/payments/${payment.id}`);
    assertError(json, 429, 'rate_limit_error', 'rate_limit_exceeded');
    assert.ok(Number(json.headers.get('retry-after')) >= 1);
    const html = await limited.request('GET', `/pay/${payment.id}`);
    assert.equal(html.status, 429);
    assert.equal(html.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.ok(html.text.includes('Too many requests'));
    assert.ok(html.headers.get('retry-after'));
    assertError(
      await limited.request('POST', `/pay/v1/checkout/payments/${payment.id}/method`, { body: { paymentMethodID: crypto.randomUUID() } }),
      429,
      'rate_limit_error',
      'rate_limit_exceeded',
    );
    assertError(await limited.request('GET', `/pay/v1/checkout/payments/${payment.id}/events`), 429, 'rate_limit_error', 'rate_limit_exceeded');
    assert.equal((await limited.request('GET', '/pay/assets/checkout.css')).status, 200);
  });
});
