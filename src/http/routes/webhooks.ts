// The webhook delivery log of a payment, and redelivery (docs/API.md, the webhook-deliveries and redeliver extensions).
//   GET  /v1/payments/{id}/webhook-deliveries → 200 {"data": [delivery]}, oldest first
//   POST /v1/payments/{id}/webhook/redeliver  → 202 delivery (queued; it is signed afresh when sent)
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { idempotencyKey, idempotent } from '../../idempotency.ts';
import { paymentNotFound } from '../../errors.ts';
import { deliveriesOfStorePayment, presentDelivery, redeliverWebhook } from '../../webhooks/deliveries.ts';
import type { AppDeps, KassaState } from '../context.ts';
import type { Guards } from '../middleware.ts';
import { cancelPaymentSchema } from '../schemas/payments.schema.ts';
import { validateBody } from '../validate.ts';
import { paymentIdParam } from './payments.ts';

/** The redeliver request takes no body, or `{}` (the same schema as cancel). */
const redeliverSchema = cancelPaymentSchema;

export function webhookRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards): void {
  const { pool } = deps;

  const list: Middleware<KassaState> = async (ctx) => {
    const deliveries = await deliveriesOfStorePayment(pool, ctx.state.storeId!, paymentIdParam(ctx.params.id));
    if (deliveries === null) throw paymentNotFound();
    ctx.body = { data: deliveries.map(presentDelivery) };
  };

  const redeliver: Middleware<KassaState> = async (ctx) => {
    const paymentId = paymentIdParam(ctx.params.id);
    const body = validateBody<Record<string, never>>(redeliverSchema, ctx.request.body);
    const storeId = ctx.state.storeId!;
    const now = deps.now();
    const outcome = await idempotent(
      pool,
      { storeId, endpoint: `POST /v1/payments/${paymentId}/webhook/redeliver`, key: idempotencyKey(ctx.get('X-Idempotency-Key')), body, now },
      async (tx) => ({ status: 202, body: presentDelivery(await redeliverWebhook(tx, storeId, paymentId, now)), paymentId }),
    );
    ctx.status = outcome.status;
    ctx.type = 'application/json';
    if (outcome.replayed) ctx.set('Idempotent-Replayed', 'true');
    ctx.body = outcome.body;
  };

  router.get('/v1/payments/:id/webhook-deliveries', guards.merchant, list);
  router.post('/v1/payments/:id/webhook/redeliver', guards.merchant, redeliver);
}
