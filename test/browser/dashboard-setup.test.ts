// First-run setup in the browser (issue 47 item 1) in real headless Chromium, against real `kassa
// start` child processes on empty databases: the setup code is read from the process's output as a
// person reads it off the terminal; a wrong code is refused; the right one makes the store and its
// owner, signs them in and is spent (the page is gone, the code refused, a restart prints none); a
// restart before the setup prints a new code and the older one is refused; two browsers racing with
// the right code: one sets Kassa up, the other is told so, and one store and one account exist. Then
// the owner makes a second store from the dashboard (audited), and a viewer may not; the two store
// settings only the command line changed before (embedded sites, small unmatched amounts) on Settings. At 375 px and
// 1280 px, axe-core on each page, no sideways scroll.
//
// If Chromium cannot be launched this file FAILS (it never skips).
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { sql, z } from '../../src/db/pool.ts';
import { chromiumBrowser } from '../helpers/chromium.ts';
import { dashboardClient, invitationPath } from '../helpers/dashboard.ts';
import { assertPageFits, clickInMenu, openPage } from '../helpers/dashboardBrowser.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startKassaProcess, type KassaProcess } from '../helpers/kassaProcess.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/dashboard');
const PHONE = { width: 375, height: 812 };
const DESKTOP = { width: 1280, height: 900 };
const PASSWORD = 'a long owner password';

/** The setup code as a person finds it in what `kassa start` printed: setupCode on the "kassa started" line. */
function setupCodeIn(output: string): string | null {
  const line = output.split('\n').find((candidate) => candidate.includes('kassa started'));
  return line ? (/"setupCode":"([0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4})"/.exec(line)?.[1] ?? null) : null;
}

