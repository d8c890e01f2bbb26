// Unmatched money (CONTRACT §12): transfers into a treasury-settlement store's treasury that named no payment.
//   GET  /v1/unmatched-transfers?state=open|assigned|refunded|kept → 200 {"data": [unmatched transfer]}, newest first, the last 100
//   POST /v1/unmatched-transfers/{id}/assign {"paymentID"}        → 200 the unmatched transfer, assigned (booked on that payment; audited)
//   POST /v1/unmatched-transfers/{id}/keep {"note"}               → 200 the unmatched transfer, kept (booked on no payment; audited)
//   POST /v1/unmatched-transfers/{id}/refund {"address"?}         → 201 a treasury refund awaiting the signature (the transfer refunding; audited)
//   GET  /v1/unmatched-transfers/{id}/refunds                     → 200 {"data": [refund]}, its refunds, oldest first
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { recordAudit, tokenActor } from '../../dashboard/audit.ts';
import { createJettonWalletLookup, ownApiUrl } from '../../checkout/jettonWallets.ts';
import { assignUnmatched, keepUnmatchedTransfer, listUnmatched } from '../../payments/treasuryTransfers.ts';
import { createUnmatchedRefund, unmatchedRefunds } from '../../treasury/unmatchedRefunds.ts';
import { presentRefund } from '../../presenters/refund.ts';
import { presentList } from '../../presenters/list.ts';
import { subscriptionMoneyHooks } from '../../subscriptions/engine.ts';
import type { AppDeps, Authenticated, KassaState } from '../context.ts';
import type { Guards } from '../guards.ts';
import { needs } from '../scope.ts';
import { validate } from '../validate.ts';
import {
  type AssignUnmatchedBody,
  assignUnmatchedSchema,
  type KeepUnmatchedBody,
  keepUnmatchedSchema,
  type ListUnmatchedQuery,
  listUnmatchedQuery,
  type RefundUnmatchedBody,
  refundUnmatchedSchema,
  type UnmatchedParams,
  unmatchedParams,
} from './unmatchedTransfers.schema.ts';

export function unmatchedTransferRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards): void {
  const list: Middleware<Authenticated<{ query: ListUnmatchedQuery }>> = async (ctx) => {
    ctx.body = presentList(await listUnmatched(deps.pool, ctx.state.merchant.storeId, ctx.state.query.state ?? null));
  };
  // Booked on the payment, marked assigned, money.assigned and the audit row: one transaction.
  const assign: Middleware<Authenticated<{ params: UnmatchedParams; body: AssignUnmatchedBody }>> = async (ctx) => {
    const { merchant, params, body } = ctx.state;
    const now = deps.now();
    ctx.body = await deps.pool.transaction(async (tx) => {
      const assigned = await assignUnmatched(
        tx,
        merchant.storeId,
        params.id.toLowerCase(),
        body.paymentID.toLowerCase(),
        now,
        subscriptionMoneyHooks(deps.config.tonNetwork),
      );
      await recordAudit(
        tx,
        tokenActor(merchant.token.jti, ctx.ip || null, ctx.get('user-agent') || null),
        {
          storeId: merchant.storeId,
          action: 'unmatched.assign',
          subject: params.id.toLowerCase(),
          detail: {
            payment: body.paymentID.toLowerCase(),
            amount: assigned.transfer.amount,
            coin: assigned.transfer.coin,
            effect: assigned.effect,
            via: 'api',
          },
        },
        now,
      );
      return assigned.transfer;
    });
  };
  const keep: Middleware<Authenticated<{ params: UnmatchedParams; body: KeepUnmatchedBody }>> = async (ctx) => {
    const { merchant, params, body } = ctx.state;
    const now = deps.now();
    const id = params.id.toLowerCase();
    ctx.body = await deps.pool.transaction(async (tx) => {
      const kept = await keepUnmatchedTransfer(tx, merchant.storeId, id, body.note, now);
      await recordAudit(
        tx,
        tokenActor(merchant.token.jti, ctx.ip || null, ctx.get('user-agent') || null),
        { storeId: merchant.storeId, action: 'unmatched.keep', subject: id, detail: { note: body.note, amount: kept.amount, coin: kept.coin, via: 'api' } },
        now,
      );
      return kept;
    });
  };
  // The refund planned, the transfer refunding and the audit row: one transaction.
  const jettonWallets = createJettonWalletLookup(deps.config, deps.pool);
  const refund: Middleware<Authenticated<{ params: UnmatchedParams; body: RefundUnmatchedBody }>> = async (ctx) => {
    const { merchant, params, body } = ctx.state;
    const now = deps.now();
    const id = params.id.toLowerCase();
    const origin = ownApiUrl(ctx.req.socket);
    const row = await deps.pool.transaction(async (tx) => {
      const planned = await createUnmatchedRefund(tx, deps.config.tonNetwork, merchant.storeId, id, body.address, now, (master, owner) =>
        jettonWallets.walletOf(master, owner, origin),
      );
      await recordAudit(
        tx,
        tokenActor(merchant.token.jti, ctx.ip || null, ctx.get('user-agent') || null),
        {
          storeId: merchant.storeId,
          action: 'unmatched.refund',
          subject: id,
          detail: { refund: planned.id, coin: planned.coin_symbol, amount: planned.amount, address: planned.to_address_given, via: 'api' },
        },
        now,
      );
      return planned;
    });
    ctx.status = 201;
    ctx.body = presentRefund(row, deps.config.tonNetwork);
  };
  const refunds: Middleware<Authenticated<{ params: UnmatchedParams }>> = async (ctx) => {
    const rows = await unmatchedRefunds(deps.pool, ctx.state.merchant.storeId, ctx.state.params.id.toLowerCase());
    ctx.body = presentList(rows.map((row) => presentRefund(row, deps.config.tonNetwork)));
  };
  router.get('/v1/unmatched-transfers', guards.merchant, needs('read'), guards.storeLimit, validate({ query: listUnmatchedQuery }), list);
  router.post(
    '/v1/unmatched-transfers/:id/assign',
    guards.merchant,
    needs('change'),
    guards.storeLimit,
    validate({ params: unmatchedParams, body: assignUnmatchedSchema }),
    assign,
  );
  router.post(
    '/v1/unmatched-transfers/:id/keep',
    guards.merchant,
    needs('change'),
    guards.storeLimit,
    validate({ params: unmatchedParams, body: keepUnmatchedSchema }),
    keep,
  );
  router.post(
    '/v1/unmatched-transfers/:id/refund',
    guards.merchant,
    needs('change'),
    guards.storeLimit,
    validate({ params: unmatchedParams, body: refundUnmatchedSchema }),
    refund,
  );
  router.get('/v1/unmatched-transfers/:id/refunds', guards.merchant, needs('read'), guards.storeLimit, validate({ params: unmatchedParams }), refunds);
}
