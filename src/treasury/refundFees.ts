// A store's refund fee balance topped up from the dashboard (issue 47 item 3). A token refund's
// network fee (≈0.06 TON) comes from Kassa's gas wallet and is charged to the store's refund fee
// balance (store_refund_gas, gas.ts). The owner asks for a top-up (a row with a reference); their
// wallet sends the TON to the gas wallet through TON Connect with the reference as its comment; the
// chain reader books every TON transfer into the gas wallet (gas_wallet_arrivals, once per chain
// transaction) and credits one carrying a top-up's reference to that top-up's store
// (store_gas_payments.arrival_id), audited in the name of the member who asked. Sent twice: booked
// twice. Sent late: booked when it comes. No known reference: kept with no store, for the operator.
import crypto from 'node:crypto';
import { Address, beginCell } from '@ton/core';
import type { TonNetwork } from '../chain/addresses.ts';
import type { TonTransfer } from '../chain/detect.ts';
import type { ChainTransaction } from '../chain/transactions.ts';
import { sql, z, type DatabasePool, type Db } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { fromBaseUnits } from '../money.ts';
import { feeReserveFor } from './fees.ts';
import { storeRefundGas } from './gas.ts';

/** What a top-up's comment starts with; 10 letters or digits follow. */
const TOP_UP_REFERENCE_PREFIX = 'Kassa refund fees ';
const REFERENCE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** The most one top-up may ask (TON): a guard against a slipped digit, not a rule of the chain. */
export const TOP_UP_MAX_TON = '100';
/** How long the wallet may take to send what it was asked (TON Connect's validUntil). */
const REQUEST_SECONDS = 15 * 60;

function newTopUpReference(): string {
  const bytes = crypto.randomBytes(10);
  return TOP_UP_REFERENCE_PREFIX + Array.from(bytes, (b) => REFERENCE_ALPHABET[b % REFERENCE_ALPHABET.length]).join('');
}

/** The top-up reference a comment carries (case and surrounding spaces as a person may type them), or null. */
function topUpReferenceOf(comment: string | undefined | null): string | null {
  const match = /^\s*kassa refund fees ([a-z0-9]{10})\s*$/i.exec(comment ?? '');
  return match ? TOP_UP_REFERENCE_PREFIX + match[1]!.toUpperCase() : null;
}

const topUpRow = z.object({
  id: z.string(),
  store_id: z.string(),
  reference: z.string(),
  amount_base_units: z.string(),
  asked_by: z.string(),
  asked_at: z.date(),
});
type TopUpRow = z.infer<typeof topUpRow>;

/** Records a top-up the member asked for (the caller audits it in the same transaction). */
export async function askTopUp(
  tx: Db,
  args: { storeId: string; amountBaseUnits: bigint; actor: { userId: string | null; name: string }; now: Date },
): Promise<TopUpRow> {
  return tx.one(sql.type(topUpRow)`
    insert into refund_fee_top_ups (store_id, reference, amount_base_units, asked_by_user_id, asked_by, asked_at)
    values (${args.storeId}, ${newTopUpReference()}, ${args.amountBaseUnits.toString()}, ${args.actor.userId}, ${args.actor.name}, ${sql.timestamp(args.now)})
    returning id, store_id, reference, amount_base_units::text as amount_base_units, asked_by, asked_at
  `);
}

/** TON Connect chain ids (CHAIN.MAINNET / CHAIN.TESTNET); the sandbox has none. */
const CHAIN_ID: Record<TonNetwork, string | null> = { mainnet: '-239', testnet: '-3', sandbox: null };

export interface TopUpRequest {
  /** A TON Connect `sendTransaction` request: one message to the gas wallet, its comment the reference. Any account of the owner's wallet may send it. */
  tonconnect: { validUntil: number; network?: string; messages: Array<{ address: string; amount: string; payload: string }> };
  /** The same transfer as a ton:// link (text: the reference). */
  link: string;
  /** The gas wallet, user-friendly (non-bounceable). */
  to: string;
}

