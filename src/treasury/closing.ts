// The closing message (issue 29 item 4, issue 44 §2): the last movement out of a deposit pays each
// owner in one wallet v5 message. Pure: the signer (signer.ts) reads the books and the chain, asks
// closingShares and closingActions, and signs what they say; the reader's confirmation
// (commands.ts confirmOutgoing) books every row with bookClosing; the recurring planner (sweeps.ts)
// asks finalSweep what a settled deposit's last dust is worth.
//
// When the refund of everything refundable is signed and the deposit holds, besides it, only other
// owners' last money — the merchant's leftover (what a sweep's fee reserve did not use, under the
// dust line) and Kassa's gas (TON top-ups the jetton transfers did not use) — one message carries:
//   - the customer's refund first, as an exact value: its amount less CLOSING_REFUND_FEE, its own
//     forwarding paid on top (send mode 1), so the customer receives exactly that;
//   - each other share to its owner (the treasury; the gas wallet), its amount exactly, its own
//     forwarding fee taken from it (send mode 0: the owner receives the amount less that fee);
//   - last, the action that carries the whole remaining balance (send mode 128) to an address Kassa
//     or the merchant controls — the store's treasury, else Kassa's gas wallet — never to the
//     refund's address: wallet v5 accepts no reserve action, so this action takes whatever reached
//     the deposit between the signer's look at the books and the wallet's transaction, and that
//     money must not go to a stranger. It carries what the refund's fee did not use (the
//     customer's), the shares too small to send (each planned to that address), a share the wallet
//     skipped (+2, which a v5 external message always has), and that late money; each is booked on
//     a row of its own (bookClosing), the late money from the deposit's transfers between the books
//     the signer saw and the closing transaction.
// A final sweep is its own carry-all: it goes to the treasury or the gas wallet already.
// Nothing is left in the deposit, and the books say who paid which fee; no fee is below zero.
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
 * What the customer's refund of everything leaves behind for the message's fees in a closing message:
 * it is sent as its amount less this (send mode 1, its forwarding paid on top) — exactly what the API
 * said it `receives`, the TON fee reserve — and what the transaction's fees did not use of it goes to
 * the carry-all's destination as the customer's money (bookClosing). Measured on the sandbox: about
 * 0.003 TON for a deployed wallet v5 and its few actions, about 0.007 TON when the message deploys
 * the wallet (a refund of everything can be a deposit's first movement out): less, and the refund's
 * own action could not be paid and would be skipped.
 */
export const CLOSING_REFUND_FEE = TON_FEE_RESERVE_BASE_UNITS;

/** Where a closing message's carry-all goes: the store's treasury, else Kassa's gas wallet (never the refund's address). */
export function carryAllTo(treasury: string | null, gasWallet: string | null): string | null {
  return treasury ?? gasWallet;
}

/** One action of the closing message, in the order the wallet runs them. */
export interface ClosingAction {
  /** Whose: the primary (the refund, or the final sweep that is its own carry-all), a share (its index in the shares), the carry-all. */
  of: 'primary' | 'carry_all' | number;
  to: string;
  value: bigint;
  mode: SendMode;
}

/**
 * The closing message's actions (pure): a refund first, as its exact value (its amount less
 * `refundFee`, its forwarding on top), then each share with a message of its own (sent from its
 * amount), then the carry-all to `carryTo` (send mode 128). A sweep as the primary (a final sweep,
 * a sale's sweep) goes to the treasury or the gas wallet already: it is the carry-all itself, last.
 */
export function closingActions(
  primary: { kind: 'refund' | 'sweep'; to: string; amount: bigint },
  shares: readonly ClosingShare[],
  carryTo: string,
  refundFee: bigint = CLOSING_REFUND_FEE,
): ClosingAction[] {
  const sent: ClosingAction[] = shares.flatMap((share, i) => (share.sent ? [{ of: i, to: share.to, value: share.amount, mode: SHARE_SEND_MODE }] : []));
  if (primary.kind === 'sweep') return [...sent, { of: 'primary', to: primary.to, value: 0n, mode: SendMode.CARRY_ALL_REMAINING_BALANCE }];
  return [
    { of: 'primary', to: primary.to, value: primary.amount - refundFee, mode: SendMode.PAY_GAS_SEPARATELY },
    ...sent,
    { of: 'carry_all', to: carryTo, value: 0n, mode: SendMode.CARRY_ALL_REMAINING_BALANCE },
  ];
}

/** A row of a landed closing message, as bookClosing books it. */
export interface ClosingBooking {
  sent: bigint;
  fee: bigint;
  /** Its money left in the carry-all's message (a share too small to send, or one the wallet skipped). */
  carried: boolean;
}

/** Money the carry-all took beyond the plan, by owner, booked as a row of its own to the carry-all's destination. */
export interface CarriedMoney {
  owner: 'customer' | 'kassa';
  /** What of it the carry-all's message carried (less only a fee it paid for the others, rarely). */
  sent: bigint;
  fee: bigint;
  amount: bigint;
  /** Money that arrived since the signer looked (late), or what the refund's fee did not use. */
  why: 'arrived_since' | 'unused_fee';
}

/**
 * The books of a landed closing message (pure). `actions`: what the message was signed with, each
 * with its row (the primary's, a share's; the carry-all's is the primary's when it carries all
 * itself); `out`: the messages the transaction sent, in the order of the actions that ran (an
 * action the wallet skipped, +2, sent none; `skipped`: how many the action phase says, when the
 * source says); `total`: the transaction's fees (compute, storage, action and forwarding);
 * `late`: what reached the deposit between the books the signer saw and this transaction, by owner
 * (its receiving fee already booked on it).
 *
 *   - A share sent on its own: its message's value, its fee what its amount lost on the way.
 *   - A share too small to send (planned to the carry-all's address) or one the wallet skipped:
 *     carried by the carry-all to its destination, its whole amount, no fee.
 *   - The primary pays the rest of the fees (the compute, the storage, its own and the carry-all's
 *     forwarding). A refund sent its exact value; what its fee left is the customer's, carried
 *     (`unused_fee`). A sweep that is its own carry-all sent what its message carried less what it
 *     carried for the others.
 *   - The late money is carried (`arrived_since`).
 *
 * When the fees took more than the primary had (rare: a refund's fee above CLOSING_REFUND_FEE), the
 * primary pays what it had and the carried rows the rest, so no fee is below zero and the fees add
 * up to `total`. undefined when the messages are not those it was signed with.
 */
export function bookClosing(args: {
  primary: { id: string; kind: 'refund' | 'sweep'; amount: bigint };
  actions: ReadonlyArray<{ of: string; role: 'primary' | 'share' | 'carry_all'; to: string; amount: bigint }>;
  unsent: ReadonlyArray<{ id: string; amount: bigint }>;
  out: ReadonlyArray<{ destination: string | null; value: bigint }>;
  skipped?: number | null;
  total: bigint;
  late: { customer: bigint; kassa: bigint };
}): { rows: Map<string, ClosingBooking>; carried: CarriedMoney[]; skippedShares: string[] } | undefined {
  const { primary, out, total } = args;
  // Which actions sent a message: the out messages follow the actions that ran, in order. The
  // carry-all is last and runs last: the last message is its own when it went to its address (it is
  // skipped only with nothing left to carry); the others are matched in order, a share's message
  // carrying no more than its amount.
  const value = new Map<string, bigint>();
  const last = args.actions.at(-1);
  let messages = out;
  let actions = args.actions;
  const tail = out.at(-1);
  if (last && tail && tail.destination === last.to && (last.role !== 'share' || tail.value <= last.amount)) {
    value.set(last.of, tail.value);
    messages = out.slice(0, -1);
    actions = args.actions.slice(0, -1);
  }
  let j = 0;
  for (const action of actions) {
    const message = messages[j];
    if (message !== undefined && message.destination === action.to && (action.role !== 'share' || message.value <= action.amount)) {
      value.set(action.of, message.value);
      j += 1;
    }
  }
  if (j !== messages.length) return undefined;
  const skippedActions = args.actions.filter((action) => !value.has(action.of));
  if (args.skipped !== undefined && args.skipped !== null && args.skipped !== skippedActions.length) return undefined;
  const primaryAction = args.actions.find((a) => a.role === 'primary');
  const primaryValue = primaryAction ? value.get(primaryAction.of) : undefined;
  // A refund the wallet did not send: its money went with the carry-all; not booked here (the caller reports it).
  if (primary.kind === 'refund' && primaryValue === undefined) return undefined;
  const carryAction = args.actions.find((a) => a.role === 'carry_all') ?? primaryAction;
  const carriedValue = carryAction ? (value.get(carryAction.of) ?? 0n) : 0n;

  const rows = new Map<string, ClosingBooking>();
  const skippedShares: string[] = [];
  let othersFees = 0n;
  for (const action of args.actions) {
    if (action.role !== 'share') continue;
    const v = value.get(action.of);
    if (v === undefined) {
      rows.set(action.of, { sent: action.amount, fee: 0n, carried: true });
      skippedShares.push(action.of);
    } else {
      rows.set(action.of, { sent: v, fee: action.amount - v, carried: false });
      othersFees += action.amount - v;
    }
  }
  for (const share of args.unsent) rows.set(share.id, { sent: share.amount, fee: 0n, carried: true });
  const carriedShares = [...rows.values()].filter((r) => r.carried).reduce((sum, r) => sum + r.sent, 0n);
  const primaryFee = total - othersFees;
  const late = [
    ...(args.late.customer > 0n ? [{ owner: 'customer' as const, amount: args.late.customer }] : []),
    ...(args.late.kassa > 0n ? [{ owner: 'kassa' as const, amount: args.late.kassa }] : []),
  ];
  const lateTotal = late.reduce((sum, l) => sum + l.amount, 0n);
  // What the carry-all carried for the primary's owner: the refund's unused fee, or the final sweep's own money.
  const rest = carriedValue - carriedShares - lateTotal;
  const carried: CarriedMoney[] = late.map((l) => ({ owner: l.owner, amount: l.amount, sent: l.amount, fee: 0n, why: 'arrived_since' }));
  let deficit = rest < 0n ? -rest : 0n;
  if (primary.kind === 'refund') {
    const sent = primaryValue as bigint;
    const budget = primary.amount - sent;
    rows.set(primary.id, { sent, fee: deficit > 0n ? budget : primaryFee, carried: false });
    if (rest > 0n) carried.push({ owner: 'customer', amount: rest, sent: rest, fee: 0n, why: 'unused_fee' });
    // The fees took more than the refund's budget: by the identity of the books, exactly `deficit` more.
  } else {
    rows.set(primary.id, { sent: rest > 0n ? rest : 0n, fee: deficit > 0n ? primaryFee - deficit : primaryFee, carried: false });
  }
  // The deficit is paid by what the carry-all carried for the others (late money first, then carried shares).
  for (const c of carried) {
    if (deficit === 0n) break;
    if (c.why !== 'arrived_since') continue;
    const take = c.sent < deficit ? c.sent : deficit;
    c.sent -= take;
    c.fee += take;
    deficit -= take;
  }
  for (const [id, r] of rows) {
    if (deficit === 0n) break;
    if (!r.carried) continue;
    const take = r.sent < deficit ? r.sent : deficit;
    rows.set(id, { ...r, sent: r.sent - take, fee: r.fee + take });
    deficit -= take;
  }
  return { rows, carried, skippedShares };
}
