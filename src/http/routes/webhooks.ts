// The webhook delivery log of a payment, and redelivery (docs/API.md, the webhook-deliveries and redeliver extensions).
//   GET  /v1/payments/{id}/webhook-deliveries → 200 {"data": [delivery]}, oldest first
//   POST /v1/payments/{id}/webhook/redeliver  → 202 delivery (queued; it is signed afresh when sent)
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { paymentNotFound } from '../../errors.ts';
import { presentDelivery } from '../../presenters/delivery.ts';
import { presentList } from '../../presenters/list.ts';
import { deliveriesOfStorePayment, redeliverWebhook } from '../../webhooks/deliveries.ts';
import type { AppDeps, KassaState, Validated } from '../context.ts';
import { idempotency } from '../idempotent.ts';
import type { Guards } from '../middleware.ts';
import { needs } from '../scope.ts';
import { validate } from '../validate.ts';
import { type PaymentParams, paymentParams, type RedeliverBody, redeliverSchema } from './webhooks.schema.ts';

export function webhookRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards): void {
  const { pool } = deps;
  const idempotent = idempotency(deps);

  const list: Middleware<Validated<{ params: PaymentParams }>> = async (ctx) => {
    const deliveries = await deliveriesOfStorePayment(pool, ctx.state.storeId!, ctx.state.params.id);
    if (deliveries === null) throw paymentNotFound();
    ctx.body = presentList(deliveries.map(presentDelivery));
  };

  const redeliver = idempotent<Validated<{ params: PaymentParams; body: RedeliverBody }>>('POST /v1/payments/:id/webhook/redeliver', async (tx, ctx, now) => ({
    status: 202,
    body: presentDelivery(await redeliverWebhook(tx, ctx.state.storeId!, ctx.state.params.id, now)),
    paymentId: ctx.state.params.id,
  }));

  router.get('/v1/payments/:id/webhook-deliveries', guards.merchant, needs('read'), guards.storeLimit, validate({ params: paymentParams }), list);
  router.post(
    '/v1/payments/:id/webhook/redeliver',
    guards.merchant,
    needs('change'),
    guards.storeLimit,
    validate({ params: paymentParams, body: redeliverSchema }),
    redeliver,
  );
}
