/**
 * Pure classification of chain transactions into incoming transfers (no I/O, no clock).
 *
 * Input: ChainTransaction (transactions.ts), from toncenter API v3 JSON or from @ton/core.
 * Every incoming transfer is reported, counted or not, so the books can record it; `counted`
 * says whether it pays, `reason` (a stable code) why not.
 */
import type { Cell, Slice } from '@ton/core';
import type { ChainTransaction } from './transactions.ts';

export const OP_TEXT_COMMENT = 0;
export const OP_ENCRYPTED_COMMENT = 0x2167da4b;
export const OP_JETTON_TRANSFER = 0x0f8a7ea5;
export const OP_JETTON_INTERNAL_TRANSFER = 0x178d4519;
export const OP_JETTON_TRANSFER_NOTIFICATION = 0x7362d09c;
export const OP_JETTON_EXCESSES = 0xd53276db;

/** Why an incoming transfer does not count. Stored in the books; do not rename. */
type NotCountedReason =
  | 'bounced_message' // the incoming message is itself a bounce of something we sent
  | 'value_returned' // the transaction's bounce phase sent the value back (bounceable → uninitialised)
  | 'jetton_notification' // TON attached to a verified jetton transfer_notification (the reader verifies)
  | 'jetton_excesses' // TON change returned by a jetton wallet
  | 'compute_skipped' // jetton: no code ran (e.g. message without state to an uninitialised wallet)
  | 'compute_failed' // jetton: the wallet rejected the message (e.g. sender is not a wallet of that master)
  | 'action_failed' // jetton: the action phase failed
  | 'aborted'; // jetton: the transaction was aborted

type Base = {
  /** Base units: nanoTON for TON, the jetton's own base units for jettons. */
  amount: bigint;
  /** Raw address (`0:<hex>`) of who paid: the sending wallet for TON, the owner for jettons. */
  sender: string | null;
  lt: string;
  /** Transaction hash, lowercase hex. */
  hash: string;
  /** On-chain time (unix seconds). */
  utime: number;
  counted: boolean;
  reason?: NotCountedReason;
  /** The 32-bit op of the body, when it had one. */
  op?: number;
  /** Text comment (op 0), when present and valid UTF-8. */
  comment?: string;
};

export type TonTransfer = Base & { kind: 'ton' };
type JettonTransfer = Base & {
  kind: 'jetton';
  queryId?: string;
  /** TON forwarded to the owner with the notification (nanoTON). */
  forwardTonAmount?: bigint;
  /** The forward_payload (inline or its ref) as a cell, when there is one: a treasury reads the reference from it. */
  forwardPayload?: Cell;
};

/** Reads the text of a comment payload positioned right after its op; undefined when not UTF-8 text. */
function readCommentTail(s: Slice): string | undefined {
  try {
    const bytes = readSnakeBytes(s);
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return text;
  } catch {
    return undefined;
  }
}

function readSnakeBytes(s: Slice): Buffer {
  const parts: Buffer[] = [];
  let cur: Slice | null = s;
  while (cur !== null) {
    if (cur.remainingBits % 8 !== 0) throw new Error('not byte aligned');
    parts.push(cur.loadBuffer(cur.remainingBits / 8));
    cur = cur.remainingRefs > 0 ? cur.loadRef().beginParse() : null;
  }
  return Buffer.concat(parts);
}

function opOf(body: Cell | null): { op: number | null; rest: Slice | null } {
  if (body === null) return { op: null, rest: null };
  const s = body.beginParse();
  if (s.remainingBits < 32) return { op: null, rest: s };
  const op = s.loadUint(32);
  return { op, rest: s };
}

function common(tx: ChainTransaction) {
  return { lt: tx.lt, hash: tx.hash, utime: tx.now };
}

/**
 * A transaction on a deposit wallet: the incoming TON, counted or not; null when the transaction
 * has no incoming internal message (external messages, tick-tock, storage).
 *
 * Value is value: TON that stayed counts whatever its body says (comments, encrypted comments,
 * any op), except a jetton notification (the reader verifies it: a genuine one only forwards TON
 * with a jetton transfer) and jetton excesses (change of our own jetton transfers). Not counted:
 * a bounce, and a transaction whose bounce phase sent the value back. `description.aborted` is
 * deliberately ignored: it is true for every transfer into an uninitialised wallet even when the
 * value was credited.
 */
