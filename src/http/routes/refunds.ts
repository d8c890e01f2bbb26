// Refunds of a payment (issue 12) and its balance (issue 25): guards → validate → the payment is the store's → validate the
// body → the command (in `idempotent`) → presenter.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { recordAudit, tokenActor } from '../../dashboard/audit.ts';
import { presentList } from '../../presenters/list.ts';
import { presentBalance } from '../../presenters/balance.ts';
import { presentRefund } from '../../presenters/refund.ts';
import { depositMoney, outgoingOfPayment } from '../../treasury/outgoing.ts';
import { createRefund, listRefunds, refundBalance } from '../../treasury/refunds.ts';
import { createJettonWalletLookup, ownApiUrl } from '../../checkout/jettonWallets.ts';
import { ratePolicy } from '../../rates/rates.ts';
import { storeRefundGas } from '../../treasury/gas.ts';
import type { AppDeps, KassaState, OfStorePayment } from '../context.ts';
import { idempotency } from '../idempotent.ts';
import type { Guards } from '../guards.ts';
import { needs } from '../scope.ts';
import { validate } from '../validate.ts';
import { type CreateRefundBody, createRefundSchema, type PaymentParams, paymentParams } from './refunds.schema.ts';

export function refundRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards): void {
  const { pool, config } = deps;
  const idempotent = idempotency(deps);
  const jettonWallets = createJettonWalletLookup(config, pool);

  type Payment = OfStorePayment<{ params: PaymentParams }>;
  const create = idempotent<OfStorePayment<{ params: PaymentParams; body: CreateRefundBody }>>('POST /v1/payments/:id/refunds', async (tx, ctx, now) => {
    const { payment, body, merchant } = ctx.state;
    const origin = ownApiUrl(ctx.req.socket);
    const refund = await createRefund(
      tx,
      config.tonNetwork,
      payment,
      body,
      now,
      ratePolicy(config),
      (raw) => jettonWallets.ownerOf(raw, origin),
      (master, owner) => jettonWallets.walletOf(master, owner, origin),
    );
    // The store's audit log has the API's refunds too, beside the dashboard's (actor: the token's jti), in the refund's transaction.
    await recordAudit(
      tx,
      tokenActor(merchant.token.jti, ctx.ip || null, ctx.get('user-agent') || null),
      {
        storeId: merchant.storeId,
        action: 'refund.create',
        subject: payment.id,
        detail: { refund: refund.id, coin: refund.coin_symbol, amount: refund.amount, address: body.address, from: refund.source, via: 'api' },
      },
      now,
    );
    return { status: 201, body: presentRefund(refund, config.tonNetwork), paymentId: payment.id };
  });

  const list: Middleware<Payment> = async (ctx) => {
    ctx.body = presentList((await listRefunds(pool, ctx.state.payment.id)).map((row) => presentRefund(row, config.tonNetwork)));
  };

  router.post(
    '/v1/payments/:id/refunds',
    guards.merchant,
    needs('change'),
    guards.storeLimit,
    validate({ params: paymentParams }),
    // Another store's payment is 404 whatever the body says (it reveals nothing about the body's rules).
    guards.storePayment,
    validate({ body: createRefundSchema }),
    create,
  );
  router.get('/v1/payments/:id/refunds', guards.merchant, needs('read'), guards.storeLimit, validate({ params: paymentParams }), guards.storePayment, list);

  // The payment's money per coin (deposit_money), what refunds may take (the sale inside its window) and its sweeps beside its refunds.
  const balance: Middleware<Payment> = async (ctx) => {
    const id = ctx.state.payment.id;
    ctx.body = presentBalance(
      id,
      await depositMoney(pool, id),
      await outgoingOfPayment(pool, id, 'sweep'),
      await storeRefundGas(pool, ctx.state.merchant.storeId),
      await refundBalance(pool, id, deps.now()),
    );
  };
  router.get('/v1/payments/:id/balance', guards.merchant, needs('read'), guards.storeLimit, validate({ params: paymentParams }), guards.storePayment, balance);
}
