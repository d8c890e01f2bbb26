// Public endpoints under {checkout_base_url}: the hosted checkout page, its public JSON view, the
// customer's method choice, the transfer TON Connect signs, live status (server-sent events), the
// webhook key set and the page's own assets. No token: the unguessable payment id is the capability
// (docs/API.md, The hosted checkout), and nothing of the merchant beyond what the page shows leaves
// through here. checkoutRoutes registers, after these and before the payment's page (which takes
// any one-segment path), its area files: a payment link's page (checkoutLinks.ts), the Telegram Mini
// App (checkoutTelegram.ts) and a subscription's portal (checkoutPortal.ts), each given the steps
// they share (checkoutSteps.ts).
import { Address } from '@ton/core';
import type Router from '@koa/router';
import type { Middleware, ParameterizedContext } from 'koa';
import { sql, z } from '../../db/pool.ts';
import { ChainApiError } from '../../chain/apiError.ts';
import { parseAddress } from '../../chain/addresses.ts';
import { isUuid } from '../../uuid.ts';
import { coinNotOnNetwork, KassaError, paymentNotFound, rateLimited, tooManyStreams } from '../../errors.ts';
import type { AppDeps, KassaState, Validated } from '../context.ts';
import type { Guards } from '../guards.ts';
import { validate } from '../validate.ts';
import { type SelectMethodBody, selectMethodSchema, type TonConnectQuery, tonConnectQuery } from './checkout.schema.ts';
import { selectMethod } from '../../payments/commands.ts';
import { activeSigningKey, publishedKeys } from '../../webhooks/keys.ts';
import { coinSvg, KASSA_ICON_PNG, walletSvg } from '../../checkout/assets.ts';
import { createJettonWalletLookup, ownApiUrl } from '../../checkout/jettonWallets.ts';
import { createPaymentFeed, EVENTS_FULL_RETRY_AFTER_SECONDS, EVENTS_HEARTBEAT_MS, EVENTS_MAX_LIFETIME_MS, EVENTS_MAX_PER_CLIENT } from '../../checkout/live.ts';
import { createLiveStreams, EVENT_STREAM_HEADERS } from '../../checkout/liveStreams.ts';
import { tonConnectManifest, tonConnectManifestPath, tonConnectRequest, tonConnectWallets, tonConnectWalletsPath } from '../../checkout/tonconnect.ts';
import { STATIC_ASSETS } from '../../checkout/static.ts';
import { serveAssets } from '../../web/assets.ts';
import { findCheckoutRow, findCheckoutRows, type CheckoutRow } from '../../checkout/view.ts';
import { presentKeySet } from '../../presenters/keys.ts';
import { isFinal } from '../../payments/transitions.ts';
import { paymentReads } from './embed.ts';
import { checkoutLinkRoutes } from './checkoutLinks.ts';
import { checkoutPortalRoutes } from './checkoutPortal.ts';
import { checkoutSteps } from './checkoutSteps.ts';
import { checkoutTelegramRoutes } from './checkoutTelegram.ts';

export function checkoutRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards): void {
  const { pool, config } = deps;
  const steps = checkoutSteps(deps);
  const { prefix, network, present, byId, uncached, htmlErrors, paymentPage } = steps;

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
  const feed = createPaymentFeed<CheckoutRow>({ name: 'checkout', load: (ids) => findCheckoutRows(pool, ids, network), log: deps.log });
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

  // ---- The pages of a payment link, the Telegram Mini App and a subscription's portal: their own files.
  checkoutLinkRoutes(router, deps, guards, steps);
  checkoutTelegramRoutes(router, deps, guards, steps);
  checkoutPortalRoutes(router, deps, guards, steps);

  // ---- The hosted checkout page (last: with a checkout host of its own, a top-level path it does not take goes on).
  router.get(`${prefix}/:paymentId`, htmlErrors, guards.clientLimit, async (ctx, next) => {
    const raw = ctx.params.paymentId ?? '';
    // With a checkout host of its own (no path), leave other top-level paths to their routes.
    if (!isUuid(raw) && prefix === '') return next();
    await paymentPage(ctx, raw, false);
  });
}