/** What the owner's wallet is asked to send for `topUp` (pure). */
export function topUpRequest(topUp: Pick<TopUpRow, 'reference' | 'amount_base_units'>, gasWallet: string, network: TonNetwork, now: Date): TopUpRequest {
  // Non-bounceable: a new Kassa's gas wallet may not be deployed yet (it deploys with its first
  // transfer out), and a bounceable message to it would come back instead of staying.
  const to = Address.parse(gasWallet).toString({ urlSafe: true, bounceable: false, testOnly: network === 'testnet' });
  const payload = beginCell().storeUint(0, 32).storeStringTail(topUp.reference).endCell().toBoc().toString('base64');
  const chain = CHAIN_ID[network];
  return {
    tonconnect: {
      validUntil: Math.floor(now.getTime() / 1000) + REQUEST_SECONDS,
      ...(chain !== null ? { network: chain } : {}),
      messages: [{ address: to, amount: topUp.amount_base_units, payload }],
    },
    link: `ton://transfer/${to}?amount=${topUp.amount_base_units}&text=${encodeURIComponent(topUp.reference)}`,
    to,
  };
}

// ---- the chain reader's side ----------------------------------------------------------------------

type ArrivalOutcome = { booked: 'top_up'; storeId: string; topUpId: string } | { booked: 'unknown_reference' } | { booked: 'already' };

/**
 * Books a TON transfer into the gas wallet (detected, counted, not sent by Kassa itself): kept once
 * per chain transaction; with a top-up's reference, credited to its store and audited in the name
 * of the member who asked, in the same transaction. Idempotent (a block read twice books nothing more).
 */
