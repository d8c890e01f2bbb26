// The dashboard on a phone (issue 32 outcome 3), in real headless Chromium at 375 × 667 against the
// real app, real Postgres and the sandbox chain: every page — sign-in, an invitation, the stores,
// payments, a payment, Money, Webhooks, API tokens, Team, Audit log, Settings, Password, Passkeys,
// a not-found page — fits the screen (no sideways scroll, nothing reaching past a card's edge) and
// axe-core finds no serious violation; the navigation folds behind a menu button that works with
// the keyboard; the payments list's filters fold; lists are cards; ids are shortened with a copy
// button; a payment page's actions begin within two screens. `/dashboard`, with or without its
// slash, leads to sign-in or to the store. Then (issue 47 item 10) a walker follows the store's
// links from the navigation — so a page added to it is walked without being named here — and walks
// every kind of page it finds, and the checkout's payment and link pages, at 375 and 1280 px: axe,
// no sideways scroll, at most MAX_SCREENS tall, no table column under MIN_COLUMN_PX, the coin never
// called TON, and on the dashboard none of BANNED_WORDS outside the glossary's precise terms.
// Screenshots go to test-artifacts/dashboard-phone/ (the walk's to walk/).
//
// If Chromium cannot be launched this file FAILS (it never skips).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Address } from '@ton/core';
import type { Browser, Page } from 'playwright-core';
import { freshAddress, overpaidTonPayment, startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { chromiumBrowser } from '../helpers/chromium.ts';
import { invitationPath } from '../helpers/dashboard.ts';
import { assertNoHorizontalScroll, assertPageFits, type BrowserPage, joinByInvitation, openPage, seriousAxeViolations } from '../helpers/dashboardBrowser.ts';
import { AUDIT_WORDS } from '../../src/dashboard/glossary.ts';
import { sql } from '../../src/db/pool.ts';
import { EVENT_TYPES } from '../../src/webhooks/events.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/dashboard-phone');
const PASSWORD = 'a long dashboard password';
const PHONE = { width: 375, height: 667 };

let app: ChainTestApp;
let store: Awaited<ReturnType<ChainTestApp['store']>>;
let browser: Browser;
let owner: BrowserPage;

before(async () => {
  browser = await chromiumBrowser({ ownClipboard: true }); // the copied text is read back from the clipboard
  app = await startChainApp({ WEBHOOK_ALLOW_INSECURE: 'true' });
  store = await app.store({ name: 'Corner Shop on a Phone', methods: 'TON/TON,USDT/TON' });
  owner = await openPage(browser, PHONE, ['clipboard-read', 'clipboard-write']);
});
after(async () => {
  await browser?.close();
  await app?.close();
});

const fits = (page: Page, what: string): Promise<void> => assertPageFits(page, what, ARTIFACTS);

/** A payment of 1 TON paid with 1.5 TON (0.5 refundable), booked by the chain reader; its webhook fails (nothing listens). */
const overpaidPayment = (orderId: string): Promise<any> =>
  overpaidTonPayment(app, store.token, { order_id: orderId, description: 'Two flat whites and a croissant, table by the window' });

