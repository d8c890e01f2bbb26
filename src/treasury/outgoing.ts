// The books of money out (outgoing_transfers): what is planned, what was signed and sent, what the
// chain confirmed, and a deposit's money (deposit_money). Plans are written in the transaction that
// decides them (the planners: sweeps.ts, refunds.ts, gasTopUps.ts; the closing message's shares,
// closing.ts), with the signer's job (outgoing__send, one queue per deposit wallet) enqueued beside
// them; the transitions' commands are signerCommands.ts (the signer's), confirmations.ts and
// treasuryConfirmations.ts (the chain reader's), each writing through writeTransition.ts; the fee
// figures fees.ts. No chain calls here.
import { sql, z, type Db } from '../db/pool.ts';
import { fromBaseUnits } from '../money.ts';
import { enqueue } from '../worker/enqueue.ts';
import { OUTGOING_STATES, type Failure } from './transitions.ts';
import { outgoingSendJob } from '../worker/jobs.ts';

type OutgoingKind = 'sweep' | 'refund' | 'gas_top_up';

/**
 * Adds (or brings forward) the signer's job for one deposit wallet. One queue per wallet: its
 * transfers are signed one at a time, in order, each with the next seqno.
 */
export async function enqueueWalletSend(tx: Db, fromAddress: string, runAt?: Date, preserveRunAt = false): Promise<void> {
  await enqueue(tx, outgoingSendJob(fromAddress, runAt, preserveRunAt));
}

/** What a transfer out of a wallet is, on the books (planOutgoing writes it). */
export interface OutgoingPlan {
  kind: OutgoingKind;
  reason: 'payment' | 'held_money' | 'refund' | 'gas' | 'leftover' | 'gas_return';
  paymentId: string;
  storeId: string;
  from: string;
  /** Raw form. */
  to: string;
  /** The destination as the merchant gave it (refunds). */
  toGiven?: string;
  coin: string;
  decimals: number;
  amountBaseUnits: bigint;
  /** nanoTON set aside for its fee (a jetton transfer: with the TON its message carries). */
  feeReservedBaseUnits: bigint;
  /** A gas top-up: the jetton transfer it pays for. */
  forTransferId?: string;
  /** When the wallet's signer job should run (default: now). */
  sendAt?: Date;
  /** A refund asked in the payment's currency: what was asked and the rate that converted it. */
  requested?: RequestedAmount;
  /** A share of another owner in the closing message of this refund (closing.ts). */
  closingOf?: string;
  /** The deposit's final sweep (sweeps.ts planFinalSweeps): it leaves as a closing message or not at all. */
  finalSweep?: boolean;
}

/** A refund's amount as the merchant asked it in the payment's currency, and the rate that made it the coin amount. */
export interface RequestedAmount {
  amount: string;
  currency: string;
  rate: string;
  rateSource: string;
}

/**
 * The one way a transfer out gets on the books: its row, in the caller's transaction (the one that
 * decided it, with the payment row locked), and the signer's job for its wallet. Returns its row,
 * or null when a unique rule refused it (a completed payment's counted money is swept once).
 */
export async function planOutgoing(tx: Db, plan: OutgoingPlan, now: Date): Promise<OutgoingRow | null> {
  const row = await tx.maybeOne(sql.type(outgoingRow)`
    insert into outgoing_transfers (kind, reason, payment_id, store_id, for_transfer_id, from_address, to_address, to_address_given, coin_symbol,
                                    amount, amount_base_units, fee_reserved_base_units, requested_amount, requested_currency, exchange_rate,
                                    exchange_rate_source, closing_of, final_sweep, created_at, updated_at)
    values (${plan.kind}, ${plan.reason}, ${plan.paymentId}, ${plan.storeId}, ${plan.forTransferId ?? null}, ${plan.from}, ${plan.to},
            ${plan.toGiven ?? null}, ${plan.coin}, ${fromBaseUnits(plan.amountBaseUnits, plan.decimals)}, ${plan.amountBaseUnits.toString()},
            ${plan.feeReservedBaseUnits.toString()}, ${plan.requested?.amount ?? null}, ${plan.requested?.currency ?? null},
            ${plan.requested?.rate ?? null}, ${plan.requested?.rateSource ?? null}, ${plan.closingOf ?? null}, ${plan.finalSweep ?? false}, ${sql.timestamp(now)},
            ${sql.timestamp(now)})
    on conflict do nothing
    returning ${OUTGOING_COLUMNS}
  `);
  // A gas top-up joins the gas wallet's waiting batch (its run_at kept: a steady stream of top-ups
  // cannot push the batch back for ever); anything else brings the wallet's job to sendAt.
  if (row) await enqueueWalletSend(tx, plan.from, plan.sendAt, plan.kind === 'gas_top_up');
  return row;
}

