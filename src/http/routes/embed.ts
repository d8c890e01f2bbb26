// <kassa-pay>'s public surface under {checkout_base_url} (src/checkout/embed.ts; docs/API.md "The
// drop-in element"): the module itself, the two reads only the element makes (a link before its
// payment exists, the methods a payment may be paid with), and the CORS step the checkout's JSON view
// and event stream take too — another origin is answered only when the store lists it in embedOrigins.
import type Router from '@koa/router';
import type { Middleware, ParameterizedContext } from 'koa';
import { KASSA_PAY_JS, listedOrigin, paymentStore, publicLinkView, publicMethods, storeEmbedOrigins } from '../../checkout/embed.ts';
import { findCheckoutRow, methodOffers } from '../../checkout/view.ts';
import { KassaError, paymentNotFound } from '../../errors.ts';
import { findPaymentLink } from '../../paymentLinks/links.ts';
import { ratePolicy } from '../../rates/rates.ts';
import type { AppDeps, KassaState, Validated } from '../context.ts';
import type { Guards } from '../guards.ts';
import { validate } from '../validate.ts';
import { checkoutParams } from './checkout.schema.ts';
import { paymentLinkParams } from './paymentLinks.schema.ts';
import { checkoutPrefix } from './checkoutSteps.ts';

/**
 * CORS for the element's reads: a request from another origin gets `Access-Control-Allow-Origin`
 * (that origin, never `*`) only when the store whose payment or link it reads lists it; otherwise
 * the browser keeps the answer from the page. No credentials are ever allowed: the reads need none.
 */
function embedReads(deps: AppDeps, storeOf: (ctx: ParameterizedContext<KassaState>) => Promise<string | null>): Middleware<KassaState> {
  const own = new URL(deps.config.checkoutBaseUrl).origin;
  return async (ctx, next) => {
    ctx.vary('Origin');
    const origin = ctx.get('Origin');
    if (origin !== '' && origin !== own) {
      const storeId = await storeOf(ctx);
      const allowed = storeId === null ? null : listedOrigin(origin, await storeEmbedOrigins(deps.pool, storeId));
      if (allowed !== null) ctx.set('Access-Control-Allow-Origin', allowed);
    }
    await next();
  };
}

/** The store of the path's payment (`:paymentId`, validated before). */
export const paymentReads = (deps: AppDeps): Middleware<KassaState> =>
  embedReads(deps, (ctx) => paymentStore(deps.pool, (ctx.state as Validated<{ params: { paymentId: string } }>).params.paymentId));

export function embedRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards): void {
  const { pool, config } = deps;
  const prefix = checkoutPrefix(config.checkoutBaseUrl);

  // The module: any page may load it (a module script is fetched with CORS); what it may read is decided per store.
  router.get(`${prefix}/v1/kassa-pay.js`, async (ctx) => {
    ctx.type = KASSA_PAY_JS.type;
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.set('ETag', `"${KASSA_PAY_JS.version}"`);
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
    if (ctx.get('If-None-Match') === `"${KASSA_PAY_JS.version}"`) {
      ctx.status = 304;
      return;
    }
    ctx.body = KASSA_PAY_JS.body;
  });

  const noStore: Middleware<KassaState> = async (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    await next();
  };

  type ByLink = Validated<{ params: { id: string } }>;
  const linkReads = embedReads(deps, async (ctx) => (await findPaymentLink(pool, (ctx.state as ByLink).params.id.toLowerCase()))?.store_id ?? null);
  router.get(
    `${prefix}/v1/checkout/links/:id`,
    guards.clientLimit,
    validate({ params: paymentLinkParams }),
    noStore,
    linkReads,
    async (ctx: ParameterizedContext<ByLink>) => {
      const link = await findPaymentLink(pool, ctx.state.params.id.toLowerCase());
      if (!link) throw new KassaError('payment_link_not_found', { param: 'id' });
      ctx.body = publicLinkView(link, deps.now());
    },
  );

  type ById = Validated<{ params: { paymentId: string } }>;
  router.get(
    `${prefix}/v1/checkout/payments/:paymentId/methods`,
    guards.clientLimit,
    validate({ params: checkoutParams }),
    noStore,
    paymentReads(deps),
    async (ctx: ParameterizedContext<ById>) => {
      const row = await findCheckoutRow(pool, ctx.state.params.paymentId, config.tonNetwork);
      if (!row) throw paymentNotFound();
      const now = deps.now();
      const open = row.status === 'created' && now.getTime() < row.expires_at.getTime();
      ctx.body = publicMethods(open ? await methodOffers(pool, row, config.tonNetwork, now, ratePolicy(config)) : []);
    },
  );
}
