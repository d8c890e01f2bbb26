// One GET to toncenter API v3 (or a self-hosted ton-indexer: the same `/api/v3`), the way every v3
// reader of Kassa makes it — the block source (source.ts) and account history (history.ts): through
// the request budget, with the key header, a timeout, every request counted, and the API's answers
// mapped to ChainApiError (retryable or not; a 429, a timeout and a 5xx back the budget off).
import { chainApiRequests } from '../metrics.ts';
import { ChainApiError, describeUrl } from './apiError.ts';
import { countChainRequest } from './client.ts';
import { retryAfterMs, type RequestBudget } from './budget.ts';

export interface V3RequestOptions {
  /** The API root, e.g. `https://toncenter.com` (`/api/v3/<path>` is added). */
  baseUrl: string;
  apiKey?: string | null;
  budget?: RequestBudget | null;
  timeoutMs?: number;
}

/** ton-index-go's answer for a masterchain block it has not indexed yet (crud_transactions.go, queryBlockExists). */
export const NOT_INDEXED = /^masterchain block (-?\d+) not found$/;

/** A refusal by the API itself: its HTTP status and its own `{"error": "…"}` text (null when the body was not that). */
export class V3ApiError extends ChainApiError {
  readonly apiError: string | null;
  constructor(message: string, opts: { status: number; retryable: boolean; apiError: string | null }) {
    super(message, opts);
    this.name = 'V3ApiError';
    this.apiError = opts.apiError;
  }
}

/**
 * ton-index-go's refusal of a page larger than its `-max-limit` (crud.go limitQuery). Its status
 * differs by release: 500 in those of 2025 (the query builder's 422 rewrapped by
 * `QueryTransactions` and the jetton queries), 422 in newer ones; only the text says what it is.
 */
const LIMIT_REFUSED = /^limit is not allowed: \d+ > (\d+)$/;

/** Whether the API's own error text is the refusal of a page size (`limit is not allowed: N > M`), under any status. */
function isLimitRefusal(apiError: string | null): boolean {
  return apiError !== null && LIMIT_REFUSED.test(apiError);
}

/**
 * The page size an API's refusal asks for: `M` of `{"error":"limit is not allowed: N > M"}`, under
 * whatever status it came (500 or 422), when M is smaller than `pageSize` (self-hosted and
 * third-party deployments run other `-max-limit` values), else null — a refusal that asks for no
 * smaller page is thrown, never asked again. The block source and the account history both learn
 * it this way; each refusal makes the page smaller, so the same page is never asked for ever.
 */
export function allowedPageSize(error: unknown, pageSize: number): number | null {
  if (!(error instanceof V3ApiError) || error.apiError === null) return null;
  const allowed = Number(LIMIT_REFUSED.exec(error.apiError)?.[1]);
  return Number.isSafeInteger(allowed) && allowed >= 1 && allowed < pageSize ? allowed : null;
}

/** ton-index's own error text of a body (`{"error": "…"}`), or null. */
function apiErrorText(text: string): string | null {
  try {
    const body = JSON.parse(text) as { error?: unknown } | null;
    return body !== null && typeof body === 'object' && typeof body.error === 'string' ? body.error : null;
  } catch {
    return null;
  }
}

type V3Params = Record<string, string | number | readonly string[]>;

/** `{baseUrl}/api/v3/{path}?{params}` (a list value repeats its parameter: ton-index-go's `owner_address=…&owner_address=…`). */
function v3Url(baseUrl: string, path: string, params: V3Params): URL {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}/api/v3/${path}`);
  for (const [key, value] of Object.entries(params)) {
    if (Array.isArray(value)) for (const item of value as readonly string[]) url.searchParams.append(key, item);
    else url.searchParams.set(key, String(value));
  }
  return url;
}

/**
 * The longest request line Kassa sends the chain API (`GET /api/v3/…?… HTTP/1.1`, bytes): ton-index-go
 * itself reads up to 1 MiB, but the fronts deployments put before it (nginx-like) commonly refuse a
 * line over 8 KB (414 or 431). A request that lists many addresses is cut to stay under this.
 */
export const MAX_REQUEST_LINE_BYTES = 7_000;

/** The request line's length in bytes of `GET {baseUrl}/api/v3/{path}?{params}` as v3Requester sends it. */
export function requestLineBytes(baseUrl: string, path: string, params: V3Params): number {
  const url = v3Url(baseUrl, path, params);
  return Buffer.byteLength(`GET ${url.pathname}${url.search} HTTP/1.1`);
}

/** A front refused the request line as too long (414 URI Too Long, 431 Request Header Fields Too Large). */
export function isRequestTooLong(error: unknown): boolean {
  return error instanceof ChainApiError && (error.status === 414 || error.status === 431);
}

/** `get(path, params)`: the parsed JSON answer of `GET {baseUrl}/api/v3/{path}?{params}` (a list value repeats its parameter). */
export function v3Requester(options: V3RequestOptions) {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const budget = options.budget ?? null;

  return async function get<T>(path: string, params: V3Params, signal?: AbortSignal): Promise<T> {
    await budget?.take(signal);
    const url = v3Url(options.baseUrl, path, params);
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { accept: 'application/json', ...(options.apiKey ? { 'X-API-Key': options.apiKey } : {}) },
        signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      countChainRequest(null);
      if (signal?.aborted) throw error;
      throw new ChainApiError(`chain API unreachable at ${describeUrl(url)}: ${error instanceof Error ? error.message : String(error)}`, {
        status: null,
        retryable: true,
        cause: error,
      });
    }
    const text = await response.text();
    const apiError = response.ok ? null : apiErrorText(text);
    // "Not indexed yet" is the API's normal answer for the block after the tip, not a failure.
    if (response.status === 404 && apiError !== null && NOT_INDEXED.test(apiError)) {
      chainApiRequests.inc({ outcome: 'not_indexed' });
      budget?.succeeded();
    } else countChainRequest(response.status);
    if (response.status === 429) {
      budget?.backOff(retryAfterMs(response.headers.get('retry-after'), Date.now()));
      throw new ChainApiError('chain API answered HTTP 429 (rate limit)', { status: 429, retryable: true });
    }
    if (!response.ok) {
      // A page size refused (500 or 422 by the release) is no failure of the API: asking again the
      // same is refused the same, and nothing is overloaded. The caller learns the size or gives up.
      const retryable = !isLimitRefusal(apiError) && (response.status === 408 || response.status >= 500);
      if (retryable) budget?.backOff(retryAfterMs(response.headers.get('retry-after'), Date.now()));
      throw new V3ApiError(`chain API answered HTTP ${response.status} to ${path}: ${text.slice(0, 200)}`, {
        status: response.status,
        retryable,
        apiError,
      });
    }
    budget?.succeeded();
    try {
      return JSON.parse(text) as T;
    } catch (error) {
      throw new ChainApiError(`chain API sent malformed JSON for ${path}`, { status: response.status, retryable: true, cause: error });
    }
  };
}
