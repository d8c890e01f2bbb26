// The dashboard's money pages in real headless Chromium at phone width (375 px) against the real
// app, real Postgres and the sandbox chain read by the chain reader: a paid payment's timeline and
// money per coin (deposit_money), a refund through the form's confirm step that lands in the books
// exactly as an API refund does, the store's Money page and the Webhooks page (rotation by an
// owner). axe-core finds no serious violation on any page and no page scrolls sideways.
// Screenshots go to test-artifacts/dashboard-money/ (git-ignored).
//
// If Chromium cannot be launched this file FAILS (it never skips).
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Address } from '@ton/core';
import type { Browser, Page } from 'playwright-core';
import { sql, z } from '../../src/db/pool.ts';
import { fromBaseUnits } from '../../src/money.ts';
import { depositMoney } from '../../src/treasury/outgoing.ts';
import { freshAddress, overpaidTonPayment, startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { chromiumBrowser } from '../helpers/chromium.ts';
import { invitationPath } from '../helpers/dashboard.ts';
import { assertPageFits, type BrowserPage, joinByInvitation, openPage, clickInMenu } from '../helpers/dashboardBrowser.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/dashboard-money');
const PASSWORD = 'a long dashboard password';

let app: ChainTestApp;
let store: Awaited<ReturnType<ChainTestApp['store']>>;
let browser: Browser;
let owner: BrowserPage;

before(async () => {
  browser = await chromiumBrowser();
  app = await startChainApp({ WEBHOOK_ALLOW_INSECURE: 'true' });
  store = await app.store({ name: 'Corner Shop', methods: 'TON/TON,USDT/TON' });
  owner = await openPage(browser);
  await join(owner.page, 'owner@corner.example', 'owner');
});
after(async () => {
  await browser?.close();
  await app?.close();
});

async function join(page: Page, email: string, role: 'owner' | 'viewer'): Promise<void> {
  await joinByInvitation(page, app.url, store.id, await invitationPath(app.pool, store.id, email, role), PASSWORD);
}

const check = (page: Page, what: string): Promise<void> => assertPageFits(page, what, ARTIFACTS);

/** A payment of 1 TON paid with 1.5 TON (0.5 refundable), booked by the chain reader; its webhook fails (nothing listens). */
const overpaidPayment = (orderId: string): Promise<any> => overpaidTonPayment(app, store.token, { order_id: orderId });

/** A payment's refund as the books hold it, less what names the payment, its wallet or its moment. */
const bookedRefund = async (paymentId: string) =>
  (
    await app.pool.one(sql.type(z.object({ row: z.record(z.string(), z.unknown()) }))`
      select to_jsonb(o) - array['id', 'payment_id', 'from_address', 'created_at', 'updated_at', 'signed_at', 'last_broadcast_at', 'confirmed_at',
                                 'valid_until', 'message_hash', 'message_hash_normalized', 'signed_message', 'transaction_hash', 'transaction_lt', 'delivered_at'] as row
      from outgoing_transfers o where payment_id = ${paymentId} and kind = 'refund'
    `)
  ).row;

/** A table row's coin and its figures' exact values (each amount's `value`; the page shows them rounded). */
const figures = (page: Page, row: string) =>
  page
    .locator(row)
    .first()
    .evaluate((tr) => [
      tr.querySelector('th')?.textContent ?? '',
      ...Array.from(tr.querySelectorAll('td > data.amount'), (d) => d.getAttribute('value') ?? ''),
    ]);

/** deposit_money's figures of a payment, coin by coin. */
const books = async (paymentId: string) =>
  (await depositMoney(app.pool, paymentId)).map((m) => [m.coin_symbol, m.received, m.counted, m.refunded, m.swept, m.fees, m.refundable]);

