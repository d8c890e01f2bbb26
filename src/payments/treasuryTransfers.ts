// Money into a store's treasury, for stores that settle there (CONTRACT §12): a transfer that names
// a payment by its reference is booked on that payment exactly as a deposit's transfer is
// (recordTransfer: partial, completed, overpaid, after expiry, after completion; the same events);
// one that names none is kept as an unmatched transfer, with suggestions a person may act on and
// that are never applied by themselves, and told to the store (money.unmatched). Idempotent: the
// books and the unmatched table are keyed by the transaction's chain identity.
import { sql, z, type DatabasePool, type Db } from '../db/pool.ts';
import { fromBaseUnits } from '../money.ts';
import { emitEvents } from '../webhooks/events.ts';
import { referencesOneAway, type ReadReference } from './reference.ts';
import { KassaError, unmatchedTransferNotOpen } from '../errors.ts';
import type { OnCompleted } from './commands.ts';
import { recordTransfer, recordTransferIn, type TransferEffect } from './transfers.ts';

/** Why a transfer into a treasury matched no payment (unmatched_transfers_reason_is_known). */
export const UNMATCHED_REASONS = ['no_reference', 'unknown_reference', 'malformed_reference', 'encrypted'] as const;
export type UnmatchedReason = (typeof UNMATCHED_REASONS)[number];
/** Where an unmatched transfer stands: open until a person assigns, refunds or keeps it; refunding while its refund awaits the treasury's signature. */
export const UNMATCHED_STATES = ['open', 'refunding', 'assigned', 'refunded', 'kept'] as const;
export type UnmatchedState = (typeof UNMATCHED_STATES)[number];
/** Why a payment is suggested for an unmatched transfer. */
export const SUGGESTION_REASONS = ['reference_one_character_away', 'same_amount_open', 'same_sender'] as const;

/** One incoming transfer into a treasury (TON, or a jetton into its jetton wallet), as classify.ts read it. */
export interface TreasuryIncoming {
  /** The account of the transaction (raw): the treasury for TON, the treasury's jetton wallet for a jetton. */
  account: string;
  /** The treasury (raw): the owner of `account` for a jetton, `account` itself for TON. */
  treasury: string;
  /** TON, or the accepted jetton whose master confirms `account` as the treasury's wallet. */
  coinSymbol: string;
  /** The jetton's master (raw); null for TON. */
  jettonMaster: string | null;
  /** The coin's decimals (9 for TON). */
  decimals: number;
  lt: string;
  hash: string;
  amountBaseUnits: bigint;
  sender: string | null;
  chainTime: Date;
  /** The comment as the books keep it (bookComment), if it carried text. */
  comment: string | null;
  /** What the comment made of a reference; an encrypted comment cannot be read. */
  read: ReadReference | { kind: 'encrypted' };
  /** nanoTON the treasury paid for the transaction (its own wallet's: not the shop's cost of a payment). */
  feeBaseUnits?: bigint | null;
}

type TreasuryOutcome =
  | { booked: 'payment'; paymentId: string; recorded: boolean; effect?: TransferEffect }
  | { booked: 'unmatched'; storeId: string; recorded: boolean; reason: UnmatchedReason }
  | { booked: 'nothing' };

/** The reason an unmatched transfer is kept for, from what its comment said. */
function unmatchedReason(read: TreasuryIncoming['read']): UnmatchedReason {
  switch (read.kind) {
    case 'encrypted':
      return 'encrypted';
    case 'reference':
      return 'unknown_reference';
    case 'malformed':
      return 'malformed_reference';
    case 'none':
      return 'no_reference';
  }
}

/**
 * Books one incoming transfer into the treasury of `storeIds` (the stores that settle there, or
 * whose open payments were created to): on the payment its reference names — an open one first,
 * else the newest — or as unmatched money of each of those stores.
 */
