// An account's history from toncenter API v3 (`GET /api/v3/transactions?account=…`), paged by lt:
// what reconciliation re-reads when a deposit's books differ from the chain (src/reader/heal.ts).
// Every request goes through the same request budget as the block reader's. Only finalized
// transactions are served by this endpoint, each once (ton-index-go orders one account's by lt).
import { ChainApiError, countChainRequest } from './client.ts';
import { retryAfterMs, type RequestBudget } from './budget.ts';
import { fromV3Transaction, type ChainTransaction, type V3Transaction } from './transactions.ts';

export interface AccountHistoryPage {
  /** The account's transactions with `fromLt` ≤ lt ≤ `toLt`, ascending lt (at most `maxPages` pages of them). */
  transactions: ChainTransaction[];
  /** Chain API requests it took. */
  requests: number;
  /** False: `maxPages` ran out before the range did (the rest is read next time). */
  complete: boolean;
}

export interface AccountHistory {
  transactions(account: string, range?: { fromLt?: string | null; toLt?: string | null }, signal?: AbortSignal): Promise<AccountHistoryPage>;
}

export interface AccountHistoryOptions {
  /** The API root, e.g. `https://toncenter.com` (`/api/v3/transactions` is added). */
  baseUrl: string;
  apiKey?: string | null;
  budget?: RequestBudget | null;
  /** Transactions per page (default 100, toncenter's default; at most 1000). */
  pageSize?: number;
  /** Pages per call at most (default 20). */
  maxPages?: number;
  timeoutMs?: number;
}

/** Where a request went, for messages: the URL without its query or credentials. */
export function describeUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

export function toncenterV3History(options: AccountHistoryOptions): AccountHistory {
  const base = options.baseUrl.replace(/\/+$/, '');
  const pageSize = Math.min(1000, options.pageSize ?? 100);
  const maxPages = options.maxPages ?? 20;
  const timeoutMs = options.timeoutMs ?? 20_000;
  const budget = options.budget ?? null;

  async function page(params: Record<string, string>, signal?: AbortSignal): Promise<V3Transaction[]> {
    await budget?.take(signal);
    const url = new URL(`${base}/api/v3/transactions`);
    for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
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
    countChainRequest(response.status);
    const text = await response.text();
    if (!response.ok) {
      const retryable = response.status === 429 || response.status === 408 || response.status >= 500;
      if (retryable) budget?.backOff(retryAfterMs(response.headers.get('retry-after')));
      throw new ChainApiError(`chain API answered HTTP ${response.status} to transactions: ${text.slice(0, 200)}`, { status: response.status, retryable });
    }
    budget?.succeeded();
    let reply: { transactions?: unknown };
    try {
      reply = JSON.parse(text) as { transactions?: unknown };
    } catch (error) {
      throw new ChainApiError('chain API sent malformed JSON for transactions', { status: response.status, retryable: true, cause: error });
    }
    return Array.isArray(reply.transactions) ? (reply.transactions as V3Transaction[]) : [];
  }

  return {
    async transactions(account, range = {}, signal) {
      const seen = new Map<string, ChainTransaction>();
      let fromLt = range.fromLt ? BigInt(range.fromLt) : 0n;
      let requests = 0;
      let complete = false;
      // Paged by lt, not offset: ascending from `fromLt`, the next page starts past the last lt
      // seen, so a transaction added meanwhile never shifts a page.
      for (let n = 0; n < maxPages; n += 1) {
        const rows = await page(
          {
            account,
            start_lt: fromLt.toString(),
            ...(range.toLt ? { end_lt: range.toLt } : {}),
            sort: 'asc',
            limit: String(pageSize),
          },
          signal,
        );
        requests += 1;
        let highest = fromLt - 1n;
        for (const row of rows) {
          const tx = fromV3Transaction(row);
          seen.set(`${tx.lt}:${tx.hash}`, tx);
          if (BigInt(tx.lt) > highest) highest = BigInt(tx.lt);
        }
        if (rows.length < pageSize || highest < fromLt) {
          complete = true;
          break;
        }
        fromLt = highest + 1n;
      }
      const transactions = [...seen.values()].sort((a, b) => (BigInt(a.lt) < BigInt(b.lt) ? -1 : BigInt(a.lt) > BigInt(b.lt) ? 1 : 0));
      return { transactions, requests, complete };
    },
  };
}
