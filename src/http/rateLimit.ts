// Rate limiting (docs/API.md, Rate limits): `rate` requests per second sustained, bursts up to twice
// that. A deployment's API processes share one counter per key in PostgreSQL (rate-limiter-flexible's
// PostgreSQL store, table rate_limits: 2 × rate requests per 2-second window), so two processes do not
// double the limit; a process whose database does not answer counts in its own memory meanwhile.
// Without a shared store (an app made in a test) the buckets are this process's own token buckets.
import type { Middleware } from 'koa';
import type pg from 'pg';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
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
  take(key: string, nowMs: number): Promise<RateLimitResult>;
  /** Gives back a token taken for `key` (up to the bucket's capacity). */
  refund(key: string): Promise<void>;
}

/** This process's own token buckets (the clock is the caller's `nowMs`). */
export function createRateLimiter(ratePerSecond: number, maxKeys = 100_000): RateLimiter {
  const local = createLocalRateLimiter(ratePerSecond, maxKeys);
  return {
    take: async (key, nowMs) => local.take(key, nowMs),
    refund: async (key) => local.refund(key),
  };
}

/** The window of the shared counters: 2 × rate requests per WINDOW_SECONDS (rate per second sustained, bursts of 2 × rate). */
const WINDOW_SECONDS = 2;

/**
 * The deployment's shared counters for `ratePerSecond` (rate-limiter-flexible on `store`, a pg pool
 * of the database every API process uses); when the database fails, an in-memory limiter of the
 * same size answers. A key over its limit is refused from this process's memory for the rest of its
 * window (no database round trip per refused request) — except with `refundable` (the
 * failed-authentication budget, whose successes give their point back): there a refused request
 * gives its point back too, so that a burst of good tokens arriving at once leaves the budget as it was.
 */
export function createSharedRateLimiter(ratePerSecond: number, store: pg.Pool, options: { refundable?: boolean } = {}): RateLimiter {
  const points = ratePerSecond * WINDOW_SECONDS;
  // Processes configured with another rate count in counters of their own (`kassa:<points>:<key>`).
  const keyPrefix = `kassa:${points}`;
  const limiter = new RateLimiterPostgres({
    storeClient: store,
    storeType: 'pool',
    tableName: 'rate_limits',
    tableCreated: true,
    keyPrefix,
    points,
    duration: WINDOW_SECONDS,
    ...(options.refundable ? {} : { inMemoryBlockOnConsumed: points + 1 }),
    clearExpiredByTimeout: true,
    insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration: WINDOW_SECONDS }),
  });
  const result = (answer: RateLimiterRes, allowed: boolean): RateLimitResult => {
    const seconds = Math.max(1, Math.ceil(answer.msBeforeNext / 1000));
    return { allowed, limit: points, remaining: Math.max(0, answer.remainingPoints), resetSeconds: seconds, retryAfterSeconds: seconds };
  };
  return {
    async take(key) {
      try {
        return result(await limiter.consume(key, 1), true);
      } catch (refusal) {
        if (!(refusal instanceof RateLimiterRes)) throw refusal;
        if (options.refundable) await limiter.reward(key, 1).catch(() => {});
        return result(refusal, false);
      }
    },
    async refund(key) {
      await limiter.reward(key, 1).catch(() => {});
    },
  };
}

function createLocalRateLimiter(ratePerSecond: number, maxKeys: number): { take(key: string, nowMs: number): RateLimitResult; refund(key: string): void } {
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

/**
 * Middleware limiting by the key `keyOf` returns; a rate of 0 turns it off. `store`: the shared
 * counters' database (createSharedRateLimiter); without it, this process's own buckets.
 */
export function rateLimit(ratePerSecond: number, keyOf: (ctx: Parameters<Middleware>[0]) => string, now: () => Date, store?: pg.Pool): Middleware {
  if (ratePerSecond <= 0) return (_ctx, next) => next();
  const limiter = store ? createSharedRateLimiter(ratePerSecond, store) : createRateLimiter(ratePerSecond);
  return async (ctx, next) => {
    const result = await limiter.take(keyOf(ctx), now().getTime());
    ctx.set('RateLimit-Limit', String(result.limit));
    ctx.set('RateLimit-Remaining', String(result.remaining));
    ctx.set('RateLimit-Reset', String(result.resetSeconds));
    if (!result.allowed) throw rateLimited(result.retryAfterSeconds);
    await next();
  };
}
