// The dashboard's Payment links pages (issue 30): every member sees the store's links, a link's page
// (its URL, QR code and payments) and a one-off payment's page to share; owners make links and
// one-off payments and switch links off — each through the API's own command, its request checked by
// the API's own schema (dashboard.schema.ts linkForm, oneOffPaymentForm, then CreatePaymentLinkRequest
// or CreatePaymentRequest once the form's choices are the API's fields), audited (dashboard/paymentLinks.ts).
// The pipeline is the dashboard router's (dashboardSteps.ts).
import { qrSvg } from '../../checkout/walletLinks.ts';
import {
  createDashboardLink,
  createDashboardPayment,
  deactivateDashboardLink,
  LINK_EXPIRIES,
  linkPayments,
  PAYMENT_EXPIRIES,
} from '../../dashboard/paymentLinks.ts';
import { LINK_NOTICES, type LinkFormState, type LinkNotice, linkPage, linksPage, paymentSharePage } from '../../dashboard/paymentLinksPage.ts';
import { dashboardPaths } from '../../dashboard/paths.ts';
import { KassaError } from '../../errors.ts';
import { findStorePaymentLink, listPaymentLinks, paymentLinkUrl } from '../../paymentLinks/links.ts';
import { listStoreMethods } from '../../payments/methods.ts';
import { FIAT_CURRENCIES } from '../../rates/fiat.ts';
import type { AppDeps } from '../context.ts';
import { bodyCheck } from '../validate.ts';
import { emptyForm, type LinkForm, linkForm, type OneOffPaymentForm, oneOffPaymentForm } from './dashboard.schema.ts';
import { type DashboardCtx, type DashboardRouter, type OfStore, uuidParams } from './dashboardSteps.ts';
import { createPaymentLinkSchema } from './paymentLinks.schema.ts';
import { createPaymentSchema } from './payments.schema.ts';

type Ctx = DashboardCtx & { state: OfStore };

/** How many links the list shows, newest first. */
const LINKS_SHOWN = 100;

