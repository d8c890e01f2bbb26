// The dashboard's Store settings over real HTTP against the real app and database: an owner changes
// each setting and the checkout shows it; every change is the command `kassa store update` runs
// and lands in the audit log; a viewer's change is refused server-side; bad input (a treasury the
// API refuses included) is a message on the form and changes nothing; a member of store A cannot
// reach store B's settings. The browser flows (preview, axe, phone width) are in
// test/browser/dashboard-settings.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql, z } from '../../src/db/pool.ts';
import { findStore } from '../../src/stores/stores.ts';
import type { TestApp } from '../helpers/app.ts';
import { member } from '../helpers/dashboard.ts';
import { buildPayment } from '../helpers/factories.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;
before(async () => {
  app = await startPaymentsApp();
});
after(() => app.close());

const auditOf = (storeId: string) =>
  app.pool.any(sql.type(z.object({ action: z.string(), actor: z.string(), detail: z.record(z.string(), z.unknown()) }))`
    select action, actor, detail from audit_log where store_id = ${storeId} and action in ('store.update', 'treasury.change') order by id
  `);

/** The hosted checkout of a new payment of the store (GET {checkout_base_url}/{id}). */
async function checkoutOf(store: { token: string }): Promise<string> {
  const created = await app.request('POST', '/v1/payments', { token: store.token, body: { amount: '1', currency: 'USD' } });
  assert.equal(created.status, 201, JSON.stringify(created.json));
  const response = await app.request('GET', `/pay/${created.json.id}`);
  assert.equal(response.status, 200);
  return response.text;
}