// ---- a deposit's money (the SQL function deposit_money, migration 000014) ---------------------

const moneyRow = z.object({
  coin_symbol: z.string(),
  decimals: z.number(),
  received: z.string(),
  held: z.string(),
  counted: z.string(),
  refunded: z.string(),
  swept: z.string(),
  fees: z.string(),
  merchant_unswept: z.string(),
  gas: z.string().nullable(),
  gas_free: z.string().nullable(),
  refundable: z.string(),
  last_money_at: z.date().nullable(),
});
export type DepositMoney = z.infer<typeof moneyRow>;

/** Another coin than TON still in the deposit: anybody's (refundable, the merchant's unswept, held toward the payment). */
export function holdsOtherCoin(money: readonly DepositMoney[]): boolean {
  return money.some((row) => row.coin_symbol !== 'TON' && (BigInt(row.refundable) > 0n || BigInt(row.merchant_unswept) > 0n || BigInt(row.held) > 0n));
}

/**
 * A payment's deposit money per coin (base units; fees and gas in nanoTON): the one definition
 * (deposit_money in SQL), read by the refunds API, the sweep planner, GET …/balance and reporting.
 */
export async function depositMoney(db: Db, paymentId: string): Promise<readonly DepositMoney[]> {
  return db.any(sql.type(moneyRow)`
    select coin_symbol, decimals, received::text as received, held::text as held, counted::text as counted, refunded::text as refunded,
           swept::text as swept, fees::text as fees, merchant_unswept::text as merchant_unswept, gas::text as gas,
           gas_free::text as gas_free, refundable::text as refundable, last_money_at
    from deposit_money(${paymentId}) order by coin_symbol <> 'TON', coin_symbol
  `);
}

/**
 * What of `coin` in the payment's deposit wallet is refundable (base units), fees of refunds and
 * held-money sweeps already taken (deposit_money). Lock the payment row first when acting on it.
 */
export async function refundableBaseUnits(tx: Db, paymentId: string, coin: string): Promise<bigint> {
  const value = await tx.maybeOneFirst(sql.type(z.object({ refundable: z.string() }))`
    select refundable::text as refundable from deposit_money(${paymentId}) where coin_symbol = ${coin}
  `);
  return BigInt(value ?? '0');
}

/**
 * Earlier transient failures of the same transfer (same payment, kind, reason, coin): what a new
 * failure's backoff and cap count (transitions.ts). For a query over `outgoing_transfers o`.
 */
export const RETRIES = sql.fragment`(select count(*)::int from outgoing_transfers f
  where f.payment_id = o.payment_id and f.kind = o.kind and f.reason = o.reason and f.coin_symbol = o.coin_symbol
    and f.id <> o.id and f.state = 'failed' and f.failure_kind = 'transient')`;

/** The columns a transition's failure (or its absence) sets. */
export function failureColumns(failure: Failure | undefined, now: Date) {
  return failure
    ? sql.fragment`failure_reason = ${failure.reason}, failure_kind = ${failure.kind}, retry_at = ${failure.retryAt ? sql.timestamp(failure.retryAt) : null},
        failed_at = ${sql.timestamp(now)}`
    : sql.fragment`failure_reason = null, failure_kind = null, retry_at = null, failed_at = null`;
}