describe('the dashboard on a phone (375 px) in headless Chromium', () => {
  let payment: any;

  it('/dashboard and /dashboard/ lead to sign-in when signed out; the sign-in and invitation pages fit', async () => {
    const visitor = await openPage(browser, PHONE);
    for (const address of ['/dashboard', '/dashboard/']) {
      const response = await visitor.page.goto(`${app.url}${address}`);
      assert.equal(response?.status(), 200, address);
      assert.match(visitor.page.url(), /\/dashboard\/sign-in\?next=/, address);
      assert.equal(await visitor.page.locator('h1').innerText(), 'Sign in');
    }
    await fits(visitor.page, 'sign-in');
    await visitor.page.goto(`${app.url}${await invitationPath(app.pool, store.id, 'owner@phone.example', 'owner')}`);
    await fits(visitor.page, 'invitation');
    assert.deepEqual(visitor.problems, []);
    await visitor.context.close();
  });

  it('the owner joins; /dashboard and /dashboard/ lead to the store; the menu folds and works with the keyboard', async () => {
    const { page } = owner;
    await joinByInvitation(page, app.url, store.id, await invitationPath(app.pool, store.id, 'owner@phone.example', 'owner'), PASSWORD);
    for (const address of ['/dashboard', '/dashboard/']) {
      await page.goto(`${app.url}${address}`);
      assert.equal(page.url(), `${app.url}/dashboard/stores/${store.id}`, address);
    }
    const button = page.locator('.menu-button');
    const nav = page.getByRole('navigation', { name: 'Store' });
    assert.equal(await button.isVisible(), true);
    assert.equal(await button.getAttribute('aria-expanded'), 'false');
    assert.equal(await nav.isVisible(), false, 'the navigation is folded');
    const header = await page.locator('header.top').boundingBox();
    assert.ok(header && header.height < 80, `the header is one line (${header?.height} px)`);

    await button.focus();
    await page.keyboard.press('Enter');
    assert.equal(await button.getAttribute('aria-expanded'), 'true');
    assert.equal(await nav.isVisible(), true);
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Home');
    await fits(page, 'menu open');
    await page.keyboard.press('Escape');
    assert.equal(await button.getAttribute('aria-expanded'), 'false');
    assert.equal(await nav.isVisible(), false);
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('menu-button')), true, 'Escape gives the button the focus');
  });

  it('payments: filters folded, the list as cards, ids shortened with a copy button', async () => {
    const { page } = owner;
    payment = await overpaidPayment('PHONE-ORDER-0001');
    await overpaidPayment('PHONE-ORDER-0002');
    await app.settle();
    await page.goto(`${app.url}/dashboard/stores/${store.id}/payments`);
    assert.equal(await page.locator('details.more-filters').getAttribute('open'), null, 'the filters are folded');
    assert.equal(await page.locator('#status').isVisible(), false);
    assert.equal(await page.locator('#q').isVisible(), true, 'the search stays');
    await page.locator('details.more-filters summary').click();
    assert.equal(await page.locator('#status').isVisible(), true);

    const row = page.locator('#payments tbody tr').first();
    assert.equal(await page.locator('#payments table').getAttribute('class'), 'cards');
    const display = await row.evaluate((tr) => window.getComputedStyle(tr).display);
    assert.equal(display, 'block', 'a row is a card');
    assert.match(await row.locator('td').nth(1).getAttribute('data-label').then(String), /Status/);
    const id = row.locator('.copyable .mono');
    const shown = await id.evaluate((a) => ({ client: a.clientWidth, scroll: a.scrollWidth, text: a.textContent }));
    assert.ok(shown.client < shown.scroll, 'the id is shortened on screen');
    assert.match(shown.text ?? '', /^[0-9a-f-]{36}$/, 'the whole id stays in the page');
    const copy = row.locator('button.copy');
    assert.equal(await copy.isVisible(), true);
    await copy.click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), shown.text);
    await fits(page, 'payments');
  });

  it("a payment's page: what happened, money, actions, then the books; the actions within two screens", async () => {
    const { page } = owner;
    await page.goto(`${app.url}/dashboard/stores/${store.id}/payments/${payment.id}`);
    const headings = await page.locator('main section > h2').allInnerTexts();
    const order = ['Summary', 'Timeline', 'Money', 'Refund', 'Webhook deliveries', 'The books'];
    assert.deepEqual(
      headings.filter((h) => order.includes(h)),
      order,
    );
    const refund = await page.locator('#refund-heading').evaluate((h) => h.getBoundingClientRect().top + window.scrollY);
    const heights = await page
      .locator('main > *')
      .evaluateAll((elements) =>
        elements.map(
          (e) => `${e.tagName}${e.id ? `#${e.id}` : ''} ${e.querySelector('h2')?.textContent ?? ''} ${Math.round(e.getBoundingClientRect().height)}`,
        ),
      );
    assert.ok(refund <= 2 * PHONE.height, `the actions begin ${Math.round(refund)} px from the top (at most ${2 * PHONE.height}): ${heights.join(', ')}`);
    await fits(page, 'payment');

    // The refund's confirmation (the first post of the form) fits too.
    await page.fill('#refund-amount', '0.1');
    await page.fill('#refund-address', Address.parse(freshAddress()).toString({ bounceable: false, testOnly: true }));
    await page.click('#refund-amount >> xpath=ancestor::form//button[@type="submit"]');
    await page.locator('#refund-confirm').waitFor();
    await fits(page, 'payment refund confirmation');
  });

  it('Money, Webhooks, API tokens, Team, Audit log, Settings, Password, Passkeys, the stores and a not-found page fit', async () => {
    const { page } = owner;
    const at = `${app.url}/dashboard/stores/${store.id}`;
    await page.goto(`${at}/tokens`);
    await page.fill('#token-name', 'the shop backend on a small screen');
    await page.click('#token-name >> xpath=ancestor::form//button[@type="submit"]');
    await page.locator('#new-token').waitFor();
    for (const [address, what] of [
      [`${at}/money`, 'money'],
      [`${at}/webhooks`, 'webhooks'],
      [`${at}/tokens`, 'tokens'],
      [`${at}/team`, 'team'],
      [`${at}/audit`, 'audit log'],
      [`${at}/settings`, 'settings'],
      [`${app.url}/dashboard/password`, 'password'],
      [`${app.url}/dashboard/passkeys`, 'passkeys'],
      [`${at}/payments/00000000-0000-4000-8000-000000000000`, 'not found'],
    ] as const) {
      await page.goto(address);
      await fits(page, what);
    }

    // A second store: the stores page.
    const second = await app.store({ name: 'A Second Shop With a Rather Long Name' });
    await page.goto(`${app.url}${await invitationPath(app.pool, second.id, 'owner@phone.example', 'viewer')}`);
    await page.click('form button[type=submit]');
    await page.waitForURL(`${app.url}/dashboard/stores/${second.id}`);
    await page.goto(`${app.url}/dashboard/`);
    assert.equal(await page.locator('h1').innerText(), 'Your stores');
    await fits(page, 'stores');
    assert.deepEqual(
      owner.problems.filter((problem) => !problem.includes('status of 404')),
      [],
      'no CSP violation or script error (the 404 is the not-found page above)',
    );
  });

  it('at a desktop width the navigation and the filters are open, with no menu button', async () => {
    const desk = await openPage(browser, { width: 1280, height: 900 });
    await joinByInvitation(desk.page, app.url, store.id, await invitationPath(app.pool, store.id, 'viewer@phone.example', 'viewer'), PASSWORD);
    await desk.page.goto(`${app.url}/dashboard/stores/${store.id}/payments`);
    assert.equal(await desk.page.locator('.menu-button').isVisible(), false);
    assert.equal(await desk.page.getByRole('navigation', { name: 'Store' }).isVisible(), true);
    assert.notEqual(await desk.page.locator('details.more-filters').getAttribute('open'), null);
    assert.equal(
      await desk.page
        .locator('#payments tbody tr')
        .first()
        .evaluate((tr) => window.getComputedStyle(tr).display),
      'table-row',
    );
    await desk.context.close();
  });
});

