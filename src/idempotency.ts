// X-Idempotency-Key (docs/API.md, Idempotency): keys are scoped to the store and the endpoint; the first
// successful response is replayed for 24 hours; another body with the same key is refused.
// The key row is written first, in the same transaction as the work, so a concurrent request
// with the same key waits on it and then replays; a failed request leaves no row.
import crypto from 'node:crypto';
import { prepared, sql, z, type DatabasePool, type DatabaseTransactionConnection, type FragmentSqlToken } from './db/pool.ts';
import { KassaError } from './errors.ts';
import { isUuid } from './uuid.ts';

const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface Outcome {
  status: number;
  /** The exact response body text (replays are byte-identical). */
  body: string;
  replayed: boolean;
}

/** Reads and checks the header; undefined when absent. */
export function idempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined || header === '') return undefined;
  if (!isUuid(header)) throw new KassaError('invalid_idempotency_key', { param: 'X-Idempotency-Key' });
  return header.toLowerCase();
}

/** A stable hash of a JSON body: same members in any order hash the same. */
export function requestHash(body: unknown): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical);
    if (value && typeof value === 'object') {
      return Object.fromEntries(
        Object.keys(value)
          .sort()
          .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
      );
    }
    return value;
  };
  return crypto
    .createHash('sha256')
    .update(JSON.stringify(canonical(body ?? {})))
    .digest('hex');
}

const taken = z.object({ ok: z.number() });
const stored = z.object({ request_hash: z.string(), response_status: z.number().nullable(), response_body: z.string().nullable(), created_at: z.date() });

export async function idempotent(
  pool: DatabasePool,
  scope: { storeId: string; endpoint: string; key: string | undefined; body: unknown; now: Date },
  work: (tx: DatabaseTransactionConnection) => Promise<{ status: number; body: unknown; paymentId?: string; replayBody?: unknown }>,
): Promise<Outcome> {
  const { key } = scope;
  if (key === undefined) {
    const result = await pool.transaction(work);
    return { status: result.status, body: JSON.stringify(result.body), replayed: false };
  }
  const hash = requestHash(scope.body);
  return pool.transaction(async (tx) => {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const inserted = await tx.maybeOne(
        prepared(sql.type(taken)`
        insert into idempotency_keys (store_id, endpoint, idempotency_key, request_hash, created_at)
        values (${scope.storeId}, ${scope.endpoint}, ${key}, ${hash}, ${sql.timestamp(scope.now)})
        on conflict do nothing
        returning 1 as ok
      `),
      );
      if (inserted) {
        const result = await work(tx);
        const body = JSON.stringify(result.body);
        // A secret shown once (a subscription's portal URL) is never stored: its replay answers `replayBody`.
        const kept = result.replayBody === undefined ? body : JSON.stringify(result.replayBody);
        await tx.query(
          prepared(sql.typeAlias('void')`
          update idempotency_keys set response_status = ${result.status}, response_body = ${kept}, payment_id = ${result.paymentId ?? null}
          where store_id = ${scope.storeId} and endpoint = ${scope.endpoint} and idempotency_key = ${key}
        `),
        );
        return { status: result.status, body, replayed: false };
      }
      const previous = await tx.maybeOne(sql.type(stored)`
        select request_hash, response_status, response_body, created_at from idempotency_keys
        where store_id = ${scope.storeId} and endpoint = ${scope.endpoint} and idempotency_key = ${key}
      `);
      if (!previous) continue; // purged meanwhile: try to take the key again
      if (previous.created_at.getTime() <= scope.now.getTime() - IDEMPOTENCY_WINDOW_MS) {
        // Older than 24 h and not purged yet: the key is free again.
        await tx.query(sql.typeAlias('void')`
          delete from idempotency_keys where store_id = ${scope.storeId} and endpoint = ${scope.endpoint} and idempotency_key = ${key}
        `);
        continue;
      }
      if (previous.request_hash !== hash) {
        throw new KassaError('idempotency_key_reused', { param: 'X-Idempotency-Key' });
      }
      if (previous.response_status === null || previous.response_body === null) continue;
      return { status: previous.response_status, body: previous.response_body, replayed: true };
    }
    throw new Error('idempotency key could not be taken or replayed');
  });
}

/** A key as `createPaymentOnce`'s read and write use it (src/payments/commands.ts): its scope and the body's hash. */
export interface KeyScope {
  storeId: string;
  endpoint: string;
  key: string;
  /** requestHash of the validated body. */
  hash: string;
  now: Date;
}

/**
 * The key's earlier answer, as one scalar SQL expression (JSON text, null when the key is free), for
 * a statement that reads what the request needs and the key in one round trip; `priorOutcome` says
 * what it means.
 */
export function priorAnswerSql(scope: KeyScope): FragmentSqlToken {
  return sql.fragment`(select json_build_object('hash', request_hash, 'status', response_status, 'body', response_body, 'at', created_at)::text
    from idempotency_keys where store_id = ${scope.storeId} and endpoint = ${scope.endpoint} and idempotency_key = ${scope.key})`;
}

/**
 * What the key's earlier answer (`priorAnswerSql`) means, by the rules of `idempotent`: the answer
 * to replay; 422 idempotency_key_reused for another body (thrown); `free` when the key has
 * none; `transaction` when only `idempotent`'s own way can tell (a row older than 24 h not purged
 * yet, which it deletes and takes again; a row without its answer).
 */
export function priorOutcome(prior: string | null, scope: KeyScope): Outcome | 'free' | 'transaction' {
  if (prior === null) return 'free';
  const row = JSON.parse(prior) as { hash: string; status: number | null; body: string | null; at: string };
  if (Date.parse(row.at) <= scope.now.getTime() - IDEMPOTENCY_WINDOW_MS) return 'transaction';
  if (row.hash !== scope.hash) throw new KassaError('idempotency_key_reused', { param: 'X-Idempotency-Key' });
  if (row.status === null || row.body === null) return 'transaction';
  return { status: row.status, body: row.body, replayed: true };
}

/**
 * Takes the key with the answer it will replay, inside the statement that does the work (a WITH
 * item: one row when taken): nothing when `condition` is false, nor when the key is taken — by a
 * concurrent request too, whose commit the insert waits for, as `idempotent`'s own insert does.
 * The answer is stored with the key in one statement, so no one ever reads the key without it.
 */
export function takeKeySql(scope: KeyScope, answer: { status: number; body: string; paymentId?: string }, condition: FragmentSqlToken): FragmentSqlToken {
  return sql.fragment`
    insert into idempotency_keys (store_id, endpoint, idempotency_key, request_hash, created_at, response_status, response_body, payment_id)
    select ${scope.storeId}, ${scope.endpoint}, ${scope.key}, ${scope.hash}, ${sql.timestamp(scope.now)}, ${answer.status}, ${answer.body}, ${answer.paymentId ?? null}
    where ${condition}
    on conflict do nothing returning 1
  `;
}

/** Deletes keys older than 24 hours; returns how many. */
export async function purgeIdempotencyKeys(pool: DatabasePool, now: Date): Promise<number> {
  const rows = await pool.any(sql.type(z.object({ n: z.number() }))`
    with gone as (delete from idempotency_keys where created_at < ${sql.timestamp(new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS))} returning 1)
    select count(*)::int as n from gone
  `);
  return rows[0]?.n ?? 0;
}
