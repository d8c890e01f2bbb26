// A payment's events for its store's webhook endpoints (docs/API.md, Store webhook endpoints): their
// payloads, read from the payment as it is in the transaction of the change, and handed to
// webhooks/events.ts, which records and enqueues a delivery per listening endpoint. Each command
// calls this after writing the status it tells of.
//
// Payload of every payment.* event: {"paymentID", "status", "amount", "currency", "metadata",
// "order_id"?} — the payment now; payment.money_received adds "transfer": {"hash", "coin", "amount",
// "effect", "chainTime"}, the transfer just booked. The body sent adds "storeID", the endpoint's store,
// when it is signed (webhooks/sign.ts buildEventBody).
import { sql, type Db, type FragmentSqlToken } from '../db/pool.ts';
import { emitEvents, eventCtes, type EventType } from '../webhooks/events.ts';

/** The payload members every payment event has, from the payments row `p`. */
const PAYMENT_PAYLOAD = sql.fragment`jsonb_build_object('paymentID', p.id, 'status', p.status, 'amount', p.amount::text, 'currency', p.currency,
  'metadata', p.metadata) || case when p.order_id is null then '{}'::jsonb else jsonb_build_object('order_id', p.order_id) end`;

type PaymentEventType = Extract<EventType, `payment.${string}`>;

/** Records the `type` event of each payment of `paymentIds` (in that order) for its store's endpoints. */
export async function paymentEvents(
  tx: Db,
  type: Exclude<PaymentEventType, 'payment.money_received'>,
  paymentIds: readonly string[],
  now: Date,
): Promise<void> {
  if (paymentIds.length === 0) return;
  await emitEvents(
    tx,
    sql.fragment`select p.store_id, p.id as payment_id, ${type}::text as type, ${PAYMENT_PAYLOAD} as payload
      from unnest(${sql.array([...paymentIds], 'uuid')}::uuid[]) with ordinality as ids (id, n) join payments p on p.id = ids.id order by ids.n`,
    now,
  );
}

/**
 * The CTEs that record payment.pending for a payment written by the same statement
 * (payments/commands.ts `createPaymentOnce`), which cannot read its row back: the row `p` is made of
 * the values written (amount and metadata as stored), behind `gate` (a WITH item that has a row
 * when the payment is written). The payload is PAYMENT_PAYLOAD's, as `paymentEvents` reads it.
 */
export function pendingEventCtes(
  row: { id: string; storeId: string; amount: string; currency: string; metadata: Record<string, string>; orderId: string | null },
  gate: string,
  now: Date,
): FragmentSqlToken {
  return eventCtes(
    sql.fragment`select p.store_id, p.id as payment_id, 'payment.pending'::text as type, ${PAYMENT_PAYLOAD} as payload
      from ${sql.identifier([gate])}, (select ${row.id}::uuid as id, ${row.storeId}::uuid as store_id, 'pending'::text as status,
        ${row.amount}::numeric as amount, ${row.currency}::text as currency, ${sql.jsonb(row.metadata)} as metadata, ${row.orderId}::text as order_id) as p`,
    now,
  );
}

/**
 * The CTEs that record payment.expired for each payment of the statement's own `due` CTE (the rows
 * its update returned, with the payments columns the payload reads), in expiry order: the bulk
 * expiry stays one statement (payments/commands.ts `expireDuePayments`).
 */
export function expiredEventCtes(now: Date): FragmentSqlToken {
  return eventCtes(
    sql.fragment`select p.store_id, p.id as payment_id, 'payment.expired'::text as type, ${PAYMENT_PAYLOAD} as payload from due p order by p.expires_at, p.id`,
    now,
  );
}

/** payment.money_received: the transfer `(account, lt, hash)` just booked for its payment, with its effect. */
export async function moneyReceivedEvent(tx: Db, transfer: { account: string; lt: string; hash: string }, now: Date): Promise<void> {
  const source = sql.fragment`select p.store_id, p.id as payment_id, 'payment.money_received'::text as type,
      ${PAYMENT_PAYLOAD} || jsonb_build_object('transfer', jsonb_build_object('hash', t.hash, 'coin', t.coin_symbol, 'amount', t.amount::text,
        'effect', t.effect, 'chainTime', to_char(t.chain_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))) as payload
    from transfers t join payments p on p.id = t.payment_id
    where t.account = ${transfer.account} and t.lt = ${transfer.lt} and t.hash = ${transfer.hash}`;
  await emitEvents(tx, source, now);
}
