// The query parameters every list endpoint of the sandbox's toncenter v3 reads the same way as
// ton-index-go: Fiber's QueryParser on int32 fields, crud.go `limitQuery` (`-default-limit`,
// `-max-limit` at their defaults) and the `sort` parameter.
import type { V3Reply } from './v3.ts';

/** ton-index-go's `-max-limit` and `-default-limit` flags (main.go), at their defaults. */
const MAX_LIMIT = 1000;
const DEFAULT_LIMIT = 100;

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
 * to 1, a large one refused; `sort` defaults to `desc` (`d`/`a` accepted). The 422 when refused.
 */
export function pageParams(query: URLSearchParams): V3Page | V3Reply {
  const limit = intParam(query, 'limit');
  const offset = intParam(query, 'offset');
  if (limit === 'invalid' || offset === 'invalid') return v3Error(422, 'failed to parse query: limit and offset must be integers');
  const take = Math.max(1, limit ?? DEFAULT_LIMIT);
  if (take > MAX_LIMIT) return v3Error(422, `limit is not allowed: ${take} > ${MAX_LIMIT}`);
  const skip = Math.max(0, offset ?? 0);
  const sortParam = (query.get('sort') ?? 'desc').toLowerCase();
  const sort = sortParam === 'desc' || sortParam === 'd' ? 'desc' : sortParam === 'asc' || sortParam === 'a' ? 'asc' : null;
  if (sort === null) return v3Error(422, 'wrong value for sort parameter');
  return { take, skip, sort };
}
