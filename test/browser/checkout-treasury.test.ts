// The hosted checkout of a payment settled to the store's treasury (issue 43, CONTRACT §12) in real
// headless Chromium on the sandbox chain, at 375 px: paid through TON Connect (the wallet is asked for
// a transfer to the treasury carrying paymentDetails.payload, the reference as its comment) and paid
// "by QR" (a sandbox wallet sends what the page's ton:// link says: the amount and the text). Each
// completes the payment; the page shows the reference in large type with "the comment is required"
// (English and Russian) and a copy button; axe finds nothing serious.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Address, Cell } from '@ton/core';
import { sql, z } from '../../src/db/pool.ts';
import { fromBaseUnits } from '../../src/money.ts';
import { formatReference, referencePayload } from '../../src/payments/reference.ts';
import { updateStore } from '../../src/stores/stores.ts';
import { injectTestWallet } from '../helpers/tonconnectWallet.ts';
import { app, assertAccessible, open, shot, store, useCheckoutBrowser, watchChain } from '../helpers/checkoutBrowser.ts';

// It reads a copied reference back: its own Chromium, whose clipboard no other file shares (test/README.md).
useCheckoutBrowser({ ownClipboard: true });

const PHONE = { width: 375, height: 812 };
const raw = (address: string) => Address.parse(address).toRawString();

let treasury: string | null = null;
/** The shared store settles to a sandbox wallet playing its treasury from the first use on. */
async function treasuryPayment(amount: string): Promise<any> {
  if (treasury === null) {
    treasury = raw((await app.request('POST', '/sandbox/v1/wallets')).json.address);
    await updateStore(app.pool, store.id, { treasury, settlement: 'treasury' });
  }
  const created = await app.request('POST', '/v1/payments', {
    token: store.token,
    body: { amount, currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] }, ttl: 3600 },
  });
  assert.equal(created.status, 201, created.text);
  assert.ok(created.json.paymentDetails.reference, 'a treasury payment carries its reference');
  assert.equal(raw(created.json.paymentDetails.address), treasury);
  return created.json;
}

const statusOf = (id: string) => app.pool.oneFirst(sql.type(z.object({ status: z.string() }))`select status from payments where id = ${id}`);

/** Nothing wider than the phone: no sideways scrolling at 375 px. */
async function assertFitsPhone(page: import('playwright-core').Page): Promise<void> {
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= PHONE.width, `the page is ${width}px wide at ${PHONE.width}px`);
}

