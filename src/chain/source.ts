// Where the chain reader gets blocks: one small interface, and its toncenter API v3 source (which
// the sandbox network also serves). A block here is a masterchain block together with every shard
// block it commits: reading them in masterchain order reads every transaction exactly once.
import { ChainApiError } from './apiError.ts';
import { allowedPageSize, NOT_INDEXED, V3ApiError, v3Requester, type V3RequestOptions } from './v3Request.ts';
import { fromV3Transaction, type ChainTransaction, type V3Transaction } from './transactions.ts';

export interface BlockRef {
  seqno: number;
  /** Generation time of the masterchain block (the chain's clock). */
  time: Date;
  /** The oldest block the API can serve, when it says (masterchainInfo's `first`). */
  firstSeqno?: number;
}

export interface ChainBlock extends BlockRef {
  /** Every transaction of the block and of the shard blocks it commits, each once, by lt. */
  transactions: ChainTransaction[];
  /** Chain API requests this block took (pages, retries of a repeated page). */
  requests: number;
}

export interface ChainSource {
  /**
   * The newest masterchain block the API has indexed. Not a promise that every block before it is:
   * ton-index-worker indexes blocks in parallel and commits them in no fixed order.
   */
  latestBlock(signal?: AbortSignal): Promise<BlockRef>;
  /**
   * One masterchain block, all pages of it; null while the API has not indexed it (not yet, or not
   * made yet: ton-index-go's 404 "masterchain block N not found", or another indexer's empty list):
   * the caller asks again later and never moves past it.
   */
  block(seqno: number, signal?: AbortSignal): Promise<ChainBlock | null>;
}

interface ToncenterV3Options extends V3RequestOptions {
  /**
   * Transactions per page (default 1000, the most toncenter allows: a block is one request unless it
   * holds more). An API run with a smaller `-max-limit` refuses it (500 or 422 "limit is not allowed: N >
   * M"): the source then asks M per page from that page on.
   */
  pageSize?: number;
}

const MAX_PAGES = 10_000;

/**
 * What a refused page means: `not_indexed` (404 "masterchain block N not found" for this block: not
 * yet), `{ pageSize }` ("limit is not allowed", 500 or 422: the most the API serves per page), else null.
 */
function refusal(error: unknown, seqno: number, pageSize: number): 'not_indexed' | { pageSize: number } | null {
  if (!(error instanceof V3ApiError) || error.apiError === null) return null;
  if (error.status === 404 && Number(NOT_INDEXED.exec(error.apiError)?.[1]) === seqno) return 'not_indexed';
  const allowed = allowedPageSize(error, pageSize);
  return allowed === null ? null : { pageSize: allowed };
}

/** toncenter API v3: `/api/v3/masterchainInfo` and `/api/v3/transactionsByMasterchainBlock`. */
export function toncenterV3Source(options: ToncenterV3Options): ChainSource {
  let pageSize = options.pageSize ?? 1000;

  const get = v3Requester(options);

  const blockRef = (block: { seqno?: unknown; gen_utime?: unknown } | undefined): BlockRef => {
    const seqno = Number(block?.seqno);
    const time = Number(block?.gen_utime);
    if (!Number.isSafeInteger(seqno) || !Number.isFinite(time))
      throw new ChainApiError('masterchainInfo without last.seqno/gen_utime', { status: null, retryable: true });
    return { seqno, time: new Date(time * 1000) };
  };

  return {
    async latestBlock(signal) {
      const info = await get<{ last?: { seqno?: unknown; gen_utime?: unknown }; first?: { seqno?: unknown } }>('masterchainInfo', {}, signal);
      const first = Number(info.first?.seqno);
      return { ...blockRef(info.last), ...(Number.isSafeInteger(first) ? { firstSeqno: first } : {}) };
    },

    /**
     * How "not indexed yet" is told from "indexed", at no extra request: ton-index-go answers a
     * block it has not indexed (a hole below the tip, the tip + 1) with 404 `{"error":"masterchain
     * block N not found"}` (crud_transactions.go asks queryBlockExists first); other
     * toncenter-compatible indexers answer 200 with an empty list, which means the same, since every
     * real masterchain block has transactions (the tick and tock of the special accounts, e.g. the
     * elector and the config). ton-index-worker commits a block row with all of its transactions in
     * one database transaction (InsertManagerPostgres.cpp), so a served first page means the whole
     * block is there. Asking `/api/v3/blocks` first would say the same for one request more per
     * block. Pages are asked in ascending order explicitly (the API's default is descending), and
     * stable: `lt asc, account asc`.
     */
    async block(seqno, signal) {
      const seen = new Map<string, ChainTransaction>();
      let requests = 0;
      let blockTime = 0;
      let repeatsInARow = 0;
      for (let page = 0, offset = 0; page < MAX_PAGES; page += 1) {
        let reply: { transactions?: V3Transaction[] };
        try {
          requests += 1;
          reply = await get('transactionsByMasterchainBlock', { seqno, limit: pageSize, offset, sort: 'asc' }, signal);
        } catch (error) {
          const refused = refusal(error, seqno, pageSize);
          if (refused === 'not_indexed' && page === 0) return null;
          if (refused === null || refused === 'not_indexed') throw error;
          pageSize = refused.pageSize;
          page -= 1;
          continue;
        }
        const rows = Array.isArray(reply.transactions) ? reply.transactions : [];
        let fresh = 0;
        for (const row of rows) {
          const tx = fromV3Transaction(row);
          if (row.mc_block_seqno !== undefined && row.mc_block_seqno !== null && Number(row.mc_block_seqno) !== seqno) {
            throw new ChainApiError(`block ${seqno}: the API returned a transaction of block ${row.mc_block_seqno}`, { status: null, retryable: true });
          }
          if (!seen.has(tx.hash)) {
            seen.set(tx.hash, tx);
            fresh += 1;
          }
          // A lower bound of the block's time: no transaction it commits is newer than the block.
          if (tx.now > blockTime) blockTime = tx.now;
        }
        // A full page of nothing new is a page served twice (a cache, a retry): ask for it again
        // rather than skip what it should have held. A third repeat in a row is the API's fault: fail.
        if (rows.length > 0 && fresh === 0) {
          repeatsInARow += 1;
          if (repeatsInARow > 2) throw new ChainApiError(`block ${seqno}: the API keeps repeating page ${page}`, { status: null, retryable: true });
          page -= 1;
          continue;
        }
        repeatsInARow = 0;
        if (page === 0 && rows.length === 0) return null;
        offset += rows.length;
        if (rows.length < pageSize) break;
      }
      const transactions = [...seen.values()].sort((a, b) =>
        BigInt(a.lt) < BigInt(b.lt) ? -1 : BigInt(a.lt) > BigInt(b.lt) ? 1 : a.hash.localeCompare(b.hash),
      );
      return { seqno, time: new Date(blockTime * 1000), transactions, requests };
    },
  };
}
