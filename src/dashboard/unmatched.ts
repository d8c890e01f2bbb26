// The dashboard's Unmatched money (issue 43, CONTRACT §12): the store's transfers into its treasury
// that named no payment — open ones first — with the payments they may belong to, and resolving one
// through the API's own commands (payments/treasuryTransfers.ts assignUnmatched and
// keepUnmatchedTransfer, treasury/unmatchedRefunds.ts createUnmatchedRefund), each with its audit row
// in the same transaction, as the API writes it (unmatched.assign, unmatched.keep, unmatched.refund;
// `via: dashboard`).
import type { TonNetwork } from '../chain/addresses.ts';
import { type DatabasePool, sql, z } from '../db/pool.ts';
import { OUTGOING_COLUMNS, outgoingRow, type OutgoingRow } from '../treasury/outgoing.ts';
import type { JettonWalletOf } from '../treasury/treasuryRefunds.ts';
import { createUnmatchedRefund } from '../treasury/unmatchedRefunds.ts';
import { assignUnmatched, keepUnmatchedTransfer, listUnmatched, type UnmatchedReason, type UnmatchedState } from '../payments/treasuryTransfers.ts';
import { subscriptionMoneyHooks } from '../subscriptions/engine.ts';
import { type Actor, recordAudit } from './audit.ts';

/** An unmatched transfer as GET /v1/unmatched-transfers shows it (payments/treasuryTransfers.ts UNMATCHED_JSON). */
export interface UnmatchedTransfer {
  id: string;
  coin: string;
  amount: string;
  sender: string | null;
  reference: string | null;
  reason: UnmatchedReason;
  suggestions: { paymentID: string; why: string }[];
  state: UnmatchedState;
  transactionHash: string;
  receivedAt: string;
  paymentID?: string;
  note?: string;
  refundID?: string;
}

/** A payment a transfer may belong to, as the page names it. */
const suggestedPaymentRow = z.object({
  id: z.string(),
  status: z.string(),
  amount: z.string(),
  currency: z.string(),
  coin_amount: z.string().nullable(),
  coin_symbol: z.string().nullable(),
  reference: z.string().nullable(),
  description: z.string().nullable(),
});
export type SuggestedPayment = z.infer<typeof suggestedPaymentRow>;

/** How many of each the page lists: the open ones, and those already resolved. */
const SHOWN = 100;

/** The store's unmatched money: open first (newest first), then the resolved (newest first); and the payments their suggestions name. */
export async function unmatchedMoney(
  pool: DatabasePool,
  storeId: string,
): Promise<{
  open: UnmatchedTransfer[];
  refunding: UnmatchedTransfer[];
  resolved: UnmatchedTransfer[];
  payments: Map<string, SuggestedPayment>;
  /** The refunds of the refunding ones, awaiting the treasury's signature. */
  outgoing: OutgoingRow[];
}> {
  const all = (await listUnmatched(pool, storeId, null, SHOWN * 2)) as unknown as UnmatchedTransfer[];
  const open = all.filter((u) => u.state === 'open').slice(0, SHOWN);
  const refunding = all.filter((u) => u.state === 'refunding').slice(0, SHOWN);
  const resolved = all.filter((u) => u.state !== 'open' && u.state !== 'refunding').slice(0, SHOWN);
  const outgoing = refunding.length
    ? [
        ...(await pool.any(sql.type(outgoingRow)`
          select ${OUTGOING_COLUMNS} from outgoing_transfers
          where store_id = ${storeId} and state = 'awaiting_signature' and unmatched_transfer_id = any(${sql.array(
            refunding.map((u) => u.id),
            'uuid',
          )})
          order by created_at, id
        `)),
      ]
    : [];
  const ids = [...new Set([...open.flatMap((u) => u.suggestions.map((s) => s.paymentID)), ...resolved.flatMap((u) => (u.paymentID ? [u.paymentID] : []))])];
  const rows = ids.length
    ? await pool.any(sql.type(suggestedPaymentRow)`
        select id, status, amount::text as amount, currency, coin_amount::text as coin_amount, coin_symbol, reference, description
        from payments where store_id = ${storeId} and id = any(${sql.array(ids, 'uuid')})
      `)
    : [];
  return { open, refunding, resolved, outgoing, payments: new Map(rows.map((row) => [row.id, row])) };
}

/** Assign from the dashboard: the API's command (a subscription's payment credited as the API's assign does) and its audit row (unmatched.assign), one transaction. */
export async function assignFromDashboard(
  pool: DatabasePool,
  actor: Actor,
  storeId: string,
  unmatchedId: string,
  paymentId: string,
  now: Date,
  network: TonNetwork,
) {
  return pool.transaction(async (tx) => {
    const assigned = await assignUnmatched(tx, storeId, unmatchedId, paymentId, now, subscriptionMoneyHooks(network));
    await recordAudit(
      tx,
      actor,
      {
        storeId,
        action: 'unmatched.assign',
        subject: unmatchedId,
        detail: { payment: paymentId, amount: assigned.transfer.amount, coin: assigned.transfer.coin, effect: assigned.effect, via: 'dashboard' },
      },
      now,
    );
    return assigned;
  });
}

/** Keep from the dashboard: the API's command and its audit row (unmatched.keep), one transaction. */
export async function keepFromDashboard(pool: DatabasePool, actor: Actor, storeId: string, unmatchedId: string, note: string, now: Date) {
  return pool.transaction(async (tx) => {
    const kept = await keepUnmatchedTransfer(tx, storeId, unmatchedId, note, now);
    await recordAudit(
      tx,
      actor,
      { storeId, action: 'unmatched.keep', subject: unmatchedId, detail: { note, amount: kept.amount, coin: kept.coin, via: 'dashboard' } },
      now,
    );
    return kept;
  });
}

/** Give it back from the dashboard: the API's command and its audit row (unmatched.refund), one transaction. */
export async function refundFromDashboard(
  pool: DatabasePool,
  actor: Actor,
  args: { storeId: string; unmatchedId: string; address: string | undefined; network: TonNetwork; walletOf: JettonWalletOf | null },
  now: Date,
): Promise<OutgoingRow> {
  return pool.transaction(async (tx) => {
    const refund = await createUnmatchedRefund(tx, args.network, args.storeId, args.unmatchedId, args.address, now, args.walletOf);
    await recordAudit(
      tx,
      actor,
      {
        storeId: args.storeId,
        action: 'unmatched.refund',
        subject: args.unmatchedId,
        detail: { refund: refund.id, coin: refund.coin_symbol, amount: refund.amount, address: refund.to_address_given, via: 'dashboard' },
      },
      now,
    );
    return refund;
  });
}
