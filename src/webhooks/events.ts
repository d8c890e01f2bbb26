// Store events (docs/API.md, Store webhook endpoints): what a store's webhook endpoints hear. An event is
// recorded as one `webhook_deliveries` row per endpoint that listens to its type — the one delivery
// log, sent by the same webhook__deliver job, signed and retried as the seed's webhook — and its job
// is added in the caller's transaction: the transaction of the change the event tells of.
//
// The parts that cause events say what happened with a SQL source of rows (payments/events.ts for a
// payment's, treasury/events.ts for a refund's or a sweep's); this module knows nothing of payments.
import { sql, z, type Db, type FragmentSqlToken } from '../db/pool.ts';
import { enqueue } from '../worker/enqueue.ts';
import { endpointDeliverJob } from '../worker/jobs.ts';

/** The event types an endpoint can listen to, in the order docs/API.md lists them. */
export const EVENT_TYPES = [
  'payment.pending',
  'payment.completed',
  'payment.expired',
  'payment.cancelled',
  'payment.money_received',
  'refund.confirmed',
  'refund.failed',
  'sweep.confirmed',
  'sweep.failed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Sent only by `POST /v1/webhook-endpoints/{id}/test`, to that endpoint, whatever it listens to. */
export const PING = 'ping';

/**
 * Records the events a source describes, one delivery per listening endpoint, and adds each
 * delivery's job, in the caller's transaction. `source` is a query whose rows are
 * `(store_id uuid, payment_id uuid, type text, payload jsonb)`: one event each; each gets its own
 * eventID, shared by its endpoints. The deliveries are recorded in the source's row order, so an
 * endpoint gets the events of one call in that order (its deliveries run one at a time: worker/jobs.ts).
 * Returns how many deliveries it recorded (0 when no endpoint listens: no job, no NOTIFY).
 */
export async function emitEvents(tx: Db, source: FragmentSqlToken, now: Date): Promise<number> {
  const recorded = await tx.any(sql.type(z.object({ id: z.string(), endpoint_id: z.string() }))`
    with event as materialized (
      select s.store_id, s.payment_id, s.type, s.payload, gen_random_uuid() as event_id, row_number() over () as n from (${source}) s
    )
    insert into webhook_deliveries (endpoint_id, payment_id, event, event_id, payload, url, reason, created_at)
    select e.id, event.payment_id, event.type, event.event_id, event.payload, e.url, 'event', ${sql.timestamp(now)}
    from event join webhook_endpoints e on e.store_id = event.store_id and event.type = any(e.events)
    order by event.n, e.created_at, e.id
    returning id, endpoint_id
  `);
  for (const delivery of recorded) await enqueue(tx, endpointDeliverJob(delivery.id, delivery.endpoint_id));
  return recorded.length;
}
