// A refund's or a sweep's outcome for its store's webhook endpoints (docs/API.md, Store webhook
// endpoints): refund.confirmed, refund.failed, sweep.confirmed, sweep.failed. The one function that
// writes an outgoing transfer's state (writeTransition.ts, which every command of the
// signer and the chain reader calls) calls `outgoingEvents` with the row it ended, in its
// transaction; rows that did not end (planned again), gas top-ups and Kassa's gas going back to the
// gas wallet (gas_return, closing.ts) tell nothing: that money is not the store's. A jetton transfer
// out of a deposit is confirmed when it leaves but told only once delivered (its receiving jetton
// wallet took it: confirmations.ts jettonTransferDelivered); a bounce then tells only its failure.
//
// Payload: {"refundID" | "sweepID", "paymentID" (or, a refund of unmatched money, "unmatchedTransferID"), "coin", "amount", "address", "status" (confirmed or
// failed), "transactionHash"?, "failureReason"?, "failureKind"? (permanent or transient),
// "retryAt"? (a transient failure's next try); a refund from the treasury: "askedAmount"? (its
// wallet signed another amount: "amount" is what moved), "beyondSale"? (the sale was refunded twice
// by this much), "paidFrom"? (paid from another account than the treasury)}; the body sent adds
// "storeID" (webhooks/sign.ts).
import { sql, type Db } from '../db/pool.ts';
import { emitEvents } from '../webhooks/events.ts';

const iso = (column: ReturnType<typeof sql.fragment>) => sql.fragment`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** Records the events of the outgoing transfers `ids` that are now confirmed or failed (in that order). */
export async function outgoingEvents(tx: Db, ids: readonly string[], now: Date): Promise<void> {
  if (ids.length === 0) return;
  await emitEvents(
    tx,
    sql.fragment`select o.store_id, o.payment_id, o.kind || '.' || o.state as type,
        jsonb_strip_nulls(jsonb_build_object(case when o.kind = 'refund' then 'refundID' else 'sweepID' end, o.id, 'paymentID', o.payment_id, 'unmatchedTransferID', o.unmatched_transfer_id,
          'coin', o.coin_symbol, 'amount', o.amount::text, 'address', coalesce(o.to_address_given, o.to_address), 'status', o.state,
          'transactionHash', o.transaction_hash, 'failureReason', o.failure_reason, 'failureKind', o.failure_kind,
          'retryAt', ${iso(sql.fragment`o.retry_at`)}, 'paidFrom', o.paid_from,
          'askedAmount', (select trim_scale(o.asked_amount_base_units / power(10::numeric, c.decimals))::text from coins c where c.symbol = o.coin_symbol),
          'beyondSale', (select trim_scale(o.beyond_sale_base_units / power(10::numeric, c.decimals))::text from coins c where c.symbol = o.coin_symbol))) as payload
      from unnest(${sql.array([...ids], 'uuid')}::uuid[]) with ordinality as ids (id, n) join outgoing_transfers o on o.id = ids.id
      where o.kind in ('refund', 'sweep') and o.reason <> 'gas_return' and o.state in ('confirmed', 'failed')
        and (o.payment_id is not null or o.unmatched_transfer_id is not null)
        and (o.state = 'failed' or o.delivered_at is not null or o.source = 'treasury')
      order by ids.n`,
    now,
  );
}