export async function bookGasArrival(
  pool: DatabasePool,
  args: { network: TonNetwork; tx: ChainTransaction; transfer: TonTransfer & { sender: string }; now: Date },
  log: Logger,
): Promise<ArrivalOutcome> {
  const { tx, transfer, now } = args;
  const reference = topUpReferenceOf(transfer.comment);
  const outcome = await pool.transaction(async (db): Promise<ArrivalOutcome> => {
    const topUp =
      reference === null
        ? null
        : await db.maybeOne(sql.type(
            z.object({ id: z.string(), store_id: z.string(), asked_by_user_id: z.string().nullable(), asked_by: z.string(), reference: z.string() }),
          )`
            select id, store_id, asked_by_user_id, asked_by, reference from refund_fee_top_ups where reference = ${reference} for update
          `);
    const arrival = await db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
      insert into gas_wallet_arrivals (network, transaction_hash, lt, sender, amount_base_units, comment, top_up_id, chain_time, booked_at)
      values (${args.network}, ${tx.hash}, ${tx.lt}, ${transfer.sender}, ${transfer.amount.toString()},
              ${transfer.comment === undefined ? null : transfer.comment.replaceAll('\u0000', '\uFFFD').slice(0, 1000)},
              ${topUp?.id ?? null}, ${sql.timestamp(new Date(tx.now * 1000))}, ${sql.timestamp(now)})
      on conflict (transaction_hash) do nothing
      returning id
    `);
    if (arrival === null) return { booked: 'already' };
    if (topUp === null) return { booked: 'unknown_reference' };
    await db.query(sql.unsafe`select 1 from stores where id = ${topUp.store_id} for update`);
    await db.query(sql.typeAlias('void')`
      insert into store_gas_payments (store_id, amount_base_units, note, recorded_at, arrival_id)
      values (${topUp.store_id}, ${transfer.amount.toString()}, ${`${topUp.reference}, from ${transfer.sender}, transaction ${tx.hash}`}, ${sql.timestamp(now)}, ${arrival})
    `);
    // Audited in the name of the member who asked (the audit log's row as dashboard/audit.ts writes it:
    // money out knows nothing of the dashboard, so the row is written here, action refund_fees.arrived).
    const detail = { amount: fromBaseUnits(transfer.amount, 9), coin: 'TON', reference: topUp.reference, transaction: tx.hash, sender: transfer.sender };
    await db.query(sql.typeAlias('void')`
      insert into audit_log (at, store_id, actor_user_id, actor, action, subject, detail)
      values (${sql.timestamp(now)}, ${topUp.store_id}, ${topUp.asked_by_user_id}, ${topUp.asked_by}, 'refund_fees.arrived', ${topUp.id}, ${sql.jsonb(detail)})
    `);
    return { booked: 'top_up', storeId: topUp.store_id, topUpId: topUp.id };
  });
  if (outcome.booked !== 'already')
    log.info(
      { ...outcome, hash: tx.hash, amount: transfer.amount.toString(), sender: transfer.sender, reference },
      outcome.booked === 'top_up' ? 'refund fee top-up arrived' : 'TON reached the gas wallet with no known top-up reference (kept: gas_wallet_arrivals)',
    );
  return outcome;
}

// ---- what the Money page shows ----------------------------------------------------------------------

export interface RefundFees {
  /** TON available now (may be below zero: a refund's reserve counted while in flight). */
  available: string;
  /** What one refund in `token` takes (TON). */
  perRefund: string;
  /** The token the count is said in (the store's first accepted token, else USDT). */
  token: string;
  /** Whether the store accepts any token now. */
  takesToken: boolean;
  /** Refunds in `token` the balance covers, rounded down. */
  refundsCovered: number;
  /** The store's last top-ups, newest first, with what arrived for each. */
  topUps: Array<TopUpRow & { arrivals: Array<{ amount: string; at: Date; hash: string }> }>;
}

/** How many refunds of `perRefund` nanoTON `available` covers (none below zero). Pure. */
const refundsCovered = (available: bigint, perRefund: bigint): number => (available <= 0n ? 0 : Number(available / perRefund));

/** The store's refund fee balance, what it buys, and its last top-ups. */
export async function refundFeesOf(db: Db, storeId: string): Promise<RefundFees> {
  const [account, tokens, topUps, arrivals] = await Promise.all([
    storeRefundGas(db, storeId),
    db.anyFirst(sql.type(z.object({ coin_symbol: z.string() }))`
      select distinct pm.coin_symbol from store_payment_methods spm join payment_methods pm on pm.id = spm.payment_method_id
      where spm.store_id = ${storeId} and pm.coin_symbol <> 'TON' order by pm.coin_symbol
    `),
    db.any(sql.type(topUpRow)`
      select id, store_id, reference, amount_base_units::text as amount_base_units, asked_by, asked_at
      from refund_fee_top_ups where store_id = ${storeId} order by asked_at desc, id limit 10
    `),
    db.any(sql.type(z.object({ top_up_id: z.string(), amount: z.string(), at: z.date(), hash: z.string() }))`
      select a.top_up_id, a.amount_base_units::text as amount, a.chain_time as at, a.transaction_hash as hash
      from gas_wallet_arrivals a join refund_fee_top_ups t on t.id = a.top_up_id
      where t.store_id = ${storeId} order by a.chain_time, a.lt
    `),
  ]);
  const token = tokens[0] ?? 'USDT';
  const perRefund = feeReserveFor(token);
  return {
    available: fromBaseUnits(account.available, 9),
    perRefund: fromBaseUnits(perRefund, 9),
    token,
    takesToken: tokens.length > 0,
    refundsCovered: refundsCovered(account.available, perRefund),
    topUps: topUps.map((t) => ({
      ...t,
      arrivals: arrivals.filter((a) => a.top_up_id === t.id).map((a) => ({ amount: fromBaseUnits(BigInt(a.amount), 9), at: a.at, hash: a.hash })),
    })),
  };
}