// ---- Every page, walked (issue 47 item 10) -----------------------------------------------------------------------

/**
 * Words an owner is never shown (issue 47 item 10): the books' and the chain's jargon, the webhooks'
 * raw event names, JSON. The glossary page's precise terms (`.glossary .precise`) are where they live.
 */
const BANNED_WORDS: ReadonlyArray<readonly [string, RegExp]> = [
  ['jetton', /\bjettons?\b/i],
  ['gas', /\bgas\b/i],
  ['operator', /\boperators?\b/i],
  ['basechain', /\bbasechain\b/i],
  ['hot wallet', /\bhot wallets?\b/i],
  ['an event name', new RegExp(`\\b(${EVENT_TYPES.map((type) => type.replace('.', '\\.')).join('|')})\\b`)],
  [
    'an audit action name',
    new RegExp(
      `\\b(${Object.keys(AUDIT_WORDS)
        .map((action) => action.replace('.', '\\.'))
        .join('|')})\\b`,
    ),
  ],
  ['JSON', /[{}]/],
];
/** The coin TON is shown as Gram (GRAM) (CONTRACT §12): "TON" stays only as the network's name (the TON network, on TON, TON Connect, a TON wallet). */
const TON_AS_COIN = /(?<!\bon (the )?)\bTON\b(?!\s+(network|Connect|wallet|blockchain|chain))/;
/** At most this many screens tall (the Webhooks page was 25 at 375 px with fifty deliveries as cards). */
const MAX_SCREENS = 12;
/** A table's column (on a desktop, or a table that stays a table on a phone) is at least this wide. */
const MIN_COLUMN_PX = 40;

interface PageReading {
  height: number;
  /** Visible text, the glossary's precise terms left out. */
  text: string;
  /** Columns narrower than MIN_COLUMN_PX: "table#id: th 'Coin' 9 px". */
  narrowColumns: string[];
}

