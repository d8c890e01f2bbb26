// What the checkout's route files share (checkout.ts, and the area files its checkoutRoutes registers
// on the app's router: checkoutLinks.ts, checkoutTelegram.ts, checkoutPortal.ts): the checkout's prefix
// (the path of CHECKOUT_BASE_URL), the customer's language, the pages' headers and error pages, the
// JSON view's steps (the payment id's schema, no caching), framing by a shop's <kassa-pay> or by
// Telegram, and the two pages more than one file answers with — a payment's (in the browser and in
// the Mini App) and a subscription's portal (likewise).
import crypto from 'node:crypto';
import type { Middleware } from 'koa';
import { framedBy, listedOrigin, storeEmbedOrigins } from '../../checkout/embed.ts';
import { negotiateLang, t, type Lang } from '../../checkout/i18n.ts';
import { qrSvg, transferLinks } from '../../checkout/walletLinks.ts';
import { paymentPageCsp, renderMessagePage, renderPaymentPage } from '../../checkout/page.ts';
import { renderPortalNotFoundPage, renderPortalPage } from '../../checkout/portalPage.ts';
import { telegramCsp } from '../../checkout/telegram.ts';
import { findCheckoutRow, methodOffers, type CheckoutRow } from '../../checkout/view.ts';
import { presentCheckout } from '../../presenters/checkout.ts';
import { ratePolicy } from '../../rates/rates.ts';
import { portalView } from '../../subscriptions/portal.ts';
import { telegramPaymentUrl } from '../../telegram/telegramUrls.ts';
import { isUuid } from '../../uuid.ts';
import { PAGE_CSP, strictCsp } from '../../web/csp.ts';
import { pageHeaders } from '../../web/page.ts';
import type { AppDeps, KassaContext, KassaState } from '../context.ts';
import { errorPages } from '../errorEnvelope.ts';
import { validate } from '../validate.ts';
import { checkoutParams } from './checkout.schema.ts';

/** The path part of CHECKOUT_BASE_URL ('' when it is a host of its own). */
export function checkoutPrefix(checkoutBaseUrl: string): string {
  return new URL(checkoutBaseUrl).pathname.replace(/\/+$/, '');
}

export function noStore(ctx: KassaContext): void {
  ctx.set('Cache-Control', 'no-store');
}

export function htmlHeaders(ctx: KassaContext, lang: Lang, csp = PAGE_CSP): void {
  pageHeaders(ctx, { csp, referrer: 'no-referrer' });
  ctx.set('Content-Language', lang);
  ctx.vary('Accept-Language');
}

/** The checkout's error pages: the status and headers of errorEnvelope.ts's one mapping, the page in the customer's language. */
export function checkoutErrorPages(prefix: string, langOf: (ctx: KassaContext) => Lang): Middleware<KassaState> {
  return errorPages<KassaState>((ctx, page) => {
    const lang = langOf(ctx);
    htmlHeaders(ctx, lang);
    // Nothing there and too many requests have words of their own; every other error: the page cannot be shown.
    ctx.body = renderMessagePage(lang, prefix, page.kind === 'notFound' || page.kind === 'tooMany' ? page.kind : 'error');
  });
}

export type CheckoutSteps = ReturnType<typeof checkoutSteps>;

