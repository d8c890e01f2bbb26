/**
 * toncenter API v2 JSON-RPC emulation over the sandbox chain, so the unmodified TonClient (and so
 * Kassa's own get-method calls and the signer's sends) run against it exactly as against toncenter. Framework-free: give it the
 * parsed request body, send back `status` and `json`.
 *
 * Like ton-http-api, it answers from the state as of the last masterchain block (SandboxChain.v2State):
 * a transaction not committed yet (made since the last seal, or held back by commitLate) is not
 * served, and its account answers as it was before it; sendBoc meets the emulator's state now.
 *
 * Shapes follow what @ton/ton's HttpApi validates (its zod codecs) and toncenter's documented
 * responses: `{ok: true, result, id, jsonrpc}` or `{ok: false, code, error}` with HTTP status = code.
 */
import { createHash } from 'node:crypto';
import { type Address, Cell, beginCell, loadMessage, storeMessage, storeStateInit } from '@ton/core';
import type { Message, TupleItem } from '@ton/core';
import { GetMethodError } from '@ton/sandbox';
import type { BlockchainTransaction } from '@ton/sandbox';
import type { SandboxChain } from './chain.ts';
import { parseAddress } from '../addresses.ts';
import { OP_TEXT_COMMENT } from '../detect.ts';

export type JsonRpcReply = { status: number; json: unknown };

class RpcError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

type Params = Record<string, unknown>;
type Method = (chain: SandboxChain, params: Params) => Promise<unknown>;

const ZERO_HASH = Buffer.alloc(32).toString('base64');
const MASTERCHAIN_SHARD = '-9223372036854775808';

export async function handleJsonRpc(chain: SandboxChain, body: unknown): Promise<JsonRpcReply> {
  let request: unknown = body;
  if (typeof request === 'string' || Buffer.isBuffer(request)) {
    try {
      request = JSON.parse(request.toString());
    } catch {
      return failure(400, 'Invalid JSON body', undefined);
    }
  }
  const id = isObject(request) && (typeof request.id === 'string' || typeof request.id === 'number') ? request.id : undefined;

  const injected = chain.takeInjectedFailure();
  if (injected !== null) {
    return failure(injected, injected === 429 ? 'Ratelimit exceed' : `Injected failure (HTTP ${injected})`, id);
  }

  if (!isObject(request) || typeof request.method !== 'string') {
    return failure(422, 'Expected a JSON-RPC request object with a method', id);
  }
  const params = request.params === undefined || request.params === null ? {} : request.params;
  if (!isObject(params)) return failure(422, 'params must be an object', id);
  const method = Object.hasOwn(METHODS, request.method) ? METHODS[request.method] : undefined;
  if (method === undefined) return failure(404, `Method not found: ${request.method}`, id);
  try {
    const result = await method(chain, params);
    return { status: 200, json: { ok: true, result, id: id ?? '1', jsonrpc: '2.0' } };
  } catch (err) {
    if (err instanceof RpcError) return failure(err.code, err.message, id);
    return failure(500, `LITE_SERVER_UNKNOWN: ${err instanceof Error ? err.message : String(err)}`, id);
  }
}

