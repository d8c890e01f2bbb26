import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { listStoreMethods } from '../../payments/methods.ts';
import { presentList } from '../../presenters/list.ts';
import { presentMethod } from '../../presenters/method.ts';
import type { AppDeps, Authenticated, KassaState } from '../context.ts';
import type { Guards } from '../guards.ts';
import { needs } from '../scope.ts';

/** GET /v1/payment-methods and GET /v1/payments/methods: the store's enabled methods (docs/API.md). */
export function paymentMethodRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards): void {
  const list: Middleware<Authenticated> = async (ctx) => {
    const methods = await listStoreMethods(deps.pool, ctx.state.merchant.storeId);
    ctx.body = presentList(methods.map((method) => presentMethod(method, deps.config.checkoutBaseUrl)));
  };
  router.get('/v1/payment-methods', guards.merchant, needs('read'), guards.storeLimit, list);
  router.get('/v1/payments/methods', guards.merchant, needs('read'), guards.storeLimit, list);
}