export function checkoutSteps(deps: AppDeps) {
  const { pool, config } = deps;
  const prefix = checkoutPrefix(config.checkoutBaseUrl);
  const network = config.tonNetwork;
  /** The Mini App's root: BotFather's URL is {checkout_base_url}/tg (checkoutTelegram.ts). */
  const telegramRoot = `${prefix}/tg`;
  const present = (row: CheckoutRow) => presentCheckout(row, config.checkoutBaseUrl);
  const langOf = (ctx: KassaContext): Lang => negotiateLang(ctx.query.lang, ctx.get('Accept-Language') || undefined);

  /** The payment id of the JSON view's routes (`…/v1/checkout/payments/:paymentId/…`). */
  const byId = validate({ params: checkoutParams });
  /** The JSON answers of a payment are never cached (errors of a malformed id aside, as before). */
  const uncached: Middleware<KassaState> = async (ctx, next) => {
    noStore(ctx);
    await next();
  };

  // ---- The hosted checkout page. Errors here are pages too (404, 429, 5xx), in the customer's language.
  const htmlErrors = checkoutErrorPages(prefix, langOf);

  // ---- Framed by <kassa-pay> (src/checkout/embed.ts): `?embed=ORIGIN` names the shop's page; when
  // the store lists that origin, the page may be framed by it alone (frame-ancestors, no
  // X-Frame-Options) and its embed.js posts to it. Otherwise the page is served as always, unframeable.
  const embedOrigin = async (ctx: KassaContext, storeId: string): Promise<string | null> => {
    const asked = typeof ctx.query.embed === 'string' ? ctx.query.embed : '';
    return asked === '' ? null : listedOrigin(asked, await storeEmbedOrigins(pool, storeId));
  };
  const frameFor = (ctx: KassaContext, origin: string | null) => {
    if (origin === null) return;
    ctx.remove('X-Frame-Options');
    ctx.set('Content-Security-Policy', framedBy(ctx.response.get('Content-Security-Policy') as string, origin));
  };
  /** Only the Mini App's pages may be framed, and only by Telegram's web clients (TELEGRAM_WEB_ORIGINS, in their CSP). */
  const framedByTelegram = (ctx: KassaContext) => ctx.remove('X-Frame-Options');

  /** The payment's page; in the Telegram Mini App (`telegram`), framable by Telegram's web clients and with its script. */
  async function paymentPage(ctx: KassaContext, raw: string, telegram: boolean): Promise<void> {
    const lang = langOf(ctx);
    const row = isUuid(raw) ? await findCheckoutRow(pool, raw.toLowerCase(), network) : null;
    if (!row) {
      htmlHeaders(ctx, lang);
      ctx.status = 404;
      ctx.body = renderMessagePage(lang, prefix, 'notFound');
      return;
    }
    const now = deps.now();
    const open = now.getTime() < row.expires_at.getTime();
    const offers = row.status === 'created' && open ? await methodOffers(pool, row, network, now, ratePolicy(config)) : null;
    const links = row.status === 'pending' ? transferLinks(row, network) : null;
    const qr = links ? await qrSvg(links.ton, t(lang, 'qrLabel')) : null;
    const styleNonce = crypto.randomBytes(16).toString('base64');
    const embed = telegram ? null : await embedOrigin(ctx, row.store_id);
    htmlHeaders(ctx, lang, paymentPageCsp(row, styleNonce, telegram ? telegramCsp(config.telegramWebOrigins) : {}));
    if (telegram) framedByTelegram(ctx);
    else frameFor(ctx, embed);
    ctx.status = 200;
    const telegramPage = telegram
      ? {
          returnUrl: telegramPaymentUrl(row.telegram_mini_app, row.id),
          initDataEndpoint: `${prefix}/v1/checkout/payments/${row.id}/telegram`,
          bootPath: telegramRoot,
          lang,
        }
      : null;
    ctx.body = renderPaymentPage({
      lang,
      prefix,
      network,
      row,
      view: present(row),
      offers,
      links,
      qr,
      now,
      styleNonce,
      telegram: telegramPage,
      embed: embed !== null,
    });
  }

  /** A subscription's portal (its token in the path); in the Mini App (`telegram`), framable by Telegram's web clients. */
  async function portalPage(ctx: KassaContext, telegram: boolean, refused?: 'not_allowed'): Promise<void> {
    const lang = langOf(ctx);
    const token = ctx.params.token ?? '';
    const view = await portalView(pool, token, deps.now());
    noStore(ctx);
    htmlHeaders(ctx, lang, telegram ? strictCsp(telegramCsp(config.telegramWebOrigins)) : PAGE_CSP);
    if (!view) {
      ctx.status = 404;
      ctx.body = renderPortalNotFoundPage(lang, prefix);
      return;
    }
    if (telegram) framedByTelegram(ctx);
    ctx.status = refused ? 403 : 200;
    ctx.body = renderPortalPage({
      lang,
      prefix,
      token,
      view,
      langAsked: typeof ctx.query.lang === 'string',
      ...(refused ? { refused } : {}),
      telegram: telegram ? { returnUrl: null, bootPath: telegramRoot, lang } : null,
    });
  }

  return {
    prefix,
    network,
    telegramRoot,
    present,
    langOf,
    byId,
    uncached,
    htmlErrors,
    embedOrigin,
    frameFor,
    framedByTelegram,
    paymentPage,
    portalPage,
  };
}
