// Rate limiting (docs/API.md, Rate limits): `rate` requests per second sustained, bursts up to twice
// that. A deployment's API processes share one counter per key in PostgreSQL (table rate_limits:
// 2 × rate requests per 2-second window), so two processes do not double the limit; each process
// counts in memory and reconciles with the table a few times a second (createSharedRateLimiter), so a
// request costs no database round trip, and one whose database does not answer counts in its own
// memory meanwhile. Without a shared store (an app made in a test) the buckets are this process's own
// token buckets.
import type { Middleware } from 'koa';
import type pg from 'pg';
import { rateLimited } from '../errors.ts';
import { rateLimitsDecidedAlone } from '../metrics.ts';
import type { KassaState } from './context.ts';

interface Bucket {
  tokens: number;
  updatedMs: number;
}

interface RateLimitResult {
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
const WINDOW_MS = WINDOW_SECONDS * 1000;
/** How often a process sends what it counted to the shared counters (and reads them back) while it has requests to send. */
const SHARED_SYNC_MS = 200;
/** The longest a request waits for the shared counters (near its limit); then this process decides alone. */
const SHARED_WAIT_MS = 250;
/** After the shared counters did not answer (in time), how long this process decides alone before it waits for them again. */
const SHARED_PAUSE_MS = 2_000;
/** Rows an hour past their window are deleted every 5 minutes (as rate-limiter-flexible's store did). */
const SHARED_CLEANUP_MS = 5 * 60_000;

interface SharedCounter {
  /** The window's end (ms since the epoch): PostgreSQL's, once read; this process's estimate before. */
  windowEndMs: number;
  /** The window's count in PostgreSQL when last read (what this process had sent included). */
  counted: number;
  /** Taken by this process since (less what it gave back), not sent yet. */
  unsent: number;
  /** Being sent by the running reconciliation. */
  sending: number;
}

/**
 * The deployment's shared counters for `ratePerSecond`: table rate_limits (the rows
 * rate-limiter-flexible's PostgreSQL store kept, same keys and windows: 2 × rate requests per
 * 2-second window), reached through `store`, a small pg pool of the database every API process uses.
 *
 * Without a database round trip per request: each process counts in memory and reconciles with the
 * table every SHARED_SYNC_MS while it has counted something — one statement for all its keys, which
 * adds what it counted and reads each window's total back. A request is decided from memory while
 * the window's total as last read plus what this process counted since leaves at least half the
 * window's allowance; past half, the request waits for the next reconciliation (at most
 * SHARED_WAIT_MS) and is decided on the total it reads (the requests that waited for it one after the
 * other, so one process admits exactly what is left of the window). What the other processes admitted
 * from memory and not sent yet is not in that total: with N processes a burst arriving at all of them
 * at once can overshoot the allowance by at most (N − 1) × half of it, within one reconciliation
 * (docs/OPERATIONS.md, Rate limits); one process never overshoots. When the table does not answer (in time), the process decides
 * from memory alone with the whole allowance for SHARED_PAUSE_MS, so no request waits on a database
 * that stopped answering. A refused request does not count, and `refund` gives a request's point back
 * (a refused token's, or the failed-authentication budget's on a good signature).
 */
export function createSharedRateLimiter(ratePerSecond: number, store: pg.Pool, options: { maxKeys?: number } = {}): RateLimiter {
  const points = ratePerSecond * WINDOW_SECONDS;
  const half = points / 2;
  // Processes configured with another rate count in counters of their own (`kassa:<points>:<key>`).
  const keyPrefix = `kassa:${points}:`;
  const maxKeys = options.maxKeys ?? 100_000;
  const counters = new Map<string, SharedCounter>();
  let pausedUntilMs = 0;
  let running = false;
  let timer: NodeJS.Timeout | null = null;
  let waiters: Array<() => void> = [];
  let lastCleanupMs = Date.now();

  /** The shared counters did not answer (in time): this process decides alone for SHARED_PAUSE_MS (counted: kassa_rate_limits_decided_alone_total). */
  const decideAlone = (): void => {
    if (Date.now() >= pausedUntilMs) rateLimitsDecidedAlone.inc();
    pausedUntilMs = Date.now() + SHARED_PAUSE_MS;
  };

  const counterOf = (key: string, nowMs: number): SharedCounter => {
    let counter = counters.get(key);
    if (!counter) {
      if (counters.size >= maxKeys) {
        const oldest = counters.keys().next().value;
        if (oldest !== undefined) counters.delete(oldest);
      }
      counter = { windowEndMs: nowMs + WINDOW_MS, counted: 0, unsent: 0, sending: 0 };
      counters.set(key, counter);
    } else if (nowMs >= counter.windowEndMs) {
      // Its window ended: what was counted in it no longer matters (a reconciliation under way tells the new window's total).
      counter.windowEndMs = nowMs + WINDOW_MS;
      counter.counted = 0;
      counter.unsent = 0;
    }
    return counter;
  };

  const reconcile = async (): Promise<void> => {
    const keys: string[] = [];
    const sent: number[] = [];
    const read = wanted;
    wanted = new Set();
    for (const [key, counter] of counters) {
      if (counter.unsent === 0 && !read.has(key)) continue;
      keys.push(key);
      sent.push(counter.unsent);
      counter.sending = counter.unsent;
      counter.unsent = 0;
    }
    const nowMs = Date.now();
    try {
      if (keys.length > 0) {
        // rate-limiter-flexible's upsert, for many keys and points at once.
        const answer = await store.query<{ key: string; points: number; expire: string }>(
          `insert into rate_limits (key, points, expire)
           select k, greatest(p, 0), $3::bigint from unnest($1::text[], $2::int[]) as t(k, p)
           on conflict (key) do update set
             points = case when rate_limits.expire is null or rate_limits.expire <= $4::bigint then greatest(excluded.points, 0) else rate_limits.points + excluded.points end,
             expire = case when rate_limits.expire is null or rate_limits.expire <= $4::bigint then excluded.expire else rate_limits.expire end
           returning key, points, expire`,
          [keys.map((key) => keyPrefix + key), sent, nowMs + WINDOW_MS, nowMs],
        );
        const readAt = Date.now();
        for (const [key, counter] of counters) {
          // Forgotten once its window ended with nothing left to send.
          if (readAt >= counter.windowEndMs && counter.unsent === 0 && counter.sending === 0) counters.delete(key);
        }
        for (const row of answer.rows) {
          const counter = counters.get(row.key.slice(keyPrefix.length));
          if (!counter) continue;
          counter.sending = 0;
          const end = Number(row.expire);
          if (end > readAt) {
            counter.windowEndMs = end;
            counter.counted = row.points;
          }
        }
      }
      if (nowMs - lastCleanupMs >= SHARED_CLEANUP_MS) {
        lastCleanupMs = nowMs;
        await store.query('delete from rate_limits where expire < $1::bigint', [nowMs - 3_600_000]);
      }
    } catch {
      // Not counted there: counted here again, sent with the next reconciliation.
      for (const [index, key] of keys.entries()) {
        const counter = counters.get(key);
        if (counter && counter.sending !== 0) {
          counter.unsent += sent[index]!;
          counter.sending = 0;
        }
      }
      decideAlone();
    }
  };

  const run = async (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = null;
    running = true;
    const served = waiters;
    waiters = [];
    await reconcile();
    running = false;
    for (const resolve of served) resolve();
    if (waiters.length > 0) void run();
    else schedule();
  };

  /** The next reconciliation, SHARED_SYNC_MS from now, while something is left to send. */
  const schedule = (): void => {
    if (timer || running) return;
    for (const counter of counters.values()) {
      if (counter.unsent !== 0) {
        timer = setTimeout(() => void run(), SHARED_SYNC_MS);
        timer.unref();
        return;
      }
    }
  };

  /** Keys whose total a waiting request needs read, even with nothing of this process's to send. */
  let wanted = new Set<string>();

  /** A reconciliation that starts now (or right after the running one) and reads `key`, waited for at most SHARED_WAIT_MS. */
  const reconciled = (key: string): Promise<boolean> =>
    new Promise((resolve) => {
      wanted.add(key);
      const wait = setTimeout(() => {
        decideAlone();
        resolve(false);
      }, SHARED_WAIT_MS);
      wait.unref();
      waiters.push(() => {
        clearTimeout(wait);
        resolve(true);
      });
      if (!running) void run();
    });

  const result = (counter: SharedCounter, allowed: boolean, nowMs: number): RateLimitResult => {
    const seconds = Math.max(1, Math.ceil((counter.windowEndMs - nowMs) / 1000));
    const used = counter.counted + counter.sending + counter.unsent;
    return { allowed, limit: points, remaining: Math.max(0, points - used), resetSeconds: seconds, retryAfterSeconds: seconds };
  };

  return {
    async take(key) {
      let nowMs = Date.now();
      let counter = counterOf(key, nowMs);
      if (counter.counted + counter.sending + counter.unsent + 1 > half && nowMs >= pausedUntilMs) {
        // Past half the window: decided on the window's total as read by the next reconciliation
        // (or, when that does not answer in time, from memory).
        await reconciled(key);
        nowMs = Date.now();
        counter = counterOf(key, nowMs);
      }
      const allowed = counter.counted + counter.sending + counter.unsent + 1 <= points;
      if (allowed) {
        counter.unsent += 1;
        schedule();
      }
      return result(counter, allowed, nowMs);
    },
    async refund(key) {
      const counter = counters.get(key);
      if (!counter || Date.now() >= counter.windowEndMs) return;
      counter.unsent -= 1;
      schedule();
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
    const key = keyOf(ctx);
    const result = await limiter.take(key, now().getTime());
    ctx.set('RateLimit-Limit', String(result.limit));
    ctx.set('RateLimit-Remaining', String(result.remaining));
    ctx.set('RateLimit-Reset', String(result.resetSeconds));
    if (!result.allowed) throw rateLimited(result.retryAfterSeconds);
    // A request its token turns out refused for does not count (http/bearer.ts gives it back).
    (ctx.state as KassaState).giveBackLimit = () => limiter.refund(key);
    await next();
  };
}
