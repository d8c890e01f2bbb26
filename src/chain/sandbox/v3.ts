/**
 * toncenter API v3 emulation over the sandbox chain's blocks, true to the code that serves the real
 * one (toncenter/ton-indexer: `ton-index-go/main.go`, `index/crud/*.go`, `index/models/*.go`; see
 * /work/shared/TON-NOTES.md "How toncenter v3 really behaves"):
 * - `transactionsByMasterchainBlock` answers 404 `{"error":"masterchain block N not found"}` for a
 *   block not indexed yet — a hole below the tip, the tip + 1, a future seqno (the handler's own 404
 *   is commented out, but crud_transactions.go `QueryTransactions` asks `queryBlockExists` first);
 *   `chain.v3.unindexedBlock = 'empty'` plays the other toncenter-compatible indexers' 200
 *   `{"transactions":[],"address_book":{}}` instead (both mean "not yet"); default `sort=desc`,
 *   `limit=100`; `limit` over `-max-limit` (1000, `chain.v3.maxLimit` to play a deployment run with
 *   another; every endpoint here: the block source and the account history both learn M from it)
 *   → `{"error":"limit is not allowed: N > M"}` (crud.go `limitQuery`) with status 500, as the 2025
 *   releases answer it (`QueryTransactions` rewraps the query builder's 422), or 422 as newer ones
 *   do (`chain.v3.limitRefusalStatus`); order
 *   `lt <sort>, account asc` (crud_transactions.go, with `mc_seqno`).
 * - every block has the tick and tock transactions of the special accounts (the elector
 *   -1:3333…, the config -1:5555…), and may carry strangers' transfers: rows the reader ignores.
 * - `masterchainInfo.last` is the highest indexed seqno (crud_blocks.go: `order by seqno desc
 *   limit 1`), so a lower block can still be missing (chain.ts holdBlock); `gen_utime`, `start_lt`,
 *   `end_lt` are strings (models/blockchain.go `Block`).
 * - `blocks?workchain=-1&seqno=N`: `{"blocks":[…]}`, empty while N is not indexed.
 * - `transactions` (an account's history, history.ts) and `jetton/wallets` (owners' jetton wallets,
 *   v3JettonWallets.ts), behind the same gateway.
 * - the gateway's 429: `{"ok":false,"result":"Ratelimit exceed","code":429}`, no Retry-After.
 * Framework-free: give it the path after `/api/v3/` and the query string.
 */
import { handleV3Transactions } from './history.ts';
import { handleV3JettonWallets } from './v3JettonWallets.ts';
import { createHash } from 'node:crypto';
import { Address, beginCell } from '@ton/core';
import { toV3Transaction } from '../transactions.ts';
import type { SandboxBlock, SandboxChain } from './chain.ts';
import { intParam, pageParams, v3Error as error } from './v3Params.ts';

export type V3Reply = { status: number; json: unknown };

const MASTER_SHARD = '8000000000000000';
/** The special accounts that run a tick and a tock transaction in every masterchain block. */
const TICK_TOCK_ACCOUNTS = [
  '-1:3333333333333333333333333333333333333333333333333333333333333333',
  '-1:5555555555555555555555555555555555555555555555555555555555555555',
] as const;

const hashOf = (...parts: (string | number | bigint)[]) =>
  createHash('sha256')
    .update(`kassa-sandbox:${parts.join(':')}`)
    .digest();
const b64 = (...parts: (string | number | bigint)[]) => hashOf(...parts).toString('base64');
const EMPTY_BODY = beginCell().endCell();
const EMPTY_BODY_B64 = EMPTY_BODY.toBoc().toString('base64');
const EMPTY_BODY_HASH = EMPTY_BODY.hash().toString('base64');

