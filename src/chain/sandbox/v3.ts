/**
 * toncenter API v3 emulation over the sandbox chain's blocks: the two endpoints the chain reader
 * uses, in toncenter's JSON shapes, with its paging. Framework-free: give it the path after
 * `/api/v3/` and the query string.
 */
import { createHash } from 'node:crypto';
import { toV3Transaction } from '../transactions.ts';
import type { SandboxBlock, SandboxChain } from './chain.ts';

export type V3Reply = { status: number; json: unknown };

const MASTER_SHARD = '8000000000000000';
const MAX_LIMIT = 1000;

function blockJson(block: SandboxBlock) {
  const h = (kind: string) => createHash('sha256').update(`kassa-sandbox:${kind}:${block.seqno}`).digest('base64');
  return {
    workchain: -1,
    shard: MASTER_SHARD,
    seqno: block.seqno,
    root_hash: h('root'),
    file_hash: h('file'),
    gen_utime: String(block.utime),
    tx_count: block.transactions.length,
  };
}

function error(status: number, message: string): V3Reply {
  return { status, json: { error: message } };
}

function intParam(query: URLSearchParams, name: string, fallback: number | null): number | null {
  const raw = query.get(name);
  if (raw === null || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) return Number.NaN;
  return Number(raw);
}

export function handleV3(chain: SandboxChain, path: string, query: URLSearchParams): V3Reply {
  const injected = chain.takeInjectedFailure();
  if (injected !== null) return error(injected, injected === 429 ? 'Ratelimit exceed' : `Injected failure (HTTP ${injected})`);

  if (path === 'masterchainInfo') {
    const last = chain.latestPublishedBlock();
    return { status: 200, json: { first: blockJson(chain.firstBlock() ?? last), last: blockJson(last) } };
  }

  if (path === 'transactionsByMasterchainBlock') {
    const seqno = intParam(query, 'seqno', null);
    const limit = intParam(query, 'limit', 128);
    const offset = intParam(query, 'offset', 0);
    const sort = query.get('sort') ?? 'desc';
    if (seqno === null || Number.isNaN(seqno)) return error(422, 'seqno: an integer is required');
    if (limit === null || Number.isNaN(limit) || limit < 1 || limit > MAX_LIMIT) return error(422, `limit: an integer from 1 to ${MAX_LIMIT}`);
    if (offset === null || Number.isNaN(offset)) return error(422, 'offset: a non-negative integer');
    if (sort !== 'asc' && sort !== 'desc') return error(422, 'sort: asc or desc');
    const block = chain.publishedBlock(seqno);
    if (block === null) return error(404, `block ${seqno} not found`);
    const ordered = [...block.transactions].sort((a, b) => (a.tx.lt < b.tx.lt ? -1 : a.tx.lt > b.tx.lt ? 1 : 0));
    if (sort === 'desc') ordered.reverse();
    // The test switch: a page past the first answers the previous page again (a stale cache).
    const from = offset > 0 && chain.takeRepeatedPage() ? Math.max(0, offset - limit) : offset;
    const page = ordered.slice(from, from + limit).map(({ tx, account }) => toV3Transaction(tx, account, block.seqno));
    return { status: 200, json: { transactions: page, address_book: {} } };
  }

  return error(404, `not found: /api/v3/${path}`);
}
