// The merchant dashboard end to end in real headless Chromium (Debian's `chromium`, driven by
// playwright-core) against the real app, real Postgres and the sandbox chain read by the chain
// reader: an invitation → set a password → sign out → sign in; find a payment by order_id; refund
// an overpayment from the payment page and see it confirmed in the books (the same row the API
// shows); redeliver a webhook; a viewer's refund refused; the payments list updated live; team
// invitations; API tokens issued and revoked; the audit log with each action. axe-core finds no serious violation on any page. Screenshots go to
// test-artifacts/dashboard/ (git-ignored).
//
// If Chromium cannot be launched this file FAILS (it never skips).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Address } from '@ton/core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { AUDIT_WORDS } from '../../src/dashboard/glossary.ts';
import { sql, z } from '../../src/db/pool.ts';
import { fromBaseUnits, toBaseUnits } from '../../src/money.ts';
import { depositMoney } from '../../src/treasury/outgoing.ts';
import { freshAddress, startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { chromiumBrowser } from '../helpers/chromium.ts';
import { invitationPath } from '../helpers/dashboard.ts';
import { assertAccessible as accessible, openPage, clickInMenu } from '../helpers/dashboardBrowser.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/dashboard');
const PASSWORD = 'a long dashboard password';

let app: ChainTestApp;
let store: Awaited<ReturnType<ChainTestApp['store']>>;
let browser: Browser;
let owner: { context: BrowserContext; page: Page; problems: string[] };

before(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  browser = await chromiumBrowser();
  app = await startChainApp({ WEBHOOK_ALLOW_INSECURE: 'true' });
  store = await app.store({ name: 'Blue Bottle Café', methods: 'TON/TON,USDT/TON' });
  owner = await open();
});
after(async () => {
  await browser?.close();
  await app?.close();
});

/** A fresh browser profile (console errors and CSP violations recorded; confirm dialogs accepted). */
const open = (viewport = { width: 390, height: 844 }): Promise<{ context: BrowserContext; page: Page; problems: string[] }> => openPage(browser, viewport);
/** axe-core in the page: no serious or critical violation; a screenshot to ARTIFACTS. */
const assertAccessible = (page: Page, what: string): Promise<void> => accessible(page, what, ARTIFACTS);

async function createPayment(body: Record<string, unknown>): Promise<any> {
  const response = await app.request('POST', '/v1/payments', { token: store.token, body });
  assert.equal(response.status, 201, response.text);
  return response.json;
}

const auditActions = () =>
  app.pool.anyFirst(sql.type(z.object({ action: z.string() }))`select action from audit_log where store_id = ${store.id} or store_id is null order by id`);

