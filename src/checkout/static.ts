// The checkout page's own stylesheet and scripts, served by Kassa (CSP: style-src/script-src 'self',
// nothing inline, no third-party assets): its own checkout.css (base.css at its top, web/assets.ts)
// and checkout.js, and TON Connect's UI (@tonconnect/ui's browser bundle, from node_modules).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { asset, assetUrl, type StaticAsset, withBase } from '../web/assets.ts';

const own = (name: string, type: string): StaticAsset => asset(type, fs.readFileSync(new URL(`./static/${name}`, import.meta.url), 'utf8'));

/**
 * What @tonconnect/ui does when its widget mounts, for iOS Safari (which applies `:active` styles on
 * touch only where a touchstart listener exists): it writes an inline handler, `<body
 * ontouchstart="">`, which the page's CSP (no inline script) refuses, and Chromium reports on every
 * pending checkout. The same effect without inline script: an empty passive listener.
 */
const INLINE_TOUCHSTART = 'document.body.hasAttribute("ontouchstart")||document.body.setAttribute("ontouchstart","")';
const TOUCHSTART_LISTENER = 'document.body.addEventListener("touchstart",function(){},{passive:!0})';

/**
 * @tonconnect/ui's UMD bundle (global TON_CONNECT_UI), without its source-map comment, its inline
 * touchstart handler replaced by a listener (INLINE_TOUCHSTART; test/browser/checkout-tonconnect.test.ts fails
 * on any CSP violation, so a release that writes it differently is noticed).
 */
function tonConnectUi(): StaticAsset {
  const entry = createRequire(import.meta.url).resolve('@tonconnect/ui');
  const bundle = fs.readFileSync(path.join(path.dirname(entry), '../dist/tonconnect-ui.min.js'), 'utf8');
  const body = bundle.replace(/\n?\/\/# sourceMappingURL=\S+\s*$/, '\n').replaceAll(INLINE_TOUCHSTART, TOUCHSTART_LISTENER);
  return asset('text/javascript; charset=utf-8', body);
}

export const STATIC_ASSETS: Readonly<Record<string, StaticAsset>> = Object.freeze({
  'checkout.css': asset('text/css; charset=utf-8', withBase(fs.readFileSync(new URL('./static/checkout.css', import.meta.url), 'utf8'))),
  'checkout.js': own('checkout.js', 'text/javascript; charset=utf-8'),
  // The Telegram Mini App's side of the page (src/checkout/telegram.ts): Telegram's host protocol, spoken directly.
  'telegram.js': own('telegram.js', 'text/javascript; charset=utf-8'),
  'tonconnect-ui.js': tonConnectUi(),
  'embed.js': own('embed.js', 'text/javascript; charset=utf-8'),
});

/** `{prefix}/assets/checkout.css?v=<hash>` */
export const assetPath = (prefix: string, name: keyof typeof STATIC_ASSETS & string): string => assetUrl(prefix, STATIC_ASSETS, name);
