// The webhook delivery log of a payment, and redelivery (docs/API.md, the webhook-deliveries and redeliver extensions).
//   GET  /v1/payments/{id}/webhook-deliveries → 200 {"data": [delivery]}, oldest first
//   POST /v1/payments/{id}/webhook/redeliver  → 202 delivery (queued; it is signed afresh when sent)
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { presentDelivery } from '../../presenters/delivery.ts';
import { presentList } from '../../presenters/list.ts';
import { redeliverWebhook } from '../../payments/redeliver.ts';
import { listWebhookDeliveries } from '../../webhooks/deliveries.ts';
import type { AppDeps, KassaState, OfStorePayment } from '../context.ts';
import { idempotency } from '../idempotent.ts';
import type { Guards } from '../guards.ts';
import { needs } from '../scope.ts';
import { validate } from '../validate.ts';
import { type PaymentParams, paymentParams, type RedeliverBody, redeliverSchema } from './webhooks.schema.ts';

export function webhookRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards): void {
  const { pool } = deps;
  const idempotent = idempotency(deps);

  const list: Middleware<OfStorePayment<{ params: PaymentParams }>> = async (ctx) => {
    ctx.body = presentList((await listWebhookDeliveries(pool, ctx.state.payment.id)).map(presentDelivery));
  };

  const redeliver = idempotent<OfStorePayment<{ params: PaymentParams; body: RedeliverBody }>>(
    'POST /v1/payments/:id/webhook/redeliver',
    async (tx, ctx, now) => ({
      status: 202,
      body: presentDelivery(await redeliverWebhook(tx, ctx.state.payment, now)),
      paymentId: ctx.state.payment.id,
    }),
  );

  router.get(
    '/v1/payments/:id/webhook-deliveries',
    guards.merchant,
    needs('read'),
    guards.storeLimit,
    validate({ params: paymentParams }),
    guards.storePayment,
    list,
  );
  router.post(
    '/v1/payments/:id/webhook/redeliver',
    guards.merchant,
    needs('change'),
    guards.storeLimit,
    validate({ params: paymentParams, body: redeliverSchema }),
    guards.storePayment,
    redeliver,
  );
}
