/**
 * Thin wrapper over @ton/ton's TonClient (toncenter API v2) for the chain watcher.
 * The same code talks to toncenter on mainnet/testnet and to the sandbox's JSON-RPC emulation.
 */
import { Address, beginCell } from '@ton/core';
import type { Transaction } from '@ton/core';
import { TonClient } from '@ton/ton';
import axios, { type AxiosAdapter } from 'axios';
import { chainApiRequests } from '../metrics.ts';
import { transactionHashHex } from './detect.ts';

export type ChainClient = TonClient;

/** Where the watcher stopped on an account: the newest transaction it has seen. */
export type TxCursor = { lt: string; hash: string /* hex */ };

export type ChainClientOptions = {
  /** The JSON-RPC endpoint, e.g. `https://toncenter.com/api/v2/jsonRPC`. */
  endpoint: string;
  apiKey?: string | null | undefined;
  /** Per-request timeout in ms (TonClient's default is 30 s). */
  timeoutMs?: number;
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
    return new ChainApiError(`chain API unreachable: ${e.message ?? String(err)}`, {
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

async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toChainApiError(err);
  }
}

/** Counts every HTTP request to the chain API by outcome (kassa_chain_api_requests_total). */
const countingAdapter: AxiosAdapter = async (config) => {
  const http = axios.getAdapter('http');
  try {
    const response = await http(config);
    chainApiRequests.inc({ outcome: response.status === 429 ? 'rate_limited' : response.status >= 400 ? 'error' : 'ok' });
    return response;
  } catch (error) {
    const status = (error as { response?: { status?: number } }).response?.status;
    chainApiRequests.inc({ outcome: status === 429 ? 'rate_limited' : 'error' });
    throw error;
  }
};

export function createChainClient(opts: ChainClientOptions): ChainClient {
  return new TonClient({
    endpoint: opts.endpoint,
    httpAdapter: countingAdapter,
    ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
    ...(opts.timeoutMs !== undefined ? { timeout: opts.timeoutMs } : {}),
  });
}

function toAddress(address: Address | string): Address {
  return typeof address === 'string' ? Address.parse(address) : address;
}

export type FetchNewTransactionsResult = {
  /** New transactions, oldest first (process in this order). */
  transactions: Transaction[];
  /** The newest transaction seen; the input cursor when nothing is new. */
  cursor: TxCursor | null;
  /** True when `maxPages` stopped the walk before the cursor was reached (more to fetch). */
  truncated: boolean;
};

/**
 * Transactions on `address` newer than `cursor` (exclusive), oldest first, paging backwards from
 * the newest with lt+hash. `limit` is the page size (default 50). With a null cursor the whole
 * history the node keeps is returned. `maxPages` (default 100) bounds one call; when it is hit
 * the oldest new transactions were not reached, so nothing is returned, the cursor is left
 * unchanged and `truncated` is true: callers should raise `limit`/`maxPages` rather than advance
 * past transactions never seen.
 */
export async function fetchNewTransactions(
  client: ChainClient,
  address: Address | string,
  cursor: TxCursor | null,
  opts: { limit?: number; maxPages?: number } = {},
): Promise<FetchNewTransactionsResult> {
  const account = toAddress(address);
  const limit = opts.limit ?? 50;
  const maxPages = opts.maxPages ?? 100;
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
  const cursorLt = cursor === null ? null : BigInt(cursor.lt);
  const cursorHash = cursor === null ? null : cursor.hash.toLowerCase();

  const newestFirst: Transaction[] = [];
  let page: { lt: string; hash: string /* base64, as TonClient wants */ } | null = null;
  let reached = false;
  for (let pages = 0; pages < maxPages; pages++) {
    const pageOpts: { limit: number; lt?: string; hash?: string; inclusive?: boolean; archival?: boolean } = { limit };
    if (page !== null) {
      pageOpts.lt = page.lt;
      pageOpts.hash = page.hash;
      pageOpts.inclusive = false;
    }
    const txs = await call(() => client.getTransactions(account, pageOpts));
    let stop = false;
    for (const tx of txs) {
      if (cursorLt !== null) {
        if (tx.lt < cursorLt || (tx.lt === cursorLt && transactionHashHex(tx) === cursorHash)) {
          reached = true;
          stop = true;
          break;
        }
      }
      newestFirst.push(tx);
    }
    if (stop || txs.length < limit) {
      reached = true;
      break;
    }
    const last = txs[txs.length - 1];
    if (last === undefined) {
      reached = true;
      break;
    }
    page = { lt: last.lt.toString(), hash: last.hash().toString('base64') };
  }

  if (!reached) {
    return { transactions: [], cursor, truncated: true };
  }
  const newest = newestFirst[0];
  return {
    transactions: newestFirst.reverse(),
    cursor: newest === undefined ? cursor : { lt: newest.lt.toString(), hash: transactionHashHex(newest) },
    truncated: false,
  };
}

/** The jetton wallet of `owner` for the jetton `master`, asked of the master (`get_wallet_address`). */
export async function getJettonWalletAddress(
  client: ChainClient,
  master: Address | string,
  owner: Address | string,
): Promise<Address> {
  const ownerSlice = beginCell().storeAddress(toAddress(owner)).endCell();
  const res = await call(() =>
    client.runMethod(toAddress(master), 'get_wallet_address', [{ type: 'slice', cell: ownerSlice }]),
  );
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
    lastTransaction:
      s.lastTransaction === null
        ? null
        : { lt: s.lastTransaction.lt, hash: Buffer.from(s.lastTransaction.hash, 'base64').toString('hex') },
  };
}
