// The closing message (issue 29 item 4): the last movement out of a deposit pays each owner in one
// wallet v5 message. Pure: the signer (signer.ts) reads the books and the chain, asks closingShares,
// and signs what it says; the reader's confirmation (commands.ts confirmOutgoing) books each share's
// fee with closingFees; the recurring planner (sweeps.ts) asks finalSweep what a settled deposit's
// last dust is worth.
//
// When the refund of everything refundable is signed and the deposit holds, besides it, only other
// owners' last money — the merchant's leftover (what a sweep's fee reserve did not use, under the
// dust line) and Kassa's gas (TON top-ups the jetton transfers did not use) — one message carries:
//   - each of those shares to its owner (the treasury; the gas wallet), its amount exactly, its own
//     forwarding fee taken from it (send mode 0: the owner receives the amount less that fee);
//   - the customer's refund last, with the whole remaining balance (send mode 128): the customer
//     receives the refund less only its own fee (the wallet's compute and storage fee and its
//     message's forwarding).
// A share too small to pay for a message of its own (under CLOSING_SHARE_MINIMUM) is not sent: it
// pays part of the message's fee instead (its row is booked with sent 0 and that fee), and the
// customer's fee is less by as much. Nothing is left in the deposit, and the books say who paid
// which fee.
import { SendMode } from '@ton/core';
import { TON_FEE_RESERVE_BASE_UNITS } from './fees.ts';

/**
 * The smallest share the closing message sends on its own: a simple message's forwarding fee is about
 * 0.0004–0.0007 TON on the basechain, and a send-mode-0 message worth less than its fee fails. Less
 * than this pays toward the message's fee (it would be mostly fee anyway).
 */
export const CLOSING_SHARE_MINIMUM = 2_000_000n; // 0.002 TON

/** The send mode of a share sent from its own amount (its forwarding fee taken from it). */
export const SHARE_SEND_MODE = SendMode.NONE;

/**
 * What the transfer that carries the rest (send mode 128) must have to pay for itself: the wallet's
 * compute and storage fee and its own forwarding (about 0.002–0.0035 TON for a wallet v5 message of
 * a few actions on the basechain), with a margin. Less, and its action could fail after the others
 * took their shares.
 */
export const CLOSING_PRIMARY_MINIMUM = 4_000_000n; // 0.004 TON

export interface ClosingFacts {
  /** The transfer that carries the rest: the refund of everything, or a sweep (nanoTON). */
  primary: bigint;
  /**
   * The primary is the deposit's final sweep (closingPlan: the merchant's change or Kassa's gas,
   * after REFUND_HOLD_DAYS): the customer's dust goes to the treasury as held money too.
   */
  final: boolean;
  /** What the deposit holds on chain (nanoTON). */
  balance: bigint;
  /** The payment can take no more money toward itself (completed, expired or cancelled). */
  paymentSettled: boolean;
  /** The books after every plan (deposit_money's TON row): the customer's TON left, the merchant's, Kassa's gas and what of it is free. */
  customerLeft: bigint;
  merchant: bigint;
  gas: bigint;
  gasFree: bigint;
  /** Any other coin still in the deposit (received and not all moved out), or any other transfer of the deposit planned or in flight. */
  otherMoney: boolean;
  /** Where the merchant's (and the customer's held) and Kassa's shares go (null: the store has no treasury). */
  treasury: string | null;
  gasWallet: string | null;
}

export interface ClosingShare {
  owner: 'customer' | 'merchant' | 'kassa';
  reason: 'held_money' | 'leftover' | 'gas_return';
  to: string;
  amount: bigint;
  /** Sent as a message of its own (send mode 0), or (under the minimum) paying toward the message's fee. */
  sent: boolean;
}

const share = (owner: ClosingShare['owner'], reason: ClosingShare['reason'], to: string, amount: bigint): ClosingShare => ({
  owner,
  reason,
  to,
  amount,
  sent: amount >= CLOSING_SHARE_MINIMUM,
});

/**
 * Whether the transfer that carries the rest closes the deposit, and with which shares (none: the
 * deposit holds only its owner's money). null when it does not: another owner's money must stay
 * (no treasury, gas promised to a transfer, another coin or transfer, the customer's money beside
 * a refund or sale sweep), the primary could not pay for its own message, or the chain holds money
 * the books do not explain (arrived since: the transfer then sends exactly its planned value, whatToSend).
 */
