// Public endpoints under {checkout_base_url}: the hosted checkout page, its public JSON view, the
// customer's method choice, live status (server-sent events), the webhook key set and the page's
// own assets. No token: the unguessable payment id is the capability (docs/API.md, The hosted checkout), and nothing of
// the merchant beyond what the page shows leaves through here.
import crypto from 'node:crypto';
import { Address } from '@ton/core';
import type Router from '@koa/router';
import type { Middleware, ParameterizedContext } from 'koa';
import { sql, z } from '../../db/pool.ts';
import { ChainApiError } from '../../chain/apiError.ts';
import { parseAddress } from '../../chain/addresses.ts';
import { isUuid } from '../../uuid.ts';
import { coinNotOnNetwork, KassaError, paymentNotFound, rateLimited, tooManyStreams } from '../../errors.ts';
import type { AppDeps, KassaContext, KassaState, Validated } from '../context.ts';
import { errorPages } from '../errorEnvelope.ts';
import type { Guards } from '../guards.ts';
import { validate } from '../validate.ts';
import {
  checkoutParams,
  type SelectMethodBody,
  selectMethodSchema,
  type TelegramInitDataBody,
  telegramInitDataSchema,
  type TonConnectQuery,
  tonConnectQuery,
} from './checkout.schema.ts';
import { selectMethod } from '../../payments/commands.ts';
import { activeSigningKey, publishedKeys } from '../../webhooks/keys.ts';
import { coinSvg, KASSA_ICON_PNG, walletSvg } from '../../checkout/assets.ts';
import { createJettonWalletLookup, ownApiUrl } from '../../checkout/jettonWallets.ts';
import { negotiateLang, t, type Lang } from '../../checkout/i18n.ts';
import { qrSvg, transferLinks } from '../../checkout/links.ts';
import { createPaymentFeed, EVENTS_FULL_RETRY_AFTER_SECONDS, EVENTS_HEARTBEAT_MS, EVENTS_MAX_LIFETIME_MS, EVENTS_MAX_PER_CLIENT } from '../../checkout/live.ts';
import { createLiveStreams, EVENT_STREAM_HEADERS } from '../../checkout/liveStreams.ts';
import { paymentPageCsp, renderMessagePage, renderPaymentPage } from '../../checkout/page.ts';
import { tonConnectManifest, tonConnectManifestPath, tonConnectRequest, tonConnectWallets, tonConnectWalletsPath } from '../../checkout/tonconnect.ts';
import { STATIC_ASSETS } from '../../checkout/static.ts';
import { PAGE_CSP, strictCsp } from '../../web/csp.ts';
import { renderTelegramBootPage, renderTelegramRefusalPage } from '../../checkout/page.ts';
import { checkLaunch } from '../../telegram/launch.ts';
import { telegramCsp } from '../../checkout/telegram.ts';
import { recordTelegramPayer } from '../../telegram/payer.ts';
import { telegramPaymentUrl } from '../../telegram/links.ts';
import { serveAssets } from '../../web/assets.ts';
import { pageHeaders } from '../../web/page.ts';
import { findCheckoutRow, findCheckoutRows, methodOffers, type CheckoutRow } from '../../checkout/view.ts';
import { ratePolicy } from '../../rates/rates.ts';
import { presentCheckout } from '../../presenters/checkout.ts';
import { presentKeySet } from '../../presenters/keys.ts';
import { isFinal } from '../../payments/transitions.ts';
import {
  createLinkPayment,
  findPaymentLink,
  type LinkState,
  linkState,
  openAmountProblem,
  openLinkPayments,
  placeState,
  readTypedAmount,
  reusablePayment,
} from '../../paymentLinks/links.ts';
import { renderLinkMessagePage, renderLinkPage } from '../../checkout/linkPage.ts';
import { renderPortalNotFoundPage, renderPortalPage } from '../../checkout/portalPage.ts';
import { presentSubscription } from '../../presenters/subscription.ts';
import { PORTAL_ACTOR, PORTAL_START_PREFIX, portalCancel, portalPayment, portalView } from '../../subscriptions/portal.ts';
import type { SubscriptionRow } from '../../subscriptions/records.ts';
import { checkPortalLaunch } from '../../telegram/launch.ts';
import { koaBody } from 'koa-body';
import { recordAudit } from '../../dashboard/audit.ts';
import { readCookie } from '../cookies.ts';
import { framedBy, listedOrigin, storeEmbedOrigins } from '../../checkout/embed.ts';
import { paymentReads } from './embed.ts';

/** The visitor's open payment of a payment link: its id, in a cookie scoped to the link's path. */
const LINK_COOKIE = 'kassa_link_payment';

