// The steps that guard a route, named first on its line: who may call it (then what it needs of the
// token: http/scope.ts), then the rate limit it spends from; and, for a route of one payment, that
// the payment is the caller's store's.
import type { Middleware } from 'koa';
import { paymentNotFound } from '../errors.ts';
import { findStorePayment } from '../payments/view.ts';
import { requireStore } from './bearer.ts';
import type { AppDeps, Authenticated, KassaState } from './context.ts';
import { createRateLimiter, createSharedRateLimiter, rateLimit } from './rateLimit.ts';

/**
 * The steps that guard a route, named on its line: who may call it, then the rate limit it
 * spends from, e.g. `router.get('/v1/payments', guards.merchant, needs('read'), guards.storeLimit, …)`.
 */
export interface Guards {
  /** Merchant API: the bearer token of a store (sets ctx.state.merchant; handlers read it as `Authenticated<…>`). */
  merchant: Middleware<KassaState>;
  /**
   * The same, the token's database check made by the route's first statement (`requireStore`'s
   * `inline`): for retrieve, status and create, whose one read makes it (a round trip fewer).
   */
  merchantInline: Middleware<KassaState>;
  /** The store's rate limit (after `merchant` or `merchantInline`, and the route's `needs(…)`): RateLimit-* headers, 429 with Retry-After. */
  storeLimit: Middleware<KassaState>;
  /** Public checkout endpoints: the client address's rate limit. */
  clientLimit: Middleware<KassaState>;
  /**
   * After `merchant` and `validate({ params: paymentParams })`: the path's payment (`:id`) is the
   * caller's store's — else 404 payment_not_found, whatever else the request says — and is put on
   * ctx.state.payment (handlers read it as `OfStorePayment<…>`).
   */
  storePayment: Middleware<KassaState>;
}

/** One set of guards (and so one set of rate-limit buckets) per app. */
export function createGuards(deps: AppDeps): Guards {
  // With deps.rateLimitStore, one counter per key for every API process of the deployment.
  const store = deps.rateLimitStore;
  const storeLimit = rateLimit(deps.config.rateLimitPerStore, (ctx) => `store:${(ctx.state as Authenticated).merchant.storeId}`, deps.now, store);
  const clientLimit = rateLimit(deps.config.rateLimitPerClient, (ctx) => `client:${ctx.ip}`, deps.now, store);
  // One failure budget per client for both bearer guards.
  const perClient = deps.config.rateLimitPerClient;
  const failures = perClient > 0 ? (store ? createSharedRateLimiter(perClient, store) : createRateLimiter(perClient)) : null;
  const storePayment: Middleware<Authenticated<{ params: { id: string } }>> = async (ctx, next) => {
    const payment = await findStorePayment(deps.pool, ctx.state.merchant.storeId, ctx.state.params.id, ctx.state.tokenCheck);
    if (!payment) throw paymentNotFound();
    ctx.state.payment = payment;
    await next();
  };
  return {
    merchant: requireStore(deps, { failures }),
    merchantInline: requireStore(deps, { failures, inline: true }),
    storeLimit: storeLimit as Middleware<KassaState>,
    clientLimit: clientLimit as Middleware<KassaState>,
    storePayment: storePayment as Middleware<KassaState>,
  };
}