export function closingShares(facts: ClosingFacts): ClosingShare[] | null {
  if (!facts.paymentSettled || facts.otherMoney) return null;
  const shares: ClosingShare[] = [];
  if (facts.customerLeft > 0n) {
    if (!facts.final || facts.treasury === null) return null;
    shares.push(share('customer', 'held_money', facts.treasury, facts.customerLeft));
  }
  if (facts.merchant > 0n) {
    if (facts.treasury === null) return null;
    shares.push(share('merchant', 'leftover', facts.treasury, facts.merchant));
  }
  if (facts.gas > 0n) {
    if (facts.gasFree !== facts.gas || facts.gasWallet === null) return null;
    shares.push(share('kassa', 'gas_return', facts.gasWallet, facts.gas));
  }
  // What the carry-all action has to pay the message's fees from: its own amount and the shares too small to send.
  const unsent = shares.filter((s) => !s.sent).reduce((sum, s) => sum + s.amount, 0n);
  if (facts.primary + unsent < CLOSING_PRIMARY_MINIMUM) return null;
  // The books explain the balance: no money arrived that they have not seen (the deposit may hold
  // a little less: the storage fee it paid since its last transaction, which the primary's fee takes).
  const unexplained = facts.balance - facts.primary - shares.reduce((sum, s) => sum + s.amount, 0n);
  if (unexplained > 0n || unexplained <= -TON_FEE_RESERVE_BASE_UNITS) return null;
  return shares;
}

/**
 * The deposit's final sweep (the recurring planner, after REFUND_HOLD_DAYS since its last money):
 * what a settled deposit still holds in TON — the customer's dust (under the 0.01 TON line, so never
 * swept as held money on its own), the merchant's change, Kassa's gas — leaves in one closing
 * message. The largest share is the primary (it carries the rest and pays the message's compute);
 * the others ride with it. null when nothing is worth a message (the primary and the shares too
 * small to send could not pay it: less than CLOSING_PRIMARY_MINIMUM) or a share has nowhere to go.
 */
export function finalSweep(shares: {
  customer: bigint;
  merchant: bigint;
  gas: bigint;
  treasury: string | null;
  gasWallet: string | null;
}): { reason: ClosingShare['reason']; to: string; amount: bigint } | null {
  const { treasury, gasWallet } = shares;
  if ((shares.customer > 0n || shares.merchant > 0n) && treasury === null) return null;
  if (shares.gas > 0n && gasWallet === null) return null;
  const candidates = [
    { reason: 'held_money' as const, to: treasury, amount: shares.customer },
    { reason: 'leftover' as const, to: treasury, amount: shares.merchant },
    { reason: 'gas_return' as const, to: gasWallet, amount: shares.gas },
  ].filter((c) => c.amount > 0n);
  const primary = candidates.reduce<(typeof candidates)[number] | null>((best, c) => (best === null || c.amount > best.amount ? c : best), null);
  if (primary === null) return null;
  const unsent = candidates.filter((c) => c !== primary && c.amount < CLOSING_SHARE_MINIMUM).reduce((sum, c) => sum + c.amount, 0n);
  if (primary.amount + unsent < CLOSING_PRIMARY_MINIMUM) return null;
  return { reason: primary.reason, to: primary.to!, amount: primary.amount };
}

/**
 * Each row's fee and sent amount once the closing message landed (pure): a share sent on its own
 * paid what its amount lost on the way (amount − what its message carried); a share too small to
 * send paid all of it toward the fee (sent 0); the refund paid the rest of the transaction's fees
 * (`total`: compute, storage, action and forwarding fees) and carried what its message carried.
 * The fees add up to `total`, so the books match the chain.
 */
export function closingFees(
  total: bigint,
  shares: ReadonlyArray<{ id: string; amount: bigint; sent: bigint | null }>,
): { refundFee: bigint; shares: Map<string, { sent: bigint; fee: bigint }> } {
  const booked = new Map<string, { sent: bigint; fee: bigint }>();
  let paid = 0n;
  for (const share of shares) {
    const sent = share.sent ?? 0n;
    const fee = share.amount - sent;
    booked.set(share.id, { sent, fee });
    paid += fee;
  }
  return { refundFee: total - paid, shares: booked };
}
