// An account's history from toncenter API v3 (`GET /api/v3/transactions?account=…`), paged by lt:
// what reconciliation re-reads when a deposit's books differ from the chain (src/reader/heal.ts);
// and which jetton wallets its deposits own (`GET /api/v3/jetton/wallets?owner_address=…`), so that
// a jetton sent without a notification is found (src/treasury/reconcile.ts).
// Every request goes through the same request budget as the block reader's. Only finalized
// transactions are served by this endpoint, each once (ton-index-go orders one account's by lt).
import { Address } from '@ton/core';
import { allowedPageSize, isRequestTooLong, MAX_REQUEST_LINE_BYTES, requestLineBytes, v3Requester, type V3RequestOptions } from './v3Request.ts';
import { fromV3Transaction, type ChainTransaction, type V3Transaction } from './transactions.ts';

interface AccountHistoryPage {
  /**
   * The account's transactions with `fromLt` ≤ lt ≤ `toLt`, ascending lt: the newest `maxPages`
   * pages of them (what differs from the books is almost always the newest).
   */
  transactions: ChainTransaction[];
  /** Chain API requests it took. */
  requests: number;
  /** False: `maxPages` ran out before the range did (its oldest transactions were not read). */
  complete: boolean;
}

/** A jetton wallet as the indexer lists it (`/api/v3/jetton/wallets`): raw addresses, balance in the jetton's base units. */
interface IndexedJettonWallet {
  address: string;
  owner: string;
  master: string;
  balance: bigint;
}

export interface AccountHistory {
  transactions(account: string, range?: { fromLt?: string | null; toLt?: string | null }, signal?: AbortSignal): Promise<AccountHistoryPage>;
  /**
   * The jetton wallets (of any master) with a balance whose owner is one of `owners`
   * (`/api/v3/jetton/wallets?owner_address=…`, OWNERS_PER_REQUEST owners a request, paged).
   */
  jettonWallets(owners: readonly string[], signal?: AbortSignal): Promise<{ wallets: IndexedJettonWallet[]; requests: number }>;
}

/**
 * Owners asked about in one `jetton/wallets` request at most; fewer when the request line would
 * pass MAX_REQUEST_LINE_BYTES (owners are sent in their user-friendly form, 48 characters: 100 of
 * them make a line of ~6.4 KB; raw, the `:` percent-encoded, they made 8.4 KB, which fronts refuse).
 */
const OWNERS_PER_REQUEST = 100;

/** An owner as `jetton/wallets` is asked about it: user-friendly, URL-safe (nothing to percent-encode), any address form being accepted. */
const askedAs = (owner: string) => Address.parse(owner).toString({ urlSafe: true, bounceable: true });

interface AccountHistoryOptions extends V3RequestOptions {
  /**
   * Rows per page (default 100, toncenter's default; at most 1000). An API run with a smaller
   * `-max-limit` refuses it (500 or 422 "limit is not allowed: N > M"): the history then asks M per page
   * from that request on, as the block source does.
   */
  pageSize?: number;
  /** Pages per call at most (default 20). */
  maxPages?: number;
}