// ---- reading --------------------------------------------------------------------------------

export const outgoingRow = z.object({
  id: z.string(),
  kind: z.enum(['sweep', 'refund', 'gas_top_up']),
  reason: z.string(),
  /** Null for a treasury refund of unmatched money (unmatched_transfer_id). */
  payment_id: z.string().nullable(),
  /** A treasury refund of unmatched money: the transfer into the treasury it sends back. */
  unmatched_transfer_id: z.string().nullable(),
  store_id: z.string(),
  from_address: z.string(),
  to_address: z.string(),
  to_address_given: z.string().nullable(),
  coin_symbol: z.string(),
  amount: z.string(),
  amount_base_units: z.string(),
  state: z.enum(OUTGOING_STATES),
  /** deposit: Kassa's signer sends it; treasury: the merchant's wallet signs it (treasuryRefunds.ts). */
  source: z.enum(['deposit', 'treasury']),
  reference: z.string().nullable(),
  request_address: z.string().nullable(),
  request_amount_base_units: z.string().nullable(),
  request_payload: z.instanceof(Buffer).nullable(),
  /** A treasury refund the merchant's wallet paid more than once (treasury_refund_repeats): each later transfer, its amount in the coin. */
  paid_again: z.array(z.object({ transactionHash: z.string(), amount: z.string() })),
  /** A treasury refund its wallet signed for another amount: what it asked (amount is what moved). */
  asked_amount: z.string().nullable(),
  /** A treasury refund whose confirmation took what left the treasury for its sale beyond the sale: by how much, in the coin. */
  beyond_sale: z.string().nullable(),
  /** A treasury refund confirmed after it had been found expired (its amount freed meanwhile): when it had been found expired. */
  expired_before_paid_at: z.date().nullable(),
  /** A treasury refund paid from another account than the treasury (its ton:// link): that account, raw. */
  paid_from: z.string().nullable(),
  wallet_seqno: z.string().nullable(),
  valid_until: z.date().nullable(),
  message_hash: z.string().nullable(),
  messages_signed: z.number(),
  broadcasts: z.number(),
  sent_amount_base_units: z.string().nullable(),
  fee: z.string().nullable(),
  fee_base_units: z.string().nullable(),
  fee_reserved_base_units: z.string(),
  transaction_hash: z.string().nullable(),
  failure_reason: z.string().nullable(),
  failure_kind: z.enum(['permanent', 'transient']).nullable(),
  retry_at: z.date().nullable(),
  requested_amount: z.string().nullable(),
  requested_currency: z.string().nullable(),
  exchange_rate: z.string().nullable(),
  exchange_rate_source: z.string().nullable(),
  /** A share paid in the closing message of that refund (closing.ts). */
  closing_of: z.string().nullable(),
  /** The deposit's final sweep (sweeps.ts planFinalSweeps). */
  final_sweep: z.boolean(),
  /** When the destination had it (a jetton transfer: its receiving jetton wallet took it); null while on its way. */
  delivered_at: z.date().nullable(),
  /** A treasury refund: when a dashboard page handed its TON Connect request to a wallet (null: none holds it). */
  request_sent_at: z.date().nullable(),
  /**
   * A transfer Kassa signs (not a treasury refund), still planned: what it waits for, or null — the
   * TON of its network fee on its way from the gas wallet (network_fee: that top-up), or another
   * transfer of the same wallet in flight or queued before it (another_transfer: a wallet signs one
   * message at a time, each with the next seqno; the chain's confirmation of that one brings this one on).
   */
  waiting_for: z.object({ reason: z.enum(['network_fee', 'another_transfer']), transferID: z.string(), kind: z.string() }).nullable(),
  created_at: z.date(),
});
export type OutgoingRow = z.infer<typeof outgoingRow>;