function blockJson(block: SandboxBlock) {
  return {
    workchain: -1,
    shard: MASTER_SHARD,
    seqno: block.seqno,
    root_hash: b64('root', block.seqno),
    file_hash: b64('file', block.seqno),
    global_id: -217,
    version: 0,
    after_merge: false,
    before_split: false,
    after_split: false,
    want_merge: false,
    want_split: false,
    key_block: false,
    vert_seqno_incr: false,
    flags: 1,
    gen_utime: String(block.utime),
    start_lt: block.startLt.toString(),
    end_lt: block.endLt.toString(),
    validator_list_hash_short: 0,
    gen_catchain_seqno: 0,
    min_ref_mc_seqno: block.seqno - 1,
    prev_key_block_seqno: 0,
    vert_seqno: 1,
    master_ref_seqno: 0,
    rand_seed: b64('seed', block.seqno),
    created_by: b64('validator'),
    tx_count: block.transactions.length + TICK_TOCK_ACCOUNTS.length * 2 + block.others,
    masterchain_block_ref: { workchain: -1, shard: MASTER_SHARD, seqno: block.seqno },
    prev_blocks: [{ workchain: -1, shard: MASTER_SHARD, seqno: block.seqno - 1 }],
  };
}

const upper = (raw: string) => raw.toUpperCase();
const blockRef = (seqno: number) => ({ workchain: -1, shard: MASTER_SHARD, seqno });

/** A tick (start of block) or tock (end) transaction of a special account (models/blockchain.go `TransactionDescr`, type `tick_tock`). */
function tickTock(block: SandboxBlock, account: string, tock: boolean, lt: bigint): Record<string, unknown> {
  const hash = b64('ticktock', block.seqno, account, tock ? 'tock' : 'tick');
  return {
    account: upper(account),
    hash,
    lt: lt.toString(),
    now: block.utime,
    mc_block_seqno: block.seqno,
    trace_id: hash,
    prev_trans_hash: b64('ticktock-prev', block.seqno, account, tock ? 'tock' : 'tick'),
    prev_trans_lt: (lt - 1n).toString(),
    orig_status: 'active',
    end_status: 'active',
    total_fees: '0',
    total_fees_extra_currencies: {},
    description: {
      type: 'tick_tock',
      aborted: false,
      destroyed: false,
      is_tock: tock,
      storage_ph: { storage_fees_collected: '0', status_change: 'unchanged' },
      compute_ph: {
        skipped: false,
        success: true,
        msg_state_used: false,
        account_activated: false,
        gas_fees: '0',
        gas_used: '2922',
        gas_limit: '10000000',
        mode: 0,
        exit_code: 0,
        vm_steps: 47,
        vm_init_state_hash: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
        vm_final_state_hash: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
      },
      action: {
        success: true,
        valid: true,
        no_funds: false,
        status_change: 'unchanged',
        result_code: 0,
        tot_actions: 0,
        spec_actions: 0,
        skipped_actions: 0,
        msgs_created: 0,
        action_list_hash: 'lqKW0iTyhcZ77pPDD4owkVfw2qNdxbh+QQt4YwoJz8c=',
        tot_msg_size: { cells: '0', bits: '0' },
      },
    },
    block_ref: blockRef(block.seqno),
    in_msg: null,
    out_msgs: [],
    account_state_before: null,
    account_state_after: null,
    emulated: false,
    finality: 'finalized',
  };
}