export function toncenterV3History(options: AccountHistoryOptions): AccountHistory {
  let pageSize = Math.min(1000, options.pageSize ?? 100);
  /** Owners per `jetton/wallets` request: halved from then on each time a front refuses the line (414/431). */
  let ownersPerRequest = OWNERS_PER_REQUEST;
  const maxPages = options.maxPages ?? 20;

  const request = v3Requester(options);

  /** One page of `path` at `limit` = the page size; a "limit is not allowed: N > M" (500 or 422) sets it to M and asks again. */
  async function get<T>(path: string, params: Record<string, string | readonly string[]>, signal?: AbortSignal): Promise<T> {
    for (;;) {
      try {
        return await request<T>(path, { ...params, limit: String(pageSize) }, signal);
      } catch (error) {
        const allowed = allowedPageSize(error, pageSize);
        if (allowed === null) throw error;
        pageSize = allowed;
      }
    }
  }

  async function page(params: Record<string, string>, signal?: AbortSignal): Promise<V3Transaction[]> {
    const reply = await get<{ transactions?: unknown }>('transactions', params, signal);
    return Array.isArray(reply.transactions) ? (reply.transactions as V3Transaction[]) : [];
  }

  return {
    async jettonWallets(owners, signal) {
      const wallets: IndexedJettonWallet[] = [];
      let requests = 0;
      const asked = owners.map(askedAs);
      const params = (batch: readonly string[], offset: number) => ({
        owner_address: batch,
        exclude_zero_balance: 'true',
        offset: String(offset),
        limit: String(pageSize),
      });
      for (let from = 0; from < asked.length; ) {
        // As many owners as fit: at most ownersPerRequest, the longest page's line under the limit.
        let take = Math.min(ownersPerRequest, asked.length - from);
        const widest = (n: number) => requestLineBytes(options.baseUrl, 'jetton/wallets', params(asked.slice(from, from + n), 1_000_000));
        while (take > 1 && widest(take) > MAX_REQUEST_LINE_BYTES) take -= 1;
        const batch = asked.slice(from, from + take);
        const found: IndexedJettonWallet[] = [];
        try {
          for (let offset = 0; ; offset += pageSize) {
            const reply = await get<{ jetton_wallets?: unknown }>(
              'jetton/wallets',
              { owner_address: batch, exclude_zero_balance: 'true', offset: String(offset) },
              signal,
            );
            requests += 1;
            const rows = Array.isArray(reply.jetton_wallets) ? (reply.jetton_wallets as Array<Record<string, unknown>>) : [];
            for (const row of rows) {
              const wallet = indexedWallet(row);
              if (wallet) found.push(wallet);
            }
            if (rows.length < pageSize) break;
          }
        } catch (error) {
          // A front before the API refused the line as too long (its limit is below ours): half as
          // many owners from now on, this batch asked again. One owner refused is the API's answer.
          if (!isRequestTooLong(error) || take === 1) throw error;
          requests += 1;
          ownersPerRequest = Math.max(1, Math.floor(take / 2));
          continue;
        }
        wallets.push(...found);
        from += take;
      }
      return { wallets, requests };
    },

    async transactions(account, range = {}, signal) {
      const seen = new Map<string, ChainTransaction>();
      const fromLt = range.fromLt ? BigInt(range.fromLt) : null;
      let toLt = range.toLt ? BigInt(range.toLt) : null;
      let requests = 0;
      let complete = false;
      // Paged by lt, not offset, newest first: descending from `toLt`, the next page ends below the
      // lowest lt seen, so a transaction added meanwhile never shifts a page, and an account longer
      // than `maxPages` pages still has its newest transactions read.
      for (let n = 0; n < maxPages; n += 1) {
        const rows = await page(
          {
            account,
            ...(fromLt !== null ? { start_lt: fromLt.toString() } : {}),
            ...(toLt !== null ? { end_lt: toLt.toString() } : {}),
            sort: 'desc',
          },
          signal,
        );
        requests += 1;
        let lowest: bigint | null = null;
        for (const row of rows) {
          const tx = fromV3Transaction(row);
          seen.set(`${tx.lt}:${tx.hash}`, tx);
          if (lowest === null || BigInt(tx.lt) < lowest) lowest = BigInt(tx.lt);
        }
        // A short page is the last; so is one that did not move below the previous (a faulty API).
        if (rows.length < pageSize || lowest === null || (toLt !== null && lowest > toLt) || lowest <= (fromLt ?? 0n)) {
          complete = true;
          break;
        }
        toLt = lowest - 1n;
      }
      const transactions = [...seen.values()].sort((a, b) => (BigInt(a.lt) < BigInt(b.lt) ? -1 : BigInt(a.lt) > BigInt(b.lt) ? 1 : 0));
      return { transactions, requests, complete };
    },
  };
}

/** One row of `jetton/wallets`, or null when it is not what ton-index-go sends. */
function indexedWallet(row: Record<string, unknown>): IndexedJettonWallet | null {
  const { address, owner, jetton, balance } = row;
  if (typeof address !== 'string' || typeof owner !== 'string' || typeof jetton !== 'string' || typeof balance !== 'string' || !/^\d+$/.test(balance))
    return null;
  try {
    return {
      address: Address.parse(address).toRawString(),
      owner: Address.parse(owner).toRawString(),
      master: Address.parse(jetton).toRawString(),
      balance: BigInt(balance),
    };
  } catch {
    return null;
  }
}
