// The hosted checkout in a store's colours (display name, logo, accent) in real headless Chromium, and
// a logo URL that would inject CSP directives. Shared setup: test/helpers/checkoutBrowser.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from '../../src/db/pool.ts';
import { updateStore } from '../../src/stores/stores.ts';
import { app, assertAccessible, DESKTOP, MOBILE, open, shot, useCheckoutBrowser } from '../helpers/checkoutBrowser.ts';

useCheckoutBrowser();

describe("the shop's face in headless Chromium", () => {
  it("runs the page's own scripts for a store with a logo, and a logo URL that would inject CSP directives is refused (or, stored before, left out)", async () => {
    const shop = await app.store({ name: 'logo-shop', methods: 'TON/TON' });
    const injected = 'https://cdn.example.com;script-src/logo.png';
    await assert.rejects(updateStore(app.pool, shop.id, { 'logo-url': injected }), /--logo-url must name a host/);
    const payment = async () => {
      const created = await app.request('POST', '/v1/payments', {
        token: shop.token,
        body: { amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
      });
      assert.equal(created.status, 201, created.text);
      return created.json.id as string;
    };
    // A logo as `kassa store update` takes it, and one stored before it checked the host.
    const cases: Array<[string, string, boolean]> = [['https://cdn.example.com/brand/logo.svg', '24-logo-scripts-run', true]];
    cases.push([injected, '25-injected-logo-left-out', false]);
    for (const [logoUrl, name, shown] of cases) {
      await app.pool.query(sql.unsafe`update stores set logo_url = ${logoUrl} where id = ${shop.id}`);
      const id = await payment();
      const { context, page, problems } = await open();
      try {
        await context.route(/^https:\/\/cdn\.example\.com/, (route) =>
          route.fulfill({
            contentType: 'image/svg+xml',
            body: '<svg xmlns="http://www.w3.org/2000/svg" width="56" height="56"><rect width="56" height="56" fill="#333"/></svg>',
          }),
        );
        const response = await page.goto(`${app.url}/pay/${id}`);
        const policy = response!.headers()['content-security-policy']!;
        assert.deepEqual(
          policy.split(';').filter((directive) => directive.trim().startsWith('script-src')),
          [" script-src 'self'"],
          policy,
        );
        // The page's script runs: it counts down (the server wrote the first value) and offers TON Connect.
        const first = await page.locator('#countdown').innerText();
        await page.waitForFunction((written) => document.getElementById('countdown')?.textContent !== written, first, { timeout: 10_000 });
        await page.locator('#tonconnect-pay').waitFor({ state: 'visible', timeout: 10_000 });
        assert.equal(await page.locator('#store-logo').count(), shown ? 1 : 0, name);
        await shot(page, name);
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    }
  });

  it('display name, logo and accent colour on a phone and a desktop, in both languages, accessible', async () => {
    const shop = await app.store({ name: 'acct-7781', methods: 'TON/TON,USDT/TON' });
    const updated = await updateStore(app.pool, shop.id, {
      'display-name': 'Green Leaf Tea',
      'logo-url': 'https://cdn.example.com/brand/logo.svg',
      'accent-color': '#2e7d32',
    });
    assert.equal(updated.accentColor, '#2e7d32');
    const created = await app.request('POST', '/v1/payments', {
      token: shop.token,
      body: { amount: '12', currency: 'USD', payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } },
    });
    assert.equal(created.status, 201, created.text);
    // The merchant's logo host, answered here (this machine is offline); the page's CSP allows that origin alone.
    const logo =
      '<svg xmlns="http://www.w3.org/2000/svg" width="56" height="56" viewBox="0 0 56 56"><rect width="56" height="56" rx="12" fill="#2e7d32"/><path d="M28 12c10 6 12 20 0 32-12-12-10-26 0-32z" fill="#c8e6c9"/></svg>';
    for (const [viewport, locale, name] of [
      [MOBILE, 'en-US', '22-branded-phone-en'],
      [DESKTOP, 'ru-RU', '23-branded-desktop-ru'],
    ] as const) {
      const { context, page, problems } = await open({ viewport, locale });
      try {
        await context.route('https://cdn.example.com/brand/logo.svg', (route) => route.fulfill({ contentType: 'image/svg+xml', body: logo }));
        await page.goto(`${app.url}/pay/${created.json.id}`);
        assert.equal(await page.locator('h1').innerText(), 'Green Leaf Tea');
        await page.waitForFunction(
          () => {
            const image = document.getElementById('store-logo') as HTMLImageElement | null;
            return !!image && image.complete && image.naturalWidth > 0;
          },
          undefined,
          { timeout: 5000 },
        );
        const pay = page.locator('#tonconnect-pay');
        await pay.waitFor({ state: 'visible', timeout: 10_000 });
        assert.equal(await pay.evaluate((element) => getComputedStyle(element).backgroundColor), 'rgb(46, 125, 50)');
        assert.equal(await pay.evaluate((element) => getComputedStyle(element).color), 'rgb(255, 255, 255)');
        await assertAccessible(page, name);
        await shot(page, name);
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    }
  });
});