/** A payment link's page, under the checkout's prefix (its POST reads a form, not JSON: app.ts). */
export const linkPagePath = (prefix: string): string => `${prefix}/l/:linkId`;

/** True for a payment link's page: the JSON body reader leaves its form to the route. */
export const isLinkPagePath = (prefix: string, path: string): boolean => path.startsWith(`${prefix}/l/`) && !path.slice(prefix.length + 3).includes('/');

/** A subscription's portal's forms ({prefix}/s/{token}/pay, …/cancel; and {prefix}/tg/s/…): the JSON body reader leaves them to the route (they carry no fields). */
export const isPortalPath = (prefix: string, path: string): boolean => path.startsWith(`${prefix}/s/`) || path.startsWith(`${prefix}/tg/s/`);

/** The path part of CHECKOUT_BASE_URL ('' when it is a host of its own). */
export function checkoutPrefix(checkoutBaseUrl: string): string {
  return new URL(checkoutBaseUrl).pathname.replace(/\/+$/, '');
}

function noStore(ctx: KassaContext): void {
  ctx.set('Cache-Control', 'no-store');
}

function htmlHeaders(ctx: KassaContext, lang: Lang, csp = PAGE_CSP): void {
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

export function checkoutRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards): void {
  const { pool, config } = deps;
  const prefix = checkoutPrefix(config.checkoutBaseUrl);
  const network = config.tonNetwork;
  const present = (row: CheckoutRow) => presentCheckout(row, config.checkoutBaseUrl);
  const langOf = (ctx: KassaContext): Lang => negotiateLang(ctx.query.lang, ctx.get('Accept-Language') || undefined);

  router.get(`${prefix}/v1/webhook/keys`, guards.clientLimit, async (ctx) => {
    const now = deps.now();
    await activeSigningKey(deps.pool, now);
    const keys = await publishedKeys(deps.pool, now);
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = presentKeySet(keys);
  });

  // ---- The page's assets: coin/chain badges, its stylesheet and script (static, not rate-limited).
  const symbols = async (table: 'coins' | 'chains'): Promise<Set<string>> =>
    new Set(await deps.pool.anyFirst(sql.type(z.object({ symbol: z.string() }))`select symbol from ${sql.identifier([table])}`));

  for (const kind of ['coins', 'chains'] as const) {
    router.get(`${prefix}/assets/${kind}/:file`, async (ctx, next) => {
      const match = /^([A-Za-z0-9]{1,16})\.svg$/.exec(ctx.params.file ?? '');
      if (!match || !(await symbols(kind)).has(match[1]!)) return next();
      ctx.type = 'image/svg+xml';
      ctx.set('Cache-Control', 'public, max-age=86400');
      ctx.body = coinSvg(match[1]!);
    });
  }

  // ---- TON Connect: the manifest wallets read (a stable URL), the wallets the page offers, their badges.
  router.get(tonConnectManifestPath(prefix), async (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.body = tonConnectManifest(config.checkoutBaseUrl);
  });
  router.get(tonConnectWalletsPath(prefix), async (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = tonConnectWallets(prefix);
  });
  router.get(`${prefix}/assets/wallets/:file`, async (ctx, next) => {
    const match = /^([a-z-]{1,32})\.svg$/.exec(ctx.params.file ?? '');
    const svg = match ? walletSvg(match[1]!) : null;
    if (!svg) return next();
    ctx.type = 'image/svg+xml';
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = svg;
  });
  router.get(`${prefix}/assets/kassa-icon.png`, async (ctx) => {
    ctx.type = 'image/png';
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.body = KASSA_ICON_PNG;
  });

  router.get(`${prefix}/assets/:file`, serveAssets(STATIC_ASSETS) as Middleware<KassaState>);

  // ---- Public JSON view (the page's polling fallback).
  type ById = Validated<{ params: { paymentId: string } }>;
  const byId = validate({ params: checkoutParams });
  /** The JSON answers of a payment are never cached (errors of a malformed id aside, as before). */
  const uncached: Middleware<KassaState> = async (ctx, next) => {
    noStore(ctx);
    await next();
  };
  // <kassa-pay> reads the view and the stream from a shop's page: CORS for the origins its store lists (embed.ts).
  const embedCors = paymentReads(deps);
  router.get(`${prefix}/v1/checkout/payments/:paymentId`, guards.clientLimit, byId, uncached, embedCors, async (ctx: ParameterizedContext<ById>) => {
    const id = ctx.state.params.paymentId;
    const row = await findCheckoutRow(pool, id, network);
    if (!row) throw paymentNotFound();
    ctx.body = present(row);
  });

  // ---- The customer chooses a method: created → pending, once. Errors are the envelope.
  type Choice = Validated<{ params: { paymentId: string }; body: SelectMethodBody }>;
  const choice = validate({ body: selectMethodSchema });
  router.post(`${prefix}/v1/checkout/payments/:paymentId/method`, guards.clientLimit, byId, uncached, choice, async (ctx: ParameterizedContext<Choice>) => {
    const id = ctx.state.params.paymentId;
    const body = ctx.state.body;
    await selectMethod(pool, config, id, body.paymentMethodID.toLowerCase(), deps.now());
    const row = await findCheckoutRow(pool, id, network);
    if (!row) throw paymentNotFound();
    ctx.body = present(row);
  });

  // ---- The transfer a connected wallet is asked to sign (TON Connect sendTransaction), built here.
  const jettonWallets = createJettonWalletLookup(config, deps.pool);
  type TonConnect = Validated<{ params: { paymentId: string }; query: TonConnectQuery }>;
  const account = validate({ query: tonConnectQuery });
  router.get(
    `${prefix}/v1/checkout/payments/:paymentId/ton-connect`,
    guards.clientLimit,
    byId,
    uncached,
    account,
    async (ctx: ParameterizedContext<TonConnect>) => {
      const id = ctx.state.params.paymentId;
      const customer = parseAddress(ctx.state.query.account);
      if (customer?.workChain !== 0) throw new KassaError('invalid_address', { param: 'account' });
      const row = await findCheckoutRow(pool, id, network);
      if (!row) throw paymentNotFound();
      if (isFinal(row.status)) throw new KassaError('payment_not_open');
      const now = deps.now();
      if (now.getTime() >= row.expires_at.getTime()) throw new KassaError('payment_expired');
      if (row.status !== 'pending') throw new KassaError('method_not_selected');
      let customerJettonWallet: Address | null = null;
      if (row.coin_kind === 'jetton') {
        if (row.jetton_master === null) throw coinNotOnNetwork();
        try {
          customerJettonWallet = await jettonWallets.walletOf(Address.parseRaw(row.jetton_master), customer, ownApiUrl(ctx.req.socket));
        } catch (error) {
          if (!(error instanceof ChainApiError)) throw error;
          ctx.state.log.warn({ err: error }, 'jetton wallet lookup failed');
          throw new KassaError('chain_unavailable');
        }
      }
      const request = tonConnectRequest({ row, network, customer, customerJettonWallet, queryId: BigInt(now.getTime()) });
      if (!request) throw new KassaError('payment_not_open');
      ctx.body = request;
    },
  );

  // ---- Live status: server-sent events fed by one shared poller of the database.
  const feed = createPaymentFeed<CheckoutRow>({ load: (ids) => findCheckoutRows(pool, ids, network), log: deps.log });
  // Each stream holds a socket (a file descriptor) for up to EVENTS_MAX_LIFETIME_MS, so the process
  // caps their number (CHECKOUT_STREAMS_MAX) whatever the number of addresses they come from.
  const streams = createLiveStreams({
    perKey: EVENTS_MAX_PER_CLIENT,
    total: config.checkoutStreamsMax,
    lifetimeMs: EVENTS_MAX_LIFETIME_MS,
    heartbeatMs: EVENTS_HEARTBEAT_MS,
  });

  router.get(`${prefix}/v1/checkout/payments/:paymentId/events`, guards.clientLimit, byId, embedCors, async (ctx: ParameterizedContext<ById>) => {
    const id = ctx.state.params.paymentId;
    const row = await findCheckoutRow(pool, id, network);
    if (!row) throw paymentNotFound();
    const admission = streams.admit(ctx.ip);
    if (admission === 'key_full') throw rateLimited(30);
    if (admission === 'all_full') throw tooManyStreams(EVENTS_FULL_RETRY_AFTER_SECONDS);
    ctx.status = 200;
    ctx.set(EVENT_STREAM_HEADERS);
    if (ctx.method === 'HEAD') return;
    const stream = streams.open(ctx.ip, ctx.req, ctx.res);
    ctx.body = stream.body;
    if (stream.closed) return;

    let last = '';
    const send = (current: CheckoutRow) => {
      const json = JSON.stringify(present(current));
      if (json !== last) {
        last = json;
        stream.write(`event: payment\ndata: ${json}\n\n`);
      }
      // An ended payment changes no more: the page stops listening, and so do we.
      if (isFinal(current.status)) stream.close();
    };
    stream.write(`retry: 3000\n\n`);
    send(row);
    if (!stream.closed) stream.onClose(feed.subscribe(id, send));
  });

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

  // ---- A payment link ({checkout_base_url}/l/{id}, docs/API.md, Payment links). A visit (GET,
  // HEAD: a person, a chat app's link preview, a crawler) shows the link's page and makes nothing; the
  // page's button (an open amount's form) POSTs to the same URL, and that request makes one payment
  // through the API's create command, under a lock on the link (createLinkPayment: maxPayments holds),
  // and sends the customer to its checkout. A visit or a second press while the visitor's payment is
  // open goes back to it (the cookie holds its id, checked against the link); the per-client limit
  // bounds the rest.
  const secureCookie = new URL(config.checkoutBaseUrl).protocol === 'https:';
  /** The link's form: application/x-www-form-urlencoded, at most 4 KiB (app.ts leaves these paths to it). */
  const parseLinkForm = koaBody({
    urlencoded: true,
    json: false,
    text: false,
    multipart: false,
    formLimit: '4kb',
    encoding: 'utf-8',
  }) as unknown as Middleware<KassaState>;
  const linkForm: Middleware<KassaState> = async (ctx, next) => {
    try {
      await parseLinkForm(ctx, async () => undefined);
    } catch {
      ctx.request.body = { unreadable: true };
    }
    await next();
  };
  const linkRoute = async (ctx: KassaContext) => {
    const lang = langOf(ctx);
    const page = (status: number, body: string) => {
      htmlHeaders(ctx, lang);
      ctx.status = status;
      ctx.body = body;
    };
    const raw = ctx.params.linkId ?? '';
    const link = isUuid(raw) ? await findPaymentLink(pool, raw.toLowerCase()) : null;
    if (!link) return page(404, renderLinkMessagePage(lang, prefix, 'not_found'));
    const embed = await embedOrigin(ctx, link.store_id);
    const framed = (status: number, body: string) => {
      page(status, body);
      frameFor(ctx, embed);
    };
    const closed = (state: Exclude<LinkState, 'open'> | 'full') =>
      framed(state === 'full' ? 409 : 410, renderLinkMessagePage(lang, prefix, state, embed !== null));
    const now = deps.now();
    const state = linkState(link, now);
    if (state !== 'open') return closed(state);
    const toCheckout = (paymentId: string) => {
      noStore(ctx);
      const query = new URLSearchParams();
      if (typeof ctx.query.lang === 'string') query.set('lang', lang);
      if (embed !== null) query.set('embed', embed);
      ctx.redirect(`${prefix}/${paymentId}${query.size > 0 ? `?${query.toString()}` : ''}`);
      ctx.status = 303;
    };
    const held = readCookie(ctx.get('Cookie'), LINK_COOKIE);
    if (held !== null && isUuid(held) && (await reusablePayment(pool, link, held.toLowerCase(), now))) return toCheckout(held.toLowerCase());
    const form = {
      lang,
      prefix,
      linkId: link.id,
      storeName: link.store_name,
      currency: link.currency,
      description: link.description,
      amount: link.amount,
      min: link.min_amount,
      max: link.max_amount,
      langAsked: typeof ctx.query.lang === 'string',
      ...(embed !== null ? { embed } : {}),
    };
    if (ctx.method !== 'POST') {
      // Every place held by payments being paid: said now rather than after the press.
      if (placeState(link, await openLinkPayments(pool, link.id, now), now) === 'full') return closed('full');
      noStore(ctx);
      const typed = link.amount === null && typeof ctx.query.amount === 'string' ? ctx.query.amount.trim() : undefined;
      return framed(200, renderLinkPage({ ...form, ...(typed !== undefined ? { typed } : {}) }));
    }
    let amount = link.amount;
    if (amount === null) {
      const body = (ctx.request as { body?: Record<string, unknown> }).body ?? {};
      const typed = typeof body.amount === 'string' ? body.amount.trim() : '';
      const read = readTypedAmount(typed, lang);
      const problem = read === null ? 'invalid' : openAmountProblem(link, read);
      if (problem !== null) return framed(400, renderLinkPage({ ...form, typed, problem }));
      amount = read!;
    }
    let payment: Awaited<ReturnType<typeof createLinkPayment>>;
    try {
      payment = await pool.transaction((tx) => createLinkPayment(tx, config, link.id, amount, now));
    } catch (caught) {
      // An open amount with more decimals than the link's coin has (the create's own check).
      if (caught instanceof KassaError && caught.code === 'invalid_amount' && link.amount === null) {
        return framed(400, renderLinkPage({ ...form, typed: amount, problem: 'decimals' }));
      }
      throw caught;
    }
    if ('refused' in payment) return closed(payment.refused);
    const maxAge = Math.max(0, Math.floor((payment.expiresAt.getTime() - now.getTime()) / 1000));
    const attributes = [`Path=${prefix}/l/${link.id}`, 'HttpOnly', 'SameSite=Lax', ...(secureCookie ? ['Secure'] : []), `Max-Age=${maxAge}`];
    ctx.append('Set-Cookie', `${LINK_COOKIE}=${payment.id}; ${attributes.join('; ')}`);
    toCheckout(payment.id);
  };
  router.get(linkPagePath(prefix), htmlErrors, guards.clientLimit, linkRoute);
  router.post(linkPagePath(prefix), htmlErrors, guards.clientLimit, linkForm, linkRoute);

  // ---- The checkout as the store's Telegram Mini App (docs/API.md, Telegram Mini App). BotFather's
  // URL is {checkout_base_url}/tg: Telegram adds the launch (init data, theme, the payment id as the
  // start parameter) in the fragment, which the page's script reads and goes on to /tg/{id}. Only
  // these pages may be framed, and only by Telegram's web clients (TELEGRAM_WEB_ORIGINS).
  const telegramRoot = `${prefix}/tg`;
  const framedByTelegram = (ctx: KassaContext) => ctx.remove('X-Frame-Options');
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
    const telegramPage = (status: number, body: string) => {
      noStore(ctx);
      htmlHeaders(ctx, lang, strictCsp(telegramCsp(config.telegramWebOrigins)));
      framedByTelegram(ctx);
      ctx.status = status;
      ctx.body = body;
    };
    if (initData === undefined) {
      return telegramPage(200, renderTelegramBootPage({ returnUrl: null, bootPath: telegramRoot, lang, paymentId: id, checkoutPath: `${prefix}/${id}` }));
    }
    const launch = await checkLaunch(pool, id, initData, { publicKeyHex: config.telegramPublicKey, now: deps.now() });
    if (launch === 'other_bot') return telegramPage(403, renderTelegramRefusalPage({ returnUrl: null, bootPath: telegramRoot, lang }));
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

  // ---- A subscription's customer's portal ({checkout_base_url}/s/{token}; docs/API.md,
  // Subscriptions): the token is the capability. An unknown, mistyped or re-issued token is the same
  // 404 page. Its two forms POST: "pay" makes (or finds) the subscription's one open payment and sends
  // the customer to its checkout (TON Connect, QR, the Mini App as for any payment); "cancel" ends it
  // at the period's end when the plan allows. In the Telegram Mini App, launched with
  // startapp=s_<token>, the same page at {checkout_base_url}/tg/s/{token}, shown only for a launch
  // Telegram signed for the subscription's own store's bot naming this portal.
  const engine = { config, now: deps.now, present: (row: SubscriptionRow) => presentSubscription(row, config) };
  const portalPage = async (ctx: KassaContext, telegram: boolean, refused?: 'not_allowed') => {
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
  };
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
  router.get(`${telegramRoot}/s/:token`, htmlErrors, guards.clientLimit, async (ctx) => {
    const token = ctx.params.token ?? '';
    const initData = ctx.query.tgWebAppData;
    const lang = langOf(ctx);
    const telegramPage = (status: number, body: string) => {
      noStore(ctx);
      htmlHeaders(ctx, lang, strictCsp(telegramCsp(config.telegramWebOrigins)));
      framedByTelegram(ctx);
      ctx.status = status;
      ctx.body = body;
    };
    if (typeof initData !== 'string') {
      // Before the launch is checked: the boot page, which goes on with it (or to the ordinary portal outside Telegram).
      if (!/^[A-Za-z0-9_-]{32}$/.test(token)) return portalPage(ctx, false);
      return telegramPage(
        200,
        renderTelegramBootPage({ returnUrl: null, bootPath: telegramRoot, lang, portalToken: token, checkoutPath: `${prefix}/s/${token}` }),
      );
    }
    const view = await portalView(pool, token, deps.now());
    if (!view) return portalPage(ctx, false);
    const launch = await checkPortalLaunch(pool, view.row, initData, { publicKeyHex: config.telegramPublicKey, now: deps.now() });
    if (launch !== 'ok') return telegramPage(403, renderTelegramRefusalPage({ returnUrl: null, bootPath: telegramRoot, lang }));
    await portalPage(ctx, true);
  });

  router.get(`${prefix}/:paymentId`, htmlErrors, guards.clientLimit, async (ctx, next) => {
    const raw = ctx.params.paymentId ?? '';
    // With a checkout host of its own (no path), leave other top-level paths to their routes.
    if (!isUuid(raw) && prefix === '') return next();
    await paymentPage(ctx, raw, false);
  });

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
}
