/**
 * toncenter API v3 `GET /api/v3/transactions` over the sandbox chain: an account's history, which
 * reconciliation re-reads (src/reader/heal.ts). Imitates ton-index-go (`main.go` GetTransactions,
 * `index/crud/crud_transactions.go` buildTransactionsQuery, `index/crud/crud.go` limitQuery):
 * - `account` in any address form (answered in raw upper case), one or several; none: every account;
 * - `start_lt` / `end_lt` and `start_utime` / `end_utime`, inclusive;
 * - `limit` default 100, below 1 counts as 1, above 1000 → `{"error":"limit is not allowed: N > 1000"}`
 *   (500 as the 2025 releases answer it, 422 with `chain.v3.limitRefusalStatus = 422`);
 *   `offset` default 0; `sort` default `desc`;
 * - order: one account `account asc, lt <sort>`; otherwise `lt <sort>, account asc`;
 * - only transactions of masterchain blocks already indexed (published) — finalized ones.
 *
 * Also the test switch that makes a transaction the block stream never showed:
 * holdOutOfBlockStream() takes an account's transactions out of the published blocks'
 * `transactionsByMasterchainBlock` lists while this history keeps serving them.
 */
import { Address } from '@ton/core';
import type { BlockchainTransaction } from '@ton/sandbox';
import { toV3Transaction } from '../transactions.ts';
import type { SandboxChain } from './chain.ts';
import type { V3Reply } from './v3.ts';
import { pageParams, v3Error as error } from './v3Params.ts';

type Entry = { tx: BlockchainTransaction; account: string; seqno: number };

/** Per chain: transactions taken out of the block stream, with the masterchain block that committed them. */
const heldOut = new WeakMap<SandboxChain, Entry[]>();

/**
 * Test switch: every transaction of `account` (any form) in published block `seqno` (all published
 * blocks when omitted) disappears from it (transactionsByMasterchainBlock no longer lists it) but
 * stays on the chain and in the account's history (`/api/v3/transactions`). Seal the block first
 * (`seqno = chain.sealBlock()`). Returns how many transactions were held out.
 */
export function holdOutOfBlockStream(chain: SandboxChain, account: string, seqno?: number): number {
  const raw = Address.parse(account).toRawString();
  const held = heldOut.get(chain) ?? [];
  heldOut.set(chain, held);
  let count = 0;
  for (const block of publishedBlocks(chain)) {
    if (seqno !== undefined && block.seqno !== seqno) continue;
    for (let i = block.transactions.length - 1; i >= 0; i -= 1) {
      const entry = block.transactions[i]!;
      if (entry.account !== raw) continue;
      block.transactions.splice(i, 1);
      held.push({ tx: entry.tx, account: entry.account, seqno: block.seqno });
      count += 1;
    }
  }
  return count;
}

function* publishedBlocks(chain: SandboxChain) {
  const first = chain.firstBlock();
  if (first === null) return;
  const last = chain.latestPublishedBlock().seqno;
  for (let seqno = first.seqno; seqno <= last; seqno += 1) {
    const block = chain.publishedBlock(seqno);
    if (block !== null) yield block;
  }
}

function integer(query: URLSearchParams, name: string): bigint | null | 'bad' {
  const raw = query.get(name);
  if (raw === null || raw === '') return null;
  return /^-?\d{1,20}$/.test(raw) ? BigInt(raw) : 'bad';
}

/** `GET /api/v3/transactions` (the query string after `?`). */
export function handleV3Transactions(chain: SandboxChain, query: URLSearchParams): V3Reply {
  const accounts = new Set<string>();
  for (const value of query.getAll('account').flatMap((v) => v.split(','))) {
    if (value === '') continue;
    try {
      accounts.add(Address.parse(value).toRawString());
    } catch {
      return error(422, `failed to parse account address: ${value}`);
    }
  }
  const numbers: Record<string, bigint | null> = {};
  for (const name of ['start_lt', 'end_lt', 'start_utime', 'end_utime']) {
    const value = integer(query, name);
    if (value === 'bad') return error(422, `failed to parse ${name}`);
    numbers[name] = value;
  }
  const paging = pageParams(query, chain.v3);
  if ('status' in paging) return paging;
  const { take: limit, skip: offset, sort } = paging;

  const entries: Entry[] = [];
  for (const block of publishedBlocks(chain)) for (const { tx, account } of block.transactions) entries.push({ tx, account, seqno: block.seqno });
  for (const entry of heldOut.get(chain) ?? []) if (chain.publishedBlock(entry.seqno) !== null) entries.push(entry);

  const inRange = (value: bigint | number, from: bigint | null, to: bigint | null) =>
    (from === null || BigInt(value) >= from) && (to === null || BigInt(value) <= to);
  const wanted = entries.filter(
    ({ tx, account }) =>
      (accounts.size === 0 || accounts.has(account)) &&
      inRange(tx.lt, numbers.start_lt ?? null, numbers.end_lt ?? null) &&
      inRange(tx.now, numbers.start_utime ?? null, numbers.end_utime ?? null),
  );
  const direction = sort === 'asc' ? 1 : -1;
  wanted.sort((a, b) => {
    const byLt = a.tx.lt < b.tx.lt ? -1 : a.tx.lt > b.tx.lt ? 1 : 0;
    const byAccount = a.account < b.account ? -1 : a.account > b.account ? 1 : 0;
    return accounts.size === 1 ? byAccount || direction * byLt : direction * byLt || byAccount;
  });
  const page = wanted.slice(offset, offset + limit).map(({ tx, account, seqno }) => toV3Transaction(tx, account, seqno));
  return { status: 200, json: { transactions: page, address_book: {} } };
}