export function detectTonTransfer(tx: ChainTransaction): TonTransfer | null {
  const msg = tx.inMessage;
  if (msg === null || msg.source === null) return null;
  const base: TonTransfer = {
    kind: 'ton',
    amount: msg.value,
    sender: msg.source,
    ...common(tx),
    counted: false,
  };
  const { op, rest } = opOf(msg.body);
  if (op !== null) base.op = op;
  if (op === OP_TEXT_COMMENT && rest !== null) {
    const comment = readCommentTail(rest);
    if (comment !== undefined) base.comment = comment;
  }

  if (msg.bounced) return { ...base, reason: 'bounced_message' };
  if (tx.bounce === 'ok') return { ...base, reason: 'value_returned' };
  if (op === OP_JETTON_TRANSFER_NOTIFICATION) return { ...base, reason: 'jetton_notification' };
  if (op === OP_JETTON_EXCESSES) return { ...base, reason: 'jetton_excesses' };
  return { ...base, counted: true };
}

/** transfer_notification#7362d09c query_id:uint64 amount:Coins sender:MsgAddress …: what it claims. */
export function parseTransferNotification(tx: ChainTransaction): { amount: bigint; sender: string | null } | null {
  const { op, rest } = opOf(tx.inMessage?.body ?? null);
  if (op !== OP_JETTON_TRANSFER_NOTIFICATION || rest === null) return null;
  try {
    rest.loadUintBig(64);
    const amount = rest.loadCoins();
    const sender = rest.loadMaybeAddress();
    return { amount, sender: sender ? sender.toRawString() : null };
  } catch {
    return null;
  }
}

/**
 * A transaction on a deposit's jetton wallet (the wallet the allow-listed master reports for the
 * deposit owner): an incoming `internal_transfer` (TEP-74), counted when compute phase exit 0 and
 * action phase ok. Null for anything that is not an incoming internal_transfer (e.g. an outgoing
 * transfer request, excesses).
 *
 * Only the caller can check that `tx` belongs to the right jetton wallet; that check is what
 * makes look-alike jettons harmless (their wallets are different accounts).
 */
export function detectJettonTransfer(tx: ChainTransaction): JettonTransfer | null {
  const msg = tx.inMessage;
  if (msg === null || msg.source === null) return null;
  const { op, rest } = opOf(msg.body);
  if (op !== OP_JETTON_INTERNAL_TRANSFER || rest === null) return null;

  const out: JettonTransfer = {
    kind: 'jetton',
    amount: 0n,
    sender: null,
    ...common(tx),
    counted: false,
    op,
  };
  try {
    out.queryId = rest.loadUintBig(64).toString();
    out.amount = rest.loadCoins();
    out.sender = rest.loadMaybeAddress()?.toRawString() ?? null;
    rest.loadMaybeAddress(); // response_address
    out.forwardTonAmount = rest.loadCoins();
    const payload = rest.remainingBits > 0 ? (rest.loadBit() ? rest.loadRef().beginParse() : rest) : null;
    if (payload !== null && (payload.remainingBits > 0 || payload.remainingRefs > 0)) out.forwardPayload = payload.clone().asCell();
    if (payload !== null && payload.remainingBits >= 32 && payload.loadUint(32) === OP_TEXT_COMMENT) {
      const comment = readCommentTail(payload);
      if (comment !== undefined) out.comment = comment;
    }
  } catch {
    // A malformed body cannot pass the wallet's own parsing, so the phases below reject it.
  }

  if (msg.bounced) return { ...out, reason: 'bounced_message' };
  if (tx.compute.skipped) return { ...out, reason: 'compute_skipped' };
  if (!tx.compute.success || tx.compute.exitCode !== 0) return { ...out, reason: 'compute_failed' };
  if (tx.actionSuccess !== true) return { ...out, reason: 'action_failed' };
  if (tx.aborted) return { ...out, reason: 'aborted' };
  return { ...out, counted: true };
}