function failure(code: number, error: string, id: string | number | undefined): JsonRpcReply {
  return { status: code, json: { ok: false, code, error, ...(id !== undefined ? { id, jsonrpc: '2.0' } : {}) } };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

// ---- params --------------------------------------------------------------------------------

function addressParam(params: Params, name = 'address'): Address {
  const v = params[name];
  const a = typeof v === 'string' ? parseAddress(v) : null;
  if (a === null) throw new RpcError(416, `Incorrect address: ${String(v)}`);
  return a;
}

function intParam(params: Params, name: string): bigint | undefined {
  const v = params[name];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return BigInt(v);
  throw new RpcError(422, `${name} must be an integer`);
}

/** Transaction hashes arrive as hex (toncenter's documented form) or base64 (std or URL-safe). */
function hashParam(params: Params, name: string): Buffer | undefined {
  const v = params[name];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new RpcError(422, `${name} must be a string`);
  const buf = /^[0-9a-fA-F]{64}$/.test(v) ? Buffer.from(v, 'hex') : Buffer.from(v.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (buf.length !== 32) throw new RpcError(422, `${name} is not a 32-byte hash`);
  return buf;
}

// ---- shapes --------------------------------------------------------------------------------

function friendly(a: Address): string {
  return a.toString({ urlSafe: true, bounceable: true });
}

function blockId(seqno: number) {
  const h = (kind: string) => createHash('sha256').update(`kassa-sandbox:${kind}:${seqno}`).digest('base64');
  return {
    '@type': 'ton.blockIdExt',
    workchain: -1,
    shard: MASTERCHAIN_SHARD,
    seqno,
    root_hash: h('root'),
    file_hash: h('file'),
  };
}

function transactionId(lt: bigint, hash: Buffer) {
  return { '@type': 'internal.transactionId', lt: lt.toString(), hash: hash.toString('base64') };
}

function commentOf(body: Cell): string {
  try {
    const s = body.beginParse();
    if (s.remainingBits < 32 || s.loadUint(32) !== OP_TEXT_COMMENT) return '';
    return s.loadStringTail();
  } catch {
    return '';
  }
}

function messageJson(m: Message) {
  const info = m.info;
  const common = {
    '@type': 'raw.message',
    hash: beginCell().store(storeMessage(m)).endCell().hash().toString('base64'),
    body_hash: m.body.hash().toString('base64'),
    msg_data: {
      '@type': 'msg.dataRaw',
      body: m.body.toBoc().toString('base64'),
      init_state: m.init ? beginCell().store(storeStateInit(m.init)).endCell().toBoc().toString('base64') : '',
    },
    message: commentOf(m.body),
    extra_currencies: [] as unknown[],
  };
  if (info.type === 'internal') {
    return {
      ...common,
      source: friendly(info.src),
      destination: friendly(info.dest),
      value: info.value.coins.toString(),
      fwd_fee: info.forwardFee.toString(),
      ihr_fee: info.ihrFee.toString(),
      created_lt: info.createdLt.toString(),
    };
  }
  if (info.type === 'external-in') {
    return {
      ...common,
      source: '',
      destination: friendly(info.dest),
      value: '0',
      fwd_fee: '0',
      ihr_fee: '0',
      created_lt: '0',
    };
  }
  return {
    ...common,
    source: friendly(info.src),
    destination: '',
    value: '0',
    fwd_fee: '0',
    ihr_fee: '0',
    created_lt: info.createdLt.toString(),
  };
}

// A transaction never changes: render it once (as a JSON value, shared by every reply).
const txJsonCache = new WeakMap<BlockchainTransaction, Record<string, unknown>>();

function transactionJson(tx: BlockchainTransaction, account: Address): Record<string, unknown> {
  let json = txJsonCache.get(tx);
  if (json === undefined) {
    json = renderTransaction(tx, account);
    txJsonCache.set(tx, json);
  }
  return json;
}

function renderTransaction(tx: BlockchainTransaction, account: Address): Record<string, unknown> {
  const data = tx.raw.toBoc().toString('base64');
  const fee = tx.totalFees.coins;
  const d = tx.description;
  const storageFee = d.type === 'generic' ? (d.storagePhase?.storageFeesCollected ?? 0n) : 0n;
  const out: Record<string, unknown> = {
    '@type': 'raw.transaction',
    address: { '@type': 'accountAddress', account_address: friendly(account) },
    utime: tx.now,
    data,
    transaction_id: transactionId(tx.lt, tx.hash()),
    fee: fee.toString(),
    storage_fee: storageFee.toString(),
    other_fee: (fee - storageFee).toString(),
    out_msgs: [...tx.outMessages.values()].map(messageJson),
  };
  if (tx.inMessage) out.in_msg = messageJson(tx.inMessage);
  return out;
}

// ---- TVM stack (toncenter's format, as TonClient parses it) ------------------------------------

function parseStackArg(entry: unknown): TupleItem {
  if (!Array.isArray(entry) || typeof entry[0] !== 'string') throw new RpcError(422, 'stack entries are [type, value] pairs');
  const [type, value] = entry as [string, unknown];
  const cellOf = (): Cell => {
    const b64 = typeof value === 'string' ? value : isObject(value) && typeof value.bytes === 'string' ? value.bytes : null;
    if (b64 === null) throw new RpcError(422, `stack entry ${type} needs base64 bytes`);
    try {
      return Cell.fromBase64(b64);
    } catch {
      throw new RpcError(422, `stack entry ${type} is not a BOC`);
    }
  };
  switch (type) {
    case 'num':
    case 'number':
    case 'int': {
      const s = typeof value === 'number' ? String(value) : typeof value === 'string' ? value : '';
      const m = /^(-?)(0x[0-9a-fA-F]+|\d+)$/.exec(s);
      if (m === null) throw new RpcError(422, `bad number on stack: ${s}`);
      const n = BigInt(m[2]!);
      return { type: 'int', value: m[1] === '-' ? -n : n };
    }
    case 'tvm.Cell':
    case 'cell':
      return { type: 'cell', cell: cellOf() };
    case 'tvm.Slice':
    case 'slice':
      return { type: 'slice', cell: cellOf() };
    case 'tvm.Builder':
    case 'builder':
      return { type: 'builder', cell: cellOf() };
    case 'null':
      return { type: 'null' };
    default:
      throw new RpcError(422, `unsupported stack entry type ${type}`);
  }
}

function hexNum(n: bigint): string {
  return n < 0n ? `-0x${(-n).toString(16)}` : `0x${n.toString(16)}`;
}

function cellObj(cell: Cell) {
  return { bytes: cell.toBoc().toString('base64'), object: {} };
}

function stackItemJson(item: TupleItem): unknown[] {
  switch (item.type) {
    case 'int':
      return ['num', hexNum(item.value)];
    case 'nan':
      return ['num', 'NaN'];
    case 'null':
      return ['null'];
    case 'cell':
      return ['cell', cellObj(item.cell)];
    case 'slice':
      return ['slice', cellObj(item.cell)];
    case 'builder':
      return ['builder', cellObj(item.cell)];
    case 'tuple':
      return ['tuple', { '@type': 'tvm.tuple', elements: item.items.map(stackEntryJson) }];
  }
}

function stackEntryJson(item: TupleItem): unknown {
  switch (item.type) {
    case 'int':
      return { '@type': 'tvm.stackEntryNumber', number: { '@type': 'tvm.numberDecimal', number: item.value.toString() } };
    case 'cell':
      return { '@type': 'tvm.stackEntryCell', cell: { '@type': 'tvm.cell', bytes: item.cell.toBoc().toString('base64') } };
    case 'slice':
    case 'builder':
      return { '@type': 'tvm.stackEntrySlice', slice: { '@type': 'tvm.slice', bytes: item.cell.toBoc().toString('base64') } };
    case 'tuple':
      return { '@type': 'tvm.stackEntryTuple', tuple: { '@type': 'tvm.tuple', elements: item.items.map(stackEntryJson) } };
    case 'null':
    case 'nan':
      return { '@type': 'tvm.stackEntryList', list: { '@type': 'tvm.list', elements: [] } };
  }
}

// ---- methods -------------------------------------------------------------------------------

async function accountState(chain: SandboxChain, address: Address) {
  const contract = await chain.v2State(address);
  const st = contract.accountState;
  const state = st === undefined || st.type === 'uninit' ? 'uninitialized' : st.type === 'active' ? 'active' : 'frozen';
  const lt = st === undefined ? 0n : contract.lastTransactionLt;
  const hash = st === undefined ? Buffer.alloc(32) : Buffer.from(contract.lastTransactionHash.toString(16).padStart(64, '0'), 'hex');
  return {
    state,
    balance: st === undefined ? 0n : contract.balance,
    code: st?.type === 'active' && st.state.code ? st.state.code.toBoc().toString('base64') : '',
    data: st?.type === 'active' && st.state.data ? st.state.data.toBoc().toString('base64') : '',
    lastTransactionId: lt === 0n ? { '@type': 'internal.transactionId', lt: '0', hash: ZERO_HASH } : transactionId(lt, hash),
  };
}

const METHODS: Record<string, Method> = {
  async getTransactions(chain, params) {
    const address = addressParam(params);
    const limit = intParam(params, 'limit') ?? 10n;
    if (limit < 1n) throw new RpcError(422, 'limit must be positive');
    const lt = intParam(params, 'lt');
    const hash = hashParam(params, 'hash');
    const toLt = intParam(params, 'to_lt') ?? 0n;
    const txs = chain.transactionsOf(address).filter((t) => chain.v2Serves(t)); // ascending lt, committed only
    let start = txs.length - 1;
    if (lt !== undefined) {
      if (hash !== undefined) {
        start = txs.findIndex((t) => t.lt === lt && t.hash().equals(hash));
        if (start < 0) throw new RpcError(404, 'LITE_SERVER_UNKNOWN: transaction not found');
      } else {
        while (start >= 0 && txs[start]!.lt > lt) start--;
      }
    }
    const out: unknown[] = [];
    for (let i = start; i >= 0 && BigInt(out.length) < limit; i--) {
      const tx = txs[i]!;
      if (toLt !== 0n && tx.lt <= toLt) break;
      out.push(transactionJson(tx, address));
    }
    return out;
  },

  async runGetMethod(chain, params) {
    const address = addressParam(params);
    const method = params.method;
    if (typeof method !== 'string' && !(typeof method === 'number' && Number.isSafeInteger(method))) {
      throw new RpcError(422, 'method must be a name or a method id');
    }
    const rawStack = params.stack ?? [];
    if (!Array.isArray(rawStack)) throw new RpcError(422, 'stack must be an array');
    const stack = rawStack.map(parseStackArg);
    const st = await accountState(chain, address);
    const extra = { block_id: blockId(chain.transactionCount + 1), last_transaction_id: st.lastTransactionId };
    if (st.state !== 'active') {
      return { '@type': 'smc.runResult', gas_used: 0, stack: [], exit_code: -13, ...extra };
    }
    try {
      const res = await (await chain.v2State(address)).get(method, stack);
      return {
        '@type': 'smc.runResult',
        gas_used: Number(res.gasUsed),
        stack: res.stack.map(stackItemJson),
        exit_code: res.exitCode,
        ...extra,
      };
    } catch (err) {
      if (err instanceof GetMethodError) {
        return { '@type': 'smc.runResult', gas_used: Number(err.gasUsed), stack: [], exit_code: err.exitCode, ...extra };
      }
      throw err;
    }
  },

  async getAddressInformation(chain, params) {
    const st = await accountState(chain, addressParam(params));
    return {
      '@type': 'raw.fullAccountState',
      balance: st.balance.toString(),
      extra_currencies: [],
      code: st.code,
      data: st.data,
      last_transaction_id: st.lastTransactionId,
      block_id: blockId(chain.transactionCount + 1),
      frozen_hash: '',
      sync_utime: chain.now,
      state: st.state,
    };
  },

  async getAddressBalance(chain, params) {
    return (await accountState(chain, addressParam(params))).balance.toString();
  },

  async getAddressState(chain, params) {
    return (await accountState(chain, addressParam(params))).state;
  },

  async getMasterchainInfo(chain) {
    const seqno = chain.transactionCount + 1;
    return {
      '@type': 'blocks.masterchainInfo',
      last: blockId(seqno),
      state_root_hash: createHash('sha256').update(`kassa-sandbox:state:${seqno}`).digest('base64'),
      init: blockId(0),
    };
  },

  async sendBoc(chain, params) {
    await sendExternal(chain, params);
    return { '@type': 'ok' };
  },

  async sendBocReturnHash(chain, params) {
    const cell = await sendExternal(chain, params);
    return { '@type': 'raw.extMessageInfo', hash: cell.hash().toString('base64') };
  },
};

async function sendExternal(chain: SandboxChain, params: Params): Promise<Cell> {
  const boc = params.boc;
  if (typeof boc !== 'string') throw new RpcError(422, 'boc must be a base64 string');
  let cell: Cell;
  let message: Message;
  try {
    cell = Cell.fromBase64(boc);
    message = loadMessage(cell.beginParse());
  } catch {
    throw new RpcError(422, 'boc is not a message');
  }
  if (message.info.type !== 'external-in') throw new RpcError(422, 'only external messages can be sent');
  try {
    await chain.sendExternal(cell);
  } catch (err) {
    // As the liteserver words a wallet's refusal through toncenter (its exit code: 33 a seqno used, 36 expired, …).
    const exitCode = (err as { exitCode?: unknown }).exitCode;
    if (typeof exitCode === 'number')
      throw new RpcError(
        500,
        `LITE_SERVER_UNKNOWN: cannot apply external message to current state : External message was not accepted\nCannot run message on account: inbound external message rejected by transaction ${message.info.dest.toRawString().toUpperCase()}:\nexitcode=${exitCode}, steps=0, gas_used=0`,
      );
    throw new RpcError(500, `LITE_SERVER_UNKNOWN: cannot apply external message to current state: ${err instanceof Error ? err.message : String(err)}`);
  }
  return cell;
}
