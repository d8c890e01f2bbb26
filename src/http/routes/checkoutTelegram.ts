// The checkout as the store's Telegram Mini App (docs/API.md, Telegram Mini App). BotFather's URL is
// {checkout_base_url}/tg: Telegram adds the launch (init data, theme, the payment id — or a
// subscription's portal, s_<token> — as the start parameter) in the fragment, which the page's script
// reads and goes on to /tg/{id} (or /tg/s/{token}). Only these pages may be framed, and only by
// Telegram's web clients (TELEGRAM_WEB_ORIGINS). And the page's report of who pays (POST
// …/v1/checkout/payments/{id}/telegram, the init data signed by Telegram).
import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import type { Lang } from '../../checkout/i18n.ts';
import { renderTelegramBootPage, renderTelegramRefusalPage } from '../../checkout/page.ts';
import { telegramCsp } from '../../checkout/telegram.ts';
import { PORTAL_START_PREFIX, portalView } from '../../subscriptions/portal.ts';
import { checkLaunch, checkPortalLaunch } from '../../telegram/launch.ts';
import { recordTelegramPayer } from '../../telegram/payer.ts';
import { isUuid } from '../../uuid.ts';
import { strictCsp } from '../../web/csp.ts';
import type { AppDeps, KassaContext, KassaState, Validated } from '../context.ts';
import type { Guards } from '../guards.ts';
import { validate } from '../validate.ts';
import { type TelegramInitDataBody, telegramInitDataSchema } from './checkout.schema.ts';
import { type CheckoutSteps, htmlHeaders, noStore } from './checkoutSteps.ts';

export function checkoutTelegramRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards, steps: CheckoutSteps): void {
  const { pool, config } = deps;
  const { prefix, telegramRoot, langOf, htmlErrors, framedByTelegram, byId, uncached, paymentPage, portalPage } = steps;
  /** A Mini App page that is not the payment's or the portal's own (a boot page, a refusal): never cached. */
  const telegramPage = (ctx: KassaContext, lang: Lang, status: number, body: string) => {
    noStore(ctx);
    htmlHeaders(ctx, lang, strictCsp(telegramCsp(config.telegramWebOrigins)));
    framedByTelegram(ctx);
    ctx.status = status;
    ctx.body = body;
  };

  router.get(telegramRoot, htmlErrors, guards.clientLimit, async (ctx) => {
    const start = ctx.query.tgWebAppStartParam;
    if (typeof start === 'string' && isUuid(start)) {
      noStore(ctx);
      ctx.redirect(`${telegramRoot}/${start.toLowerCase()}`);
      ctx.status = 303;
      return;
    }
    if (typeof start === 'string' && start.startsWith(PORTAL_START_PREFIX) && /^[A-Za-z0-9_-]{32}$/.test(start.slice(PORTAL_START_PREFIX.length))) {
      noStore(ctx);
      ctx.redirect(`${telegramRoot}/s/${start.slice(PORTAL_START_PREFIX.length)}`);
      ctx.status = 303;
      return;
    }
    const lang = langOf(ctx);
    htmlHeaders(ctx, lang, strictCsp(telegramCsp(config.telegramWebOrigins)));
    framedByTelegram(ctx);
    ctx.body = renderTelegramBootPage({ returnUrl: null, bootPath: telegramRoot, lang });
  });
  // {telegramRoot}/{id}: the payment's page only for a launch Telegram signed for the payment's own
  // store's bot, which the boot page's script puts in the query (?tgWebAppData=, the init data of the
  // fragment); another bot's launch is refused with nothing of the payment (telegram/launch.ts).
  // Without one (an old link, a browser) it is the boot page, which goes on with the launch in
  // Telegram and to the ordinary checkout outside it.
  router.get(`${telegramRoot}/:paymentId`, htmlErrors, guards.clientLimit, async (ctx) => {
    const raw = ctx.params.paymentId ?? '';
    const initData = ctx.query.tgWebAppData;
    if (!isUuid(raw) || (typeof initData !== 'string' && initData !== undefined)) return paymentPage(ctx, '', true);
    const id = raw.toLowerCase();
    const lang = langOf(ctx);
    if (initData === undefined) {
      return telegramPage(
        ctx,
        lang,
        200,
        renderTelegramBootPage({ returnUrl: null, bootPath: telegramRoot, lang, paymentId: id, checkoutPath: `${prefix}/${id}` }),
      );
    }
    const launch = await checkLaunch(pool, id, initData, { publicKeyHex: config.telegramPublicKey, now: deps.now() });
    if (launch === 'other_bot') return telegramPage(ctx, lang, 403, renderTelegramRefusalPage({ returnUrl: null, bootPath: telegramRoot, lang }));
    await paymentPage(ctx, id, true);
  });

  type TelegramLaunch = Validated<{ params: { paymentId: string }; body: TelegramInitDataBody }>;
  const launch = validate({ body: telegramInitDataSchema });
  router.post(
    `${prefix}/v1/checkout/payments/:paymentId/telegram`,
    guards.clientLimit,
    byId,
    uncached,
    launch,
    async (ctx: ParameterizedContext<TelegramLaunch>) => {
      const user = await recordTelegramPayer(pool, ctx.state.params.paymentId, {
        initData: ctx.state.body.initData,
        publicKeyHex: config.telegramPublicKey,
        now: deps.now(),
      });
      ctx.body = { telegramUser: { id: user.id, ...(user.username !== null ? { username: user.username } : {}) } };
    },
  );

  // A subscription's portal in the Mini App, launched with startapp=s_<token>: the portal's page
  // (checkoutPortal.ts), shown only for a launch Telegram signed for the subscription's own store's
  // bot naming this portal.
  router.get(`${telegramRoot}/s/:token`, htmlErrors, guards.clientLimit, async (ctx) => {
    const token = ctx.params.token ?? '';
    const initData = ctx.query.tgWebAppData;
    const lang = langOf(ctx);
    if (typeof initData !== 'string') {
      // Before the launch is checked: the boot page, which goes on with it (or to the ordinary portal outside Telegram).
      if (!/^[A-Za-z0-9_-]{32}$/.test(token)) return portalPage(ctx, false);
      return telegramPage(
        ctx,
        lang,
        200,
        renderTelegramBootPage({ returnUrl: null, bootPath: telegramRoot, lang, portalToken: token, checkoutPath: `${prefix}/s/${token}` }),
      );
    }
    const view = await portalView(pool, token, deps.now());
    if (!view) return portalPage(ctx, false);
    const launch = await checkPortalLaunch(pool, view.row, token, initData, { publicKeyHex: config.telegramPublicKey, now: deps.now() });
    if (launch !== 'ok') return telegramPage(ctx, lang, 403, renderTelegramRefusalPage({ returnUrl: null, bootPath: telegramRoot, lang }, 'portal'));
    await portalPage(ctx, true);
  });
}