/** The payment of a transfer out of a deposit (every one has it; only a treasury refund of unmatched money has none). */
export function paymentOf(row: Pick<OutgoingRow, 'id' | 'payment_id'>): string {
  if (row.payment_id === null) throw new Error(`outgoing transfer ${row.id} is a refund of unmatched money: it has no payment`);
  return row.payment_id;
}

/**
 * The state a refund or sweep is shown in (planned: pending): a jetton transfer out of a deposit confirmed when it left
 * but not at its destination yet (two hops on) is still `sent`; a bounce may yet fail it.
 */
export function shownState(row: Pick<OutgoingRow, 'state' | 'delivered_at' | 'source'>): Exclude<OutgoingRow['state'], 'planned'> | 'pending' {
  if (row.state === 'planned') return 'pending';
  return row.state === 'confirmed' && row.delivered_at === null && row.source === 'deposit' ? 'sent' : row.state;
}

export const OUTGOING_COLUMNS = sql.fragment`
  id, kind, reason, payment_id, unmatched_transfer_id, store_id, from_address, to_address, to_address_given, coin_symbol, amount::text as amount,
  amount_base_units::text as amount_base_units, state, wallet_seqno::text as wallet_seqno, valid_until, message_hash,
  messages_signed, broadcasts, sent_amount_base_units::text as sent_amount_base_units, fee::text as fee,
  fee_base_units::text as fee_base_units, fee_reserved_base_units::text as fee_reserved_base_units, transaction_hash, failure_reason,
  failure_kind, retry_at, requested_amount::text as requested_amount, requested_currency, exchange_rate::text as exchange_rate,
  exchange_rate_source, closing_of, final_sweep, delivered_at, request_sent_at, created_at, source, reference, request_address, request_amount_base_units::text as request_amount_base_units,
  request_payload, paid_from, expired_before_paid_at,
  (select trim_scale(asked_amount_base_units / power(10::numeric, c.decimals))::text from coins c where c.symbol = outgoing_transfers.coin_symbol
   and asked_amount_base_units is not null) as asked_amount,
  (select trim_scale(beyond_sale_base_units / power(10::numeric, c.decimals))::text from coins c where c.symbol = outgoing_transfers.coin_symbol
   and beyond_sale_base_units is not null) as beyond_sale,
  (select coalesce(jsonb_agg(jsonb_build_object('transactionHash', r.transaction_hash, 'amount', trim_scale(r.amount_base_units / power(10::numeric, c.decimals))::text)
     order by r.transaction_lt), '[]'::jsonb)
   from treasury_refund_repeats r join coins c on c.symbol = outgoing_transfers.coin_symbol where r.transfer_id = outgoing_transfers.id) as paid_again,
  (case when outgoing_transfers.state = 'planned' and outgoing_transfers.source = 'deposit' then coalesce(
    (select jsonb_build_object('reason', 'network_fee', 'transferID', g.id, 'kind', g.kind) from outgoing_transfers g
     where g.for_transfer_id = outgoing_transfers.id and g.state in ('planned', 'sent') order by g.created_at, g.id limit 1),
    (select jsonb_build_object('reason', 'another_transfer', 'transferID', w.id, 'kind', w.kind) from outgoing_transfers w
     where w.from_address = outgoing_transfers.from_address and w.id <> outgoing_transfers.id
       and (w.state = 'sent' or (w.state = 'planned' and (w.created_at, w.id) < (outgoing_transfers.created_at, outgoing_transfers.id)))
     order by w.state = 'sent' desc, w.created_at, w.id limit 1)) end) as waiting_for
`;

export async function outgoingOfPayment(db: Db, paymentId: string, kind?: OutgoingKind): Promise<readonly OutgoingRow[]> {
  const only = kind ? sql.fragment`and kind = ${kind}` : sql.fragment``;
  return db.any(sql.type(outgoingRow)`select ${OUTGOING_COLUMNS} from outgoing_transfers where payment_id = ${paymentId} ${only} order by created_at, id`);
}