/** A transfer between two strangers' wallets in the basechain, committed by this block (an ordinary transaction). */
function strangersTransfer(block: SandboxBlock, i: number, lt: bigint): Record<string, unknown> {
  const account = `0:${hashOf('stranger', block.seqno, i).toString('hex').toUpperCase()}`;
  const source = `0:${hashOf('stranger-src', block.seqno, i).toString('hex').toUpperCase()}`;
  const hash = b64('stranger-tx', block.seqno, i);
  return {
    account,
    hash,
    lt: lt.toString(),
    now: block.utime,
    mc_block_seqno: block.seqno,
    trace_id: hash,
    prev_trans_hash: b64('stranger-prev', block.seqno, i),
    prev_trans_lt: (lt - 1_000_000n).toString(),
    orig_status: 'active',
    end_status: 'active',
    total_fees: '128431',
    total_fees_extra_currencies: {},
    description: {
      type: 'ord',
      aborted: false,
      destroyed: false,
      credit_first: true,
      storage_ph: { storage_fees_collected: '31', status_change: 'unchanged' },
      credit_ph: { credit: '250000000' },
      compute_ph: {
        skipped: false,
        success: true,
        msg_state_used: false,
        account_activated: false,
        gas_fees: '123200',
        gas_used: '308',
        gas_limit: '0',
        mode: 0,
        exit_code: 0,
        vm_steps: 8,
      },
      action: {
        success: true,
        valid: true,
        no_funds: false,
        status_change: 'unchanged',
        result_code: 0,
        tot_actions: 0,
        spec_actions: 0,
        skipped_actions: 0,
        msgs_created: 0,
      },
    },
    block_ref: { workchain: 0, shard: MASTER_SHARD, seqno: block.seqno * 2 },
    in_msg: {
      hash: b64('stranger-msg', block.seqno, i),
      source,
      destination: account,
      value: '250000000',
      value_extra_currencies: {},
      fwd_fee: '266669',
      ihr_fee: '0',
      extra_flags: '0',
      created_lt: (lt - 1n).toString(),
      created_at: String(block.utime),
      opcode: null,
      ihr_disabled: true,
      bounce: false,
      bounced: false,
      import_fee: null,
      message_content: { hash: EMPTY_BODY_HASH, body: EMPTY_BODY_B64, decoded: null },
      init_state: null,
    },
    out_msgs: [],
    account_state_before: null,
    account_state_after: null,
    emulated: false,
    finality: 'finalized',
  };
}

/** Every row of a block in ascending order (lt asc, account asc), as ton-index-go sorts `sort=asc`. */
function blockRows(block: SandboxBlock): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const [i, account] of TICK_TOCK_ACCOUNTS.entries()) rows.push(tickTock(block, account, false, block.startLt + BigInt(i)));
  for (const { tx, account } of block.transactions) rows.push(toV3Transaction(tx, account, block.seqno));
  for (let i = 0; i < block.others; i += 1) rows.push(strangersTransfer(block, i, block.startLt + 2n + BigInt(i)));
  for (const [i, account] of TICK_TOCK_ACCOUNTS.entries()) rows.push(tickTock(block, account, true, block.endLt - 1n + BigInt(i)));
  return rows.sort(byLt('asc'));
}

/** ton-index-go's order of a block's transactions: `lt <sort>, account asc` (the account breaks ties either way). */
function byLt(sort: 'asc' | 'desc') {
  const direction = sort === 'asc' ? 1 : -1;
  return (a: Record<string, unknown>, b: Record<string, unknown>): number => {
    const la = BigInt(a.lt as string);
    const lb = BigInt(b.lt as string);
    if (la !== lb) return la < lb ? -direction : direction;
    return (a.account as string) < (b.account as string) ? -1 : (a.account as string) > (b.account as string) ? 1 : 0;
  };
}

/**
 * The last few blocks' rows (a block is asked for page by page; the JSON of a transaction costs a
 * BOC each), with the block's transactions they were built from: a block whose list changed since
 * (history.ts's holdOutOfBlockStream takes transactions out of it) is built again.
 */
const rowCache = new Map<SandboxBlock, { rows: Record<string, unknown>[]; from: SandboxBlock['transactions'] }>();
const ROW_CACHE_BLOCKS = 16;