describe("a treasury store's checkout (payments told apart by their reference)", () => {
  it('paid through TON Connect on a phone: the wallet sends the payload to the treasury and the payment completes', async () => {
    const payment = await treasuryPayment('1.25');
    const reference = payment.paymentDetails.reference as string;
    const opened = await open({ viewport: PHONE });
    const { context, page } = opened;
    try {
      const wallet = await injectTestWallet(page, app, { embedded: true });
      assert.equal((await page.goto(`${app.url}/pay/${payment.id}`))?.status(), 200);
      // The reference is the one the customer must send, in large type, with a copy button.
      assert.equal(await page.locator('#reference-value').innerText(), reference);
      assert.equal(await page.locator('#reference').innerText(), reference, 'the facts name the same reference, not a second one');
      assert.match(await page.locator('#reference-box').innerText(), /The comment is required/);
      assert.equal(await page.locator('button[data-copy="reference-value"]').getAttribute('aria-label'), 'Copy the comment');
      const fontSize = await page.locator('#reference-value').evaluate((element) => Number.parseFloat(getComputedStyle(element).fontSize));
      assert.ok(fontSize >= 24, `large type (${fontSize}px)`);
      const clipped = await page.locator('#reference-value').evaluate((element) => element.scrollWidth > element.clientWidth);
      assert.equal(clipped, false, 'the whole reference shows at 375 px');
      const pay = page.locator('#tonconnect-pay');
      await pay.waitFor({ state: 'visible', timeout: 10_000 });
      await assertFitsPhone(page);
      await assertAccessible(page, 'treasury payment, phone');
      await shot(page, '40-treasury-pending-phone');

      await pay.click();
      await page.locator('#notice').filter({ hasText: 'Sent from your wallet' }).waitFor({ timeout: 15_000 });
      assert.equal(wallet.requests.length, 1);
      const [message] = wallet.requests[0].messages;
      assert.equal(raw(message.address), treasury, 'to the treasury itself, no deposit');
      assert.equal(message.amount, '1250000000');
      assert.equal(message.payload, payment.paymentDetails.payload, 'paymentDetails.payload: the reference as a text comment');
      const body = Cell.fromBase64(message.payload).beginParse();
      assert.equal(body.loadUint(32), 0);
      assert.equal(body.loadStringTail(), reference);

      await watchChain();
      await page.getByRole('heading', { name: 'Paid' }).waitFor({ timeout: 10_000 });
      assert.equal(await statusOf(payment.id), 'completed');
      assert.equal(await page.locator('#paid-amount').innerText(), '1.25 GRAM');
      await assertAccessible(page, 'treasury payment paid, phone');
      await shot(page, '41-treasury-paid-phone');
    } finally {
      await context.close();
    }
  });

  it('paid by QR: a wallet sends the ton:// link’s amount and text to the treasury, and the payment completes; Russian says the comment is required', async () => {
    const payment = await treasuryPayment('0.75');
    const reference = payment.paymentDetails.reference as string;
    assert.equal(reference, formatReference(reference.replace('-', '')));
    assert.equal(payment.paymentDetails.payload, referencePayload(reference.replace('-', '')));
    const { context, page, problems } = await open({ viewport: PHONE });
    try {
      assert.equal((await page.goto(`${app.url}/pay/${payment.id}`))?.status(), 200);
      const link = new URL((await page.locator('#wallet-link').getAttribute('href'))!);
      assert.equal(link.protocol, 'ton:');
      assert.equal(raw(decodeURIComponent(link.pathname.replace(/^\/\/transfer\/|^transfer\//, '').replace(/^\/+/, ''))), treasury);
      assert.equal(link.searchParams.get('text'), reference);
      assert.equal(link.searchParams.get('amount'), '750000000');
      assert.equal(await page.locator('svg.qr').count(), 1);
      // The copy button copies the reference itself.
      await context.grantPermissions(['clipboard-read', 'clipboard-write']);
      await page.locator('button[data-copy="reference-value"]').click();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), reference);
      await assertFitsPhone(page);
      await assertAccessible(page, 'treasury payment by QR, phone');

      // In Russian, the same words.
      await page.goto(`${app.url}/pay/${payment.id}?lang=ru`);
      assert.match(await page.locator('#reference-box').innerText(), /Комментарий обязателен/);
      assert.equal(await page.locator('button[data-copy="reference-value"]').getAttribute('aria-label'), 'Копировать комментарий');
      await assertFitsPhone(page);
      await assertAccessible(page, 'treasury payment, phone, ru');
      await shot(page, '42-treasury-pending-phone-ru');

      // A sandbox wallet pays what the link says: its amount (nanoTON) and its text as the comment.
      const amount = fromBaseUnits(BigInt(link.searchParams.get('amount')!), 9);
      await app.pay(treasury!, 'TON', amount, { comment: link.searchParams.get('text')! });
      await watchChain();
      await page.getByRole('heading', { name: 'Оплачено' }).waitFor({ timeout: 10_000 });
      assert.equal(await statusOf(payment.id), 'completed');
      assert.deepEqual(
        problems.filter((p) => !/ERR_NAME_NOT_RESOLVED|ERR_INTERNET_DISCONNECTED|Aborted after attempts/.test(p)),
        [],
      );
    } finally {
      await context.close();
    }
  });
});
