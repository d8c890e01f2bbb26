// What a transaction on one of Kassa's accounts is, decided without I/O: the cases book.ts books it
// as (casesOf: a treasury refund's transfer, a jetton transfer's delivery, money into a treasury paid
// by reference, money into the gas wallet, money out confirmed, money into a deposit), and within
// them a jetton wallet's refused transfer out, a jetton transfer out that bounced at its destination
// and came back, or money in and what the books record of it (whose payment, which coin, credited,
// paying or not, and why). book.ts asks the chain and the database what these functions cannot know
// (the block's accounts, who sent a jetton notification), and writes what they decide.
import type { IncomingTransfer } from '../payments/transfers.ts';
import type { TreasuryIncoming } from '../payments/treasuryTransfers.ts';
import { readReference } from '../payments/reference.ts';
import {
  bodyText,
  detectBouncedJettonTransfer,
  detectJettonTransfer,
  detectTonTransfer,
  OP_ENCRYPTED_COMMENT,
  parseTransferNotification,
} from '../chain/detect.ts';
import type { ChainTransaction } from '../chain/transactions.ts';
import type { TreasuryWatch } from '../treasury/treasuryRefunds.ts';

/** One of Kassa's accounts on the chain (a row of chain_watches): a payment's deposit, or its jetton wallet. */
export interface Watch {
  account: string;
  payment_id: string;
  kind: 'deposit' | 'jetton_wallet';
  coin_symbol: string | null;
  jetton_master: string | null;
  deposit_address: string;
  /**
   * A deposit's jetton wallet of another accepted coin, which the reader does not follow
   * (reconciliation reads its history): a transfer into it that sent the deposit a notification is
   * booked from that notification, so only those that sent none (`forward_ton_amount = 0`) are booked here.
   */
  unnotifiedOnly?: boolean;
}

/** What the reader does with one transaction of a block. */
type Route =
  /** An external message on a deposit or the gas wallet: Kassa's signer sent money out; the treasury confirms it. */
  | { kind: 'outgoing'; paymentId: string | null }
  /**
   * A transaction on a watched account: whatever came in is classified (classifyIncoming).
   * `jettonTransferOut`: the deposit's own jetton transfer, run by its jetton wallet (refused means it failed).
   * `jettonTransferBack`: a jetton transfer out of the deposit that the destination's jetton wallet
   * refused, taken back by the deposit's jetton wallet (the transfer failed; its query id and amount).
   */
  | { kind: 'watched'; watch: Watch; jettonTransferOut: boolean; jettonTransferBack: { queryId: bigint; amount: bigint } | null }
  /** Not one of Kassa's accounts. */
  | { kind: 'ignored' };

export function routeTransaction(tx: ChainTransaction, watch: Watch | undefined, gasWallet: string | null): Route {
  const external = tx.inMessage !== null && tx.inMessage.source === null;
  if (external && tx.account === gasWallet) return { kind: 'outgoing', paymentId: null };
  if (!watch) return { kind: 'ignored' };
  if (watch.kind === 'deposit' && external) return { kind: 'outgoing', paymentId: watch.payment_id };
  const jetton = watch.kind === 'jetton_wallet';
  return {
    kind: 'watched',
    watch,
    jettonTransferOut: jetton && tx.inMessage?.source === watch.deposit_address,
    jettonTransferBack: jetton ? detectBouncedJettonTransfer(tx) : null,
  };
}

/** A treasury customers pay by reference (CONTRACT §12), or its jetton wallet: the stores it is paid for. */
export interface SettlementTreasury {
  stores: string[];
  /** Its jetton wallet of an accepted coin, when the account is that wallet (null: the treasury itself). */
  jetton: TreasuryJettonWallet | null;
}

/** What the books know of the accounts a block's transactions touch, by account (book.ts reads it once a block). */
export interface BlockAccounts {
  /** Deposits and their jetton wallets (chain_watches). */
  watches: Map<string, Watch>;
  /** The treasury refunds watching an account (treasuryRefunds.ts). */
  treasuryRefunds: Map<string, TreasuryWatch[]>;
  /** The treasuries paid by reference, and their jetton wallets. */
  treasuries: Map<string, SettlementTreasury>;
  /** Jetton transfers out of deposits on their way, by their sending and receiving jetton wallet. */
  deliveries: Map<string, JettonDelivery[]>;
  /** Kassa's gas wallet (null: none yet). */
  gasWallet: string | null;
}