describe('the dashboard in headless Chromium', () => {
  let payment: any;

  it('invite → set a password → sign out → sign in', async () => {
    const { page, problems } = owner;
    await page.goto(`${app.url}${await invitationPath(app.pool, store.id, 'owner@bluebottle.example', 'owner')}`);
    assert.equal(await page.locator('h1').innerText(), 'Join Blue Bottle Café');
    await assertAccessible(page, 'invitation');
    await page.fill('#password', PASSWORD);
    await page.fill('#confirm', `${PASSWORD}!`);
    await page.click('button[type=submit]');
    assert.equal(await page.locator('#confirm-problem').innerText(), 'The two passwords differ.');
    await assertAccessible(page, 'invitation with a problem');
    await page.fill('#password', PASSWORD);
    await page.fill('#confirm', PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL(`${app.url}/dashboard/stores/${store.id}`);
    // The store's home page is where a member lands.
    assert.equal(await page.locator('h1').innerText(), 'Blue Bottle Café');
    // It takes USDT and has no money for refund fees yet, but no USDT refund is waiting or was ever
    // made: a new store's home page does not open on that (issue 47 item 3).
    assert.equal(await page.locator('#attention-gas').count(), 0);
    await assertAccessible(page, 'home');
    const cookie = (await owner.context.cookies()).find((c) => c.name === 'kassa_dashboard')!;
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Strict');
    // Not readable from a script.
    assert.equal(await page.evaluate(() => document.cookie), '');

    await clickInMenu(page, 'text=Sign out');
    await page.waitForURL(/\/dashboard\/sign-in/);
    await assertAccessible(page, 'sign-in');
    await page.fill('#email', 'owner@bluebottle.example');
    await page.fill('#password', 'not the password');
    await page.click('button[type=submit]');
    assert.match(await page.locator('#sign-in-problem').innerText(), /do not match/);
    await page.fill('#password', PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL(`${app.url}/dashboard/stores/${store.id}`);
    assert.deepEqual(problems, []);
  });

  it('finds a payment by order_id; the list updates live when a payment is paid', async () => {
    const { page, problems } = owner;
    payment = await createPayment({
      amount: '1',
      currency: 'TON',
      payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] },
      order_id: 'ORDER-7781',
      webhookURL: 'http://127.0.0.1:9/hook',
    });
    await createPayment({ amount: '2', currency: 'TON', order_id: 'ORDER-7782' });
    await page.goto(`${app.url}/dashboard/stores/${store.id}/payments`);
    await assertAccessible(page, 'payments');
    await page.fill('#q', 'ORDER-7781');
    await page.click('form[role=search] button[type=submit]');
    await page.waitForURL(/q=ORDER-7781/);
    const rows = page.locator('#payments tbody tr');
    assert.equal(await rows.count(), 1);
    assert.match(await rows.first().innerText(), /pending/);

    // Live: the customer pays 1.5 TON (0.5 too much); the row turns completed without a reload.
    await page.evaluate(() => ((window as unknown as { mark: string }).mark = 'same-document'));
    await app.pay(payment.paymentDetails.address, 'TON', '1.5');
    await app.settle();
    await page.locator('#payments tbody tr .status-completed').waitFor({ timeout: 15_000 });
    assert.equal(await page.evaluate(() => (window as unknown as { mark?: string }).mark), 'same-document');

    await page.click(`a[href$="/payments/${payment.id}"]`);
    await page.waitForURL(new RegExp(`/payments/${payment.id}$`));
    assert.match(await page.locator('dl.facts').innerText(), /completed[\s\S]*paid too much/);
    assert.match(await page.locator('#transfers-in').innerText(), /1\.5 GRAM[\s\S]*paid more than the price/);
    assert.equal(await page.locator('#refundable [data-coin="TON"] data').getAttribute('value'), '0.5');
    await assertAccessible(page, 'payment');
    assert.deepEqual(problems, []);
  });

  it('refunds the overpayment from the payment page; the refund is confirmed in the books, the same as the API shows', async () => {
    const { page, problems } = owner;
    const to = Address.parse(freshAddress()).toString({ bounceable: false, testOnly: true });
    // Bad input first: a clear message on the form, nothing changes.
    await page.fill('#refund-amount', '0.6');
    await page.fill('#refund-address', to);
    await page.click('form[action$="/refunds"] button[type=submit]');
    assert.match(
      await page.locator('#amount-problem').innerText(),
      /at most 0\.5 GRAM is refundable now: all of it, its fee taken from it \(0\.49 GRAM arrives;.* or at most 0\.49 GRAM with its fee paid on top \(0\.01 GRAM reserved for it\)/,
    );
    assert.equal(await page.locator('#refund-address').inputValue(), to);
    await assertAccessible(page, 'refund refused');
    assert.equal((await app.request('GET', `/v1/payments/${payment.id}/refunds`, { token: store.token })).json.data.length, 0);

    // The most the overpayment allows: 0.5 less the refund's fee (docs/API.md, Refunds).
    await page.fill('#refund-amount', '0.49');
    await page.click('form[action$="/refunds"] button[type=submit]');
    // The confirm step: what is sent, the fee, what arrives; then confirmed.
    assert.equal(await page.locator('#confirm-arrives').innerText(), '0.49 GRAM');
    await page.click('#refund-confirm button[type=submit]');
    await page.waitForURL(/notice=refund_created/);
    assert.match(await page.locator('.success').innerText(), /Refund planned/);
    assert.match(await page.locator('#transfers-out tr.out-refund').innerText(), /Refund\s+0\.49 GRAM[\s\S]*planned/);
    assert.equal(await page.locator('#refundable').innerText(), 'Nothing can be refunded now.');

    await app.drain(Address.parse(payment.paymentDetails.address).toRawString());
    await page.reload();
    assert.equal(await page.locator('#transfers-out tr.out-refund .state').getAttribute('data-state'), 'confirmed');
    const [fromApi] = (await app.request('GET', `/v1/payments/${payment.id}/refunds`, { token: store.token })).json.data;
    assert.equal(fromApi.status, 'confirmed');
    assert.equal(fromApi.amount, '0.49');
    assert.equal(fromApi.address, to);
    assert.match(await page.locator('#transfers-out tr.out-refund').innerText(), new RegExp(fromApi.transactionHash));
    // The Money table (deposit_money, the one definition): 1.5 received, 1 counted (the completed
    // payment's amount: the merchant's), 0.49 refunded, nothing swept (no treasury), the refund's
    // real fee, and refundable what its 0.01 fee reserve did not spend, under the smallest TON refund.
    // Each figure's exact value is its element's value (the page rounds for reading).
    const money = await page
      .locator('#money tbody tr')
      .first()
      .locator('td > data.amount')
      .evaluateAll((cells) => cells.map((c) => c.getAttribute('value')));
    assert.deepEqual(money.slice(0, 4), ['1.5', '1', '0.49', '0']);
    const [ton] = await depositMoney(app.pool, payment.id);
    assert.equal(money[4], fromBaseUnits(BigInt(ton!.fees), 9));
    assert.ok(BigInt(ton!.fees) >= toBaseUnits(fromApi.fee, 9), "the fees include the refund's");
    assert.ok(Number(money[5]) >= 0 && Number(money[5]) < 0.01, `refundable ${money[5]}`);
    await assertAccessible(page, 'payment after refund');
    assert.deepEqual(problems, []);
  });

  it('redelivers the webhook', async () => {
    const { page, problems } = owner;
    assert.equal(await page.locator('#deliveries tbody tr').count(), 1);
    await page.click('text=Redeliver the webhook');
    await page.waitForURL(/notice=redelivery_queued/);
    const rows = page.locator('#deliveries tbody tr');
    assert.equal(await rows.count(), 2);
    assert.match(await rows.nth(1).innerText(), /redelivery/);
    assert.deepEqual(problems, []);
  });

  it("a viewer sees the payment but no refund form, and the server refuses a viewer's refund", async () => {
    const viewer = await open({ width: 1280, height: 900 });
    try {
      const { page } = viewer;
      await page.goto(`${app.url}${await invitationPath(app.pool, store.id, 'viewer@bluebottle.example', 'viewer')}`);
      await page.fill('#password', PASSWORD);
      await page.fill('#confirm', PASSWORD);
      await page.click('button[type=submit]');
      await page.waitForURL(`${app.url}/dashboard/stores/${store.id}`);
      await page.goto(`${app.url}/dashboard/stores/${store.id}/payments/${payment.id}`);
      assert.equal(await page.locator('form[action$="/refunds"]').count(), 0);
      assert.equal(await page.locator('text=Redeliver the webhook').count(), 0);
      assert.equal(await page.locator('nav a[href$="/team"]').count(), 0);
      await assertAccessible(page, 'payment as viewer');
      // The viewer makes the form themselves: the server refuses it.
      await page.evaluate((action) => {
        const form = document.createElement('form');
        form.method = 'post';
        form.action = action;
        for (const [name, value] of Object.entries({ coin: 'TON', amount: '0.1', address: '0:'.padEnd(66, '1'), confirm: 'yes' })) {
          const input = document.createElement('input');
          input.name = name;
          input.value = value;
          form.append(input);
        }
        document.body.append(form);
        form.submit();
      }, `/dashboard/stores/${store.id}/payments/${payment.id}/refunds`);
      await page.waitForURL(/\/refunds$/);
      assert.equal(await page.locator('h1').innerText(), 'Not allowed');
      assert.equal((await app.request('GET', `/v1/payments/${payment.id}/refunds`, { token: store.token })).json.data.length, 1);
      assert.deepEqual(viewer.problems, []);
    } finally {
      await viewer.context.close();
    }
  });

  it('the team page invites; API tokens are issued and revoked; the audit log shows each action', async () => {
    const { page, problems } = owner;
    await clickInMenu(page, 'nav a[href$="/team"]');
    await assertAccessible(page, 'team');
    await page.fill('#invite-email', 'cashier@bluebottle.example');
    await page.click('form[action$="/team/invitations"] button[type=submit]');
    assert.match(await page.locator('#invite-link').innerText(), /\/dashboard\/invite\/[A-Za-z0-9_-]{43}$/);
    assert.match(await page.locator('main').innerText(), /cashier@bluebottle\.example\s+invitation \(viewer\)\s+owner@bluebottle\.example/);

    await clickInMenu(page, 'nav a[href$="/tokens"]');
    await assertAccessible(page, 'API tokens');
    await page.selectOption('#lifetime', '90d');
    await page.click('form[action$="/tokens"] button[type=submit]');
    const token = await page.locator('#new-token').inputValue();
    assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    assert.equal((await app.request('GET', '/v1/payment-methods', { token })).status, 200);
    await assertAccessible(page, 'API token issued');
    const jti = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).jti as string;
    await page.click(`button[aria-label="Revoke ${jti}"]`);
    await page.waitForSelector('text=revoked: requests with it are refused');
    assert.equal((await app.request('GET', '/v1/payment-methods', { token })).status, 401);

    await clickInMenu(page, 'nav a[href$="/audit"]');
    // "What" in a shop owner's words; the exact name is each entry's title and the glossary's, one click away.
    const entries = await page.locator('#audit td.action').evaluateAll((cells) =>
      cells.map((cell) => ({
        action: cell.getAttribute('data-action'),
        shown: (cell as HTMLElement).innerText,
        title: cell.querySelector('[title]')?.getAttribute('title'),
      })),
    );
    const actions = entries.map((entry) => entry.action);
    for (const action of ['invitation.create', 'invitation.accept', 'refund.create', 'webhook.redeliver', 'refund.refused', 'token.issue', 'token.revoke']) {
      assert.ok(actions.includes(action), `${action} in ${actions.join(', ')}`);
    }
    for (const entry of entries) {
      assert.equal(entry.title, entry.action);
      assert.equal(entry.shown, AUDIT_WORDS[entry.action as keyof typeof AUDIT_WORDS], `the words for ${entry.action}`);
      assert.doesNotMatch(entry.shown, /[a-z]\.[a-z]|_/, 'no raw action name shown');
    }
    assert.ok(entries.some((entry) => entry.shown === 'Accepted an invitation and joined'));
    const glossary = (await page.locator('#audit thead a.term').getAttribute('href')) ?? '';
    assert.match(glossary, /\/glossary#audit_actions$/);
    await page.goto(new URL(glossary, page.url()).href);
    // The list of exact names is folded under "Precise terms" (the glossary fits a phone): one click opens it.
    await page.locator('#audit_actions + dd summary').click();
    assert.match(await page.locator('#audit_actions + dd').innerText(), /`?invitation\.accept`? \(accepted an invitation and joined\)/);
    await page.goBack();
    await assertAccessible(page, 'audit log');
    // And in SQL, for the merchant's reports (sign-ins have no store: they are the person's, not the store's).
    const all = await auditActions();
    for (const action of [
      'session.sign_in',
      'session.sign_out',
      'invitation.create',
      'invitation.accept',
      'refund.create',
      'webhook.redeliver',
      'refund.refused',
    ]) {
      assert.ok(all.includes(action), action);
    }
    const reporting = await app.pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`select count(*)::int as n from reporting.audit_log where store_id = ${store.id}`,
    );
    assert.ok(reporting >= 6);
    assert.deepEqual(problems, []);
  });
});
