// The dashboard's own stylesheet and script, served by Kassa under {base_url}/dashboard/assets/
// (CSP: style-src/script-src 'self', nothing inline). Read once; the content hash in the URL lets
// browsers cache them for a long time.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { withBase } from '../checkout/static.ts';

export interface DashboardAsset {
  type: string;
  body: string;
  version: string;
}

function own(name: string, type: string, transform: (text: string) => string = (text) => text): DashboardAsset {
  const body = transform(fs.readFileSync(new URL(`./static/${name}`, import.meta.url), 'utf8'));
  return { type, body, version: crypto.createHash('sha256').update(body).digest('hex').slice(0, 12) };
}

export const DASHBOARD_ASSETS: Readonly<Record<string, DashboardAsset>> = Object.freeze({
  'dashboard.css': own('dashboard.css', 'text/css; charset=utf-8', withBase),
  'dashboard.js': own('dashboard.js', 'text/javascript; charset=utf-8'),
});

/** `{root}/assets/dashboard.css?v=<hash>` */
export const dashboardAsset = (root: string, name: 'dashboard.css' | 'dashboard.js'): string => `${root}/assets/${name}?v=${DASHBOARD_ASSETS[name]!.version}`;