/** One way a transaction is booked (book.ts has one function for each kind, named for it). */
export type Case =
  /** A transaction of a store's treasury or its jetton wallet that treasury refunds watch: a refund paid, or its jettons back. */
  | { kind: 'treasuryRefund'; refunds: TreasuryWatch[] }
  /** A transaction of a jetton wallet a deposit's transfer out goes through: refused, delivered or bounced. */
  | { kind: 'jettonDelivery'; deliveries: JettonDelivery[] }
  /** Money into a treasury customers pay by reference (TON, or jettons into its jetton wallet). */
  | { kind: 'treasuryPayment'; treasury: SettlementTreasury }
  /** TON into the gas wallet from outside Kassa (a refund fee top-up, or money nobody owns). */
  | { kind: 'gasArrival' }
  /** An external message on a deposit or the gas wallet: Kassa's signer sent money out. */
  | { kind: 'moneyOut'; paymentId: string | null }
  /** A transaction on a deposit or its jetton wallet: money in, and the deposit's jetton transfer refused or back. */
  | ({ kind: 'moneyIn' } & Omit<Extract<Route, { kind: 'watched' }>, 'kind'>);

/**
 * The cases a transaction is booked as, in order. A treasury refund's and a delivery's come first
 * and go with any other; then one of: money into a treasury paid by reference (an account no
 * deposit watches), into the gas wallet, out of Kassa, or into a deposit; none for other accounts.
 */
export function casesOf(tx: ChainTransaction, accounts: BlockAccounts): Case[] {
  const cases: Case[] = [];
  const refunds = accounts.treasuryRefunds.get(tx.account);
  if (refunds) cases.push({ kind: 'treasuryRefund', refunds });
  const deliveries = accounts.deliveries.get(tx.account);
  if (deliveries) cases.push({ kind: 'jettonDelivery', deliveries });
  const treasury = accounts.treasuries.get(tx.account);
  if (treasury && !accounts.watches.has(tx.account)) return [...cases, { kind: 'treasuryPayment', treasury }];
  if (tx.account === accounts.gasWallet && tx.inMessage?.source) return [...cases, { kind: 'gasArrival' }];
  const route = routeTransaction(tx, accounts.watches.get(tx.account), accounts.gasWallet);
  if (route.kind === 'outgoing') cases.push({ kind: 'moneyOut', paymentId: route.paymentId });
  else if (route.kind === 'watched') cases.push({ ...route, kind: 'moneyIn' });
  return cases;
}

/**
 * A comment as the books keep it: PostgreSQL text cannot hold U+0000 (anyone can send one to a
 * deposit address), and nobody needs more than 1,000 characters of it.
 */
export function bookComment(comment: string | undefined): string | null {
  if (comment === undefined) return null;
  return comment.replaceAll('\u0000', '\uFFFD').slice(0, 1000);
}

/** The body's op as the books describe a TON transfer that carried one (comments and no body: nothing). */
function describeOp(op: number | undefined): string | null {
  if (op === undefined || op === 0) return null;
  return op === OP_ENCRYPTED_COMMENT ? 'encrypted_comment' : `op 0x${op.toString(16).padStart(8, '0')}`;
}

/**
 * Who sent a jetton notification to a deposit, as the reader found out: the payment's own jetton
 * wallet (`own`), or another wallet with the master it names (null when it named none) and the
 * accepted coin of that master when the master confirms the wallet as the deposit's (else null).
 */
export type Notifier = { own: true } | { own: false; master: string | null; coin: string | null };

/** The reader must find out who sent the jetton notification `wallet` before it can be booked. */
interface NotifierNeeded {
  needs: 'notifier';
  wallet: string;
}