async function readPage(page: Page): Promise<PageReading> {
  return page.evaluate((minColumn) => {
    const parts: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (!parent || parent.closest('script, style, template, .glossary .precise')) continue;
      if (!parent.checkVisibility({ visibilityProperty: true } as CheckVisibilityOptions)) continue;
      parts.push(node.textContent ?? '');
    }
    const narrow: string[] = [];
    for (const table of Array.from(document.querySelectorAll('table'))) {
      if (!table.checkVisibility()) continue;
      for (const row of Array.from(table.rows)) {
        if (getComputedStyle(row).display !== 'table-row') continue; // a row shown as a card
        for (const cell of Array.from(row.cells)) {
          const width = cell.getBoundingClientRect().width;
          if (cell.colSpan === 1 && width > 0 && width < minColumn && (cell.textContent ?? '').trim().length > 1) {
            narrow.push(
              `table${table.id ? `#${table.id}` : ''}: ${cell.tagName.toLowerCase()} '${(cell.textContent ?? '').trim().slice(0, 30)}' ${Math.round(width)} px`,
            );
          }
        }
      }
    }
    return { height: document.scrollingElement!.scrollHeight, text: parts.join(' ').replace(/\s+/g, ' '), narrowColumns: narrow };
  }, MIN_COLUMN_PX);
}

/** Where `pattern` occurs in `text`, with a little context either side. */
const found = (text: string, pattern: RegExp): string | null => {
  const match = pattern.exec(text);
  return match ? `…${text.slice(Math.max(0, match.index - 40), match.index + match[0].length + 40)}…` : null;
};

/**
 * One page at the page's width: it fits (no sideways scroll), axe finds nothing serious, it is at
 * most MAX_SCREENS tall, no table column is narrower than MIN_COLUMN_PX, the coin is named Gram;
 * an owner's page (`words`) shows none of BANNED_WORDS.
 */
async function walkOne(page: Page, what: string, words: boolean): Promise<string[]> {
  const problems: string[] = [];
  const viewport = page.viewportSize()!;
  for (const v of await seriousAxeViolations(page)) problems.push(`${what}: axe: ${v.id} (${v.help}) at ${v.targets.slice(0, 3).join(', ')}`);
  try {
    await assertNoHorizontalScroll(page, what);
  } catch (error) {
    problems.push((error as Error).message.replace(/\s+/g, ' ').slice(0, 400));
  }
  fs.mkdirSync(path.join(ARTIFACTS, 'walk'), { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'walk', `${what.replace(/\W+/g, '-')}.png`), fullPage: true });
  const reading = await readPage(page);
  if (reading.height > MAX_SCREENS * viewport.height)
    problems.push(`${what}: ${reading.height} px tall, more than ${MAX_SCREENS} screens of ${viewport.height} px`);
  for (const column of reading.narrowColumns) problems.push(`${what}: a column narrower than ${MIN_COLUMN_PX} px: ${column}`);
  const ton = found(reading.text, TON_AS_COIN);
  if (ton) problems.push(`${what}: the coin named TON, not Gram (GRAM): ${ton}`);
  if (words) {
    for (const [name, pattern] of BANNED_WORDS) {
      const where = found(reading.text, pattern);
      if (where) problems.push(`${what}: ${name}: ${where}`);
    }
  }
  return problems;
}

/** A dashboard address as a kind of page: ids (uuids, kids) become ":id", the query and hash go. */
const pageKind = (address: string): string =>
  new URL(address).pathname.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, ':id').replace(/\/+$/, '');

/**
 * Every dashboard page an owner reaches by following the links of the store's pages (the
 * navigation first, so a page added to it is walked without naming it here), one of each kind
 * (pageKind), GET only: no sign-out, no CSV, no asset.
 */
