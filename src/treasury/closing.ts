// The closing message (issue 29 item 4, issue 44 §2), all of it in this file: the last movement out
// of a deposit pays each owner in one wallet v5 message.
//   - The rules, pure (first): closingShares (does this transfer close the deposit, with which
//     shares), closingActions (the message's actions, in order), bookClosing (who sent and paid what
//     once it landed), finalSweep (what a settled deposit's last dust is worth: the recurring
//     planner, sweeps.ts, asks it).
//   - Plan (the signer asks): closingFor reads the books beside the transfer and says its shares.
//   - Sign (the signer signs and broadcasts what these say): closingMessage builds the message;
//     recordClosing asks the books again, plans the shares' rows and records them `sent` with it.
//   - Book (the chain reader's confirmOutgoing asks, confirmations.ts): bookLandedClosing says each
//     row's sent amount and fee, bookCarriedMoney books what the carry-all took beyond the plan
//     and returns the carried-more check.
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
import { Address, internal, SendMode, type MessageRelaxed } from '@ton/core';
import type { Derivation } from '../chain/addresses.ts';
import type { ChainTransaction } from '../chain/transactions.ts';
import { sql, z, type DatabasePool, type Db } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { transfersCarriedMore } from '../metrics.ts';
import { fromBaseUnits } from '../money.ts';
import { isFinal, PAYMENT_STATUSES, type PaymentStatus } from '../payments/transitions.ts';
import { TON_FEE_RESERVE_BASE_UNITS } from './fees.ts';
import { depositMoney, holdsOtherCoin, paymentOf, planOutgoing, type OutgoingRow } from './outgoing.ts';
import { failUnsendable, recordSigned, type SignedRecord } from './signerCommands.ts';
import { askOne, lockTransfers, writeTransition } from './writeTransition.ts';

// ---- the rules (pure: no I/O, no clock) ----------------------------------------------------------

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