export async function bookTreasuryTransfer(
  pool: DatabasePool,
  storeIds: readonly string[],
  incoming: TreasuryIncoming,
  now: Date,
  options: { onCompleted?: OnCompleted; onLateMoney?: OnCompleted } = {},
): Promise<TreasuryOutcome> {
  if (incoming.amountBaseUnits <= 0n || storeIds.length === 0) return { booked: 'nothing' };
  if (incoming.read.kind === 'reference') {
    const paymentId = await pool.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
      select id from payments
      where settlement = 'treasury' and settlement_address = ${incoming.treasury} and reference = ${incoming.read.reference}
        and store_id = any(${sql.array([...storeIds], 'uuid')})
      order by status in ('created', 'pending') desc, created_at desc limit 1
    `);
    if (paymentId !== null) {
      const outcome = await recordTransfer(
        pool,
        {
          account: incoming.account,
          lt: incoming.lt,
          hash: incoming.hash,
          paymentId,
          depositAddress: incoming.treasury,
          coinSymbol: incoming.coinSymbol,
          jettonMaster: incoming.jettonMaster,
          amountBaseUnits: incoming.amountBaseUnits,
          sender: incoming.sender,
          comment: incoming.comment,
          chainTime: incoming.chainTime,
          credited: true,
          payment: true,
          detail: null,
        },
        now,
        options,
      );
      return { booked: 'payment', paymentId, recorded: outcome.recorded, ...(outcome.recorded ? { effect: outcome.effect } : {}) };
    }
  }
  const reason = unmatchedReason(incoming.read);
  let recorded = false;
  for (const storeId of storeIds) {
    const inserted = await pool.transaction((tx) => keepUnmatched(tx, storeId, incoming, reason, now));
    recorded ||= inserted;
  }
  return { booked: 'unmatched', storeId: storeIds[0]!, recorded, reason };
}

/** The suggestions for an unmatched transfer of `storeId`, best first (each payment once). */
async function suggestionsFor(tx: Db, storeId: string, incoming: TreasuryIncoming): Promise<Array<{ paymentID: string; why: string }>> {
  const near = incoming.read.kind === 'malformed' ? referencesOneAway(incoming.read.text) : [];
  const at = sql.timestamp(incoming.chainTime);
  const rows = await tx.any(sql.type(z.object({ payment_id: z.string(), why: z.string() }))`
    (select id as payment_id, 'reference_one_character_away' as why, 1 as rank, created_at from payments
     where ${near.length > 0 ? sql.fragment`reference = any(${sql.array(near, 'text')})` : sql.fragment`false`}
       and store_id = ${storeId} and settlement = 'treasury' and settlement_address = ${incoming.treasury}
     order by created_at desc limit 3)
    union all
    (select id, 'same_amount_open', 2, created_at from payments
     where store_id = ${storeId} and settlement = 'treasury' and settlement_address = ${incoming.treasury}
       and coin_symbol = ${incoming.coinSymbol} and coin_amount_base_units = ${incoming.amountBaseUnits.toString()}
       -- The chain's time is in whole seconds: a transfer made in the second the method was chosen counts as after it.
       and status <> 'completed' and date_trunc('second', method_selected_at) <= ${at} and expires_at > ${at}
       and (cancelled_at is null or cancelled_at > ${at})
     order by created_at desc limit 3)
    union all
    (select p.id, 'same_sender', 3, p.created_at from payments p
     where ${
       incoming.sender === null
         ? sql.fragment`false`
         : sql.fragment`p.store_id = ${storeId}
       and exists (select 1 from transfers t where t.payment_id = p.id and t.sender = ${incoming.sender} and t.chain_time < ${at})`
     }
     order by p.created_at desc limit 3)
    order by rank, created_at desc
  `);
  const seen = new Set<string>();
  const suggestions: Array<{ paymentID: string; why: string }> = [];
  for (const row of rows) {
    if (seen.has(row.payment_id)) continue;
    seen.add(row.payment_id);
    suggestions.push({ paymentID: row.payment_id, why: row.why });
  }
  return suggestions;
}

/** The unmatched transfer's row and its money.unmatched event (none for dust); false when it was kept already (or is older than the store's first payment there). */
async function keepUnmatched(tx: Db, storeId: string, incoming: TreasuryIncoming, reason: UnmatchedReason, now: Date): Promise<boolean> {
  const suggestions = await suggestionsFor(tx, storeId, incoming);
  const carried = incoming.read.kind === 'reference' ? incoming.read.reference : incoming.read.kind === 'malformed' ? incoming.read.text : null;
  const amount = fromBaseUnits(incoming.amountBaseUnits, incoming.decimals);
  const row = await tx.maybeOne(sql.type(z.object({ id: z.string(), dust: z.boolean() }))`
    insert into unmatched_transfers (store_id, account, lt, hash, coin_symbol, amount_base_units, amount, sender, comment, reference, reason,
                                     suggestions, chain_time, recorded_at, dust)
    select ${storeId}, ${incoming.account}, ${incoming.lt}, ${incoming.hash}, ${incoming.coinSymbol}, ${incoming.amountBaseUnits.toString()},
           ${amount}, ${incoming.sender}, ${incoming.comment}, ${carried}, ${reason},
           ${sql.jsonb(suggestions)}, ${sql.timestamp(incoming.chainTime)}, ${sql.timestamp(now)},
           ${amount}::numeric < (select s.unmatched_dust from stores s where s.id = ${storeId})
    -- Money that reached the wallet before the store's first payment settled there is the merchant's
    -- own history (reconciliation re-reads it), not a customer's payment.
    where exists (select 1 from payments where store_id = ${storeId} and settlement = 'treasury' and settlement_address = ${incoming.treasury}
                  and date_trunc('second', created_at) <= ${sql.timestamp(incoming.chainTime)})
    on conflict (store_id, account, lt, hash) do nothing
    returning id, dust
  `);
  if (row === null) return false;
  // Dust (below the store's unmatched_dust) is kept and listed, but raises no alert.
  if (row.dust) return true;
  const id = row.id;
  await emitEvents(
    tx,
    sql.fragment`select u.store_id, null::uuid as payment_id, 'money.unmatched'::text as type, ${UNMATCHED_JSON} as payload
      from unmatched_transfers u where u.id = ${id}`,
    now,
  );
  return true;
}

/**
 * An unmatched transfer `u` as the API shows it (CONTRACT §12) and money.unmatched carries it:
 * {id, coin, amount, sender, reference, reason, suggestions, state, transactionHash, receivedAt}.
 */
const UNMATCHED_JSON = sql.fragment`(jsonb_build_object('id', u.id, 'coin', u.coin_symbol, 'amount', u.amount::text, 'sender', u.sender,
  'reference', case when u.reference is null then null when length(u.reference) = 9 then substr(u.reference, 1, 4) || '-' || substr(u.reference, 5) else u.reference end,
  'reason', u.reason, 'suggestions', u.suggestions, 'state', u.state, 'transactionHash', u.hash,
  'receivedAt', to_char(u.chain_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
  || case when u.payment_id is null then '{}'::jsonb else jsonb_build_object('paymentID', u.payment_id) end
  || case when u.note is null then '{}'::jsonb else jsonb_build_object('note', u.note) end
  || coalesce((select jsonb_build_object('refundID', o.id) from outgoing_transfers o
               where o.unmatched_transfer_id = u.id and u.state in ('refunding', 'refunded') and o.state in ('awaiting_signature', 'confirmed')
               order by o.state = 'confirmed' desc, o.created_at desc limit 1), '{}'::jsonb)
  || case when u.dust then jsonb_build_object('dust', true) else '{}'::jsonb end)`;

const unmatchedRow = z.object({ transfer: z.record(z.string(), z.unknown()) });

/** A store's unmatched transfers (in `state` when given), newest first, at most `limit`. */
export async function listUnmatched(db: Db, storeId: string, state: UnmatchedState | null, limit = 100): Promise<readonly Record<string, unknown>[]> {
  return db.anyFirst(sql.type(unmatchedRow)`
    select ${UNMATCHED_JSON} as transfer from unmatched_transfers u
    where u.store_id = ${storeId} and ${state === null ? sql.fragment`true` : sql.fragment`u.state = ${state}`}
    order by u.chain_time desc, u.lt desc limit ${limit}
  `);
}

export const lockedUnmatched = z.object({
  id: z.string(),
  account: z.string(),
  lt: z.string(),
  hash: z.string(),
  amount_base_units: z.string(),
  sender: z.string().nullable(),
  comment: z.string().nullable(),
  chain_time: z.date(),
  state: z.enum(UNMATCHED_STATES),
  coin_symbol: z.string(),
  jetton_master: z.string().nullable(),
  treasury: z.string(),
});

/**
 * An unmatched transfer's row, locked: a jetton's account is the treasury's jetton wallet, whose
 * owner (the treasury) and master the reader recorded in jetton_wallets when it started reading it.
 */
export const LOCKED_UNMATCHED = sql.fragment`
  select u.id, u.account, u.lt::text as lt, u.hash, u.amount_base_units::text as amount_base_units, u.sender, u.comment, u.chain_time, u.state,
         u.coin_symbol, w.master_address as jetton_master, case when u.coin_symbol = 'TON' then u.account else coalesce(w.owner_address, u.account) end as treasury
  from unmatched_transfers u left join jetton_wallets w on u.coin_symbol <> 'TON' and w.address = u.account`;

/**
 * POST /v1/unmatched-transfers/{id}/assign: a person books an unmatched transfer of the store on one
 * of its payments settled to the treasury the money reached, as if it had carried the payment's
 * reference, at its chain time (the same recordTransfer: its effect, completion and events), then
 * marks it assigned and tells the store (money.assigned). In the caller's transaction, which also
 * writes the audit row. `options`: what the booking sets going (a subscription's payment credits
 * the money, as the chain reader's booking does: subscriptions/engine.ts subscriptionMoneyHooks). Refused: an unknown transfer (404), one no longer open (409), a payment of
 * another store (404) or one not paid to that treasury (400).
 */
export async function assignUnmatched(
  tx: Db,
  storeId: string,
  unmatchedId: string,
  paymentId: string,
  now: Date,
  options: { onCompleted?: OnCompleted; onLateMoney?: OnCompleted } = {},
): Promise<{ transfer: Record<string, unknown>; effect: TransferEffect | null }> {
  const row = await tx.maybeOne(sql.type(lockedUnmatched)`${LOCKED_UNMATCHED} where u.id = ${unmatchedId} and u.store_id = ${storeId} for update of u`);
  if (!row) throw new KassaError('unmatched_transfer_not_found', { param: 'id' });
  if (row.state !== 'open') throw unmatchedTransferNotOpen(row.state);
  const payment = await tx.maybeOne(sql.type(z.object({ settlement: z.string(), settlement_address: z.string().nullable() }))`
    select settlement, settlement_address from payments where id = ${paymentId} and store_id = ${storeId}
  `);
  if (!payment) throw new KassaError('payment_not_found', { param: 'paymentID' });
  if (payment.settlement !== 'treasury' || payment.settlement_address !== row.treasury) {
    throw new KassaError('payment_not_paid_to_treasury', { param: 'paymentID' });
  }
  const outcome = await recordTransferIn(
    tx,
    {
      account: row.account,
      lt: row.lt,
      hash: row.hash,
      paymentId,
      depositAddress: row.treasury,
      coinSymbol: row.coin_symbol,
      jettonMaster: row.jetton_master,
      amountBaseUnits: BigInt(row.amount_base_units),
      sender: row.sender,
      comment: row.comment,
      chainTime: row.chain_time,
      credited: true,
      payment: true,
      detail: 'assigned from unmatched money',
    },
    now,
    options,
  );
  await tx.query(sql.typeAlias('void')`
    update unmatched_transfers set state = 'assigned', payment_id = ${paymentId}, resolved_at = ${sql.timestamp(now)} where id = ${row.id}
  `);
  await emitEvents(
    tx,
    sql.fragment`select u.store_id, u.payment_id, 'money.assigned'::text as type, ${UNMATCHED_JSON} as payload from unmatched_transfers u where u.id = ${row.id}`,
    now,
  );
  const transfer = await tx.oneFirst(sql.type(unmatchedRow)`select ${UNMATCHED_JSON} as transfer from unmatched_transfers u where u.id = ${row.id}`);
  return { transfer, effect: outcome.recorded ? outcome.effect : null };
}

/**
 * POST /v1/unmatched-transfers/{id}/keep {note}: a person decides the money stays in the treasury as
 * it is (a gift, the merchant's own top-up, a customer settled otherwise): marked kept with the note,
 * booked on no payment. In the caller's transaction, which also writes the audit row. Refused: an
 * unknown transfer (404), one no longer open (409).
 */
export async function keepUnmatchedTransfer(tx: Db, storeId: string, unmatchedId: string, note: string, now: Date): Promise<Record<string, unknown>> {
  const state = await tx.maybeOneFirst(sql.type(z.object({ state: z.enum(UNMATCHED_STATES) }))`
    select state from unmatched_transfers where id = ${unmatchedId} and store_id = ${storeId} for update
  `);
  if (state === null) throw new KassaError('unmatched_transfer_not_found', { param: 'id' });
  if (state !== 'open') throw unmatchedTransferNotOpen(state);
  return tx.oneFirst(sql.type(unmatchedRow)`
    update unmatched_transfers u set state = 'kept', note = ${note}, resolved_at = ${sql.timestamp(now)} where u.id = ${unmatchedId}
    returning ${UNMATCHED_JSON} as transfer
  `);
}
