// Unmatched money (CONTRACT §12): transfers into a treasury-settlement store's treasury that named no payment.
//   GET /v1/unmatched-transfers?state=open|assigned|refunded|kept → 200 {"data": [unmatched transfer]}, newest first, the last 100
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { listUnmatched } from '../../payments/treasuryTransfers.ts';
import { presentList } from '../../presenters/list.ts';
import type { AppDeps, Authenticated, KassaState } from '../context.ts';
import type { Guards } from '../guards.ts';
import { needs } from '../scope.ts';
import { validate } from '../validate.ts';
import { type ListUnmatchedQuery, listUnmatchedQuery } from './unmatchedTransfers.schema.ts';

export function unmatchedTransferRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards): void {
  const list: Middleware<Authenticated<{ query: ListUnmatchedQuery }>> = async (ctx) => {
    ctx.body = presentList(await listUnmatched(deps.pool, ctx.state.merchant.storeId, ctx.state.query.state ?? null));
  };
  router.get('/v1/unmatched-transfers', guards.merchant, needs('read'), guards.storeLimit, validate({ query: listUnmatchedQuery }), list);
}
