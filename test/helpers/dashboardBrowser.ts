// The dashboard's browser tests' page helpers (their Chromium comes from test/helpers/chromium.ts):
// fresh profiles that record console errors and CSP violations, axe-core run in the page (no serious
// or critical violation), and the phone-width check (no horizontal scroll). Every
// test/browser/dashboard*.test.ts takes them from here.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface BrowserPage {
  context: BrowserContext;
  page: Page;
  /** Console errors, page errors and CSP violations seen so far. */
  problems: string[];
}

/** A fresh browser profile whose page records console errors and CSP violations, and accepts confirm dialogs. */
export async function openPage(browser: Browser, viewport = { width: 375, height: 812 }, permissions: string[] = []): Promise<BrowserPage> {
  const context = await browser.newContext({ viewport, locale: 'en-US', permissions });
  await context.addInitScript(() =>
    document.addEventListener('securitypolicyviolation', (event) => console.error(`CSP violation: ${event.violatedDirective} of ${event.blockedURI}`)),
  );
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    // A form refused (400, 401, 403, 409, 429) is a page like any other; the browser logs its status.
    if (/Failed to load resource: the server responded with a status of 4(00|01|03|09|29)/.test(message.text())) return;
    if (message.type() === 'error') problems.push(`console: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('dialog', (dialog) => void dialog.accept());
  return { context, page, problems };
}

/** axe-core in the page (through the debugging protocol: the page's CSP stays as served): its serious and critical violations (WCAG 2.x A/AA rules and best practices). */
export async function seriousAxeViolations(page: Page): Promise<Array<{ id: string; impact: string; help: string; targets: string[] }>> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(context: unknown, options: unknown): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }>;
        };
      }
    ).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** No serious or critical axe-core violation (seriousAxeViolations). A screenshot to `artifacts`. */
export async function assertAccessible(page: Page, what: string, artifacts: string): Promise<void> {
  assert.deepEqual(await seriousAxeViolations(page), [], `${what}: axe-core found serious violations`);
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, `${what.replace(/\W+/g, '-')}.png`), fullPage: true });
}

/**
 * At the page's viewport width (375 px for a phone), nothing makes the page scroll sideways, and
 * nothing inside a card (.card, and each card a list's row becomes) reaches past its edges (a table
 * or a code block scrolling inside its frame would).
 */
export async function assertNoHorizontalScroll(page: Page, what: string): Promise<void> {
  const { scrollWidth, width, overflowing } = await page.evaluate(() => {
    const outside: string[] = [];
    for (const card of Array.from(document.querySelectorAll('.card, table.cards tbody tr'))) {
      const box = card.getBoundingClientRect();
      for (const element of Array.from(card.querySelectorAll('*'))) {
        const rect = element.getBoundingClientRect();
        if (rect.width === 0 || rect.height === 0) continue;
        if (rect.left < box.left - 0.5 || rect.right > box.right + 0.5) {
          const name = `${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''}${element.className && typeof element.className === 'string' ? `.${element.className.trim().replace(/\s+/g, '.')}` : ''}`;
          outside.push(`${name} (${Math.round(rect.left)}–${Math.round(rect.right)} in ${Math.round(box.left)}–${Math.round(box.right)})`);
        }
      }
    }
    return { scrollWidth: document.scrollingElement!.scrollWidth, width: window.innerWidth, overflowing: outside };
  });
  assert.ok(scrollWidth <= width, `${what}: the page is ${scrollWidth} px wide in a ${width} px window`);
  assert.deepEqual(overflowing, [], `${what}: elements reach past their card`);
}

/** Accessible (axe) and no sideways scroll at the page's width. */
export async function assertPageFits(page: Page, what: string, artifacts: string): Promise<void> {
  await assertAccessible(page, what, artifacts);
  await assertNoHorizontalScroll(page, what);
}

/** Accepts an invitation (its one-time link) with a password, as a new member would; lands on the store's home page. */
export async function joinByInvitation(page: Page, base: string, storeId: string, invitation: string, password: string): Promise<void> {
  await page.goto(`${base}${invitation}`);
  await page.fill('#password', password);
  await page.fill('#confirm', password);
  await page.click('button[type=submit]');
  await page.waitForURL(`${base}/dashboard/stores/${storeId}`);
}

/**
 * Clicks a link or button of the header's menu (the store's navigation, Password, Passkeys, Sign
 * out), opening the menu first where it is folded (a phone: its Menu button shows), as a person would.
 */
export async function clickInMenu(page: Page, selector: string): Promise<void> {
  const button = page.locator('.menu-button');
  if ((await button.count()) > 0 && (await button.isVisible()) && (await button.getAttribute('aria-expanded')) === 'false') await button.click();
  await page.click(selector);
}
