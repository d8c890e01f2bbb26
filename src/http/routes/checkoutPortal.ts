// A subscription's customer's portal ({checkout_base_url}/s/{token}; docs/API.md, Subscriptions):
// the token is the capability. An unknown, mistyped or re-issued token is the same 404 page. Its two
// forms POST: "pay" makes (or finds) the subscription's one open payment and sends the customer to
// its checkout (TON Connect, QR, the Mini App as for any payment); "cancel" ends it at the period's
// end when the plan allows. The same page in the Telegram Mini App is checkoutTelegram.ts's
// ({checkout_base_url}/tg/s/{token}); its forms post here with ?tg=1.
import type Router from '@koa/router';
import { recordAudit } from '../../dashboard/audit.ts';
import { presentSubscription } from '../../presenters/subscription.ts';
import { PORTAL_ACTOR, portalCancel, portalPayment } from '../../subscriptions/portal.ts';
import type { SubscriptionRow } from '../../subscriptions/records.ts';
import type { AppDeps, KassaContext, KassaState } from '../context.ts';
import type { Guards } from '../guards.ts';
import { type CheckoutSteps, noStore } from './checkoutSteps.ts';

/** A subscription's portal's forms ({prefix}/s/{token}/pay, …/cancel; and {prefix}/tg/s/…): the JSON body reader leaves them to the route (they carry no fields). */
export const isPortalPath = (prefix: string, path: string): boolean => path.startsWith(`${prefix}/s/`) || path.startsWith(`${prefix}/tg/s/`);

export function checkoutPortalRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards, steps: CheckoutSteps): void {
  const { pool, config } = deps;
  const { prefix, telegramRoot, langOf, htmlErrors, portalPage } = steps;
  const engine = { config, now: deps.now, present: (row: SubscriptionRow) => presentSubscription(row, config) };
  const portalBack = (ctx: KassaContext, path: string) => {
    noStore(ctx);
    const query = new URLSearchParams();
    if (typeof ctx.query.lang === 'string') query.set('lang', langOf(ctx));
    ctx.redirect(`${path}${query.size > 0 ? `?${query.toString()}` : ''}`);
    ctx.status = 303;
  };
  const inTelegram = (ctx: KassaContext) => ctx.query.tg === '1';
  router.get(`${prefix}/s/:token`, htmlErrors, guards.clientLimit, (ctx) => portalPage(ctx, false));
  router.post(`${prefix}/s/:token/pay`, htmlErrors, guards.clientLimit, async (ctx) => {
    const token = ctx.params.token ?? '';
    const result = await pool.transaction((tx) => portalPayment(tx, engine, token, deps.now()));
    if ('refused' in result) {
      if (result.refused === 'not_found') return portalPage(ctx, false);
      return portalBack(ctx, inTelegram(ctx) ? `${telegramRoot}/s/${token}` : `${prefix}/s/${token}`);
    }
    // In the Mini App, the payment's Mini App page (its boot page goes on with the launch, which names this portal).
    portalBack(ctx, inTelegram(ctx) ? `${telegramRoot}/${result.ok}` : `${prefix}/${result.ok}`);
  });
  router.post(`${prefix}/s/:token/cancel`, htmlErrors, guards.clientLimit, async (ctx) => {
    const token = ctx.params.token ?? '';
    const result = await pool.transaction(async (tx) => {
      const now = deps.now();
      const done = await portalCancel(tx, engine, token, now);
      if ('ok' in done && done.ok.changed) {
        const actor = { userId: null, name: PORTAL_ACTOR, clientAddress: ctx.ip || null, userAgent: ctx.get('user-agent') || null };
        const subscription = done.ok.row;
        await recordAudit(
          tx,
          actor,
          { storeId: subscription.store_id, action: 'subscription.cancel', subject: subscription.id, detail: { atPeriodEnd: true, via: 'portal' } },
          now,
        );
      }
      return done;
    });
    if ('refused' in result && result.refused === 'not_found') return portalPage(ctx, false);
    if ('refused' in result && result.refused === 'not_allowed') return portalPage(ctx, inTelegram(ctx), 'not_allowed');
    portalBack(ctx, inTelegram(ctx) ? `${telegramRoot}/s/${token}` : `${prefix}/s/${token}`);
  });
}
