// The query parameters every list endpoint of the sandbox's toncenter v3 reads the same way as
// ton-index-go: Fiber's QueryParser on int32 fields, crud.go `limitQuery` (`-default-limit` at its
// default, `-max-limit` as the sandbox is told) and the `sort` parameter; and the options where
// toncenter-compatible deployments differ.
import type { V3Reply } from './v3.ts';

/** ton-index-go's `-max-limit` and `-default-limit` flags (main.go), at their defaults. */
const MAX_LIMIT = 1000;
const DEFAULT_LIMIT = 100;

/** What the sandbox's toncenter v3 answers where toncenter-compatible deployments differ (`SandboxChain.v3`, set by tests). */
export interface V3Options {
  /**
   * `transactionsByMasterchainBlock` for a block not indexed yet (a hole below the tip, the tip + 1):
   * `not_found`, ton-index-go's 404 `{"error":"masterchain block N not found"}` (the default), or
   * `empty`, the 200 with an empty list of other indexers. Both mean "not yet" to the reader.
   */
  unindexedBlock: 'not_found' | 'empty';
  /** `-max-limit`: the largest `limit` a list answers (1000; self-hosted deployments run others). */
  maxLimit: number;
  /**
   * The status of `{"error":"limit is not allowed: N > M"}`: 500, as the ton-index-go releases of
   * 2025 answer it (the query builder's 422 rewrapped by its caller; the default), or 422, as newer
   * ones do. Clients must tell it by its text.
   */
  limitRefusalStatus: 500 | 422;
}

export const defaultV3Options = (): V3Options => ({ unindexedBlock: 'not_found', maxLimit: MAX_LIMIT, limitRefusalStatus: 500 });

export function v3Error(status: number, message: string): V3Reply {
  return { status, json: { error: message } };
}

/** Fiber's QueryParser on an int32 field: absent → null; not an integer → its parse error (422). */
export function intParam(query: URLSearchParams, name: string): number | null | 'invalid' {
  const raw = query.get(name);
  if (raw === null || raw === '') return null;
  if (!/^-?\d+$/.test(raw)) return 'invalid';
  return Number(raw);
}

interface V3Page {
  take: number;
  skip: number;
  sort: 'asc' | 'desc';
}

/**
 * `limit`, `offset` and `sort` of a list: a missing limit takes the default, a small one is raised
 * to 1, a large one refused (`limit is not allowed: N > M`, with the deployment's status: 500 by
 * default, see V3Options); `sort` defaults to `desc` (`d`/`a` accepted). The refusal when refused.
 */
export function pageParams(
  query: URLSearchParams,
  options: Pick<V3Options, 'maxLimit' | 'limitRefusalStatus'> = { maxLimit: MAX_LIMIT, limitRefusalStatus: 500 },
): V3Page | V3Reply {
  const { maxLimit } = options;
  const limit = intParam(query, 'limit');
  const offset = intParam(query, 'offset');
  if (limit === 'invalid' || offset === 'invalid') return v3Error(422, 'failed to parse query: limit and offset must be integers');
  const take = Math.max(1, limit ?? DEFAULT_LIMIT);
  if (take > maxLimit) return v3Error(options.limitRefusalStatus, `limit is not allowed: ${take} > ${maxLimit}`);
  const skip = Math.max(0, offset ?? 0);
  const sortParam = (query.get('sort') ?? 'desc').toLowerCase();
  const sort = sortParam === 'desc' || sortParam === 'd' ? 'desc' : sortParam === 'asc' || sortParam === 'a' ? 'asc' : null;
  if (sort === null) return v3Error(422, 'wrong value for sort parameter');
  return { take, skip, sort };
}