/**
 * A jetton wallet's `internal_transfer` that came back (TEP-74): the receiving jetton wallet refused
 * it (e.g. a stablecoin wallet whose status locks it), the chain bounced it to the wallet that sent
 * it, and that wallet added the amount back to its balance — its transaction succeeded. The bounced
 * body is 0xffffffff then the original body's start: op, query_id, amount. Null for anything else,
 * and for a bounce the wallet failed to take back (then the jettons did not come back).
 */
export function detectBouncedJettonTransfer(tx: ChainTransaction): { queryId: bigint; amount: bigint } | null {
  const msg = tx.inMessage;
  if (msg === null || msg.source === null || !msg.bounced || msg.body === null) return null;
  const s = msg.body.beginParse();
  try {
    if (s.loadUint(32) !== 0xffffffff || s.loadUint(32) !== OP_JETTON_INTERNAL_TRANSFER) return null;
    const queryId = s.loadUintBig(64);
    const amount = s.loadCoins();
    const tookBack = !tx.compute.skipped && tx.compute.success && tx.compute.exitCode === 0 && tx.actionSuccess !== false && !tx.aborted;
    return tookBack ? { queryId, amount } : null;
  } catch {
    return null;
  }
}

/**
 * What a message body says as text, read the ways wallets write a comment: op 0 then UTF-8 text
 * (snake: continued in refs), the same in a ref cell of an empty body, or the text alone without the
 * 32-bit zero prefix. `encrypted`: an encrypted comment (op 0x2167da4b), which Kassa cannot read.
 * Null text when the body is none of these (no body, binary, another op).
 */
export function bodyText(body: Cell | null): { text: string | null; encrypted: boolean } {
  if (body === null) return { text: null, encrypted: false };
  const s = body.beginParse();
  if (s.remainingBits === 0) return s.remainingRefs === 1 ? bodyText(s.loadRef()) : { text: null, encrypted: false };
  if (s.remainingBits >= 32) {
    const op = s.preloadUint(32);
    if (op === OP_ENCRYPTED_COMMENT) return { text: null, encrypted: true };
    if (op === OP_TEXT_COMMENT) {
      s.skip(32);
      return { text: readCommentTail(s) ?? null, encrypted: false };
    }
  }
  const text = readCommentTail(s);
  // Text without the prefix: printable characters only, so binary that happens to be UTF-8 is not text.
  return { text: text !== undefined && text.length > 0 && !/[\u0000-\u0008\u000e-\u001f\u007f]/.test(text) ? text : null, encrypted: false };
}

/** The text of a comment body (op 0, then UTF-8 text); null for any other body. */
export function commentOf(body: Cell | null): string | null {
  const { op, rest } = opOf(body);
  if (op !== OP_TEXT_COMMENT || rest === null) return null;
  return readCommentTail(rest) ?? null;
}

/**
 * A TEP-74 `transfer` an owner sent its jetton wallet (the body of the wallet's incoming message):
 * its query id, amount, destination (an owner), and the text comment its forward_payload carries
 * (null when none). Null when the body is not a well-formed transfer.
 */
export function parseJettonTransferRequest(body: Cell | null): { queryId: bigint; amount: bigint; destination: string; comment: string | null } | null {
  const { op, rest } = opOf(body);
  if (op !== OP_JETTON_TRANSFER || rest === null) return null;
  try {
    const queryId = rest.loadUintBig(64);
    const amount = rest.loadCoins();
    const destination = rest.loadAddress().toRawString();
    rest.loadMaybeAddress(); // response_destination
    rest.loadMaybeRef(); // custom_payload
    rest.loadCoins(); // forward_ton_amount
    const payload = rest.remainingBits > 0 ? (rest.loadBit() ? rest.loadRef().beginParse() : rest) : null;
    let comment: string | null = null;
    if (payload !== null && payload.remainingBits >= 32 && payload.loadUint(32) === OP_TEXT_COMMENT) comment = readCommentTail(payload) ?? null;
    return { queryId, amount, destination, comment };
  } catch {
    return null;
  }
}
