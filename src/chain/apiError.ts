// The chain API's failures: one error type, and what becomes of whatever a client threw. In a
// module of their own, so that code which only recognises or maps them (the treasury's destination
// check, which `kassa store create` and `store update` run; `kassa coins`) does not load the chain
// client's @ton/ton and axios.

/**
 * A failed call to the chain API. `retryable` is true for rate limits (429), server errors (5xx),
 * timeouts and connection failures: back off and try again later.
 */
export class ChainApiError extends Error {
  readonly status: number | null;
  readonly retryable: boolean;
  readonly code: string | null;
  constructor(message: string, opts: { status: number | null; retryable: boolean; code?: string | null; cause?: unknown }) {
    super(message, { cause: opts.cause });
    this.name = 'ChainApiError';
    this.status = opts.status;
    this.retryable = opts.retryable;
    this.code = opts.code ?? null;
  }
}

const RETRYABLE_NETWORK_CODES = new Set([
  'ECONNABORTED',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ERR_NETWORK',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
]);

/** Where a request went, for messages: the URL without its query or credentials. */
export function describeUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/** ` at <origin><path>` of the URL a request tried (`describeUrl`); empty when unknown. */
function where(url: string | undefined): string {
  if (!url) return '';
  try {
    return ` at ${describeUrl(new URL(url))}`;
  } catch {
    return '';
  }
}

function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 408 || status >= 500;
}

/**
 * Maps whatever TonClient threw to a ChainApiError. TonClient throws axios errors for non-2xx
 * replies (`response.status`, `response.data` = toncenter's `{ok:false, code, error}`), axios
 * errors without a response for network failures, and plain `Error("Received error: {json}")`
 * when a 200 reply says `ok: false`.
 */
export function toChainApiError(err: unknown): ChainApiError {
  if (err instanceof ChainApiError) return err;
  const e = err as {
    isAxiosError?: boolean;
    code?: string;
    message?: string;
    response?: { status?: number; data?: unknown };
  };
  if (e !== null && typeof e === 'object' && e.isAxiosError === true) {
    const status = e.response?.status;
    if (typeof status === 'number') {
      const data = e.response?.data as { error?: unknown } | undefined;
      const detail = data !== null && typeof data === 'object' && typeof data.error === 'string' ? `: ${data.error}` : '';
      return new ChainApiError(`chain API answered HTTP ${status}${detail}`, {
        status,
        retryable: isRetryableStatus(status),
        code: e.code ?? null,
        cause: err,
      });
    }
    return new ChainApiError(`chain API unreachable${where((err as { config?: { url?: string } }).config?.url)}: ${e.message ?? String(err)}`, {
      status: null,
      retryable: e.code === undefined || RETRYABLE_NETWORK_CODES.has(e.code),
      code: e.code ?? null,
      cause: err,
    });
  }
  const message = err instanceof Error ? err.message : String(err);
  const received = /^Received error: (.*)$/s.exec(message);
  if (received !== null && received[1] !== undefined) {
    let status: number | null = null;
    try {
      const body = JSON.parse(received[1]) as { code?: unknown };
      if (typeof body.code === 'number') status = body.code;
    } catch {
      // not JSON: keep status unknown
    }
    return new ChainApiError(`chain API error: ${received[1]}`, {
      status,
      retryable: status !== null && isRetryableStatus(status),
      cause: err,
    });
  }
  // "Malformed response", stack parse errors, get-method exit codes: not fixed by retrying soon.
  return new ChainApiError(`chain API call failed: ${message}`, { status: null, retryable: false, cause: err });
}