const count = async (db: TestDatabase, table: 'stores' | 'dashboard_users'): Promise<number> =>
  db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from ${sql.identifier([table])}`);

/** Fills the "Set up Kassa" form (the coins and refund window left at their defaults unless given). */
async function fillSetup(page: Page, input: { code: string; store: string; email: string; password?: string; confirm?: string }): Promise<void> {
  await page.fill('#code', input.code);
  await page.fill('#name', input.store);
  await page.fill('#email', input.email);
  await page.fill('#password', input.password ?? PASSWORD);
  await page.fill('#confirm', input.confirm ?? input.password ?? PASSWORD);
}

let browser: Browser;
before(async () => {
  browser = await chromiumBrowser();
});
after(async () => {
  await browser?.close();
});

describe('first-run setup in Chromium, from an empty database and the code kassa start printed', () => {
  let db: TestDatabase;
  let kassa: KassaProcess;
  let storeId: string;
  before(async () => {
    db = await createTestDatabase();
    kassa = await startKassaProcess({ env: { DATABASE_URL: db.url } });
  });
  after(async () => {
    await kassa?.stop();
    await db?.drop();
  });

  it('on a phone: the dashboard opens on "Set up Kassa"; a wrong code is refused; the right one makes the store and its owner and signs them in', async () => {
    const code = setupCodeIn(kassa.output());
    assert.ok(code, `the start line shows a setup code:\n${kassa.output().slice(-2000)}`);
    assert.equal(kassa.started.setupUrl, `${kassa.url}/dashboard/setup`);
    assert.match(String(kassa.started.next), /dashboard\/setup/);

    const { page, problems } = await openPage(browser, PHONE);
    await page.goto(`${kassa.url}/dashboard`);
    await page.waitForURL(`${kassa.url}/dashboard/setup`);
    assert.equal(await page.textContent('h1'), 'Set up Kassa');
    // The defaults: both coins ticked, a 7-day refund window.
    assert.equal(await page.isChecked('#method-TON-TON'), true);
    assert.equal(await page.isChecked('#method-USDT-TON'), true);
    assert.equal(await page.inputValue('#refund-window-days'), '7');
    await assertPageFits(page, 'setup phone', ARTIFACTS);
    // The sign-in page leads here too while nobody can sign in.
    await page.goto(`${kassa.url}/dashboard/sign-in`);
    await page.waitForURL(`${kassa.url}/dashboard/setup`);

    // A wrong code: refused beside the field, nothing made.
    const wrong = code.startsWith('0') ? `1${code.slice(1)}` : `0${code.slice(1)}`;
    await fillSetup(page, { code: wrong, store: 'Corner Coffee', email: 'Owner@Corner.example' });
    const refused = page.waitForResponse((response) => response.url().endsWith('/dashboard/setup') && response.request().method() === 'POST');
    await page.click('main button[type=submit]');
    assert.equal((await refused).status(), 403);
    assert.match((await page.textContent('#code-problem')) ?? '', /not right/);
    assert.equal(await page.inputValue('#name'), 'Corner Coffee', 'what was typed stays');
    await assertPageFits(page, 'setup phone wrong code', ARTIFACTS);
    assert.equal(await count(db, 'stores'), 0);
    assert.equal(await count(db, 'dashboard_users'), 0);

    // The right code, typed in lower case with spaces as a person might.
    await fillSetup(page, { code: code.toLowerCase().replace(/-/g, ' '), store: 'Corner Coffee', email: 'Owner@Corner.example' });
    await page.uncheck('#method-USDT-TON');
    await page.fill('#refund-window-days', '14');
    await Promise.all([page.waitForURL(/\/dashboard\/stores\/[0-9a-f-]{36}$/), page.click('main button[type=submit]')]);
    storeId = /stores\/([0-9a-f-]{36})$/.exec(page.url())![1]!;
    await assertPageFits(page, 'setup phone done home', ARTIFACTS);
    assert.match((await page.textContent('header')) ?? '', /owner@corner\.example · Corner Coffee \(owner\)/);

    const store = await db.pool.one(sql.type(z.object({ name: z.string(), refund_window_days: z.number(), methods: z.string() }))`
      select s.name, s.refund_window_days, string_agg(pm.coin_symbol || '/' || pm.chain_symbol, ',') as methods
      from stores s join store_payment_methods spm on spm.store_id = s.id join payment_methods pm on pm.id = spm.payment_method_id
      where s.id = ${storeId} group by s.id
    `);
    assert.deepEqual(store, { name: 'Corner Coffee', refund_window_days: 14, methods: 'TON/TON' });
    const audit = await db.pool.any(sql.type(z.object({ action: z.string(), actor: z.string() }))`
      select action, actor from audit_log where action in ('setup.complete', 'session.sign_in') order by id
    `);
    assert.deepEqual(audit, [
      { action: 'setup.complete', actor: 'owner@corner.example' },
      { action: 'session.sign_in', actor: 'owner@corner.example' },
    ]);
    assert.deepEqual(problems, []);

    // Spent: the page is gone, the code refused, the dashboard's root is the store's again.
    const client = dashboardClient(kassa.url);
    assert.equal((await client.get('/dashboard/setup')).status, 404);
    const again = await client.post('/dashboard/setup', {
      code,
      name: 'Second try',
      methods: 'TON/TON',
      refundWindowDays: '7',
      email: 'other@corner.example',
      password: PASSWORD,
      confirm: PASSWORD,
    });
    assert.equal(again.status, 409, again.text);
    assert.match(again.text, /set up already/);
    assert.equal(await count(db, 'stores'), 1);
    assert.equal((await client.get('/dashboard/')).location, '/dashboard/sign-in?next=%2Fdashboard%2F');
    await page.context().close();
  });

  it('a restart after the setup prints no setup code, and the spent code stays refused', async () => {
    await kassa.stop();
    kassa = await startKassaProcess({ env: { DATABASE_URL: db.url } });
    assert.equal(setupCodeIn(kassa.output()), null);
    assert.equal(kassa.started.setupCode, undefined);
    assert.equal(kassa.started.next, 'npm run -s kassa -- store create --name "My shop"');
    assert.equal((await dashboardClient(kassa.url).get('/dashboard/setup')).status, 404);
  });

  it('on a desktop: the owner makes a second store from the dashboard (audited), and lands on it', async () => {
    const { page, problems } = await openPage(browser, DESKTOP);
    await page.goto(`${kassa.url}/dashboard/sign-in`);
    await page.fill('#email', 'owner@corner.example');
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(`${kassa.url}/dashboard/stores/${storeId}`), page.click('main button[type=submit]')]);
    await clickInMenu(page, 'nav[aria-label="Store"] >> text=New store');
    await page.waitForURL(`${kassa.url}/dashboard/new-store`);
    await assertPageFits(page, 'new store desktop', ARTIFACTS);
    // A store needs a coin: refused beside the coins, nothing made.
    await page.fill('#name', 'Corner Bakery');
    await page.uncheck('#method-TON-TON');
    await page.uncheck('#method-USDT-TON');
    await page.click('main button[type=submit]');
    await page.waitForSelector('#methods-problem');
    assert.equal(await count(db, 'stores'), 1);
    await page.check('#method-USDT-TON');
    await Promise.all([page.waitForURL(/\/dashboard\/stores\/[0-9a-f-]{36}$/), page.click('main button[type=submit]')]);
    const second = /stores\/([0-9a-f-]{36})$/.exec(page.url())![1]!;
    assert.notEqual(second, storeId);
    assert.match((await page.textContent('header')) ?? '', /Corner Bakery \(owner\)/);
    await assertPageFits(page, 'new store desktop home', ARTIFACTS);
    const audit = await db.pool.one(sql.type(z.object({ actor: z.string(), subject: z.string(), store_id: z.string() }))`
      select actor, subject, store_id from audit_log where action = 'store.create'
    `);
    assert.deepEqual(audit, { actor: 'owner@corner.example', subject: 'Corner Bakery', store_id: second });
    // The stores page lists both.
    await page.goto(`${kassa.url}/dashboard/`);
    assert.deepEqual(await page.locator('main li a').allTextContents(), ['Corner Bakery', 'Corner Coffee']);
    await assertPageFits(page, 'stores desktop', ARTIFACTS);
    assert.deepEqual(problems, []);
    await page.context().close();
  });

  it('on a phone: the owner sets the sites that may embed the payment element and the small unmatched amounts on Settings (no command line)', async () => {
    const { page, problems } = await openPage(browser, PHONE);
    await page.goto(`${kassa.url}/dashboard/sign-in?next=${encodeURIComponent(`/dashboard/stores/${storeId}/settings`)}`);
    await page.fill('#email', 'owner@corner.example');
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(`${kassa.url}/dashboard/stores/${storeId}/settings`), page.click('main button[type=submit]')]);
    // A site that is not https is refused beside its field; nothing changes.
    await page.fill('#settings-embed-origins', 'http://shop.example');
    await page.click('#embed-heading ~ form button[type=submit]');
    await page.waitForSelector('#embed-origins-problem');
    await assertPageFits(page, 'settings phone embed refused', ARTIFACTS);
    await page.fill('#settings-embed-origins', 'https://corner.example, https://www.corner.example');
    await Promise.all([page.waitForURL(/saved=embed$/), page.click('#embed-heading ~ form button[type=submit]')]);
    await page.fill('#settings-unmatched-dust', '0.5');
    await Promise.all([page.waitForURL(/saved=dust$/), page.click('#dust-heading ~ form button[type=submit]')]);
    assert.equal(await page.inputValue('#settings-embed-origins'), 'https://corner.example, https://www.corner.example');
    await assertPageFits(page, 'settings phone website and small amounts', ARTIFACTS);
    const saved = await db.pool.one(sql.type(z.object({ embed_origins: z.string(), unmatched_dust: z.string() }))`
      select embed_origins, unmatched_dust::text from stores where id = ${storeId}
    `);
    assert.deepEqual(saved, { embed_origins: 'https://corner.example,https://www.corner.example', unmatched_dust: '0.5' });
    const audit = await db.pool.anyFirst(sql.type(z.object({ detail: z.record(z.string(), z.unknown()) }))`
      select detail from audit_log where action = 'store.update' and store_id = ${storeId} order by id
    `);
    assert.deepEqual(audit, [{ 'embed-origins': 'https://corner.example,https://www.corner.example' }, { 'unmatched-dust': '0.5' }]);
    assert.deepEqual(problems, []);
    await page.context().close();
  });

  it('on a phone: a viewer is offered no new store, and is refused one', async () => {
    const { page } = await openPage(browser, PHONE);
    await page.goto(`${kassa.url}${await invitationPath(db.pool, storeId, 'viewer@corner.example', 'viewer')}`);
    await page.fill('#password', PASSWORD);
    await page.fill('#confirm', PASSWORD);
    await Promise.all([page.waitForURL(`${kassa.url}/dashboard/stores/${storeId}`), page.click('main button[type=submit]')]);
    assert.equal(await page.locator('text=New store').count(), 0);
    const refused = await page.goto(`${kassa.url}/dashboard/new-store`);
    assert.equal(refused?.status(), 403);
    await assertPageFits(page, 'new store viewer refused', ARTIFACTS);
    const before = await count(db, 'stores');
    const posted = await page.evaluate(async () => {
      const response = await fetch('/dashboard/new-store', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'name=Sneaky&methods=TON%2FTON&refundWindowDays=7',
      });
      return { status: response.status, text: await response.text() };
    });
    assert.equal(posted.status, 403);
    assert.match(posted.text, /Only an owner of a store can make another store/);
    assert.equal(await count(db, 'stores'), before);
    await page.context().close();
  });
});

describe('first-run setup: a new code at each start, and two browsers racing', () => {
  let db: TestDatabase;
  let kassa: KassaProcess;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    await kassa?.stop();
    await db?.drop();
  });

  it('a restart before the setup prints a new code and the older one is refused; of two browsers sending the right code at once, one sets Kassa up', async () => {
    kassa = await startKassaProcess({ env: { DATABASE_URL: db.url } });
    const first = setupCodeIn(kassa.output());
    await kassa.stop();
    kassa = await startKassaProcess({ env: { DATABASE_URL: db.url } });
    const code = setupCodeIn(kassa.output());
    assert.ok(first && code && first !== code, `a new code at each start (${first}, ${code})`);

    const [a, b] = await Promise.all([openPage(browser, DESKTOP), openPage(browser, DESKTOP)]);
    for (const { page } of [a, b]) {
      await page.goto(`${kassa.url}/dashboard/`);
      await page.waitForURL(`${kassa.url}/dashboard/setup`);
    }
    await assertPageFits(a.page, 'setup desktop', ARTIFACTS);

    // The older code: refused.
    await fillSetup(a.page, { code: first, store: 'Harbour Books', email: 'ann@harbour.example' });
    await a.page.click('main button[type=submit]');
    await a.page.waitForSelector('#code-problem');
    assert.equal(await count(db, 'stores'), 0);

    // The race: both send the right code at once.
    await fillSetup(a.page, { code, store: 'Harbour Books', email: 'ann@harbour.example' });
    await fillSetup(b.page, { code, store: 'Harbour Maps', email: 'bob@harbour.example' });
    const answers = await Promise.all(
      [a.page, b.page].map(async (page) => {
        const answer = page.waitForResponse((response) => response.url().endsWith('/dashboard/setup') && response.request().method() === 'POST');
        await page.click('main button[type=submit]');
        return (await answer).status();
      }),
    );
    assert.deepEqual([...answers].sort(), [303, 409], `one wins, the other is told (${answers})`);
    const loser = answers[0] === 409 ? a.page : b.page;
    await loser.waitForSelector('h1:text("Kassa is set up already")');
    assert.match((await loser.textContent('main')) ?? '', /Sign in with the owner/);
    await assertPageFits(loser, 'setup desktop race lost', ARTIFACTS);
    assert.equal(await count(db, 'stores'), 1);
    assert.equal(await count(db, 'dashboard_users'), 1);
    const winner = answers[0] === 303 ? a.page : b.page;
    await winner.waitForURL(/\/dashboard\/stores\/[0-9a-f-]{36}$/);
    assert.deepEqual([...a.problems, ...b.problems], []);
    await a.context.close();
    await b.context.close();
  });
});
