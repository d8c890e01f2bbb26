// The dashboard's own stylesheet and script, served by Kassa under {base_url}/dashboard/assets/
// (CSP: style-src/script-src 'self', nothing inline). Read once; the content hash in the URL lets
// browsers cache them for a long time.
import fs from 'node:fs';
import { asset, assetUrl, type StaticAsset, withBase } from '../web/assets.ts';

const own = (name: string, type: string, transform: (text: string) => string = (text) => text): StaticAsset =>
  asset(type, transform(fs.readFileSync(new URL(`./static/${name}`, import.meta.url), 'utf8')));

export const DASHBOARD_ASSETS: Readonly<Record<string, StaticAsset>> = Object.freeze({
  'dashboard.css': own('dashboard.css', 'text/css; charset=utf-8', withBase),
  'dashboard.js': own('dashboard.js', 'text/javascript; charset=utf-8'),
  'passkeys.js': own('passkeys.js', 'text/javascript; charset=utf-8'),
});

/** `{root}/assets/dashboard.css?v=<hash>` */
export const dashboardAsset = (root: string, name: 'dashboard.css' | 'dashboard.js' | 'passkeys.js'): string => assetUrl(root, DASHBOARD_ASSETS, name);
