// The checkout page's own stylesheet and scripts, served by Kassa (CSP: style-src/script-src 'self',
// nothing inline, no third-party assets): its own checkout.css (base.css at its top, web/assets.ts)
// and checkout.js, TON Connect's UI (@tonconnect/ui's browser bundle) and Telegram's Mini App script
// (telegram-web-app.js as @twa-dev/sdk ships it), both from node_modules.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { asset, assetUrl, type StaticAsset, withBase } from '../web/assets.ts';
import { tonConnectImage } from './assets.ts';

const own = (name: string, type: string): StaticAsset => asset(type, fs.readFileSync(new URL(`./static/${name}`, import.meta.url), 'utf8'));

/**
 * What @tonconnect/ui does when its widget mounts, for iOS Safari (which applies `:active` styles on
 * touch only where a touchstart listener exists): it writes an inline handler, `<body
 * ontouchstart="">`, which the page's CSP (no inline script) refuses, and Chromium reports on every
 * pending checkout. The same effect without inline script: an empty passive listener.
 */
const INLINE_TOUCHSTART = 'document.body.hasAttribute("ontouchstart")||document.body.setAttribute("ontouchstart","")';
const TOUCHSTART_LISTENER = 'document.body.addEventListener("touchstart",function(){},{passive:!0})';

/** A browser script a package ships, found beside the package's entry point, without its source-map comment (the map is not served). */
function packageScript(name: string, fromEntry: string): string {
  const entry = createRequire(import.meta.url).resolve(name);
  return fs.readFileSync(path.join(path.dirname(entry), fromEntry), 'utf8').replace(/\n?\/\/# sourceMappingURL=\S+\s*$/, '\n');
}

/**
 * Every image address the bundle writes in itself (its own decorations on raw.githubusercontent.com —
 * the TON and Telegram marks of the wallet list — and the icons of its fallback wallets list, on
 * the wallets' hosts): each becomes an image Kassa draws (assets.ts tonConnectImage), as a data: URL,
 * which the page's CSP allows (img-src 'self' data:). The page's browser asks no other host for one.
 */
const BUNDLED_IMAGE = /"https:\/\/[^"\s]+\.(?:png|jpe?g|svg|webp)"/g;

/**
 * @tonconnect/ui's UMD bundle (global TON_CONNECT_UI), its inline touchstart handler replaced by a
 * listener (INLINE_TOUCHSTART; test/browser/checkout-tonconnect.test.ts fails on any CSP violation,
 * so a release that writes it differently is noticed), its images Kassa's own (BUNDLED_IMAGE).
 */
function tonConnectUi(): StaticAsset {
  const body = packageScript('@tonconnect/ui', '../dist/tonconnect-ui.min.js')
    .replaceAll(INLINE_TOUCHSTART, TOUCHSTART_LISTENER)
    .replace(BUNDLED_IMAGE, (literal) => JSON.stringify(tonConnectImage(JSON.parse(literal) as string)));
  return asset('text/javascript; charset=utf-8', body);
}

/**
 * Telegram's own Mini App script (telegram.org/js/telegram-web-app.js, window.Telegram.WebApp) as
 * @twa-dev/sdk ships it, unchanged but for that comment: the Mini App's pages load it before their glue, telegram.js. In a
 * web client's frame it appends one empty <style> element, which the Mini App route's CSP allows by
 * its hash (src/checkout/telegram.ts, telegramCsp); test/browser/telegram.test.ts fails on any CSP
 * violation, so a release that does more is noticed.
 */
const telegramWebApp = (): StaticAsset => asset('text/javascript; charset=utf-8', packageScript('@twa-dev/sdk', 'telegram-web-apps.js'));

export const STATIC_ASSETS: Readonly<Record<string, StaticAsset>> = Object.freeze({
  'checkout.css': asset('text/css; charset=utf-8', withBase(fs.readFileSync(new URL('./static/checkout.css', import.meta.url), 'utf8'))),
  'checkout.js': own('checkout.js', 'text/javascript; charset=utf-8'),
  // The Telegram Mini App's side of the page (src/checkout/telegram.ts): Telegram's script, then Kassa's glue over it.
  'telegram-web-app.js': telegramWebApp(),
  'telegram.js': own('telegram.js', 'text/javascript; charset=utf-8'),
  'tonconnect-ui.js': tonConnectUi(),
  'embed.js': own('embed.js', 'text/javascript; charset=utf-8'),
});

/** `{prefix}/assets/checkout.css?v=<hash>` */
export const assetPath = (prefix: string, name: keyof typeof STATIC_ASSETS & string): string => assetUrl(prefix, STATIC_ASSETS, name);
