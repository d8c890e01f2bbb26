// The books: every incoming transfer to a deposit address is a row keyed by its chain identity
// (account, lt, hash), inserted once and never changed. Recording a transfer and completing the
// payment it reaches happen in one transaction with the payment row locked.
import { sql, z, type DatabasePool, type Db } from '../db/pool.ts';
import { fromBaseUnits, toBaseUnits } from '../money.ts';
import { completePayment, lockPayment, type OnCompleted } from './commands.ts';
import { moneyReceivedEvent } from './events.ts';
import { pastExpiry } from './transitions.ts';
import { IS_COUNTED } from './counted.ts';

/** What a transfer did to its payment (the transfers_effect_is_known constraint lists the same). */
export const TRANSFER_EFFECTS = [
  'partial',
  'completed',
  'overpaid',
  'wrong_coin',
  'after_expiry',
  'after_cancel',
  'after_completion',
  'not_credited',
  'unknown_token',
  'not_counted',
] as const;
export type TransferEffect = (typeof TRANSFER_EFFECTS)[number];

export interface IncomingTransfer {
  /** The account whose transaction it is: the deposit address, or its jetton wallet (raw). */
  account: string;
  lt: string;
  hash: string;
  paymentId: string;
  depositAddress: string;
  /** null: a jetton of a master Kassa does not accept. */
  coinSymbol: string | null;
  jettonMaster: string | null;
  amountBaseUnits: bigint;
  sender: string | null;
  comment: string | null;
  chainTime: Date;
  /** False when the value did not stay (bounced, returned, failed). */
  credited: boolean;
  /** False for value that stayed but is not a payment (jetton notifications, excesses). */
  payment: boolean;
  /** Why it does not count, in the detector's words, or other facts. */
  detail: string | null;
  /** An unverified jetton notification in the same transaction: the master and amount it claims. */
  notifiedJettonMaster?: string | null;
  notifiedAmountBaseUnits?: bigint | null;
  /** nanoTON the receiving account paid for the transaction, when known. */
  feeBaseUnits?: bigint | null;
}

/** What a transfer did, given the payment as it was when the transfer was recorded. Pure. */
export function effectOf(
  transfer: Pick<IncomingTransfer, 'coinSymbol' | 'credited' | 'payment' | 'chainTime' | 'amountBaseUnits'>,
  payment: { status: string; coinSymbol: string | null; expiresAt: Date; requiredBaseUnits: bigint | null; countedBaseUnits: bigint },
): TransferEffect {
  if (!transfer.credited) return 'not_credited';
  if (transfer.coinSymbol === null) return 'unknown_token';
  if (!transfer.payment) return 'not_counted';
  if (transfer.coinSymbol !== payment.coinSymbol) return 'wrong_coin';
  if (payment.status === 'completed') return 'after_completion';
  if (payment.status === 'cancelled') return 'after_cancel';
  if (payment.status === 'expired' || pastExpiry(transfer.chainTime, payment.expiresAt)) return 'after_expiry';
  if (payment.status !== 'pending' || payment.requiredBaseUnits === null) return 'not_counted';
  const total = payment.countedBaseUnits + transfer.amountBaseUnits;
  if (total < payment.requiredBaseUnits) return 'partial';
  return total === payment.requiredBaseUnits ? 'completed' : 'overpaid';
}

type RecordOutcome = { recorded: false } | { recorded: true; effect: TransferEffect; completed: boolean };

interface RecordOptions {
  /**
   * Runs in the completing transaction, after the status change and the webhook's enqueue: what
   * else completion sets going (the chain reader plans the sweep to the treasury, treasury/sweeps.ts).
   * A hook, so that payments/ imports nothing of the parts built on it (`completePayment`).
   */
  onCompleted?: OnCompleted;
  /**
   * Runs in the booking transaction when money of the payment's coin arrives after it completed,
   * expired or was cancelled (a subscription's payment credits it, subscriptions/engine.ts).
   */
  onLateMoney?: OnCompleted;
}

/** Records one transfer (idempotent: a repeat changes nothing) and completes the payment it pays. */
export async function recordTransfer(pool: DatabasePool, transfer: IncomingTransfer, now: Date, options: RecordOptions = {}): Promise<RecordOutcome> {
  return pool.transaction((tx) => recordTransferIn(tx, transfer, now, options));
}

