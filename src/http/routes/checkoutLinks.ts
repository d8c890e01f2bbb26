// A payment link's page ({checkout_base_url}/l/{id}, docs/API.md, Payment links). A visit (GET,
// HEAD: a person, a chat app's link preview, a crawler) shows the link's page and makes nothing; the
// page's button (an open amount's form) POSTs to the same URL, and that request makes one payment
// and sends the customer to its checkout. The rule — the link's state, the visitor's open payment
// reused, the typed amount, the payment made under a lock on the link — is the command
// paymentLinks/visitLink.ts `visitLink`; this route maps the request to it (the path's id under its
// schema, the visitor's cookie, the form's amount) and its outcome to a page, a redirect and the
// cookie. The per-client limit bounds the rest.
import type Router from '@koa/router';
import type { Middleware, ParameterizedContext } from 'koa';
import { koaBody } from 'koa-body';
import { renderLinkMessagePage, renderLinkPage } from '../../checkout/linkPage.ts';
import { KassaError } from '../../errors.ts';
import { visitLink } from '../../paymentLinks/visitLink.ts';
import type { AppDeps, KassaContext, KassaState, Validated } from '../context.ts';
import { readCookie } from '../cookies.ts';
import type { Guards } from '../guards.ts';
import { validate } from '../validate.ts';
import { type LinkPageParams, linkPageParams } from './checkout.schema.ts';
import { type CheckoutSteps, htmlHeaders, noStore } from './checkoutSteps.ts';

/** The visitor's open payment of a payment link: its id, in a cookie scoped to the link's path. */
const LINK_COOKIE = 'kassa_link_payment';

/** A payment link's page, under the checkout's prefix (its POST reads a form, not JSON: app.ts). */
const linkPagePath = (prefix: string): string => `${prefix}/l/:linkId`;

/** True for a payment link's page: the JSON body reader leaves its form to the route. */
export const isLinkPagePath = (prefix: string, path: string): boolean => path.startsWith(`${prefix}/l/`) && !path.slice(prefix.length + 3).includes('/');

export function checkoutLinkRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards, steps: CheckoutSteps): void {
  const { pool, config } = deps;
  const { prefix, langOf, htmlErrors, embedOrigin, frameFor } = steps;
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
  /** No such link (its id malformed, or none has it): the link's own not-found page, in the customer's language. */
  const linkNotFound: Middleware<KassaState> = async (ctx, next) => {
    try {
      await next();
    } catch (caught) {
      if (!(caught instanceof KassaError) || caught.code !== 'payment_link_not_found') throw caught;
      const lang = langOf(ctx);
      htmlHeaders(ctx, lang);
      ctx.status = 404;
      ctx.body = renderLinkMessagePage(lang, prefix, 'not_found');
    }
  };
  const params = validate({ params: linkPageParams });

  const linkRoute = async (ctx: ParameterizedContext<Validated<{ params: LinkPageParams }>> & KassaContext) => {
    const lang = langOf(ctx);
    const now = deps.now();
    const body = ctx.method === 'POST' ? ((ctx.request as { body?: Record<string, unknown> }).body ?? {}) : null;
    const visit = await visitLink(
      pool,
      config,
      {
        linkId: ctx.state.params.linkId,
        heldPaymentId: readCookie(ctx.get('Cookie'), LINK_COOKIE),
        pay: body === null ? null : { typed: typeof body.amount === 'string' ? body.amount.trim() : '', lang },
      },
      now,
    );
    const { link } = visit;
    const embed = await embedOrigin(ctx, link.store_id);
    const framed = (status: number, page: string) => {
      htmlHeaders(ctx, lang);
      ctx.status = status;
      ctx.body = page;
      frameFor(ctx, embed);
    };
    const toCheckout = (paymentId: string) => {
      noStore(ctx);
      const query = new URLSearchParams();
      if (typeof ctx.query.lang === 'string') query.set('lang', lang);
      if (embed !== null) query.set('embed', embed);
      ctx.redirect(`${prefix}/${paymentId}${query.size > 0 ? `?${query.toString()}` : ''}`);
      ctx.status = 303;
    };
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
    switch (visit.outcome) {
      case 'closed':
        return framed(visit.state === 'full' ? 409 : 410, renderLinkMessagePage(lang, prefix, visit.state, embed !== null));
      case 'reused':
        return toCheckout(visit.paymentId);
      case 'shown': {
        noStore(ctx);
        const typed = link.amount === null && typeof ctx.query.amount === 'string' ? ctx.query.amount.trim() : undefined;
        return framed(200, renderLinkPage({ ...form, ...(typed !== undefined ? { typed } : {}) }));
      }
      case 'refused':
        return framed(400, renderLinkPage({ ...form, typed: visit.typed, problem: visit.problem }));
      case 'created': {
        const maxAge = Math.max(0, Math.floor((visit.expiresAt.getTime() - now.getTime()) / 1000));
        const attributes = [`Path=${prefix}/l/${link.id}`, 'HttpOnly', 'SameSite=Lax', ...(secureCookie ? ['Secure'] : []), `Max-Age=${maxAge}`];
        ctx.append('Set-Cookie', `${LINK_COOKIE}=${visit.paymentId}; ${attributes.join('; ')}`);
        return toCheckout(visit.paymentId);
      }
    }
  };
  router.get(linkPagePath(prefix), htmlErrors, guards.clientLimit, linkNotFound, params, linkRoute as Middleware<KassaState>);
  router.post(linkPagePath(prefix), htmlErrors, guards.clientLimit, linkForm, linkNotFound, params, linkRoute as Middleware<KassaState>);
}