describe('the money pages in headless Chromium at 375 px', () => {
  let ours: any;
  let twin: any;

  it("a payment's page tells its timeline and its money per coin as deposit_money has it", async () => {
    const { page, problems } = owner;
    ours = await overpaidPayment('ORDER-1');
    twin = await overpaidPayment('ORDER-2');
    await app.settle();
    await page.goto(`${app.url}/dashboard/stores/${store.id}/payments/${ours.id}`);
    const events = await page.locator('#timeline li .what').allInnerTexts();
    assert.deepEqual(events, [
      'Created',
      'Method chosen: Gram (GRAM) on the TON network: 1 GRAM to pay',
      'Received 1.5 GRAM: paid more than the price (the extra can be refunded)',
      'Completed',
    ]);
    const hash = await app.pool.oneFirst(sql.type(z.object({ hash: z.string() }))`select hash from transfers where payment_id = ${ours.id}`);
    assert.match(await page.locator('#timeline li.event-transfer .tx').innerText(), new RegExp(`^${hash}`));
    const [ton] = await depositMoney(app.pool, ours.id);
    const money = await figures(page, '#money tbody tr');
    assert.deepEqual(money, ['Gram (GRAM)', '1.5', '1', '0', '0', fromBaseUnits(BigInt(ton!.fees), 9), fromBaseUnits(BigInt(ton!.refundable), 9)]);
    // Rounded for reading, exact on hover: the fee's 9 decimals read as 4.
    const fee = page.locator('#money tbody tr').first().locator('td > data.amount').nth(4);
    if ((fromBaseUnits(BigInt(ton!.fees), 9).split('.')[1] ?? '').length > 4) assert.match((await fee.getAttribute('title')) ?? '', /^Exactly 0\.\d+ GRAM$/);
    assert.match(await page.locator('#fees-explained').innerText(), /what the TON network charged/);
    await check(page, 'payment');
    assert.deepEqual(problems, []);
  });

  it('a refund through the confirm step lands in the books exactly as the same refund through the API', async () => {
    const { page, problems } = owner;
    const to = Address.parse(freshAddress()).toString({ bounceable: false, testOnly: true });
    await page.fill('#refund-amount', '0.2');
    await page.fill('#refund-address', to);
    await page.click('form[action$="/refunds"] button[type=submit]');
    await page.locator('#refund-confirm').waitFor();
    assert.equal(await page.locator('#confirm-send').innerText(), '0.2 GRAM');
    assert.match(await page.locator('#confirm-fee').innerText(), /^0\.01 GRAM/);
    assert.equal(await page.locator('#confirm-arrives').innerText(), '0.2 GRAM');
    await check(page, 'refund confirm');
    // Nothing is planned before the confirmation.
    assert.equal((await app.request('GET', `/v1/payments/${ours.id}/refunds`, { token: store.token })).json.data.length, 0);
    await page.click('#refund-confirm button[type=submit]');
    await page.waitForURL(/notice=refund_created/);
    assert.match(await page.locator('.success').innerText(), /Refund planned/);

    const api = await app.request('POST', `/v1/payments/${twin.id}/refunds`, { token: store.token, body: { coin: 'TON', amount: '0.2', address: to } });
    assert.equal(api.status, 201, api.text);
    assert.deepEqual(await bookedRefund(ours.id), await bookedRefund(twin.id));
    assert.deepEqual(await books(ours.id), await books(twin.id));

    for (const payment of [ours, twin]) await app.drain(Address.parse(payment.paymentDetails.address).toRawString());
    assert.deepEqual(await bookedRefund(ours.id), await bookedRefund(twin.id));
    assert.deepEqual(await books(ours.id), await books(twin.id));
    const [fromPage] = (await app.request('GET', `/v1/payments/${ours.id}/refunds`, { token: store.token })).json.data;
    const [fromApi] = (await app.request('GET', `/v1/payments/${twin.id}/refunds`, { token: store.token })).json.data;
    const comparable = ({ id: _id, paymentID: _payment, createdAt: _created, transactionHash: _hash, confirmedAt: _confirmed, ...rest }: any) => rest;
    assert.equal(fromPage.status, 'confirmed');
    assert.deepEqual(comparable(fromPage), comparable(fromApi));

    await page.reload();
    const events = await page.locator('#timeline li .what').allInnerTexts();
    assert.equal(events.at(-2), 'Refund of 0.2 GRAM planned');
    assert.match(events.at(-1)!, /^Refund of 0\.2 GRAM done \(network fee 0\.\d+ GRAM\)$/);
    assert.match(await page.locator('#timeline li.event-refund .tx').innerText(), new RegExp(`^${fromPage.transactionHash}`));
    assert.equal((await figures(page, '#money tbody tr'))[3], '0.2');
    await check(page, 'payment after refund');
    assert.deepEqual(problems, []);
  });

  it("the Money page sums the store's books per coin (reporting.store_money); no treasury yet", async () => {
    const { page, problems } = owner;
    await clickInMenu(page, 'nav a[href$="/money"]');
    await page.waitForURL(/\/money$/);
    assert.equal(await page.locator('#store-money tbody tr').count(), 1);
    const cells = await figures(page, '#store-money tbody tr');
    assert.deepEqual(cells.slice(0, 5), ['Gram (GRAM)', '3', '2', '0.4', '0']);
    const [a, b] = [await depositMoney(app.pool, ours.id), await depositMoney(app.pool, twin.id)];
    assert.equal(cells[5], fromBaseUnits(BigInt(a[0]!.fees) + BigInt(b[0]!.fees), 9));
    assert.equal(cells[7], fromBaseUnits(BigInt(a[0]!.refundable) + BigInt(b[0]!.refundable), 9));
    assert.match(await page.locator('#treasury').innerText(), /^None/);
    await check(page, 'money');
    assert.deepEqual(problems, []);
  });

  it('the Webhooks page shows the key set and the deliveries; an owner rotates the key, a viewer cannot', async () => {
    const { page, problems } = owner;
    await app.request('GET', '/pay/v1/webhook/keys');
    // The active key is older than the rotation's 10 minutes.
    await app.pool.query(sql.unsafe`update webhook_signing_keys set created_at = created_at - interval '1 hour'`);
    await clickInMenu(page, 'nav a[href$="/webhooks"]');
    await page.waitForURL(/\/webhooks$/);
    const before = await page.locator('#webhook-keys tbody tr').allInnerTexts();
    assert.equal(before.length, 1);
    assert.match(before[0]!, /active/);
    const deliveries = await page.locator('#webhook-deliveries tbody tr').allInnerTexts();
    assert.equal(deliveries.length, 2);
    // The receiver is for the shop's developer: folded.
    await page.click('details.developer summary');
    assert.match(await page.locator('#receiver-snippet').innerText(), /from 'kassa-webhooks'/);
    await check(page, 'webhooks');
    await page.click('form[action$="/webhooks/keys/rotate"] button[type=submit]');
    await page.locator('.success').waitFor();
    assert.match(await page.locator('.success').innerText(), /signs from now on/);
    const keys = await page.locator('#webhook-keys tbody tr').allInnerTexts();
    assert.equal(keys.length, 2);
    assert.match(keys[0]!, /active/);
    assert.match(keys[1]!, /retired/);
    await check(page, 'webhooks after rotation');
    const audited = await app.pool.anyFirst(sql.type(z.object({ action: z.string() }))`select action from audit_log where store_id = ${store.id} order by id`);
    assert.ok(audited.includes('webhook_key.rotate'));
    assert.ok(audited.includes('refund.create'));
    assert.deepEqual(problems, []);

    const viewer = await openPage(browser);
    try {
      await join(viewer.page, 'viewer@corner.example', 'viewer');
      await clickInMenu(viewer.page, 'nav a[href$="/webhooks"]');
      await viewer.page.waitForURL(/\/webhooks$/);
      assert.equal(await viewer.page.locator('form[action$="/webhooks/keys/rotate"]').count(), 0);
      await check(viewer.page, 'webhooks as viewer');
      await clickInMenu(viewer.page, 'nav a[href$="/money"]');
      await viewer.page.waitForURL(/\/money$/);
      await check(viewer.page, 'money as viewer');
      assert.deepEqual(viewer.problems, []);
    } finally {
      await viewer.context.close();
    }
  });
});