/**
 * What one transaction on a watched account puts on the books: null when nothing came in. A jetton
 * notification from another wallet than the payment's own is decided only once `notifier` says who
 * sent it; without it the answer is the question (NotifierNeeded). TON sent by Kassa's gas wallet
 * (`gasWallet`) for a jetton transfer out of the deposit is Kassa's own, not a payment.
 */
export function classifyIncoming(
  watch: Watch,
  tx: ChainTransaction,
  known: { gasWallet: string | null; notifier?: Notifier },
): IncomingTransfer | NotifierNeeded | null {
  const base = { account: watch.account, paymentId: watch.payment_id, depositAddress: watch.deposit_address };
  if (watch.kind === 'jetton_wallet') {
    const jetton = detectJettonTransfer(tx);
    if (!jetton) return null;
    if (watch.unnotifiedOnly && (jetton.forwardTonAmount ?? 0n) > 0n) return null;
    return {
      ...base,
      lt: jetton.lt,
      hash: jetton.hash,
      coinSymbol: watch.coin_symbol,
      jettonMaster: watch.jetton_master,
      amountBaseUnits: jetton.amount,
      sender: jetton.sender,
      comment: bookComment(jetton.comment),
      chainTime: new Date(jetton.utime * 1000),
      credited: jetton.counted,
      payment: true,
      detail: jetton.reason ?? null,
    };
  }
  const ton = detectTonTransfer(tx);
  if (!ton) return null;
  const common = {
    ...base,
    lt: ton.lt,
    hash: ton.hash,
    chainTime: new Date(ton.utime * 1000),
    comment: bookComment(ton.comment),
    feeBaseUnits: tx.totalFees ?? null,
  };
  const asTon = (overrides: Partial<IncomingTransfer> = {}): IncomingTransfer => ({
    ...common,
    coinSymbol: 'TON',
    jettonMaster: null,
    amountBaseUnits: ton.amount,
    sender: ton.sender,
    // A bounce that reaches a deposit returns Kassa's own value (the only bounceable messages a
    // deposit sends are its jetton transfers): it stays, and is no payment (not_counted). A value
    // sent back by the bounce phase did not stay (not_credited).
    credited: ton.reason !== 'value_returned',
    payment: ton.counted,
    detail: ton.reason ?? describeOp(ton.op),
    ...overrides,
  });
  if (ton.sender !== null && ton.sender === known.gasWallet) return asTon({ payment: false, detail: "gas top-up from Kassa's gas wallet" });
  if (ton.reason !== 'jetton_notification' || !ton.sender) return asTon();
  const who = known.notifier;
  if (!who) return { needs: 'notifier', wallet: ton.sender };
  // The payment's own jetton wallet needs no questions: its transfer is counted there.
  if (who.own) return asTon({ payment: false });
  const notified = parseTransferNotification(tx);
  if (who.coin !== null && notified) {
    // Another accepted jetton, from the deposit's genuine wallet of it: the notification is the
    // only trace on our side (its wallet is not watched), so it is what the books record.
    return {
      ...common,
      coinSymbol: who.coin,
      jettonMaster: who.master,
      amountBaseUnits: notified.amount,
      sender: notified.sender,
      credited: true,
      payment: true,
      detail: `jetton_notification from ${ton.sender}; ${ton.amount} nanoTON forwarded`,
    };
  }
  // A notification nobody can verify (a foreign or look-alike token, or a fake): the TON it
  // carried is value like any other; the token's claim is kept beside it. Its payer is whoever the
  // notification names (TEP-74: the jetton wallet forwards the sender's TON), not the wallet it
  // came from — when that answered as a jetton wallet, it is the deposit's own wallet of the
  // token, and TON refunded there would be lost.
  return asTon({
    payment: true,
    sender: who.master !== null && notified?.sender ? notified.sender : ton.sender,
    detail: `unverified jetton_notification from ${ton.sender}`,
    notifiedJettonMaster: who.master,
    notifiedAmountBaseUnits: notified?.amount ?? null,
  });
}

