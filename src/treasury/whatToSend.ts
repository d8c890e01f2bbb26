// What to send for the next transfer out of a wallet: amounts, send mode, whether to wait for gas
// or give up. Pure: the signer (signer.ts) asks the chain and the books, then does what this says.
import { SendMode } from '@ton/core';
import { JETTON_TRANSFER_TON } from '../chain/jettonTransfer.ts';
import { TON_FEE_RESERVE_BASE_UNITS } from './fees.ts';
import { retryAfter } from './transitions.ts';

/** The smallest top-up: the attached TON, the deposit's own fees (it deploys itself) and a margin. */
export const JETTON_GAS_TOP_UP = 65_000_000n; // 0.065 TON

/** What a top-up carries beyond the shortfall: the deposit's fee for receiving it (a fraction of this). */
const TOP_UP_MARGIN = 1_000_000n; // 0.001 TON

/**
 * The gas wallet's own fee per top-up message in a batch, set aside beyond the wallet's fee reserve:
 * each message pays a forwarding fee and adds to the wallet's compute (about 0.0004–0.0007 TON
 * each), so a batch of many would outgrow a single reserve and fail on chain.
 */
export const TOP_UP_MESSAGE_FEE = 1_000_000n; // 0.001 TON

/** A jetton transfer whose top-ups failed this many times fails itself (transient: planned again with backoff). */
export const MAX_TOP_UP_FAILURES = 3;

/**
 * Whether to plan a gas top-up for a jetton transfer that lacks TON, given the top-ups for it that
 * failed before (the gas wallet short, a batch the chain refused, messages never seen): plan one,
 * wait for the transition's backoff (retryAfter), or give the transfer up (its own failure is then bounded and backed off).
 */
export function whenToTopUp(
  failedTopUps: { count: number; lastFailedAt: Date | null },
  now: Date,
): { action: 'plan' } | { action: 'wait'; until: Date } | { action: 'give_up'; reason: string } {
  if (failedTopUps.count >= MAX_TOP_UP_FAILURES) return { action: 'give_up', reason: `its gas top-ups from the gas wallet failed ${failedTopUps.count} times` };
  if (failedTopUps.count > 0 && failedTopUps.lastFailedAt !== null) {
    // The transition's backoff (RETRY_BACKOFF_MS, doubling), counted from the last failure.
    const until = retryAfter(failedTopUps.count - 1, failedTopUps.lastFailedAt);
    if (until !== null && until > now) return { action: 'wait', until };
  }
  return { action: 'plan' };
}

export interface SendInput {
  /** The transfer: its kind, reason, coin, amount (base units of the coin). */
  transfer: { kind: 'sweep' | 'refund' | 'gas_top_up'; reason: string; coin: string; amount: bigint; feeReserved: bigint };
  /** What the wallet holds on chain (nanoTON). */
  balance: bigint;
  /** The gas wallet: the sum of the top-ups in this batch (nanoTON). */
  batchTotal?: bigint;
  /** The gas wallet: how many top-ups (messages) this batch carries. */
  batchSize?: number;
  /** A deposit's jetton transfer: Kassa's own TON in the deposit after this transfer's reserve (deposit_money's gas; negative: short by that much). */
  gas?: bigint;
}

export type SendDecision =
  /** Sign a message of `value` nanoTON (a TON transfer) or JETTON_TRANSFER_TON (a jetton transfer) with `mode`. */
  | { action: 'send'; mode: SendMode; value: bigint; carryAll: boolean }
  /** A deposit's jetton transfer lacks TON: top it up from the gas wallet by `topUp`, then try again. */
  | { action: 'wait_for_gas'; topUp: bigint }
  /** The gas wallet cannot pay what it owes: wait for the operator to fund it. */
  | { action: 'short_of_gas' }
  /** Give up: the books and the chain disagree, or there is too little to move. Permanent failures are never planned again by themselves. */
  | { action: 'fail'; reason: string; permanent: boolean };

/**
 * The clock a message out is signed by: the later of this machine's and the newest masterchain
 * block's (`newestBlock`, as the chain reader last saw it; null before its first). A wallet accepts
 * a message while `valid_until > now()` by the chain's time (the block's), so a machine clock behind
 * the chain would make every message arrive expired; the block's time alone may be a few seconds
 * old, and the wall clock covers a reader that stopped.
 */
export function signingClock(wall: Date, newestBlock: Date | null): Date {
  return newestBlock !== null && newestBlock.getTime() > wall.getTime() ? newestBlock : wall;
}

/** A message's valid_until (unix seconds): `ttlSeconds` after the signing clock. */
export function validUntilOf(signingNow: Date, ttlSeconds: number): number {
  return Math.floor(signingNow.getTime() / 1000) + ttlSeconds;
}

/**
 * Whether a broadcast's refusal is the wallet's for an expired message: exit code 36 from wallet
 * v4r2 (`throw_if(36, valid_until <= now())`), 136 from wallet v5r1 (`error::expired`), as the
 * liteserver words it through toncenter ("…rejected by transaction …: exitcode=136, steps=…"). A
 * repeat of a message already applied is refused for its seqno (33, 133): not this.
 */