async function discoverPages(page: Page, start: string, limit = 40): Promise<string[]> {
  const origin = new URL(start).origin;
  const queue = [start];
  const seen = new Map<string, string>(); // kind → address
  while (queue.length > 0 && seen.size < limit) {
    const address = queue.shift()!;
    const kind = pageKind(address);
    if (seen.has(kind)) continue;
    const response = await page.goto(address);
    if (response?.status() !== 200 || !page.url().startsWith(`${origin}/dashboard/`)) continue;
    seen.set(kind, address);
    const links = await page.locator('a[href]').evaluateAll((anchors) => anchors.map((a) => (a as HTMLAnchorElement).href));
    for (const link of links) {
      const url = new URL(link);
      url.hash = '';
      if (url.origin !== origin || !url.pathname.startsWith('/dashboard/') || /\.(csv|json|js|css)$|\/assets\/|\/invite\//.test(url.pathname)) continue;
      if (!seen.has(pageKind(url.href))) queue.push(url.href);
    }
  }
  return [...seen.values()];
}

describe('every page at 375 px and 1280 px: fits, accessible, bounded, in plain words, the coin named Gram', () => {
  it('walks the dashboard from the navigation, and the checkout pages', async () => {
    // Money for the pages to show: a link, a paid payment whose webhook fails, fifty more failed deliveries of it, a difference found by the check against the network, an endpoint.
    const link = await app.request('POST', '/v1/payment-links', { token: store.token, body: { currency: 'TON', amount: '2', description: 'A bag of beans' } });
    assert.equal(link.status, 201, link.text);
    const paid = await overpaidPayment('WALK-ORDER-0001');
    await app.settle();
    await app.pool.query(sql.unsafe`
      insert into webhook_deliveries (payment_id, url, status, reason, attempts, failed_at)
      select ${paid.id}, 'http://127.0.0.1:9/hook', 'failed', 'redelivery', 3, now() from generate_series(1, 50)`);
    // A difference between the books and the chain, for the Money page's second table.
    await app.pool.query(sql.unsafe`
      insert into deposit_reconciliations (payment_id, coin_symbol, account, booked_base_units, on_chain_base_units, difference_base_units, checked_at)
      values (${paid.id}, 'TON', ${paid.paymentDetails.address}, 1500000000, 1600000000, 100000000, now())`);
    // A plan and a subscriber to it, for the Subscriptions pages.
    const plan = await app.request('POST', '/v1/plans', {
      token: store.token,
      body: { name: 'Beans every month', currency: 'TON', amount: '2', interval: 'month' },
    });
    assert.equal(plan.status, 201, plan.text);
    const subscribed = await app.request('POST', '/v1/subscriptions', {
      token: store.token,
      body: { planID: plan.json.id, customer: { reference: 'walker-customer' } },
    });
    assert.equal(subscribed.status, 201, subscribed.text);
    await app.request('POST', '/v1/webhook-endpoints', {
      token: store.token,
      body: { url: 'http://127.0.0.1:9/events', events: ['payment.completed', 'refund.failed'] },
    });

    const problems: string[] = [];
    const walked: string[] = [];
    for (const viewport of [PHONE, { width: 1280, height: 900 }]) {
      const visitor = await openPage(browser, viewport);
      await joinByInvitation(
        visitor.page,
        app.url,
        store.id,
        await invitationPath(app.pool, store.id, `walker-${viewport.width}@phone.example`, 'owner'),
        PASSWORD,
      );
      const pages = await discoverPages(visitor.page, `${app.url}/dashboard/stores/${store.id}`);
      for (const address of pages) {
        await visitor.page.goto(address);
        const what = `${viewport.width} ${pageKind(address).replace(/^\/dashboard\/stores\/:id/, '') || '/'}`;
        walked.push(what);
        problems.push(...(await walkOne(visitor.page, what, true)));
      }
      if (viewport === PHONE) {
        // The Webhooks page pages the store's deliveries, ten at a time.
        await visitor.page.goto(`${app.url}/dashboard/stores/${store.id}/webhooks`);
        assert.equal(await visitor.page.locator('#webhook-deliveries tbody tr').count(), 10);
        await visitor.page.getByRole('link', { name: 'More deliveries' }).click();
        await visitor.page.waitForURL(/[?&]deliveries=2/);
        assert.equal(await visitor.page.locator('#webhook-deliveries tbody tr').count(), 10);
        assert.equal(await visitor.page.getByRole('link', { name: 'Previous deliveries' }).count(), 1);
      }
      for (const [address, what] of [
        [`${app.url}/pay/${paid.id}`, 'checkout'],
        [`${app.url}/pay/l/${link.json.id}`, 'link page'],
      ] as const) {
        await visitor.page.goto(address);
        walked.push(`${viewport.width} ${what}`);
        problems.push(...(await walkOne(visitor.page, `${viewport.width} ${what}`, false)));
      }
      await visitor.context.close();
    }
    for (const kind of ['/money', '/webhooks', '/payments/:id', '/links/:id', '/subscriptions', '/subscriptions/:id', '/plans', '/glossary', '/settings']) {
      assert.ok(walked.includes(`375 ${kind}`), `the walk reached ${kind}: ${walked.join(', ')}`);
    }
    assert.deepEqual(problems, [], `walked ${walked.length} pages`);
  });
});