function rowsOf(block: SandboxBlock): Record<string, unknown>[] {
  const cached = rowCache.get(block);
  const current = cached !== undefined && cached.from.length === block.transactions.length && cached.from.every((entry, i) => entry === block.transactions[i]);
  if (current) return cached.rows;
  const rows = blockRows(block);
  rowCache.delete(block);
  rowCache.set(block, { rows, from: [...block.transactions] });
  for (const old of rowCache.keys()) {
    if (rowCache.size <= ROW_CACHE_BLOCKS) break;
    rowCache.delete(old);
  }
  return rows;
}

/** models/types.go `AddressBook`: every address of the page, raw (upper case) → user-friendly. */
function addressBook(rows: Record<string, unknown>[]): Record<string, unknown> {
  const book: Record<string, unknown> = {};
  const add = (raw: unknown) => {
    if (typeof raw !== 'string' || raw in book) return;
    const friendly = Address.parseRaw(raw).toString({ urlSafe: true, bounceable: raw.startsWith('-1:'), testOnly: false });
    book[raw] = { user_friendly: friendly, domain: null, interfaces: [] };
  };
  for (const row of rows) {
    add(row.account);
    const inMsg = row.in_msg as { source?: unknown } | null;
    add(inMsg?.source);
    for (const out of (row.out_msgs as { destination?: unknown }[]) ?? []) add(out.destination);
  }
  return book;
}

const EMPTY_TRANSACTIONS: V3Reply = { status: 200, json: { transactions: [], address_book: {} } };

export function handleV3(chain: SandboxChain, path: string, query: URLSearchParams): V3Reply | Promise<V3Reply> {
  const injected = chain.takeInjectedFailure();
  if (injected === 429) return { status: 429, json: { ok: false, result: 'Ratelimit exceed', code: 429 } };
  if (injected !== null) return error(injected, `Injected failure (HTTP ${injected})`);
  // An account's history (reconciliation re-reads it): its own parameters, the same gateway in front.
  if (path === 'transactions') return handleV3Transactions(chain, query);
  // The jetton wallets of some owners (reconciliation asks for its deposits'): the same gateway.
  if (path === 'jetton/wallets') return handleV3JettonWallets(chain, query);

  if (path === 'masterchainInfo') {
    const last = chain.latestPublishedBlock();
    return { status: 200, json: { last: blockJson(last), first: blockJson(chain.firstBlock() ?? last) } };
  }

  const paging = pageParams(query, chain.v3);
  if ('status' in paging) return paging;
  const { take, skip, sort } = paging;

  if (path === 'transactionsByMasterchainBlock') {
    const seqno = intParam(query, 'seqno');
    if (seqno === 'invalid' || seqno === null) return error(422, 'failed to parse query: seqno must be an integer');
    // Not indexed yet, or never: queryBlockExists says no (or, as other indexers, nothing in it).
    const block = chain.publishedBlock(seqno);
    if (block === null) return chain.v3.unindexedBlock === 'empty' ? EMPTY_TRANSACTIONS : error(404, `masterchain block ${seqno} not found`);
    const ordered = rowsOf(block);
    // The test switch: a page past the first answers the previous page again (a stale cache).
    const from = skip > 0 && chain.takeRepeatedPage() ? Math.max(0, skip - take) : skip;
    const page = (sort === 'asc' ? ordered : [...ordered].sort(byLt('desc'))).slice(from, from + take);
    return { status: 200, json: { transactions: page, address_book: addressBook(page) } };
  }

  if (path === 'blocks') {
    const workchain = intParam(query, 'workchain');
    const seqno = intParam(query, 'seqno');
    if (workchain === 'invalid' || seqno === 'invalid') return error(422, 'failed to parse query: workchain and seqno must be integers');
    if (workchain !== -1 || seqno === null) return error(422, 'the sandbox serves masterchain blocks by seqno only (workchain=-1&seqno=N)');
    const block = chain.publishedBlock(seqno);
    return { status: 200, json: { blocks: block === null || skip > 0 ? [] : [blockJson(block)] } };
  }

  return error(404, `not found: /api/v3/${path}`);
}
