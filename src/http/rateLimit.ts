// Token-bucket rate limiting (docs/API.md, Rate limits): `rate` requests per second sustained, bursts up to
// twice that. Buckets live in this process's memory; several API processes each keep their own.
import type { Middleware } from 'koa';
import { rateLimited } from '../errors.ts';

interface Bucket {
  tokens: number;
  updatedMs: number;
}

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again (`RateLimit-Reset`, docs/API.md). */
  resetSeconds: number;
  /** Seconds until the next request is allowed (`Retry-After` of a 429). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /** Takes one token for `key`; returns the headers to send and whether the request may go on. */
  take(key: string, nowMs: number): RateLimitResult;
  /** Gives back a token taken for `key` (up to the bucket's capacity). */
  refund(key: string): void;
}

export function createRateLimiter(ratePerSecond: number, maxKeys = 100_000): RateLimiter {
  const capacity = ratePerSecond * 2;
  const buckets = new Map<string, Bucket>();
  const refill = (bucket: Bucket, nowMs: number) => {
    bucket.tokens = Math.min(capacity, bucket.tokens + ((nowMs - bucket.updatedMs) / 1000) * ratePerSecond);
    bucket.updatedMs = nowMs;
  };
  const result = (tokens: number, allowed: boolean): RateLimitResult => ({
    allowed,
    limit: capacity,
    remaining: Math.max(0, Math.floor(tokens)),
    resetSeconds: Math.max(1, Math.ceil((capacity - tokens) / ratePerSecond)),
    retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / ratePerSecond)),
  });
  return {
    refund(key) {
      const bucket = buckets.get(key);
      if (bucket) bucket.tokens = Math.min(capacity, bucket.tokens + 1);
    },
    take(key, nowMs) {
      let bucket = buckets.get(key);
      if (!bucket) {
        if (buckets.size >= maxKeys) {
          // Forget the oldest keys first (Map keeps insertion order); a full bucket is the default.
          const oldest = buckets.keys().next().value;
          if (oldest !== undefined) buckets.delete(oldest);
        }
        bucket = { tokens: capacity, updatedMs: nowMs };
        buckets.set(key, bucket);
      } else {
        refill(bucket, nowMs);
      }
      const allowed = bucket.tokens >= 1;
      if (allowed) bucket.tokens -= 1;
      return result(bucket.tokens, allowed);
    },
  };
}

/** Middleware limiting by the key `keyOf` returns; a rate of 0 turns it off. */
export function rateLimit(ratePerSecond: number, keyOf: (ctx: Parameters<Middleware>[0]) => string, now: () => Date): Middleware {
  if (ratePerSecond <= 0) return (_ctx, next) => next();
  const limiter = createRateLimiter(ratePerSecond);
  return async (ctx, next) => {
    const result = limiter.take(keyOf(ctx), now().getTime());
    ctx.set('RateLimit-Limit', String(result.limit));
    ctx.set('RateLimit-Remaining', String(result.remaining));
    ctx.set('RateLimit-Reset', String(result.resetSeconds));
    if (!result.allowed) throw rateLimited(result.retryAfterSeconds);
    await next();
  };
}
