// Public endpoints under {checkout_base_url}: the webhook key set and the coin/chain images.
// (The hosted checkout page itself joins them here.)
import type Router from '@koa/router';
import { sql, z } from '../db/pool.ts';
import type { AppDeps, KassaState } from '../http/context.ts';
import type { Guards } from '../http/middleware.ts';
import { activeSigningKey, publishedKeys } from '../webhooks/keys.ts';
import { publicJwk } from '../webhooks/sign.ts';
import { badgeSvg } from './assets.ts';

/** The path part of CHECKOUT_BASE_URL ('' when it is a host of its own). */
export function checkoutPrefix(checkoutBaseUrl: string): string {
  return new URL(checkoutBaseUrl).pathname.replace(/\/+$/, '');
}

export function checkoutRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards): void {
  const prefix = checkoutPrefix(deps.config.checkoutBaseUrl);

  router.get(`${prefix}/v1/webhook/keys`, guards.public, async (ctx) => {
    const now = deps.now();
    await activeSigningKey(deps.pool, now);
    const keys = await publishedKeys(deps.pool, now);
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = { keys: keys.map((key) => publicJwk(key.kid, key.publicKey)) };
  });

  const symbols = async (table: 'coins' | 'chains'): Promise<Set<string>> =>
    new Set(await deps.pool.anyFirst(sql.type(z.object({ symbol: z.string() }))`select symbol from ${sql.identifier([table])}`));

  for (const kind of ['coins', 'chains'] as const) {
    router.get(`${prefix}/assets/${kind}/:file`, async (ctx, next) => {
      const match = /^([A-Za-z0-9]{1,16})\.svg$/.exec(ctx.params.file ?? '');
      if (!match || !(await symbols(kind)).has(match[1]!)) return next();
      ctx.type = 'image/svg+xml';
      ctx.set('Cache-Control', 'public, max-age=86400');
      ctx.body = badgeSvg(match[1]!);
    });
  }
}
