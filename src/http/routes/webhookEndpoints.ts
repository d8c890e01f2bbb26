// A store's webhook endpoints (docs/API.md, Store webhook endpoints; CONTRACT §11).
//   POST   /v1/webhook-endpoints                                      → 201 endpoint
//   GET    /v1/webhook-endpoints                                      → 200 {"data": [endpoint]}, oldest first
//   DELETE /v1/webhook-endpoints/{id}                                 → 200 {"id", "deleted": true}
//   POST   /v1/webhook-endpoints/{id}/test                            → 202 delivery (a ping)
//   GET    /v1/webhook-endpoints/{id}/deliveries                      → 200 {"data": [delivery]}, newest first, the last 100
//   POST   /v1/webhook-endpoints/{id}/deliveries/{deliveryId}/redeliver → 202 delivery (the same event again)
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { KassaError, unusableUrl } from '../../errors.ts';
import { presentEndpointDelivery } from '../../presenters/delivery.ts';
import { presentList } from '../../presenters/list.ts';
import { presentEndpoint } from '../../presenters/webhookEndpoint.ts';
import { listEndpointDeliveries } from '../../webhooks/deliveries.ts';
import {
  createEndpoint,
  deleteEndpoint,
  type EndpointRow,
  endpointUrlProblem,
  findEndpoint,
  listEndpoints,
  redeliverToEndpoint,
  sendPing,
} from '../../webhooks/endpoints.ts';
import type { AppDeps, Authenticated, KassaState } from '../context.ts';
import type { Guards } from '../guards.ts';
import { needs } from '../scope.ts';
import { validate } from '../validate.ts';
import {
  type CreateEndpointBody,
  createEndpointSchema,
  type EmptyBody,
  emptyBodySchema,
  type EndpointDeliveryParams,
  endpointDeliveryParams,
  type EndpointParams,
  endpointParams,
} from './webhookEndpoints.schema.ts';

/** How many deliveries GET …/deliveries answers, newest first. */
const DELIVERIES_SHOWN = 100;

type OfEndpoint<In extends object> = Authenticated<In> & { endpoint: EndpointRow };

export function webhookEndpointRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards): void {
  const { pool } = deps;

  /** The url must be a public HTTPS URL (the rules of a payment's webhookURL). */
  const publicUrl: Middleware<Authenticated<{ body: CreateEndpointBody }>> = async (ctx, next) => {
    const problem = endpointUrlProblem(ctx.state.body.url, deps.config.webhookAllowInsecure);
    if (problem !== null) throw unusableUrl('invalid_endpoint_url', 'url', problem);
    await next();
  };

  /** The path's endpoint is the caller's store's (else 404 webhook_endpoint_not_found), put on ctx.state.endpoint. */
  const storeEndpoint: Middleware<OfEndpoint<{ params: EndpointParams }>> = async (ctx, next) => {
    const endpoint = await findEndpoint(pool, ctx.state.merchant.storeId, ctx.state.params.id);
    if (endpoint === null) throw new KassaError('webhook_endpoint_not_found', { param: 'id' });
    ctx.state.endpoint = endpoint;
    await next();
  };

  const create: Middleware<Authenticated<{ body: CreateEndpointBody }>> = async (ctx) => {
    const { url, events } = ctx.state.body;
    const endpoint = await pool.transaction((tx) => createEndpoint(tx, ctx.state.merchant.storeId, { url, events }, deps.now()));
    if (endpoint === null) throw new KassaError('too_many_webhook_endpoints');
    ctx.status = 201;
    ctx.body = presentEndpoint(endpoint);
  };

  const list: Middleware<Authenticated> = async (ctx) => {
    ctx.body = presentList((await listEndpoints(pool, ctx.state.merchant.storeId)).map(presentEndpoint));
  };

  const remove: Middleware<OfEndpoint<{ params: EndpointParams }>> = async (ctx) => {
    if (!(await deleteEndpoint(pool, ctx.state.merchant.storeId, ctx.state.endpoint.id))) throw new KassaError('webhook_endpoint_not_found', { param: 'id' });
    ctx.body = { id: ctx.state.endpoint.id, deleted: true };
  };

  const test: Middleware<OfEndpoint<{ params: EndpointParams; body: EmptyBody }>> = async (ctx) => {
    const delivery = await pool.transaction((tx) => sendPing(tx, ctx.state.endpoint, deps.now()));
    ctx.status = 202;
    ctx.body = presentEndpointDelivery(delivery);
  };

  const deliveries: Middleware<OfEndpoint<{ params: EndpointParams }>> = async (ctx) => {
    ctx.body = presentList((await listEndpointDeliveries(pool, ctx.state.endpoint.id, DELIVERIES_SHOWN)).map(presentEndpointDelivery));
  };

  const redeliver: Middleware<OfEndpoint<{ params: EndpointDeliveryParams; body: EmptyBody }>> = async (ctx) => {
    const delivery = await pool.transaction((tx) => redeliverToEndpoint(tx, ctx.state.endpoint, ctx.state.params.deliveryId, deps.now()));
    if (delivery === null) throw new KassaError('webhook_delivery_not_found', { param: 'deliveryID' });
    ctx.status = 202;
    ctx.body = presentEndpointDelivery(delivery);
  };

  const E = '/v1/webhook-endpoints';
  router.post(E, guards.merchant, needs('change'), guards.storeLimit, validate({ body: createEndpointSchema }), publicUrl, create);
  router.get(E, guards.merchant, needs('read'), guards.storeLimit, list);
  router.delete(`${E}/:id`, guards.merchant, needs('change'), guards.storeLimit, validate({ params: endpointParams }), storeEndpoint, remove);
  router.post(
    `${E}/:id/test`,
    guards.merchant,
    needs('change'),
    guards.storeLimit,
    validate({ params: endpointParams, body: emptyBodySchema }),
    storeEndpoint,
    test,
  );
  router.get(`${E}/:id/deliveries`, guards.merchant, needs('read'), guards.storeLimit, validate({ params: endpointParams }), storeEndpoint, deliveries);
  router.post(
    `${E}/:id/deliveries/:deliveryId/redeliver`,
    guards.merchant,
    needs('change'),
    guards.storeLimit,
    validate({ params: endpointDeliveryParams, body: emptyBodySchema }),
    storeEndpoint,
    redeliver,
  );
}
