// A store's payment links (docs/API.md, Payment links; CONTRACT §11).
//   POST /v1/payment-links                 → 201 link
//   GET  /v1/payment-links                 → 200 {"data": [link], "has_more"}, newest first (limit, starting_after)
//   GET  /v1/payment-links/{id}            → 200 link (with how many payments completed and what they came to)
//   POST /v1/payment-links/{id}/deactivate → 200 link
// The customer's side, {checkout_base_url}/l/{id}, is in checkoutLinks.ts (the command: paymentLinks/visitLink.ts).
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { KassaError } from '../../errors.ts';
import { createPaymentLink, deactivatePaymentLink, findStorePaymentLink, listPaymentLinks } from '../../paymentLinks/links.ts';
import { presentPage } from '../../presenters/list.ts';
import { presentPaymentLink } from '../../presenters/paymentLink.ts';
import type { AppDeps, Authenticated, KassaState } from '../context.ts';
import type { Guards } from '../guards.ts';
import { needs } from '../scope.ts';
import { parseRfc3339, validate } from '../validate.ts';
import {
  type CreatePaymentLinkBody,
  createPaymentLinkSchema,
  type EmptyBody,
  emptyBodySchema,
  type ListPaymentLinksQuery,
  listPaymentLinksQuery,
  type PaymentLinkParams,
  paymentLinkParams,
} from './paymentLinks.schema.ts';
import { publicUrls } from './payments.ts';

export function paymentLinkRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards): void {
  const { pool, config } = deps;
  const present = (row: Parameters<typeof presentPaymentLink>[0]) => presentPaymentLink(row, config, deps.now());
  // returnURL: a public HTTPS URL, as a payment's.
  const checkUrls = publicUrls(config.webhookAllowInsecure) as Middleware<Authenticated<{ body: CreatePaymentLinkBody }>>;
  const notFound = () => new KassaError('payment_link_not_found', { param: 'id' });

  const create: Middleware<Authenticated<{ body: CreatePaymentLinkBody }>> = async (ctx) => {
    const { expiresAt, ...rest } = ctx.state.body;
    const input = { ...rest, ...(expiresAt !== undefined ? { expiresAt: parseRfc3339(expiresAt)! } : {}) };
    const link = await pool.transaction((tx) => createPaymentLink(tx, config.tonNetwork, ctx.state.merchant.storeId, input, deps.now()));
    ctx.status = 201;
    ctx.body = present(link);
  };

  const list: Middleware<Authenticated<{ query: ListPaymentLinksQuery }>> = async (ctx) => {
    const { limit = '20', starting_after: startingAfter } = ctx.state.query;
    const page = await listPaymentLinks(pool, ctx.state.merchant.storeId, {
      limit: Number(limit),
      ...(startingAfter ? { startingAfter: startingAfter.toLowerCase() } : {}),
    });
    if (!page) throw new KassaError('invalid_starting_after', { param: 'starting_after' });
    ctx.body = presentPage(page.data.map(present), page.hasMore);
  };

  const retrieve: Middleware<Authenticated<{ params: PaymentLinkParams }>> = async (ctx) => {
    const link = await findStorePaymentLink(pool, ctx.state.merchant.storeId, ctx.state.params.id.toLowerCase());
    if (!link) throw notFound();
    ctx.body = present(link);
  };

  const deactivate: Middleware<Authenticated<{ params: PaymentLinkParams; body: EmptyBody }>> = async (ctx) => {
    const link = await deactivatePaymentLink(pool, ctx.state.merchant.storeId, ctx.state.params.id.toLowerCase(), deps.now());
    if (!link) throw notFound();
    ctx.body = present(link);
  };

  const L = '/v1/payment-links';
  router.post(L, guards.merchant, needs('change'), guards.storeLimit, validate({ body: createPaymentLinkSchema }), checkUrls, create);
  router.get(L, guards.merchant, needs('read'), guards.storeLimit, validate({ query: listPaymentLinksQuery }), list);
  router.get(`${L}/:id`, guards.merchant, needs('read'), guards.storeLimit, validate({ params: paymentLinkParams }), retrieve);
  router.post(
    `${L}/:id/deactivate`,
    guards.merchant,
    needs('change'),
    guards.storeLimit,
    validate({ params: paymentLinkParams, body: emptyBodySchema }),
    deactivate,
  );
}
