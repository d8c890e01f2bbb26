/**
 * A chain transaction as the reader needs it, whichever way it arrived: rendered by toncenter API
 * v3 as JSON (`/api/v3/transactionsByMasterchainBlock`), or a `Transaction` of @ton/core (the
 * sandbox's emulator). Detection (detect.ts) works on this shape only.
 */
import { beginCell, Cell, storeMessage } from '@ton/core';
import type { Message, Transaction } from '@ton/core';

export interface ChainMessage {
  /** Raw address of the sender; null for an external message. */
  source: string | null;
  /** nanoTON carried (0 for external messages). */
  value: bigint;
  bounced: boolean;
  /** The message body; null when the source gave none. */
  body: Cell | null;
  /** The message's hash (hex), and for an external message its TEP-467 normalized hash, when known. */
  hash?: string | null;
  hashNormalized?: string | null;
}

/** A message the transaction sent. */
interface ChainOutMessage {
  /** Raw destination; null for an external out message (a log). */
  destination: string | null;
  value: bigint;
  /** The forwarding fee the message carries (paid by the sender on top of its total fees). */
  fwdFee: bigint;
  body: Cell | null;
}

export interface ChainTransaction {
  /** Raw address (`0:<64 hex>`, lower case) of the account the transaction ran on. */
  account: string;
  lt: string;
  /** Transaction hash, lower-case hex. */
  hash: string;
  /** On-chain time (unix seconds). */
  now: number;
  inMessage: ChainMessage | null;
  aborted: boolean;
  compute: { skipped: true } | { skipped: false; success: boolean; exitCode: number };
  /** Whether the action phase succeeded; null when there was none. */
  actionSuccess: boolean | null;
  /** Actions the action phase skipped (send mode +2: e.g. a message its value could not pay for); null when the source does not say. */
  skippedActions?: number | null;
  /** The bounce phase's outcome; 'ok' means the value went back to the sender. */
  bounce: 'ok' | 'no_funds' | 'negative_funds' | null;
  /** nanoTON the account paid for the transaction (total fees); 0 when the source does not say. */
  totalFees?: bigint;
  /** The messages it sent (empty when the source does not say). */
  outMessages?: ChainOutMessage[];
}

/** The hash of a message cell as sent (hex). */
export function messageHash(message: Message): string {
  return beginCell().store(storeMessage(message)).endCell().hash().toString('hex');
}

/**
 * TEP-467's normalized hash of an external-in message (hex): no source, no import fee, no state
 * init, the body in a reference. Wallet apps and toncenter (hash_norm) identify a message by it.
 */
export function normalizedMessageHash(message: Message): string | null {
  if (message.info.type !== 'external-in') return null;
  const normalized: Message = { info: { type: 'external-in', src: null, dest: message.info.dest, importFee: 0n }, init: null, body: message.body };
  return beginCell()
    .store(storeMessage(normalized, { forceRef: true }))
    .endCell()
    .hash()
    .toString('hex');
}

const rawLower = (raw: string): string => {
  const [wc, hex] = raw.split(':');
  return `${wc}:${(hex ?? '').toLowerCase()}`;
};

/** From @ton/core (the emulator, or a v2 BOC). */
export function fromCoreTransaction(tx: Transaction, account: string): ChainTransaction {
  const msg = tx.inMessage;
  let inMessage: ChainMessage | null = null;
  if (msg) {
    const info = msg.info;
    inMessage = {
      source: info.type === 'internal' ? info.src.toRawString() : null,
      value: info.type === 'internal' ? info.value.coins : 0n,
      bounced: info.type === 'internal' ? info.bounced : false,
      body: msg.body,
      hash: messageHash(msg),
      hashNormalized: normalizedMessageHash(msg),
    };
  }
  const d = tx.description;
  const generic = d.type === 'generic' ? d : null;
  const cp = generic?.computePhase;
  return {
    account: rawLower(account),
    lt: tx.lt.toString(),
    hash: tx.hash().toString('hex'),
    now: tx.now,
    inMessage,
    aborted: generic ? generic.aborted : false,
    compute: cp && cp.type === 'vm' ? { skipped: false, success: cp.success, exitCode: cp.exitCode } : { skipped: true },
    actionSuccess: generic?.actionPhase ? generic.actionPhase.success : null,
    skippedActions: generic?.actionPhase ? generic.actionPhase.skippedActions : null,
    bounce: !generic?.bouncePhase ? null : generic.bouncePhase.type === 'ok' ? 'ok' : generic.bouncePhase.type === 'no-funds' ? 'no_funds' : 'negative_funds',
    totalFees: tx.totalFees.coins,
    outMessages: [...tx.outMessages.values()].map((m) => ({
      destination: m.info.type === 'internal' ? m.info.dest.toRawString() : null,
      value: m.info.type === 'internal' ? m.info.value.coins : 0n,
      fwdFee: m.info.type === 'internal' ? m.info.forwardFee : 0n,
      body: m.body,
    })),
  };
}