interface ClosingShare {
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
function carryAllTo(treasury: string | null, gasWallet: string | null): string | null {
  return treasury ?? gasWallet;
}

/** One action of the closing message, in the order the wallet runs them. */
interface ClosingAction {
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
interface CarriedMoney {
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

// ---- plan: is this transfer the deposit's last movement out, and with which shares (the signer asks) ----

/** A payment that can take no more money toward itself (payments/transitions.ts isFinal): only then may its deposit close. */
export const SETTLED_PAYMENT_STATUSES: readonly PaymentStatus[] = PAYMENT_STATUSES.filter(isFinal);

/** What the signer knows of the transfer it is about to sign, as the closing message asks it. */
export interface ClosingCandidate {
  transfer: OutgoingRow;
  /** The gas wallet sends it (its top-ups never close a deposit). */
  isGas: boolean;
  /** The deposit wallet's kind: only wallet v5 sends a closing message. */
  derivation: Derivation;
  gasWallet: string | null;
  /** What the deposit holds on chain (nanoTON). */
  balance: bigint;
  /** Tests: what the refund leaves for the fees instead of CLOSING_REFUND_FEE. */
  refundFee?: bigint;
}

/** A closing message to sign: the other owners' shares and where its carry-all goes. */
export interface Closing {
  shares: ClosingShare[];
  carryTo: string;
}

/**
 * A TON transfer out of a deposit that takes its fee from itself: the refund of everything
 * refundable, or a sweep (the sale's counted amount, held money); booksBesideIt then says whether
 * its owner keeps anything after it (the customer's money must be all gone).
 */
const movesAllOfItsOwner = ({ transfer, isGas }: ClosingCandidate): boolean =>
  !isGas &&
  (transfer.kind === 'refund' || transfer.kind === 'sweep') &&
  transfer.closing_of === null &&
  transfer.coin_symbol === 'TON' &&
  transfer.fee_reserved_base_units === '0';

/**
 * What the books say of a deposit besides its refund of everything (ClosingFacts less the chain's
 * balance): read again, with the payment row locked, in the transaction that records the message.
 */
async function booksBesideIt(db: Db, refund: OutgoingRow, gasWallet: string | null): Promise<Omit<ClosingFacts, 'primary' | 'final' | 'balance'>> {
  const money = await depositMoney(db, paymentOf(refund));
  const ton = money.find((row) => row.coin_symbol === 'TON');
  const other = await db.one(sql.type(z.object({ status: z.enum(PAYMENT_STATUSES), treasury: z.string().nullable(), moving: z.boolean() }))`
    select p.status, s.treasury,
      exists (select 1 from outgoing_transfers o where o.from_address = ${refund.from_address} and o.id <> ${refund.id}
              and o.state in ('planned', 'sent')) as moving
    from payments p join stores s on s.id = p.store_id where p.id = ${refund.payment_id}
  `);
  return {
    paymentSettled: SETTLED_PAYMENT_STATUSES.includes(other.status),
    customerLeft: BigInt(ton?.refundable ?? '0'),
    merchant: BigInt(ton?.merchant_unswept ?? '0'),
    gas: BigInt(ton?.gas ?? '0'),
    gasFree: BigInt(ton?.gas_free ?? '0'),
    otherMoney: other.moving || holdsOtherCoin(money),
    treasury: other.treasury,
    gasWallet,
  };
}

const factsOf = (books: Omit<ClosingFacts, 'primary' | 'final' | 'balance'>, c: ClosingCandidate): ClosingFacts => ({
  ...books,
  primary: BigInt(c.transfer.amount_base_units),
  final: c.transfer.final_sweep,
  balance: c.balance,
});

/**
 * The other owners' shares the transfer's message pays (none: only its owner's money is left) and
 * where its carry-all goes, or null: it is not the deposit's last movement out (or the carry-all has
 * nowhere to go but the refund's address).
 */
export async function closingFor(db: Db, c: ClosingCandidate): Promise<Closing | null> {
  if (!movesAllOfItsOwner(c) || c.derivation !== 'v5r1-1') return null;
  const { transfer } = c;
  const books = await booksBesideIt(db, transfer, c.gasWallet);
  const shares = closingShares(factsOf(books, c));
  if (shares === null) return null;
  const carryTo = transfer.kind === 'sweep' ? transfer.to_address : carryAllTo(books.treasury, books.gasWallet);
  if (carryTo === null || (transfer.kind === 'refund' && BigInt(transfer.amount_base_units) <= (c.refundFee ?? CLOSING_REFUND_FEE))) return null;
  return { shares, carryTo };
}

/**
 * A closing share still planned belongs to a message that expired unseen (shares are planned only
 * beside their primary, in the message that pays them): failed, never sent on its own (it was
 * decided for that message); the primary's next message decides its shares afresh.
 */
export async function failOrphanShares(pool: DatabasePool, wallet: string, now: () => Date, log: Logger): Promise<void> {
  const orphans = await pool.anyFirst(sql.type(z.object({ id: z.string() }))`
    select id from outgoing_transfers where from_address = ${wallet} and state = 'planned' and closing_of is not null
  `);
  const reason = 'its closing message expired unseen; the transfer it rode with decides its shares afresh';
  for (const id of orphans) {
    await pool.transaction((tx) => failUnsendable(tx, { id, wallet, reason, permanent: true, now: now(), log }));
  }
}

// ---- sign: the message's actions, and its rows recorded with it (the signer signs and broadcasts) ----

/** The closing message's messages (closingActions, in order), each action's send mode, and the primary's. */
export function closingMessage(c: ClosingCandidate, closing: Closing): { messages: MessageRelaxed[]; sendMode: number; modes: number[] } {
  const { transfer } = c;
  const actions = closingActions(
    { kind: transfer.kind === 'refund' ? 'refund' : 'sweep', to: transfer.to_address, amount: BigInt(transfer.amount_base_units) },
    closing.shares,
    closing.carryTo,
    c.refundFee,
  );
  return {
    messages: actions.map((action) => internal({ to: Address.parse(action.to), value: action.value, bounce: false })),
    sendMode: actions.find((action) => action.of === 'primary')!.mode,
    modes: actions.map((action) => action.mode),
  };
}

const bigints = (_key: string, value: unknown) => (typeof value === 'bigint' ? value.toString() : value);

/**
 * Records a signed closing message, in the transaction that records it: with the payment row locked,
 * the books are asked again (they must still say the same shares), the shares' rows are planned
 * beside the primary (closing_of; one too small to send is planned to the carry-all's address, which
 * carries it), all are recorded `sent` with the one message (recordSigned), and the primary notes
 * where the carry-all went and the newest transfer its books held (books_lt: what arrives after it
 * and before the transaction is the carry-all's late money). Returns the ids of the transfers it carries.
 */
export async function recordClosing(tx: Db, c: ClosingCandidate, closing: Closing, signed: SignedRecord): Promise<string[]> {
  const { transfer } = c;
  const { shares, carryTo } = closing;
  await tx.query(sql.unsafe`select 1 from payments where id = ${transfer.payment_id} for update`);
  const again = closingShares(factsOf(await booksBesideIt(tx, transfer, c.gasWallet), c));
  if (JSON.stringify(again, bigints) !== JSON.stringify(shares, bigints)) throw new Error('the books changed while the closing message was signed');
  const ids = [transfer.id];
  const sentIds: string[] = [];
  for (const share of shares) {
    const row = await planOutgoing(
      tx,
      {
        kind: 'sweep',
        reason: share.reason,
        paymentId: paymentOf(transfer),
        storeId: transfer.store_id,
        from: signed.wallet,
        to: share.sent ? share.to : carryTo,
        coin: 'TON',
        decimals: 9,
        amountBaseUnits: share.amount,
        feeReservedBaseUnits: 0n,
        closingOf: transfer.id,
      },
      signed.now,
    );
    if (!row) throw new Error('a closing share was refused by the books');
    ids.push(row.id);
    if (share.sent) sentIds.push(row.id);
  }
  await recordSigned(tx, { ...signed, ids });
  // Each share's own mode (recordSigned wrote the primary's): SHARE_SEND_MODE when it has a message
  // of its own in this one (`share.sent`, as closingMessage built it), none when the carry-all carries it.
  await tx.query(sql.typeAlias('void')`
    update outgoing_transfers set send_mode = case when id = any(${sql.array(sentIds, 'uuid')}) then ${SHARE_SEND_MODE}::smallint end
    where id = any(${sql.array(ids.slice(1), 'uuid')})
  `);
  await tx.query(sql.typeAlias('void')`
    update outgoing_transfers set carry_all_to = ${carryTo},
      books_lt = (select coalesce(max(t.lt), 0) from transfers t where t.account = ${signed.wallet})
    where id = ${transfer.id}
  `);
  return ids;
}

// ---- book: a landed closing message's rows (the chain reader's confirmOutgoing asks) ----------

/** A row of a landed message as the closing's books read it (confirmations.ts locks it). */
interface LandedRow {
  id: string;
  kind: string;
  reason: string;
  store_id: string;
  payment_id: string | null;
  from_address: string;
  to_address: string;
  amount_base_units: string;
  final_sweep: boolean;
  closing_of: string | null;
  send_mode: number | null;
  carry_all_to: string | null;
  books_lt: string | null;
  seqno: string;
  valid_until: Date;
  message_hash: string;
  message_hash_normalized: string;
}

/** The primary of a closing message among the rows its transaction carried (the one that noted where its carry-all went). */
export const closingPrimary = <Row extends LandedRow>(rows: readonly Row[]): Row | undefined =>
  rows.find((row) => row.carry_all_to !== null && row.closing_of === null);

const SHARE_ORDER = ['held_money', 'leftover', 'gas_return'];

/**
 * The closing message's books (bookClosing): its actions rebuilt from the rows in the order they
 * were signed (the refund, the shares with a message of their own as closingShares lists them, the
 * carry-all), the money that reached the deposit between the books the signer saw (books_lt) and
 * this transaction, by owner (net of its receiving fee, as deposit_money counts it), and each row's
 * sent amount and fee. undefined when the messages are not those it was signed with.
 */
export async function bookLandedClosing(
  db: Db,
  primary: LandedRow,
  rows: readonly LandedRow[],
  tx: ChainTransaction,
  total: bigint,
): Promise<ReturnType<typeof bookClosing>> {
  const shares = rows.filter((row) => row.closing_of === primary.id).sort((a, b) => SHARE_ORDER.indexOf(a.reason) - SHARE_ORDER.indexOf(b.reason));
  const own = shares.filter((row) => row.send_mode !== null);
  const refund = primary.kind === 'refund';
  const asAction = (row: LandedRow, role: 'primary' | 'share') => ({
    of: row.id,
    role,
    to: row.to_address,
    amount: BigInt(row.amount_base_units),
  });
  const actions = refund
    ? [
        asAction(primary, 'primary'),
        ...own.map((row) => asAction(row, 'share')),
        { of: 'carry_all', role: 'carry_all' as const, to: primary.carry_all_to!, amount: 0n },
      ]
    : [...own.map((row) => asAction(row, 'share')), asAction(primary, 'primary')];
  const late = await db.one(sql.type(z.object({ customer: z.string(), kassa: z.string() }))`
    select coalesce(sum(t.amount_base_units - coalesce(t.fee_base_units, 0)) filter (where t.effect not in ('not_credited', 'not_counted', 'unknown_token')), 0)::text as customer,
           coalesce(sum(t.amount_base_units - coalesce(t.fee_base_units, 0)) filter (where t.effect = 'not_counted'), 0)::text as kassa
    from transfers t
    where t.account = ${primary.from_address} and t.coin_symbol = 'TON' and t.lt > ${primary.books_lt ?? '0'} and t.lt < ${tx.lt}
  `);
  return bookClosing({
    primary: { id: primary.id, kind: refund ? 'refund' : 'sweep', amount: BigInt(primary.amount_base_units) },
    actions,
    unsent: shares.filter((row) => row.send_mode === null).map((row) => ({ id: row.id, amount: BigInt(row.amount_base_units) })),
    out: tx.outMessages ?? [],
    skipped: tx.skippedActions ?? null,
    total,
    late: { customer: BigInt(late.customer), kassa: BigInt(late.kassa) },
  });
}

/** Late money a refund's or final sweep's carry-all took to the treasury or the gas wallet (reportCarriedMore tells it). */
export interface CarriedMore {
  id: string;
  kind: 'refund' | 'final_sweep';
  paymentId: string | null;
  beyond: bigint;
  to: string;
}

/**
 * What the carry-all took beyond the plan, booked: a share the wallet skipped (+2) went with the
 * carry-all (its row says where its money went), and each owner's carried money on a row of its own
 * (bookCarried), confirmed by this transaction. Returns the carried-more check: money that reached
 * the deposit after the books were read and went with a refund's or final sweep's carry-all, or null.
 */
export async function bookCarriedMoney(
  db: Db,
  primary: LandedRow,
  booked: NonNullable<ReturnType<typeof bookClosing>>,
  tx: ChainTransaction,
  now: Date,
): Promise<CarriedMore | null> {
  if (booked.skippedShares.length > 0)
    await db.query(sql.typeAlias('void')`
      update outgoing_transfers set to_address = ${primary.carry_all_to!} where id = any(${sql.array(booked.skippedShares, 'uuid')})
    `);
  for (const c of booked.carried) await bookCarried(db, primary, c, tx, now);
  const late = booked.carried.filter((c) => c.why === 'arrived_since').reduce((sum, c) => sum + c.amount, 0n);
  const kind = primary.kind === 'refund' ? 'refund' : primary.final_sweep ? 'final_sweep' : null;
  return kind && late > 0n ? { id: primary.id, kind, paymentId: primary.payment_id, beyond: late, to: primary.carry_all_to! } : null;
}

/** The carried-more check's figure and error line (after the transaction committed). */
export function reportCarriedMore(log: Logger, tx: ChainTransaction, c: CarriedMore): void {
  transfersCarriedMore.inc({ kind: c.kind });
  log.error(
    { transferId: c.id, kind: c.kind, paymentId: c.paymentId, beyondBaseUnits: c.beyond.toString(), to: c.to, account: tx.account, hash: tx.hash },
    "a closing message's carry-all took money that reached the deposit after the books were read: it went to the treasury or the gas wallet (booked as swept there), not to the refund's address",
  );
}

/**
 * Money a closing message's carry-all took beyond the plan (CarriedMoney), on a row of its own: a
 * sweep to the carry-all's destination — the customer's as held money, Kassa's as a gas return —
 * beside the message's primary (closing_of), confirmed by the same transaction.
 */
async function bookCarried(db: Db, primary: LandedRow, carried: CarriedMoney, tx: ChainTransaction, now: Date): Promise<void> {
  const row = await planOutgoing(
    db,
    {
      kind: 'sweep',
      reason: carried.owner === 'customer' ? 'held_money' : 'gas_return',
      paymentId: primary.payment_id!,
      storeId: primary.store_id,
      from: primary.from_address,
      to: primary.carry_all_to!,
      coin: 'TON',
      decimals: 9,
      amountBaseUnits: carried.amount,
      feeReservedBaseUnits: 0n,
      closingOf: primary.id,
    },
    now,
  );
  if (!row) throw new Error('the money a closing message carried could not be booked');
  const [locked] = await lockTransfers(db, sql.fragment`o.id = ${row.id}`);
  const next = askOne(locked!, { type: 'confirmed' }, now);
  if (!next.ok) throw new Error('the money a closing message carried could not be confirmed');
  await writeTransition(
    db,
    locked!,
    next,
    now,
    sql.fragment`sent_amount_base_units = ${carried.sent.toString()}, fee_base_units = ${carried.fee.toString()}, fee = ${fromBaseUnits(carried.fee, 9)},
      transaction_hash = ${tx.hash}, transaction_lt = ${tx.lt}, wallet_seqno = ${primary.seqno}, valid_until = ${sql.timestamp(primary.valid_until)},
      message_hash = ${primary.message_hash}, message_hash_normalized = ${primary.message_hash_normalized}, confirmed_at = ${sql.timestamp(now)},
      delivered_at = ${sql.timestamp(now)}`,
  );
}
