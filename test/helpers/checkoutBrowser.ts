// The hosted checkout's browser tests' shared setup (test/browser/checkout*.test.ts): Chromium
// (test/helpers/chromium.ts: the run's shared one, or the file's own), the app on the sandbox chain with
// its chain reader, a store, and the page helpers (a fresh context that records console errors and CSP
// violations, screenshots to test-artifacts/checkout/, axe-core). Each test file is its own process, so
// each has its own browser connection and app; `export let` bindings are live, so the files read `app`,
// `store` and `browser` once `useCheckoutBrowser()`'s hook has set them.
//
// If Chromium cannot be launched the file FAILS (it never skips): install it with
// `apt-get install -y chromium` (.ci/run does).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { TestApp } from './app.ts';
import { startChainApp, type ChainTestApp } from './chain.ts';
import { chromiumBrowser } from './chromium.ts';
import { seriousAxeViolations } from './dashboardBrowser.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/checkout');
export const MOBILE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 900 };

export let app: ChainTestApp;
export let store: Awaited<ReturnType<TestApp['store']>>;
export let browser: Browser;

/** Installs the file's before/after hooks: Chromium (chromiumBrowser, with its options), the app on the sandbox chain, the store. */
export function useCheckoutBrowser(chromiumOptions: Parameters<typeof chromiumBrowser>[0] = {}): void {
  before(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    browser = await chromiumBrowser(chromiumOptions);
    app = await startChainApp();
    store = await app.store({ name: 'Blue Bottle Café', methods: 'TON/TON,USDT/TON' });
  });
  after(async () => {
    await browser?.close();
    await app?.close();
  });
}

export async function createPayment(body: Record<string, unknown>): Promise<any> {
  const response = await app.request('POST', '/v1/payments', { token: store.token, body });
  assert.equal(response.status, 201, response.text);
  return response.json;
}

/** A new browser context (fresh profile state) with a page that records console errors and CSP violations. */
export async function open(
  options: { locale?: string; viewport?: { width: number; height: number }; colorScheme?: 'light' | 'dark' } = {},
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({
    viewport: options.viewport ?? MOBILE,
    deviceScaleFactor: 2,
    locale: options.locale ?? 'en-US',
    isMobile: (options.viewport ?? MOBILE).width < 600,
    hasTouch: true,
    colorScheme: options.colorScheme ?? 'light',
  });
  // Every CSP violation, with what caused it, on the console (and so in `problems`).
  await context.addInitScript(() =>
    document.addEventListener('securitypolicyviolation', (event) => {
      const target = event.target instanceof Element ? event.target.outerHTML.slice(0, 200) : '';
      console.error(
        `CSP violation: ${event.violatedDirective} of ${event.blockedURI} at ${event.sourceFile}:${event.lineNumber}:${event.columnNumber} ${event.sample} ${target}`,
      );
    }),
  );
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    // Every CSP violation is a problem: @tonconnect/ui's inline `<body ontouchstart="">` (an iOS
    // :active workaround) is served as a touchstart listener instead (src/checkout/static.ts).
    if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(`console: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return { context, page, problems };
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** No serious or critical axe-core violation in the page (the dashboard's check, test/helpers/dashboardBrowser.ts). */
export async function assertAccessible(page: Page, what: string): Promise<void> {
  assert.deepEqual(await seriousAxeViolations(page), [], `${what}: axe-core found serious violations`);
}

/** Marks the document; the mark survives in-place updates and is lost on any reload or navigation. */
export const markDocument = (page: Page) => page.evaluate(() => ((window as unknown as { kassaMark: string }).kassaMark = 'same-document'));
export const sameDocument = (page: Page) => page.evaluate(() => (window as unknown as { kassaMark?: string }).kassaMark === 'same-document');

/** What the chain reader does at every block in production: read the chain until nothing new. */
export async function watchChain(): Promise<void> {
  await app.settle();
}
