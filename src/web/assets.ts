// The static assets of Kassa's pages (issue 33: one web foundation): each read once, with a content
// hash in its URL so browsers cache it for a long time, and served by one step for both UIs (CSP:
// style-src/script-src 'self', nothing inline). base.css, the palette (light and dark) and base of
// every page, sits at the top of each UI's stylesheet (one file, one request).
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Middleware } from 'koa';

export interface StaticAsset {
  type: string;
  body: string;
  version: string;
}

export function asset(type: string, body: string): StaticAsset {
  return { type, body, version: crypto.createHash('sha256').update(body).digest('hex').slice(0, 12) };
}

const BASE_CSS = fs.readFileSync(new URL('./static/base.css', import.meta.url), 'utf8');
/** A page's stylesheet served with base.css at its top. */
export const withBase = (css: string): string => `${BASE_CSS}\n${css}`;

/** `{prefix}/assets/<name>?v=<hash>` */
export const assetUrl = (prefix: string, assets: Readonly<Record<string, StaticAsset>>, name: string): string =>
  `${prefix}/assets/${name}?v=${assets[name]!.version}`;

/**
 * The route step serving `assets` at `…/assets/:file`: long-lived and immutable when the URL's
 * `v` is the content's hash, five minutes otherwise; an unknown name goes on (the UI's not-found).
 */
export function serveAssets(assets: Readonly<Record<string, StaticAsset>>): Middleware<unknown, { params: Record<string, string | undefined> }> {
  return async (ctx, next) => {
    const name = ctx.params.file ?? '';
    const found = Object.hasOwn(assets, name) ? assets[name] : undefined;
    if (!found) return next();
    ctx.type = found.type;
    ctx.set('Cache-Control', ctx.query.v === found.version ? 'public, max-age=31536000, immutable' : 'public, max-age=300');
    ctx.body = found.body;
  };
}
