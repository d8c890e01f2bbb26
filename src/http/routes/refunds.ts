// Refunds of a payment (issue 12): guards → validate → command (in `idempotent`) → presenter.
import type Router from '@koa/router';
import { idempotencyKey, idempotent } from '../../idempotency.ts';
import { paymentNotFound } from '../../errors.ts';
import { findPaymentView } from '../../payments/present.ts';
import { createRefund, listRefunds } from '../../treasury/refunds.ts';
import type { AppDeps, KassaState } from '../context.ts';
import type { Guards } from '../middleware.ts';
import { createRefundSchema, type CreateRefundBody } from '../schemas/payments.schema.ts';
import { validateBody } from '../validate.ts';
import { paymentIdParam } from './payments.ts';

export function refundRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards): void {
  const { pool, config } = deps;

  router.post('/v1/payments/:id/refunds', guards.merchant, async (ctx) => {
    const paymentId = paymentIdParam(ctx.params.id);
    const storeId = ctx.state.storeId!;
    // Another store's payment is 404 whatever the body says (it reveals nothing about the body's rules).
    if (!(await findPaymentView(pool, paymentId, { storeId }))) throw paymentNotFound();
    const body = validateBody<CreateRefundBody>(createRefundSchema, ctx.request.body);
    const now = deps.now();
    const key = idempotencyKey(ctx.get('X-Idempotency-Key'));
    const outcome = await idempotent(pool, { storeId, endpoint: `POST /v1/payments/${paymentId}/refunds`, key, body, now }, async (tx) => ({
      status: 201,
      body: await createRefund(tx, config.tonNetwork, storeId, paymentId, body, now),
      paymentId,
    }));
    ctx.status = outcome.status;
    ctx.type = 'application/json';
    if (outcome.replayed) ctx.set('Idempotent-Replayed', 'true');
    ctx.body = outcome.body;
  });

  router.get('/v1/payments/:id/refunds', guards.merchant, async (ctx) => {
    const refunds = await listRefunds(pool, ctx.state.storeId!, paymentIdParam(ctx.params.id));
    if (!refunds) throw paymentNotFound();
    ctx.body = { data: refunds };
  });
}