export function refusedAsExpired(refusal: string): boolean {
  return /\bexitcode=1?36\b/.test(refusal);
}

/**
 * The seqno to sign with: the chain's, unless the books know the wallet accepted later messages (a
 * stale chain API answer cannot take a seqno back).
 */
export function nextSeqno(chainSeqno: number, bookedNext: number): number {
  return Math.max(chainSeqno, bookedNext);
}

export function whatToSend(input: SendInput): SendDecision {
  const { transfer, balance } = input;
  if (transfer.kind === 'gas_top_up') {
    const total = input.batchTotal ?? transfer.amount;
    const fees = TON_FEE_RESERVE_BASE_UNITS + TOP_UP_MESSAGE_FEE * BigInt(input.batchSize ?? 1);
    if (total + fees > balance) return { action: 'short_of_gas' };
    return { action: 'send', mode: SendMode.PAY_GAS_SEPARATELY, value: transfer.amount, carryAll: false };
  }
  if (transfer.coin !== 'TON') {
    // A jetton: the deposit's jetton wallet sends it; the deposit pays the TON for that from
    // Kassa's own TON in it (gas top-ups), never the customer's or the merchant's.
    // What its message needs and the books did not set aside (a row planned without its reserve).
    const unreserved = JETTON_TRANSFER_TON + TON_FEE_RESERVE_BASE_UNITS - transfer.feeReserved;
    const gas = (input.gas ?? 0n) - (unreserved > 0n ? unreserved : 0n);
    const physicalShort = JETTON_TRANSFER_TON + TON_FEE_RESERVE_BASE_UNITS - balance;
    const short = gas < 0n ? (-gas > physicalShort ? -gas : physicalShort) : physicalShort;
    // The top-up pays its own arrival too (the deposit's fee for receiving it): a small margin.
    const topUp = short + TOP_UP_MARGIN;
    if (short > 0n) return { action: 'wait_for_gas', topUp: topUp > JETTON_GAS_TOP_UP ? topUp : JETTON_GAS_TOP_UP };
    return { action: 'send', mode: SendMode.PAY_GAS_SEPARATELY, value: JETTON_TRANSFER_TON, carryAll: false };
  }
  const amount = transfer.amount;
  if (balance < TON_FEE_RESERVE_BASE_UNITS)
    return { action: 'fail', reason: `the wallet holds ${balance} nanoTON: too little to pay for a transfer (dust)`, permanent: true };
  if (transfer.kind === 'refund' && transfer.feeReserved === 0n) {
    // The refund of everything refundable: its fee is taken from it (no reserve beside it).
    if (amount <= TON_FEE_RESERVE_BASE_UNITS)
      return { action: 'fail', reason: `the refund of everything (${amount} nanoTON) is no more than its fee's reserve`, permanent: true };
    if (amount > balance + TON_FEE_RESERVE_BASE_UNITS)
      return { action: 'fail', reason: `the wallet holds ${balance} nanoTON, less than the ${amount} to send`, permanent: true };
    // A fixed value, the amount less its fee's reserve (what the API said it `receives`), the fee
    // paid beside it from that reserve; what the fee did not use stays in the deposit, the
    // customer's again. Never the whole balance (send mode 128) to the refund's address: wallet v5
    // accepts no reserve action, so a carry-all would hand whatever reached the deposit since the
    // balance was read to that address (issue 44). The deposit's last movement out empties it in a
    // closing message instead, whose carry-all goes to the treasury or the gas wallet (closing.ts;
    // the signer asks it first).
    return { action: 'send', mode: SendMode.PAY_GAS_SEPARATELY, value: amount - TON_FEE_RESERVE_BASE_UNITS, carryAll: false };
  }
  if (transfer.kind === 'refund') {
    // A refund carries exactly its amount; its fee, set aside on the books, is paid on top.
    if (amount + TON_FEE_RESERVE_BASE_UNITS > balance)
      return { action: 'fail', reason: `the wallet holds ${balance} nanoTON, less than the ${amount} to send and its fee`, permanent: true };
    return { action: 'send', mode: SendMode.PAY_GAS_SEPARATELY, value: amount, carryAll: false };
  }
  // A sweep: fees are paid from the wallet, so the last transfer out of it may find a little less
  // than the books say: within the reserve it carries what there is; beyond, the books and the chain disagree.
  if (amount > balance + TON_FEE_RESERVE_BASE_UNITS)
    return { action: 'fail', reason: `the wallet holds ${balance} nanoTON, less than the ${amount} to send`, permanent: true };
  // What would be left could not pay for its own transfer: the whole balance goes, fees taken from it.
  if (balance - amount < TON_FEE_RESERVE_BASE_UNITS) return { action: 'send', mode: SendMode.CARRY_ALL_REMAINING_BALANCE, value: 0n, carryAll: true };
  // Other money stays in the wallet: the sweep's fee comes out of what it moves (set aside when planned).
  return { action: 'send', mode: SendMode.PAY_GAS_SEPARATELY, value: amount - TON_FEE_RESERVE_BASE_UNITS, carryAll: false };
}