describe('dashboard: store settings', () => {
  it('settlement (issue 43): the select says the trade-off; treasury without a treasury is refused beside it; with one it is saved and audited', async () => {
    const store = await app.store({ name: 'Settling shop', methods: 'TON/TON' });
    const owner = await member(app.url, app.pool, store.id, 'settling-owner@example.com', 'owner');
    const settings = `/dashboard/stores/${store.id}/settings`;
    const page = await owner.get(settings);
    assert.match(page.text, /<select id="settings-settlement" name="settlement" aria-describedby="settings-settlement-hint">/);
    assert.match(page.text, /<option value="deposit" selected>/);
    assert.match(
      page.text,
      /id="settings-settlement-hint">Straight to the treasury costs no sweep and Kassa holds no key to the money, but every customer must send/,
    );
    const refused = await owner.post(`${settings}/treasury`, { treasury: '', settlement: 'treasury' });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /id="settlement-problem">Settlement treasury needs a treasury/);
    assert.match(refused.text, /<option value="treasury" selected>/, 'what was chosen is kept');
    assert.equal((await findStore(app.pool, store.id))!.settlement, 'deposit');
    const treasury = `0:${'ce'.repeat(32)}`;
    // The treasury is shown back to confirm (issue 47.6), the settlement chosen carried through that step.
    const confirm = await owner.post(`${settings}/treasury`, { treasury, settlement: 'treasury' });
    assert.equal(confirm.status, 200);
    assert.match(confirm.text, /<input type="hidden" name="settlement" value="treasury">/);
    assert.equal((await findStore(app.pool, store.id))!.settlement, 'deposit', 'nothing saved before the confirmation');
    const shown = /<input type="hidden" name="treasury" value="([^"]+)">/.exec(confirm.text)?.[1] ?? assert.fail('the confirm step names the treasury');
    assert.equal((await owner.post(`${settings}/treasury`, { treasury: shown, settlement: 'treasury', confirmed: 'yes' })).status, 303);
    const saved = await findStore(app.pool, store.id);
    assert.deepEqual([saved!.treasury, saved!.settlement], [treasury, 'treasury']);
    assert.deepEqual(
      (await auditOf(store.id)).map((row) => [row.action, row.detail]),
      [
        ['store.update', { settlement: 'treasury' }],
        ['treasury.change', { from: null, to: treasury }],
      ],
    );
    // A payment of the store now carries its reference, paid to the treasury.
    const created = await app.request('POST', '/v1/payments', {
      token: store.token,
      body: { amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
    });
    assert.match(created.json.paymentDetails.reference, /^[0-9A-Z]{4}-[0-9A-Z]{5}$/);
  });

  it('an owner changes each setting, the checkout shows it, and each change is in the audit log', async () => {
    const store = await app.store({ name: 'Settings shop', methods: 'TON/TON' });
    const owner = await member(app.url, app.pool, store.id, 'settings-owner@example.com', 'owner');
    const settings = `/dashboard/stores/${store.id}/settings`;
    const page = await owner.get(settings);
    assert.equal(page.status, 200);
    assert.match(page.text, /<h1>Store settings<\/h1>/);
    assert.match(page.text, /id="settings-name" name="name" type="text" value="Settings shop"/);
    assert.match(page.headers.get('content-security-policy') ?? '', /^default-src 'none'; img-src 'self' data:; style-src 'self'; script-src 'self'/);

    // Preview: the typed values on the page, nothing saved.
    const preview = await owner.post(`${settings}/appearance`, {
      intent: 'preview',
      name: 'Settings shop',
      'display-name': 'Typed Only',
      'logo-url': '',
      'accent-color': '#2e7d32',
    });
    assert.equal(preview.status, 200);
    assert.match(preview.text, /id="preview-name">Typed Only</);
    assert.match(preview.text, /settings\/preview\.css\?accent=%232e7d32/);
    assert.equal((await findStore(app.pool, store.id))!.displayName, null);
    // A typed logo whose host could break the header is not previewed, and its origin stays out of the policy.
    const injected = await owner.post(`${settings}/appearance`, {
      intent: 'preview',
      name: 'Settings shop',
      'display-name': '',
      'logo-url': 'https://cdn.example.com;script-src/x.png',
      'accent-color': '',
    });
    assert.equal(injected.status, 200);
    assert.equal(injected.headers.get('content-security-policy'), page.headers.get('content-security-policy'));
    assert.match(injected.text, /id="preview-logo" class="preview-logo" src="" alt="" width="56" height="56" hidden>/);

    // Name alone: the checkout shows it (no display name yet).
    const named = await owner.post(`${settings}/appearance`, { intent: 'save', name: 'Renamed shop', 'display-name': '', 'logo-url': '', 'accent-color': '' });
    assert.equal(named.status, 303, named.text);
    assert.equal(named.location, `${settings}?saved=appearance`);
    assert.match(await checkoutOf(store), /<h1 id="store-name">Renamed shop<\/h1>/);
    assert.match((await owner.get(named.location!)).text, /Appearance saved/);

    // Display name, logo and colour.
    const face = await owner.post(`${settings}/appearance`, {
      intent: 'save',
      name: 'Renamed shop',
      'display-name': 'Green Leaf Tea',
      'logo-url': 'https://cdn.example.com/brand/logo.svg',
      'accent-color': '#2E7D32',
    });
    assert.equal(face.status, 303, face.text);
    const checkout = await checkoutOf(store);
    assert.match(checkout, /<h1 id="store-name">Green Leaf Tea<\/h1>/);
    assert.match(checkout, /<img class="logo" id="store-logo" src="https:\/\/cdn\.example\.com\/brand\/logo\.svg"/);
    assert.match(checkout, /--brand:#2e7d32;/);
    // The settings page shows the saved logo: its origin alone is added to the page's img-src.
    const withLogo = await owner.get(settings);
    assert.match(withLogo.headers.get('content-security-policy') ?? '', /img-src 'self' data: https:\/\/cdn\.example\.com;/);
    const css = await owner.get(`${settings}/preview.css?accent=%232e7d32`);
    assert.match(css.headers.get('content-type') ?? '', /^text\/css/);
    assert.equal(css.text, '#preview{--preview-accent:#2e7d32;--preview-accent-text:#ffffff}\n');

    // Payment methods: USDT on, TON off; the checkout offers what is on.
    const methods = await owner.post(`${settings}/methods`, { methods: 'USDT/TON' });
    assert.equal(methods.status, 303, methods.text);
    const offered = await checkoutOf(store);
    assert.match(offered, /data-coin="USDT"/);
    assert.doesNotMatch(offered, /data-coin="TON"/);
    const both = await fetch(`${app.url}${settings}/methods`, {
      method: 'POST',
      headers: { cookie: owner.cookie!, origin: app.url, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'methods=TON%2FTON&methods=USDT%2FTON',
      redirect: 'manual',
    });
    assert.equal(both.status, 303);
    assert.deepEqual((await findStore(app.pool, store.id))!.methods.map((m) => m.coin).sort(), ['TON', 'USDT']);

    // Treasury: set (a money action of its own in the audit log), then cleared.
    const treasury = `0:${'cd'.repeat(32)}`;
    // Shown back to confirm (nothing saved), then saved by the confirming post.
    assert.equal((await owner.post(`${settings}/treasury`, { treasury })).status, 200);
    assert.equal((await findStore(app.pool, store.id))!.treasury, null);
    assert.equal((await owner.post(`${settings}/treasury`, { treasury, confirmed: 'yes' })).status, 303);
    assert.equal((await findStore(app.pool, store.id))!.treasury, treasury);
    assert.equal((await owner.post(`${settings}/treasury`, { treasury: '' })).status, 303);
    assert.equal((await findStore(app.pool, store.id))!.treasury, null);

    // Saving the same values again changes nothing and writes nothing.
    assert.equal((await owner.post(`${settings}/methods`, { methods: 'TON/TON' })).status, 303);
    assert.equal((await owner.post(`${settings}/methods`, { methods: 'TON/TON' })).status, 303);
    const rows = await auditOf(store.id);
    assert.deepEqual(
      rows.map((row) => [row.action, row.actor, row.detail]),
      [
        ['store.update', 'settings-owner@example.com', { name: 'Renamed shop' }],
        [
          'store.update',
          'settings-owner@example.com',
          { 'display-name': 'Green Leaf Tea', 'logo-url': 'https://cdn.example.com/brand/logo.svg', 'accent-color': '#2e7d32' },
        ],
        ['store.update', 'settings-owner@example.com', { methods: 'USDT/TON' }],
        ['store.update', 'settings-owner@example.com', { methods: 'TON/TON,USDT/TON' }],
        ['treasury.change', 'settings-owner@example.com', { from: null, to: treasury }],
        ['treasury.change', 'settings-owner@example.com', { from: treasury, to: null }],
        ['store.update', 'settings-owner@example.com', { methods: 'TON/TON' }],
      ],
    );
    // The Audit log page shows them.
    assert.match((await owner.get(`/dashboard/stores/${store.id}/audit`)).text, /treasury\.change/);
  });

  it('bad input: a clear message on the form, what was typed kept, nothing changed', async () => {
    const store = await app.store({ name: 'Careful shop', methods: 'TON/TON' });
    const owner = await member(app.url, app.pool, store.id, 'careful@example.com', 'owner');
    const settings = `/dashboard/stores/${store.id}/settings`;
    const before = await findStore(app.pool, store.id);
    // Kassa's own deposit address (a payment's), its gas wallet, a masterchain address, not an address.
    const payment = await buildPayment(app, store, { status: 'created', method: { coin: 'TON', chain: 'TON' } });
    const deposit = payment.created.paymentDetails.address as string;
    const gas = `0:${'ef'.repeat(32)}`;
    await app.pool.query(
      sql.unsafe`insert into gas_wallets (network, address) values ('sandbox', ${gas}) on conflict (network) do update set address = excluded.address`,
    );
    for (const [treasury, message] of [
      [deposit, /one of Kassa&#39;s own wallets, not yours/],
      [gas, /one of Kassa&#39;s own wallets, not yours/],
      [`-1:${'ab'.repeat(32)}`, /Kassa cannot send the store&#39;s money to this address/],
      ['not an address', /This is not a TON wallet address/],
    ] as const) {
      const refused = await owner.post(`${settings}/treasury`, { treasury });
      assert.equal(refused.status, 400, treasury);
      assert.match(refused.text, /Nothing was changed: /);
      assert.match(refused.text, message);
      assert.match(refused.text, /id="settings-treasury"[^>]*aria-describedby="settings-treasury-hint treasury-problem" aria-invalid="true"/);
      assert.ok(refused.text.includes(`value="${treasury}"`), 'what was typed is kept');
    }
    for (const [fields, problem] of [
      [{ name: ' ', 'display-name': '', 'logo-url': '', 'accent-color': '' }, /id="name-problem">The store name must be 1 to 200 characters/],
      [
        { name: 'Careful shop', 'display-name': '', 'logo-url': 'http://cdn.example.com/x.png', 'accent-color': '' },
        /id="logo-url-problem">Logo URL must be an https:\/\/ URL/,
      ],
      [
        { name: 'Careful shop', 'display-name': '', 'logo-url': '', 'accent-color': 'blue' },
        /id="accent-color-problem">Accent colour must be a 6-digit hex colour/,
      ],
      // One bad field and one good one: the good one is not saved either.
      [{ name: 'Careful shop', 'display-name': 'Half saved?', 'logo-url': '', 'accent-color': '#fff' }, /Accent colour must be/],
    ] as const) {
      const refused = await owner.post(`${settings}/appearance`, { intent: 'save', ...fields });
      assert.equal(refused.status, 400);
      assert.match(refused.text, problem);
    }
    const none = await owner.post(`${settings}/methods`, {});
    assert.equal(none.status, 400);
    assert.match(none.text, /id="methods-problem">At least one method is needed/);
    const unknown = await owner.post(`${settings}/methods`, { methods: 'FOO/TON' });
    assert.equal(unknown.status, 400);
    assert.match(unknown.text, /Unknown payment method FOO\/TON/);
    assert.deepEqual(await findStore(app.pool, store.id), before);
    assert.deepEqual(await auditOf(store.id), []);
  });

  it('the refund window: an owner sets it (0 to 90 days), it is in the store JSON and the audit log; a bad value is a message on the form', async () => {
    const store = await app.store({ name: 'Window shop', methods: 'TON/TON' });
    const owner = await member(app.url, app.pool, store.id, 'window-owner@example.com', 'owner');
    const settings = `/dashboard/stores/${store.id}/settings`;
    assert.match(
      (await owner.get(settings)).text,
      /id="settings-refund-window-days" name="refund-window-days" type="number" min="0" max="90" step="1" inputmode="numeric" value="0"/,
    );
    const saved = await owner.post(`${settings}/refund-window`, { 'refund-window-days': '30' });
    assert.equal(saved.status, 303);
    assert.equal((await findStore(app.pool, store.id))!.refundWindowDays, 30);
    assert.match((await owner.get(`${settings}?saved=refund-window`)).text, /Refund window saved/);
    for (const bad of ['91', '-1', 'a week', '']) {
      const refused = await owner.post(`${settings}/refund-window`, { 'refund-window-days': bad });
      assert.equal(refused.status, 400, bad);
      assert.match(refused.text, /Nothing was changed: Refund window must be a whole number of days from 0 to 90/);
      assert.match(refused.text, /aria-invalid="true"/);
    }
    assert.equal((await findStore(app.pool, store.id))!.refundWindowDays, 30);
    assert.deepEqual(
      (await auditOf(store.id)).map((row) => [row.action, row.detail]),
      [['store.update', { 'refund-window-days': '30' }]],
    );
  });

  it("a viewer sees the settings read-only and every change is refused server-side; another store's settings do not exist; a form from elsewhere is refused", async () => {
    const store = await app.store({ name: 'Viewed shop', methods: 'TON/TON' });
    const other = await app.store({ name: 'Other shop' });
    const viewer = await member(app.url, app.pool, store.id, 'settings-viewer@example.com', 'viewer');
    const owner = await member(app.url, app.pool, store.id, 'settings-owner2@example.com', 'owner');
    const settings = `/dashboard/stores/${store.id}/settings`;
    const before = await findStore(app.pool, store.id);
    const page = await viewer.get(settings);
    assert.equal(page.status, 200);
    assert.match(page.text, /Only the store's owners can change these/);
    assert.doesNotMatch(page.text, /<form method="post" action="[^"]*\/settings\//);
    for (const [path, fields] of [
      [`${settings}/appearance`, { intent: 'save', name: 'Taken over', 'display-name': '', 'logo-url': '', 'accent-color': '' }],
      [`${settings}/methods`, { methods: 'USDT/TON' }],
      [`${settings}/treasury`, { treasury: `0:${'cd'.repeat(32)}` }],
      [`${settings}/refund-window`, { 'refund-window-days': '30' }],
    ] as const) {
      const refused = await viewer.post(path, fields);
      assert.equal(refused.status, 403, path);
      assert.match(refused.text, /Only an owner of this store can do that. Nothing was changed./);
    }
    // Store A's people and store B: not found, by URL tampering too (an owner of A included).
    for (const client of [viewer, owner]) {
      assert.equal((await client.get(`/dashboard/stores/${other.id}/settings`)).status, 404);
      assert.equal((await client.get(`/dashboard/stores/${other.id}/settings/preview.css`)).status, 404);
      assert.equal((await client.post(`/dashboard/stores/${other.id}/settings/treasury`, { treasury: '' })).status, 404);
      assert.equal((await client.post(`/dashboard/stores/${other.id}/settings/methods`, { methods: 'USDT/TON' })).status, 404);
    }
    // CSRF: an owner's session, a form from another origin.
    const forged = await owner.post(`${settings}/treasury`, { treasury: `0:${'cd'.repeat(32)}` }, { origin: 'https://evil.example' });
    assert.equal(forged.status, 403);
    assert.deepEqual(await findStore(app.pool, store.id), before);
    assert.deepEqual(await findStore(app.pool, other.id).then((s) => s!.methods.length), 2);
    assert.deepEqual(await auditOf(store.id), []);
    assert.deepEqual(await auditOf(other.id), []);
  });
});
