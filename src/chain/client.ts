/**
 * Thin wrapper over @ton/ton's TonClient (toncenter API v2 JSON-RPC) for get methods (jetton
 * wallets) and account state. Blocks are read through API v3 (source.ts). Both share one
 * request budget. The same code talks to toncenter and to the sandbox's emulation.
 */
import { Address, beginCell } from '@ton/core';
import { TonClient } from '@ton/ton';
import axios, { type AxiosAdapter } from 'axios';
import { chainApiRequests } from '../metrics.ts';
import type { RequestBudget } from './budget.ts';
import { retryAfterMs } from './budget.ts';

export type ChainClient = TonClient;

/** A transaction's identity: lt and hex hash. */
type TxCursor = { lt: string; hash: string /* hex */ };

type ChainClientOptions = {
  /** The JSON-RPC endpoint, e.g. `https://toncenter.com/api/v2/jsonRPC`. */
  endpoint: string;
  apiKey?: string | null | undefined;
  /** Per-request timeout in ms (TonClient's default is 30 s). */
  timeoutMs?: number;
  /** The process's chain API budget (TON_API_RPS); none: unlimited. */
  budget?: RequestBudget | null;
};

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

export async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toChainApiError(err);
  }
}

/** Counts every HTTP request to the chain API by outcome (kassa_chain_api_requests_total). */
export function countChainRequest(status: number | null): void {
  chainApiRequests.inc({ outcome: status === 429 ? 'rate_limited' : status === null || status >= 400 ? 'error' : 'ok' });
}

/** TonClient's HTTP, through the request budget and counted. */
function budgetedAdapter(budget: RequestBudget | null): AxiosAdapter {
  return async (config) => {
    const http = axios.getAdapter('http');
    await budget?.take();
    try {
      const response = await http(config);
      countChainRequest(response.status);
      if (response.status === 429) budget?.backOff(retryAfterMs(response.headers['retry-after'] as string | undefined, Date.now()));
      else budget?.succeeded();
      return response;
    } catch (error) {
      const response = (error as { response?: { status?: number; headers?: Record<string, unknown> } }).response;
      countChainRequest(response?.status ?? null);
      if (response?.status === 429) budget?.backOff(retryAfterMs(response.headers?.['retry-after'] as string | undefined, Date.now()));
      throw error;
    }
  };
}

export function createChainClient(opts: ChainClientOptions): ChainClient {
  return new TonClient({
    endpoint: opts.endpoint,
    httpAdapter: budgetedAdapter(opts.budget ?? null),
    ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
    ...(opts.timeoutMs !== undefined ? { timeout: opts.timeoutMs } : {}),
  });
}

function toAddress(address: Address | string): Address {
  return typeof address === 'string' ? Address.parse(address) : address;
}

/** The jetton wallet of `owner` for the jetton `master`, asked of the master (`get_wallet_address`). */
export async function getJettonWalletAddress(client: ChainClient, master: Address | string, owner: Address | string): Promise<Address> {
  const ownerSlice = beginCell().storeAddress(toAddress(owner)).endCell();
  const res = await call(() => client.runMethod(toAddress(master), 'get_wallet_address', [{ type: 'slice', cell: ownerSlice }]));
  try {
    return res.stack.readAddress();
  } catch (err) {
    throw new ChainApiError('get_wallet_address returned no address', { status: null, retryable: false, cause: err });
  }
}

/** Account state summary (balance in nanoTON, status, last transaction). */
export async function getAccountState(
  client: ChainClient,
  address: Address | string,
): Promise<{ balance: bigint; state: 'active' | 'uninitialized' | 'frozen'; lastTransaction: TxCursor | null }> {
  const s = await call(() => client.getContractState(toAddress(address)));
  return {
    balance: s.balance,
    state: s.state,
    lastTransaction: s.lastTransaction === null ? null : { lt: s.lastTransaction.lt, hash: Buffer.from(s.lastTransaction.hash, 'base64').toString('hex') },
  };
}