/**
 * A transaction on the treasury of a store that settles there (CONTRACT §12): the TON that came in
 * and stayed, with what its comment says of a reference — a text comment inline or in a ref cell,
 * with or without the 32-bit zero prefix, case and the dash ignored; an encrypted comment is said to
 * be one. Null for everything that is no customer's money in: the treasury's own outgoing traffic
 * (an external message: refunds, the merchant's spending), a bounce of what it sent, a value the
 * bounce phase returned, jetton notifications and excesses (the jetton's own path), and no value.
 */
export function classifyTreasuryIncoming(tx: ChainTransaction): TreasuryIncoming | null {
  const ton = detectTonTransfer(tx);
  if (ton === null || !ton.counted || ton.amount <= 0n) return null;
  const { text, encrypted } = bodyText(tx.inMessage?.body ?? null);
  return {
    account: tx.account,
    treasury: tx.account,
    coinSymbol: 'TON',
    jettonMaster: null,
    decimals: 9,
    lt: ton.lt,
    hash: ton.hash,
    amountBaseUnits: ton.amount,
    sender: ton.sender,
    chainTime: new Date(ton.utime * 1000),
    comment: bookComment(text ?? undefined),
    read: encrypted ? { kind: 'encrypted' } : readReference(text),
    feeBaseUnits: tx.totalFees ?? null,
  };
}

/** A jetton transfer out on its way (confirmed when it left, not delivered yet): its two jetton wallets and its query id. */
export interface JettonDelivery {
  id: string;
  from_address: string;
  coin_symbol: string;
  jetton_wallet: string;
  destination_jetton_wallet: string;
  query_id: string;
  amount_base_units: string;
}

/**
 * What a transaction of a jetton transfer's receiving or sending jetton wallet says of it:
 * `delivered` when the receiving wallet's internal_transfer from the sending one, with the
 * transfer's query id, succeeded (the destination has the jettons); `bounced` when the sending
 * wallet took that internal_transfer back (the destination refused it); else null.
 */
export function deliveryOutcome(
  tx: ChainTransaction,
  delivery: JettonDelivery,
): { outcome: 'delivered' } | { outcome: 'bounced'; queryId: bigint; amount: bigint } | null {
  if (tx.account === delivery.destination_jetton_wallet && tx.inMessage?.source === delivery.jetton_wallet) {
    const jetton = detectJettonTransfer(tx);
    if (jetton?.counted && jetton.queryId === delivery.query_id) return { outcome: 'delivered' };
  }
  if (tx.account === delivery.jetton_wallet) {
    const back = detectBouncedJettonTransfer(tx);
    if (back && back.queryId.toString() === delivery.query_id && back.amount.toString() === delivery.amount_base_units) return { outcome: 'bounced', ...back };
  }
  return null;
}

/** A treasury's jetton wallet of an accepted coin: its owner (the treasury) and master as the master confirmed them. */
interface TreasuryJettonWallet {
  treasury: string;
  coinSymbol: string;
  jettonMaster: string;
  decimals: number;
}

/**
 * A transaction on a treasury's jetton wallet (CONTRACT §12): the jettons the `internal_transfer`
 * that reached it brought, with what its forward_payload says of a reference (read as a TON
 * comment is). Matched from the internal_transfer itself, so a transfer sent with
 * `forward_ton_amount = 0` (no notification to the treasury) is read as well as one with. Null for
 * everything else: the treasury's own transfers out (op transfer), bounces, a failed transfer.
 */
export function classifyTreasuryJettonIncoming(tx: ChainTransaction, wallet: TreasuryJettonWallet): TreasuryIncoming | null {
  const jetton = detectJettonTransfer(tx);
  if (jetton === null || !jetton.counted || jetton.amount <= 0n) return null;
  const { text, encrypted } = bodyText(jetton.forwardPayload ?? null);
  return {
    account: tx.account,
    treasury: wallet.treasury,
    coinSymbol: wallet.coinSymbol,
    jettonMaster: wallet.jettonMaster,
    decimals: wallet.decimals,
    lt: jetton.lt,
    hash: jetton.hash,
    amountBaseUnits: jetton.amount,
    sender: jetton.sender,
    chainTime: new Date(jetton.utime * 1000),
    comment: bookComment(text ?? undefined),
    read: encrypted ? { kind: 'encrypted' } : readReference(text),
  };
}
