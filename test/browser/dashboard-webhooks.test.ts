// The Webhooks page's endpoints in real headless Chromium at phone width (375 px) against the real app
// and Postgres (issue 29): an owner adds an endpoint (a refused URL first), sends it a test event that
// a real receiver verifies with the kit, redelivers it and deletes the endpoint; a viewer sees no
// actions. axe-core finds no serious violation and no page scrolls sideways.
// Screenshots go to test-artifacts/dashboard-webhooks/ (git-ignored). If Chromium cannot be launched this file FAILS.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { sql, z } from '../../src/db/pool.ts';
import type { TestApp } from '../helpers/app.ts';
import { chromiumBrowser } from '../helpers/chromium.ts';
import { invitationPath } from '../helpers/dashboard.ts';
import { assertPageFits, joinByInvitation, openPage, clickInMenu } from '../helpers/dashboardBrowser.ts';
import { runDeliveries, startEventReceiver, verifiedEvents } from '../helpers/eventReceiver.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/dashboard-webhooks');
const PASSWORD = 'a long dashboard password';

let app: TestApp;
let store: Awaited<ReturnType<TestApp['store']>>;
let browser: Browser;

before(async () => {
  browser = await chromiumBrowser();
  app = await startPaymentsApp({ env: { WEBHOOK_ALLOW_INSECURE: 'true' } });
  store = await app.store({ name: 'Corner Shop', methods: 'TON/TON' });
});
after(async () => {
  await browser?.close();
  await app?.close();
});

async function join(page: Page, email: string, role: 'owner' | 'viewer'): Promise<void> {
  await joinByInvitation(page, app.url, store.id, await invitationPath(app.pool, store.id, email, role), PASSWORD);
}

const check = (page: Page, what: string): Promise<void> => assertPageFits(page, what, ARTIFACTS);

describe('the Webhooks page: store endpoints', () => {
  it('an owner adds an endpoint, sends a test event the receiver verifies, redelivers it and deletes the endpoint; a viewer only reads', async () => {
    const receiver = await startEventReceiver(app);
    const { page } = await openPage(browser);
    try {
      await join(page, 'owner@corner.example', 'owner');
      await clickInMenu(page, 'nav a[href$="/webhooks"]');
      await page.waitForURL(/\/webhooks$/);
      assert.equal(await page.locator('#no-endpoints').count(), 1);
      await check(page, 'webhooks without endpoints');

      // A URL with credentials is refused, the form kept.
      await page.fill('#endpoint-url', 'https://user:secret@shop.example/hook');
      await page.check('#event-payment-expired');
      await page.click('#add-endpoint button[type=submit]');
      assert.match(await page.locator('#url-problem').innerText(), /url/);
      assert.equal(await page.locator('#event-payment-expired').isChecked(), true);
      await check(page, 'webhooks with a refused endpoint');

      await page.fill('#endpoint-url', receiver.url);
      await page.click('#add-endpoint button[type=submit]');
      await page.waitForURL(/notice=endpoint_added/);
      const [endpoint] = await app.pool.any(sql.type(z.object({ id: z.string(), events: z.array(z.string()) }))`
        select id, events from webhook_endpoints where store_id = ${store.id}
      `);
      assert.deepEqual(endpoint!.events, ['payment.completed', 'payment.expired']);
      assert.equal(await page.locator(`#endpoint-${endpoint!.id} .endpoint-events`).innerText(), 'A payment is complete; A payment expired');

      await page.click(`#endpoint-${endpoint!.id} form[action$="/test"] button`);
      await page.waitForURL(/notice=test_sent/);
      await runDeliveries(app);
      await page.reload();
      // Its deliveries are folded (the page stays short on a phone): the owner unfolds them.
      await page.click(`#endpoint-${endpoint!.id} .endpoint-deliveries-fold summary`);
      assert.equal(await page.locator(`#endpoint-${endpoint!.id} .endpoint-deliveries .delivery-status`).innerText(), 'delivered');
      const [ping] = verifiedEvents(receiver);
      assert.equal(ping!.type, 'ping');
      assert.deepEqual(ping!.payload, { endpointID: endpoint!.id, storeID: store.id });
      await check(page, 'webhooks with an endpoint and its test event');

      await page.click(`#endpoint-${endpoint!.id} form[action$="/redeliver"] button`);
      await page.waitForURL(/notice=redelivered/);
      await runDeliveries(app);
      assert.equal(verifiedEvents(receiver)[1]!.eventID, ping!.eventID, 'the same event again');

      // A viewer sees the endpoint and its deliveries, and no action.
      const viewer = await openPage(browser);
      try {
        await join(viewer.page, 'viewer@corner.example', 'viewer');
        await viewer.page.goto(`${app.url}/dashboard/stores/${store.id}/webhooks`);
        assert.equal(await viewer.page.locator(`#endpoint-${endpoint!.id}`).count(), 1);
        assert.equal(await viewer.page.locator('#add-endpoint, form[action*="/webhooks/endpoints"]').count(), 0);
        await check(viewer.page, 'webhooks as viewer');
      } finally {
        await viewer.context.close();
      }

      await page.click(`#endpoint-${endpoint!.id} form[action$="/delete"] button`);
      await page.waitForURL(/notice=endpoint_deleted/);
      assert.equal(await page.locator('#no-endpoints').count(), 1);
      const actions = await app.pool.anyFirst(sql.type(z.object({ action: z.string() }))`
        select action from audit_log where store_id = ${store.id} and action like 'webhook%' order by id
      `);
      assert.deepEqual(actions, ['webhook_endpoint.add', 'webhook_endpoint.test', 'webhook.redeliver', 'webhook_endpoint.delete']);
    } finally {
      await page.context().close();
      await receiver.close();
    }
  });
});
