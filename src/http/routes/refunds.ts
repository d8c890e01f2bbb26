// Refunds of a payment (issue 12) and its balance (issue 25): guards → validate → the payment is the store's → validate the
// body → the command (in `idempotent`) → presenter.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { paymentNotFound } from '../../errors.ts';
import { findPaymentView } from '../../payments/view.ts';
import { presentList } from '../../presenters/list.ts';
import { presentBalance } from '../../presenters/balance.ts';
import { presentRefund } from '../../presenters/refund.ts';
import { depositMoney, outgoingOfPayment } from '../../treasury/outgoing.ts';
import { createRefund, listRefunds } from '../../treasury/refunds.ts';
import { ratePolicy } from '../../rates/rates.ts';
import { storeRefundGas } from '../../treasury/gas.ts';
import type { AppDeps, KassaState, Validated } from '../context.ts';
import { idempotency } from '../idempotent.ts';
import type { Guards } from '../middleware.ts';
import { needs } from '../scope.ts';
import { validate } from '../validate.ts';
import { type CreateRefundBody, createRefundSchema, type PaymentParams, paymentParams } from './refunds.schema.ts';

export function refundRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards): void {
  const { pool, config } = deps;
  const idempotent = idempotency(deps);

  type ById = Validated<{ params: PaymentParams }>;
  // Another store's payment is 404 whatever the body says (it reveals nothing about the body's rules).
  const storePayment: Middleware<ById> = async (ctx, next) => {
    if (!(await findPaymentView(pool, ctx.state.params.id, { storeId: ctx.state.storeId! }))) throw paymentNotFound();
    await next();
  };
  const create = idempotent<Validated<{ params: PaymentParams; body: CreateRefundBody }>>('POST /v1/payments/:id/refunds', async (tx, ctx, now) => ({
    status: 201,
    body: presentRefund(await createRefund(tx, config.tonNetwork, ctx.state.storeId!, ctx.state.params.id, ctx.state.body, now, ratePolicy(config))),
    paymentId: ctx.state.params.id,
  }));

  const list: Middleware<ById> = async (ctx) => {
    const refunds = await listRefunds(pool, ctx.state.storeId!, ctx.state.params.id);
    if (!refunds) throw paymentNotFound();
    ctx.body = presentList(refunds.map(presentRefund));
  };

  router.post(
    '/v1/payments/:id/refunds',
    guards.merchant,
    needs('change'),
    guards.storeLimit,
    validate({ params: paymentParams }),
    storePayment,
    validate({ body: createRefundSchema }),
    create,
  );
  router.get('/v1/payments/:id/refunds', guards.merchant, needs('read'), guards.storeLimit, validate({ params: paymentParams }), list);

  // The payment's money per coin (deposit_money) and its sweeps beside its refunds.
  const balance: Middleware<ById> = async (ctx) => {
    const id = ctx.state.params.id;
    ctx.body = presentBalance(id, await depositMoney(pool, id), await outgoingOfPayment(pool, id, 'sweep'), await storeRefundGas(pool, ctx.state.storeId!));
  };
  router.get('/v1/payments/:id/balance', guards.merchant, needs('read'), guards.storeLimit, validate({ params: paymentParams }), storePayment, balance);
}