// ---- toncenter API v3 --------------------------------------------------------------------------

/** The parts of a v3 transaction object Kassa reads (the API sends many more). */
export interface V3Transaction {
  account: string;
  hash: string; // base64
  lt: string;
  now: number;
  mc_block_seqno?: number | null;
  description?: {
    aborted?: boolean | null;
    compute_ph?: { skipped?: boolean | null; success?: boolean | null; exit_code?: number | null } | null;
    action?: { success?: boolean | null; skipped_actions?: number | null } | null;
    bounce?: { type?: string | null } | null;
  } | null;
  in_msg?: {
    hash?: string | null;
    hash_norm?: string | null;
    source?: string | null;
    value?: string | null;
    bounced?: boolean | null;
    message_content?: { body?: string | null } | null;
  } | null;
  total_fees?: string | null;
  out_msgs?: Array<{
    destination?: string | null;
    value?: string | null;
    fwd_fee?: string | null;
    message_content?: { body?: string | null } | null;
  }> | null;
}

/** A transaction hash in any encoding the APIs use (v3: base64; hex) → lower-case hex. */
function hashToHex(hash: string): string {
  if (/^[0-9a-fA-F]{64}$/.test(hash)) return hash.toLowerCase();
  const bytes = Buffer.from(hash.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (bytes.length !== 32) throw new Error(`not a 32-byte hash: ${hash}`);
  return bytes.toString('hex');
}

function bodyOf(b64: string | null | undefined): Cell | null {
  if (!b64) return null;
  try {
    return Cell.fromBase64(b64);
  } catch {
    return null;
  }
}

/** From toncenter API v3 JSON. Throws on a transaction without account, hash or lt. */
export function fromV3Transaction(tx: V3Transaction): ChainTransaction {
  if (typeof tx.account !== 'string' || typeof tx.hash !== 'string' || (typeof tx.lt !== 'string' && typeof tx.lt !== 'number')) {
    throw new Error('a v3 transaction without account, hash or lt');
  }
  const d = tx.description ?? {};
  const cp = d.compute_ph;
  const m = tx.in_msg;
  const bounceType = d.bounce?.type ?? null;
  return {
    account: rawLower(tx.account),
    lt: String(tx.lt),
    hash: hashToHex(tx.hash),
    now: Number(tx.now),
    inMessage: m
      ? {
          source: m.source ? rawLower(m.source) : null,
          value: m.value ? BigInt(m.value) : 0n,
          bounced: m.bounced === true,
          body: bodyOf(m.message_content?.body),
          hash: m.hash ? hashToHex(m.hash) : null,
          hashNormalized: m.hash_norm ? hashToHex(m.hash_norm) : null,
        }
      : null,
    aborted: d.aborted === true,
    compute: !cp || cp.skipped ? { skipped: true } : { skipped: false, success: cp.success === true, exitCode: Number(cp.exit_code ?? 0) },
    actionSuccess: d.action ? d.action.success === true : null,
    skippedActions: typeof d.action?.skipped_actions === 'number' ? d.action.skipped_actions : null,
    bounce: bounceType === null ? null : bounceType === 'ok' ? 'ok' : bounceType === 'nofunds' ? 'no_funds' : 'negative_funds',
    totalFees: tx.total_fees ? BigInt(tx.total_fees) : 0n,
    outMessages: (tx.out_msgs ?? []).map((m) => ({
      destination: m.destination ? rawLower(m.destination) : null,
      value: m.value ? BigInt(m.value) : 0n,
      fwdFee: m.fwd_fee ? BigInt(m.fwd_fee) : 0n,
      body: bodyOf(m.message_content?.body),
    })),
  };
}

const V3_STATUS = { uninitialized: 'uninit', frozen: 'frozen', active: 'active', 'non-existing': 'nonexist' } as const;

/**
 * The v3 JSON of a transaction, as ton-index-go renders it (`index/models/blockchain.go`:
 * `Transaction`, `Message`, `TransactionDescr`): raw addresses upper case, hashes standard base64,
 * lt and values as strings, `now` a number, `hash_norm` only when it differs from `hash`
 * (ton-index-worker `InsertManagerPostgres.cpp` stores it only then). For the sandbox.
 */
export function toV3Transaction(tx: Transaction, account: string, mcSeqno: number): Record<string, unknown> {
  const t = fromCoreTransaction(tx, account);
  const msg = tx.inMessage;
  const upper = (raw: string) => raw.toUpperCase();
  const b64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');
  const hash = tx.hash().toString('base64');
  const content = (body: Cell) => ({ hash: body.hash().toString('base64'), body: body.toBoc().toString('base64'), decoded: null });
  const opcode = (body: Cell) => {
    const slice = body.beginParse();
    return slice.remainingBits >= 32 ? `0x${slice.loadUint(32).toString(16).padStart(8, '0')}` : null;
  };
  return {
    account: upper(t.account),
    hash,
    lt: t.lt,
    now: t.now,
    mc_block_seqno: mcSeqno,
    trace_id: hash,
    prev_trans_hash: Buffer.from(tx.prevTransactionHash.toString(16).padStart(64, '0'), 'hex').toString('base64'),
    prev_trans_lt: tx.prevTransactionLt.toString(),
    orig_status: V3_STATUS[tx.oldStatus],
    end_status: V3_STATUS[tx.endStatus],
    total_fees: tx.totalFees.coins.toString(),
    total_fees_extra_currencies: {},
    description: {
      type: 'ord',
      aborted: t.aborted,
      compute_ph: t.compute.skipped ? { skipped: true, reason: 'no_state' } : { skipped: false, success: t.compute.success, exit_code: t.compute.exitCode },
      ...(t.actionSuccess === null ? {} : { action: { success: t.actionSuccess, valid: true, skipped_actions: t.skippedActions ?? 0 } }),
      ...(t.bounce === null ? {} : { bounce: { type: t.bounce === 'ok' ? 'ok' : t.bounce === 'no_funds' ? 'nofunds' : 'negfunds' } }),
    },
    block_ref: { workchain: Number(t.account.split(':')[0]), shard: '8000000000000000', seqno: mcSeqno },
    in_msg: msg
      ? {
          hash: b64(t.inMessage!.hash!),
          source: t.inMessage?.source ? upper(t.inMessage.source) : null,
          destination: upper(t.account),
          value: msg.info.type === 'internal' ? t.inMessage!.value.toString() : null,
          value_extra_currencies: msg.info.type === 'internal' ? {} : null,
          fwd_fee: msg.info.type === 'internal' ? msg.info.forwardFee.toString() : null,
          ihr_fee: msg.info.type === 'internal' ? msg.info.ihrFee.toString() : null,
          created_lt: msg.info.type === 'internal' ? msg.info.createdLt.toString() : null,
          created_at: msg.info.type === 'internal' ? String(msg.info.createdAt) : null,
          opcode: opcode(msg.body),
          ihr_disabled: msg.info.type === 'internal' ? msg.info.ihrDisabled : null,
          bounce: msg.info.type === 'internal' ? msg.info.bounce : null,
          bounced: msg.info.type === 'internal' ? t.inMessage!.bounced : null,
          import_fee: msg.info.type === 'external-in' ? msg.info.importFee.toString() : null,
          message_content: content(msg.body),
          init_state: null,
          ...(t.inMessage!.hashNormalized && t.inMessage!.hashNormalized !== t.inMessage!.hash ? { hash_norm: b64(t.inMessage!.hashNormalized) } : {}),
        }
      : null,
    out_msgs: [...tx.outMessages.values()].map((m) => ({
      hash: b64(messageHash(m)),
      source: upper(t.account),
      destination: m.info.type === 'internal' ? upper(m.info.dest.toRawString()) : null,
      value: m.info.type === 'internal' ? m.info.value.coins.toString() : null,
      fwd_fee: m.info.type === 'internal' ? m.info.forwardFee.toString() : null,
      created_lt: m.info.type === 'internal' || m.info.type === 'external-out' ? m.info.createdLt.toString() : null,
      opcode: opcode(m.body),
      bounce: m.info.type === 'internal' ? m.info.bounce : null,
      bounced: m.info.type === 'internal' ? m.info.bounced : null,
      message_content: content(m.body),
      init_state: null,
    })),
    account_state_before: null,
    account_state_after: null,
    emulated: false,
    finality: 'finalized',
  };
}

/** The hash of a @ton/core transaction, lower-case hex (the books' form). */
export function transactionHashHex(tx: Transaction): string {
  return tx.hash().toString('hex');
}
