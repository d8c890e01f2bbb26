// Headless Chromium (Debian's `chromium`, driven by playwright-core) for the browser tests
// (test/browser/): one browser for the whole run, or one per file when none was started for it.
//
// A file's own Chromium (launch, a page, close) costs ~1 s of CPU more than a connection to a running
// one (eight one-page files: 22-29 s of CPU with their own, 15-18 s connected), on a two-core machine
// where the suite is CPU-bound. So the test command (test/run.ts) starts one
// Chromium as a Playwright browser server (startSharedChromium) and hands its address to the files
// in KASSA_TEST_CHROMIUM_WS; each file connects to it (chromiumBrowser). A connection sees only the
// contexts it opened (Playwright isolates them per connection), and the files' pages live in
// contexts they open themselves (some per test, some for the file's signed-in owner), so no two
// files share cookies, storage, permissions or routes. What the files use works the same over a
// connection: contexts' viewports, touch and permissions, routes, exposed functions, screenshots,
// and CDP sessions on a page (the passkeys' virtual authenticator belongs to the page). The one
// thing of the browser's own the files use is the clipboard: the files that read it back launch
// their own Chromium (ownClipboard). Closing a connected browser closes the connection and that
// connection's contexts, never the shared Chromium (Playwright's server ignores a client's close).
// A file given no shared Chromium (the runner could not start one, or something else runs the
// file) launches a Chromium of its own.
//
// If Chromium cannot be launched the files FAIL (they never skip): install it with
// `apt-get install -y chromium` (.ci/run does) or set CHROMIUM_PATH.
import { chromium, type Browser, type BrowserServer } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** The variable test/run.ts sets to the shared Chromium's WebSocket address. */
export const SHARED_CHROMIUM_ENV = 'KASSA_TEST_CHROMIUM_WS';
const LAUNCH = {
  executablePath: CHROMIUM,
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
};

/**
 * The browser for a test file: a connection to the run's shared Chromium when test/run.ts started
 * one, else a Chromium of the file's own. Either way the file closes it with `browser.close()`.
 *
 * `ownClipboard`: a file that reads the clipboard back launches its own Chromium even in a run. The
 * clipboard belongs to the browser, not to a context (a text one connection's page writes, another
 * connection's page reads), so another file's copy landing between this file's copy and its read
 * would be read instead.
 */
export async function chromiumBrowser(options: { ownClipboard?: boolean } = {}): Promise<Browser> {
  const shared = options.ownClipboard ? undefined : process.env[SHARED_CHROMIUM_ENV];
  if (shared) {
    try {
      return await chromium.connect(shared, { timeout: 60_000 });
    } catch (error) {
      throw new Error(`the test run's shared Chromium (${SHARED_CHROMIUM_ENV}=${shared}) did not answer: ${(error as Error).message}`);
    }
  }
  try {
    return await chromium.launch(LAUNCH);
  } catch (error) {
    throw new Error(
      `Chromium could not be launched from ${CHROMIUM}: the browser tests cannot run. Install it (apt-get install -y chromium) or set CHROMIUM_PATH. ${(error as Error).message}`,
    );
  }
}

/**
 * The run's one Chromium, for test/run.ts: a Playwright browser server listening on 127.0.0.1 (its
 * `wsEndpoint()` goes to the files in KASSA_TEST_CHROMIUM_WS). Rejects when Chromium cannot be launched.
 */
export function startSharedChromium(): Promise<BrowserServer> {
  return chromium.launchServer({ ...LAUNCH, host: '127.0.0.1' });
}
