// An account's history from toncenter API v3 (`GET /api/v3/transactions?account=…`), paged by lt:
// what reconciliation re-reads when a deposit's books differ from the chain (src/reader/heal.ts).
// Every request goes through the same request budget as the block reader's. Only finalized
// transactions are served by this endpoint, each once (ton-index-go orders one account's by lt).
import type { RequestBudget } from './budget.ts';
import { v3Requester } from './v3Request.ts';
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

export function toncenterV3History(options: AccountHistoryOptions): AccountHistory {
  const pageSize = Math.min(1000, options.pageSize ?? 100);
  const maxPages = options.maxPages ?? 20;

  const get = v3Requester(options);

  async function page(params: Record<string, string>, signal?: AbortSignal): Promise<V3Transaction[]> {
    const reply = await get<{ transactions?: unknown }>('transactions', params, signal);
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