export function dashboardLinkRoutes(dash: DashboardRouter, deps: AppDeps): void {
  const { pool, config } = deps;
  const { root, page, redirect, notFound } = dash.steps;
  const paths = dashboardPaths(root);
  const linkRequest = bodyCheck(createPaymentLinkSchema);
  const paymentRequest = bodyCheck(createPaymentSchema);
  const manage = { can: 'links.manage' } as const;

  /** The currencies the forms offer: the store's coins, then the fiat currencies Kassa prices. */
  const currencies = async (storeId: string) => [...new Set([...(await listStoreMethods(pool, storeId)).map((m) => m.coin_symbol), ...FIAT_CURRENCIES])];

  const showLinks = async (ctx: Ctx, status: number, extra: { linkForm?: LinkFormState; paymentForm?: LinkFormState; notice?: string } = {}) => {
    const store = ctx.state.store;
    const [listed, offered] = await Promise.all([listPaymentLinks(pool, store.id, { limit: LINKS_SHOWN }), currencies(store.id)]);
    page(ctx, status, linksPage({ root, viewer: ctx.state.viewer, store, links: listed?.data ?? [], currencies: offered, now: deps.now(), ...extra }));
  };
  /** What was typed, to show the form again. */
  const typed = (ctx: DashboardCtx): Record<string, string> =>
    Object.fromEntries(Object.entries((ctx.request.body ?? {}) as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'));
  /** A refusal's param as the form's field (the API's expiresAt and ttl are the form's `expires`). */
  const field = (param: string | undefined, fields: readonly string[]) => {
    const name = param === 'expiresAt' || param === 'ttl' ? 'expires' : (param?.split(/[.[]/)[0] ?? 'form');
    return fields.includes(name) ? name : 'form';
  };
  const LINK_FIELDS = ['amount', 'currency', 'description', 'maxPayments', 'expires'];
  const PAYMENT_FIELDS = ['amount', 'currency', 'description', 'expires'];

  dash.store.get('/links', async (ctx) => {
    const notice =
      typeof ctx.query.notice === 'string' && Object.hasOwn(LINK_NOTICES, ctx.query.notice) ? LINK_NOTICES[ctx.query.notice as LinkNotice] : undefined;
    await showLinks(ctx, 200, notice ? { notice } : {});
  });

  dash.store.post<{ form: LinkForm }>(
    '/links',
    {
      ...manage,
      form: linkForm,
      refused: (ctx, problems) => showLinks(ctx, 400, { linkForm: { values: typed(ctx), problems: reword(problems, LINK_FIELDS) } }),
    },
    async (ctx) => {
      const { amount, currency, description, maxPayments, expires = 'never' } = ctx.state.form;
      const now = deps.now();
      const seconds = LINK_EXPIRIES[expires];
      const request = {
        currency,
        ...(amount !== undefined ? { amount } : {}),
        ...(description !== undefined ? { description } : {}),
        ...(maxPayments !== undefined ? { maxPayments: Number(maxPayments) } : {}),
        ...(seconds !== null ? { expiresAt: new Date(now.getTime() + seconds * 1000).toISOString() } : {}),
      };
      let linkId: string;
      try {
        linkRequest(request);
        const { expiresAt, ...rest } = request;
        const link = await createDashboardLink(
          pool,
          config,
          ctx.state.actor,
          ctx.state.store.id,
          { ...rest, ...(expiresAt !== undefined ? { expiresAt: new Date(expiresAt) } : {}) },
          now,
        );
        linkId = link.id;
      } catch (error) {
        if (!(error instanceof KassaError)) throw error;
        return showLinks(ctx, 400, { linkForm: { values: typed(ctx), problems: { [field(error.param, LINK_FIELDS)]: error.message } } });
      }
      redirect(ctx, paths.store(ctx.state.store.id).link(linkId, 'notice=link_created'));
    },
  );

  dash.store.post<{ form: OneOffPaymentForm }>(
    '/links/payments',
    {
      ...manage,
      form: oneOffPaymentForm,
      refused: (ctx, problems) => showLinks(ctx, 400, { paymentForm: { values: typed(ctx), problems: reword(problems, PAYMENT_FIELDS) } }),
    },
    async (ctx) => {
      const { amount, currency, description, expires = '1h' } = ctx.state.form;
      const request = { amount, currency, ...(description !== undefined ? { description } : {}) };
      let paymentId: string;
      try {
        // The API's own check of the rest; the time is one the form offers (days beyond the API's 12 hours).
        paymentRequest(request);
        paymentId = await createDashboardPayment(pool, config, ctx.state.actor, ctx.state.store.id, { ...request, ttl: PAYMENT_EXPIRIES[expires] }, deps.now());
      } catch (error) {
        if (!(error instanceof KassaError)) throw error;
        return showLinks(ctx, 400, { paymentForm: { values: typed(ctx), problems: { [field(error.param, PAYMENT_FIELDS)]: error.message } } });
      }
      redirect(ctx, paths.store(ctx.state.store.id).sharePayment(paymentId));
    },
  );

  const linkParams = { params: uuidParams('linkId') };
  dash.store.get<{ params: { linkId: string } }>('/links/:linkId', linkParams, async (ctx) => {
    const store = ctx.state.store;
    const link = await findStorePaymentLink(pool, store.id, ctx.state.params.linkId);
    if (!link) return notFound(ctx);
    const url = paymentLinkUrl(config.checkoutBaseUrl, link.id);
    const [payments, qr] = await Promise.all([linkPayments(pool, store.id, link.id), qrSvg(url, 'QR code of the link')]);
    const notice = typeof ctx.query.notice === 'string' && Object.hasOwn(LINK_NOTICES, ctx.query.notice) ? LINK_NOTICES[ctx.query.notice as LinkNotice] : null;
    page(ctx, 200, linkPage({ root, viewer: ctx.state.viewer, store, link, url, qr, payments, now: deps.now(), notice }));
  });

  dash.store.post<{ params: { linkId: string } }>('/links/:linkId/deactivate', { ...manage, ...linkParams, form: emptyForm }, async (ctx) => {
    const link = await deactivateDashboardLink(pool, ctx.state.actor, ctx.state.store.id, ctx.state.params.linkId, deps.now());
    if (!link) return notFound(ctx);
    redirect(ctx, paths.store(ctx.state.store.id).link(link.id, 'notice=link_deactivated'));
  });

  // A one-off payment to share: its checkout's URL, a copy button and a QR code.
  dash.payment.get('/share', async (ctx) => {
    const payment = ctx.state.payment;
    const url = `${config.checkoutBaseUrl}/${payment.id}`;
    page(
      ctx,
      200,
      paymentSharePage({
        root,
        viewer: ctx.state.viewer,
        store: ctx.state.store,
        payment: {
          id: payment.id,
          amount: payment.amount,
          currency: payment.currency,
          description: payment.description,
          status: payment.status,
          expiresAt: payment.expires_at,
        },
        url,
        qr: await qrSvg(url, 'QR code of the payment’s link'),
      }),
    );
  });
}

/** A schema's problems keyed by the form's fields (anything else is the form's own line). */
function reword(problems: Record<string, string>, fields: readonly string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(problems).map(([name, text]) => [fields.includes(name) ? name : 'form', text]));
}
