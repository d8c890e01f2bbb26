// The dashboard's own stylesheet and script, served by Kassa under {base_url}/dashboard/assets/
// (CSP: style-src/script-src 'self', nothing inline). Read once; the content hash in the URL lets
// browsers cache them for a long time.
import fs from 'node:fs';
import { STATIC_ASSETS } from '../checkout/static.ts';
import { asset, assetUrl, type StaticAsset, withBase } from '../web/assets.ts';

const own = (name: string, type: string, transform: (text: string) => string = (text) => text): StaticAsset =>
  asset(type, transform(fs.readFileSync(new URL(`./static/${name}`, import.meta.url), 'utf8')));

export const DASHBOARD_ASSETS: Readonly<Record<string, StaticAsset>> = Object.freeze({
  'dashboard.css': own('dashboard.css', 'text/css; charset=utf-8', withBase),
  'dashboard.js': own('dashboard.js', 'text/javascript; charset=utf-8'),
  'passkeys.js': own('passkeys.js', 'text/javascript; charset=utf-8'),
  // A payment's page with a treasury refund awaiting the merchant's signature: the checkout's own
  // TON Connect UI bundle (the same asset, not a copy) and the script that asks the wallet to sign.
  'tonconnect-ui.js': STATIC_ASSETS['tonconnect-ui.js']!,
  // The owner's wallet through TON Connect, shared by treasury.js and refundFees.js (loaded before them).
  'walletConnect.js': own('walletConnect.js', 'text/javascript; charset=utf-8'),
  'treasury.js': own('treasury.js', 'text/javascript; charset=utf-8'),
  // The Money page's "Send from your wallet" for a refund fee top-up (the same TON Connect UI bundle).
  'refundFees.js': own('refundFees.js', 'text/javascript; charset=utf-8'),
  'links.css': own('links.css', 'text/css; charset=utf-8'),
});

type DashboardAsset =
  | 'dashboard.css'
  | 'dashboard.js'
  | 'passkeys.js'
  | 'tonconnect-ui.js'
  | 'walletConnect.js'
  | 'treasury.js'
  | 'refundFees.js'
  | 'links.css';

/** `{root}/assets/dashboard.css?v=<hash>` */
export const dashboardAsset = (root: string, name: DashboardAsset): string => assetUrl(root, DASHBOARD_ASSETS, name);
