// One chain API budget per API key across every process of a deployment. toncenter counts requests
// per account across all its keys and processes, so a budget per process (API + worker + CLI, or
// two workers) would together exceed the plan. The budget lives in PostgreSQL, which every process
// already shares: one row per (API root, key) in chain_api_budgets; each request reserves the next
// slot with one atomic update (slots 1/rps apart, the database's clock for all), then waits for it.
// A 429 pauses every process (paused_until). When the database does not answer, the process falls
// back to its own budget at the same rate rather than stop reading the chain.
import crypto from 'node:crypto';
import { sql, z, type Db } from '../db/pool.ts';
import { createRequestBudget, sleep, type RequestBudget } from './budget.ts';

export interface SharedRequestBudget extends RequestBudget {
  /** Requests this process took from the budget. */
  readonly taken: number;
}

/** Identifies a budget without storing the key: sha256 of the API root and the key. */
export function budgetKeyId(apiRoot: string, apiKey: string | null): string {
  return crypto
    .createHash('sha256')
    .update(`${apiRoot.replace(/\/+$/, '')}\n${apiKey ?? ''}`)
    .digest('hex');
}

/**
 * `rps` requests per second shared through `db` by every process with the same API root and key
 * (0: unlimited, nothing shared). The processes should agree on `rps` (TON_API_RPS): each request
 * moves the shared slot on by its own process's spacing.
 */
export function sharedRequestBudget(db: Db, options: { apiRoot: string; apiKey: string | null; rps: number }): SharedRequestBudget {
  const local = createRequestBudget(options.rps);
  if (options.rps <= 0) {
    let taken = 0;
    return {
      rps: 0,
      get taken() {
        return taken;
      },
      async take(signal) {
        taken += 1;
        await local.take(signal);
      },
      backOff: (retryAfterMs) => local.backOff(retryAfterMs),
      succeeded: () => local.succeeded(),
    };
  }
  const keyId = budgetKeyId(options.apiRoot, options.apiKey);
  const spacing = `${1000 / options.rps} milliseconds`;
  let taken = 0;
  /** This process's own pause after a 429, until the shared one is written (performance.now()). */
  let pausedUntil = 0;
  return {
    rps: options.rps,
    get taken() {
      return taken;
    },
    async take(signal) {
      signal?.throwIfAborted();
      const paused = pausedUntil - performance.now();
      if (paused > 0) await sleep(Math.ceil(paused), signal);
      let waitMs: number;
      try {
        // Reserve the next slot (the later of: the shared next slot, now, the end of a pause) and
        // move it on by one spacing; the answer is how long to wait for the slot reserved.
        waitMs = await db.oneFirst(sql.type(z.object({ wait_ms: z.number() }))`
          insert into chain_api_budgets as b (key_id, next_slot_at, requests)
          values (${keyId}, clock_timestamp() + ${spacing}::interval, 1)
          on conflict (key_id) do update set
            next_slot_at = greatest(b.next_slot_at, clock_timestamp(), b.paused_until) + ${spacing}::interval,
            requests = b.requests + 1
          returning (extract(epoch from (next_slot_at - ${spacing}::interval - clock_timestamp())) * 1000)::float8 as wait_ms
        `);
      } catch {
        // The database does not answer: this process alone, at the same rate.
        taken += 1;
        return local.take(signal);
      }
      taken += 1;
      if (waitMs > 0) await sleep(Math.ceil(waitMs), signal);
    },
    backOff(retryAfterMs) {
      // The backoff rule is the local budget's (doubling from 1 s to 60 s), which pauses this process too.
      const wait = local.backOff(retryAfterMs);
      // Every process pauses: the next slot any of them reserves is after the pause.
      db.query(sql.typeAlias('void')`
        update chain_api_budgets set paused_until = greatest(paused_until, clock_timestamp() + ${`${wait} milliseconds`}::interval)
        where key_id = ${keyId}
      `).catch(() => {});
      pausedUntil = Math.max(pausedUntil, performance.now() + wait);
      return wait;
    },
    succeeded() {
      local.succeeded();
    },
  };
}

/** How much of the shared budget has been used, for `kassa doctor`: null when no request was ever taken. */
export async function budgetUsage(db: Db, apiRoot: string, apiKey: string | null): Promise<{ requests: bigint } | null> {
  const row = await db.maybeOneFirst(
    sql.type(z.object({ requests: z.string() }))`select requests::text as requests from chain_api_budgets where key_id = ${budgetKeyId(apiRoot, apiKey)}`,
  );
  return row === null ? null : { requests: BigInt(row) };
}
