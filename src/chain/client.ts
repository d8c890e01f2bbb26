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
import { ChainApiError, toChainApiError } from './apiError.ts';

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
