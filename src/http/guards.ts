// The steps that guard a route, named first on its line: who may call it, then the rate limit it spends from.
import type { Middleware } from 'koa';
import type { AppDeps, KassaState } from './context.ts';
import { requireStore } from './bearer.ts';
import { createRateLimiter, createSharedRateLimiter, rateLimit } from './rateLimit.ts';

/**
 * The steps that guard a route, named on its line: who may call it, then the rate limit it
 * spends from, e.g. `router.get('/v1/payments', guards.merchant, guards.storeLimit, …)`.
 */
export interface Guards {
  /** Merchant API: the bearer token of a store (sets ctx.state.storeId). */
  merchant: Middleware<KassaState>;
  /** The same, the token's database check made by the route in its own statement (`requireStore`'s `inline`). */
  merchantInline: Middleware<KassaState>;
  /** The store's rate limit (after `merchant`/`merchantInline`): RateLimit-* headers, 429 with Retry-After. */
  storeLimit: Middleware<KassaState>;
  /** Public checkout endpoints: the client address's rate limit. */
  clientLimit: Middleware<KassaState>;
}

/** One set of guards (and so one set of rate-limit buckets) per app. */
export function createGuards(deps: AppDeps): Guards {
  // With deps.rateLimitStore, one counter per key for every API process of the deployment.
  const store = deps.rateLimitStore;
  const storeLimit = rateLimit(deps.config.rateLimitPerStore, (ctx) => `store:${(ctx.state as KassaState).storeId}`, deps.now, store);
  const clientLimit = rateLimit(deps.config.rateLimitPerClient, (ctx) => `client:${ctx.ip}`, deps.now, store);
  // One failure budget per client for both merchant guards.
  const perClient = deps.config.rateLimitPerClient;
  const failures = perClient > 0 ? (store ? createSharedRateLimiter(perClient, store, { refundable: true }) : createRateLimiter(perClient)) : null;
  return {
    merchant: requireStore(deps, { failures }),
    merchantInline: requireStore(deps, { failures, inline: true }),
    storeLimit: storeLimit as Middleware<KassaState>,
    clientLimit: clientLimit as Middleware<KassaState>,
  };
}