/** `recordTransfer` in the caller's transaction (a person's assignment of unmatched money books it with its own writes). */
export async function recordTransferIn(tx: Db, transfer: IncomingTransfer, now: Date, options: RecordOptions = {}): Promise<RecordOutcome> {
  const payment = await lockPayment(tx, transfer.paymentId);
  if (!payment) return { recorded: false };
  const seen = await tx.exists(sql.unsafe`select 1 from transfers where account = ${transfer.account} and lt = ${transfer.lt} and hash = ${transfer.hash}`);
  if (seen) return { recorded: false };
  const counted = await tx.oneFirst(sql.type(z.object({ total: z.string() }))`
    select coalesce(sum(t.amount_base_units), 0)::text as total from transfers t
    where t.payment_id = ${payment.id} and ${IS_COUNTED}
  `);
  const requiredBaseUnits = payment.coin_amount !== null && payment.coin_decimals !== null ? toBaseUnits(payment.coin_amount, payment.coin_decimals) : null;
  const effect = effectOf(transfer, {
    status: payment.status,
    coinSymbol: payment.coin_symbol,
    expiresAt: payment.expires_at,
    requiredBaseUnits,
    countedBaseUnits: BigInt(counted),
  });
  const decimals =
    transfer.coinSymbol === null
      ? null
      : await tx.maybeOneFirst(sql.type(z.object({ decimals: z.number() }))`select decimals::int as decimals from coins where symbol = ${transfer.coinSymbol}`);
  await tx.query(sql.typeAlias('void')`
    insert into transfers (account, lt, hash, payment_id, deposit_address, coin_symbol, jetton_master, amount_base_units, amount,
                           sender, comment, chain_time, recorded_at, effect, detail, notified_jetton_master, notified_amount_base_units, fee_base_units)
    values (${transfer.account}, ${transfer.lt}, ${transfer.hash}, ${payment.id}, ${transfer.depositAddress}, ${transfer.coinSymbol},
            ${transfer.jettonMaster}, ${transfer.amountBaseUnits.toString()}, ${decimals === null ? null : fromBaseUnits(transfer.amountBaseUnits, decimals)},
            ${transfer.sender}, ${transfer.comment}, ${sql.timestamp(transfer.chainTime)}, ${sql.timestamp(now)}, ${effect}, ${transfer.detail},
            ${transfer.notifiedJettonMaster ?? null}, ${transfer.notifiedAmountBaseUnits === undefined || transfer.notifiedAmountBaseUnits === null ? null : transfer.notifiedAmountBaseUnits.toString()},
            ${transfer.feeBaseUnits === undefined || transfer.feeBaseUnits === null ? null : transfer.feeBaseUnits.toString()})
  `);
  // Every transfer booked is told to the store's endpoints (before the completion it may cause).
  await moneyReceivedEvent(tx, transfer, now);
  // The transfer that reaches the coin amount completes the payment: the complete command.
  const completed = (effect === 'completed' || effect === 'overpaid') && (await completePayment(tx, payment, transfer.chainTime, now, options.onCompleted));
  if (effect === 'after_completion' || effect === 'after_expiry' || effect === 'after_cancel') await options.onLateMoney?.(tx, payment.id, now);
  return { recorded: true, effect, completed };
}

const transferRow = z.object({
  account: z.string(),
  lt: z.string(),
  hash: z.string(),
  coin_symbol: z.string().nullable(),
  jetton_master: z.string().nullable(),
  amount_base_units: z.string(),
  amount: z.string().nullable(),
  sender: z.string().nullable(),
  comment: z.string().nullable(),
  chain_time: z.date(),
  recorded_at: z.date(),
  effect: z.enum(TRANSFER_EFFECTS),
  detail: z.string().nullable(),
  notified_jetton_master: z.string().nullable(),
  notified_amount_base_units: z.string().nullable(),
});
export type TransferRow = z.infer<typeof transferRow>;

export async function listTransfers(db: Db, paymentId: string): Promise<readonly TransferRow[]> {
  return db.any(sql.type(transferRow)`
    select account, lt::text as lt, hash, coin_symbol, jetton_master, amount_base_units::text as amount_base_units, amount::text as amount,
           sender, comment, chain_time, recorded_at, effect, detail, notified_jetton_master, notified_amount_base_units::text as notified_amount_base_units
    from transfers where payment_id = ${paymentId} order by chain_time, lt
  `);
}
