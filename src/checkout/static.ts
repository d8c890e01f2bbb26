// The checkout page's own stylesheet and script, served by Kassa (CSP: style-src/script-src 'self',
// nothing inline, no third-party assets). Read once; the content hash in the URL lets browsers cache
// them for a long time.
import crypto from 'node:crypto';
import fs from 'node:fs';

export interface StaticAsset {
  name: string;
  type: string;
  body: string;
  version: string;
}

function load(name: string, type: string): StaticAsset {
  const body = fs.readFileSync(new URL(`./static/${name}`, import.meta.url), 'utf8');
  return { name, type, body, version: crypto.createHash('sha256').update(body).digest('hex').slice(0, 12) };
}

export const STATIC_ASSETS: Readonly<Record<string, StaticAsset>> = Object.freeze({
  'checkout.css': load('checkout.css', 'text/css; charset=utf-8'),
  'checkout.js': load('checkout.js', 'text/javascript; charset=utf-8'),
});

/** `{prefix}/assets/checkout.css?v=<hash>` */
export const assetPath = (prefix: string, name: keyof typeof STATIC_ASSETS & string): string =>
  `${prefix}/assets/${name}?v=${STATIC_ASSETS[name]!.version}`;
