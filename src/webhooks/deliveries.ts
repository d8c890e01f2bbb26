// The webhook delivery log (docs/API.md, Webhooks): one `webhook_deliveries` row per webhook to deliver
// — a payment's completion to its webhookURL, or a redelivery the merchant asked for; a store event to
// each endpoint that hears it (webhooks/events.ts), or an endpoint's test ping — and one
// `webhook_attempts` row per attempt. This module enqueues a payment's own deliveries and reads the
// log; src/webhooks/deliver.ts makes the attempts.
import { sql, z, type Db } from '../db/pool.ts';
import { enqueue } from '../worker/enqueue.ts';
import { deliverJobKey, webhookDeliverJob } from '../worker/jobs.ts';
import { DELIVERY_WINDOW_MS } from './deliver.ts';

type DeliveryReason = 'completed' | 'redelivery';
const DELIVERY_REASONS = ['completed', 'redelivery', 'event', 'test'] as const;

/**
 * Records a delivery of the payment's completed event to its webhook URL and adds its
 * `webhook__deliver` job (worker/jobs.ts), both in the caller's transaction: call it in the transaction that completes the payment (reason `completed`) or that
 * handles a redelivery request (reason `redelivery`).
 *
 * Returns the delivery id, or null when the payment has no webhook URL (nothing is recorded or
 * enqueued). Safe to call twice for `completed`: a payment's completed event is recorded once, and
 * a second call returns the existing delivery without enqueuing anything.
 */
export async function enqueueWebhookDelivery(tx: Db, paymentId: string, reason: DeliveryReason, now: Date): Promise<string | null> {
  const once =
    reason === 'completed'
      ? sql.fragment`and not exists (select 1 from webhook_deliveries d where d.payment_id = p.id and d.reason = 'completed')`
      : sql.fragment``;
  const inserted = await tx.maybeOne(sql.type(z.object({ id: z.string(), store_id: z.string() }))`
    insert into webhook_deliveries (payment_id, url, reason, created_at)
    select p.id, p.webhook_url, ${reason}, ${sql.timestamp(now)} from payments p
    where p.id = ${paymentId} and p.webhook_url is not null ${once}
    returning id, (select store_id from payments where id = ${paymentId}) as store_id
  `);
  if (inserted !== null) {
    await enqueue(tx, webhookDeliverJob(inserted.id, inserted.store_id));
    return inserted.id;
  }
  if (reason !== 'completed') return null;
  return tx.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    select d.id from webhook_deliveries d join payments p on p.id = d.payment_id
    where d.payment_id = ${paymentId} and d.reason = 'completed' and p.webhook_url is not null
    order by d.created_at limit 1
  `);
}

const deliveryRow = z.object({
  id: z.string(),
  payment_id: z.string().nullable(),
  event: z.string(),
  /** A store endpoint's delivery: the event's id; null for the per-payment webhookURL. */
  event_id: z.string().nullable(),
  url: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  reason: z.enum(DELIVERY_REASONS),
  created_at: z.date(),
  delivered_at: z.date().nullable(),
  failed_at: z.date().nullable(),
});

const attemptRow = z.object({
  delivery_id: z.string(),
  attempt: z.number(),
  started_at: z.date(),
  finished_at: z.date().nullable(),
  duration_ms: z.number().nullable(),
  http_status: z.number().nullable(),
  error: z.string().nullable(),
  next_retry_at: z.date().nullable(),
});

type DeliveryRow = z.infer<typeof deliveryRow>;
type AttemptRow = z.infer<typeof attemptRow>;
export interface DeliveryWithAttempts extends DeliveryRow {
  attempts: AttemptRow[];
}

const DELIVERY_COLUMNS = sql.fragment`id, payment_id, event, event_id, url, status, reason, created_at, delivered_at, failed_at`;
/**
 * An attempt's next_retry_at is recorded by the run that retried it (webhooks/deliver.ts). While the
 * retry waits — the delivery is pending, this is its latest attempt, it failed — the time is the
 * job's run_at as Graphile Worker's fail_job set it, read live; none when Graphile will not run the
 * job (locked: the failing run has not handed it back yet; out of attempts) or when it is due past the
 * 12 h deadline (that run fails the delivery without an attempt).
 */
const WAITING_RETRY_AT = sql.fragment`(
  select j.run_at from graphile_worker.jobs j
  where j.key = ${deliverJobKey('')} || d.id::text and j.locked_at is null and j.attempts < j.max_attempts
    and j.run_at - d.first_attempt_at <= ${DELIVERY_WINDOW_MS} * interval '1 millisecond'
)`;

async function withAttempts(db: Db, deliveries: readonly DeliveryRow[]): Promise<DeliveryWithAttempts[]> {
  if (deliveries.length === 0) return [];
  const attempts = await db.any(sql.type(attemptRow)`
    select a.delivery_id, a.attempt, a.started_at, a.finished_at, a.duration_ms, a.http_status, a.error,
           case when a.next_retry_at is null and d.status = 'pending' and a.attempt = d.attempts and a.finished_at is not null and a.error is not null
                then ${WAITING_RETRY_AT} else a.next_retry_at end as next_retry_at
    from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
    where a.delivery_id = any(${sql.array(
      deliveries.map((d) => d.id),
      'uuid',
    )})
    order by a.delivery_id, a.attempt
  `);
  return deliveries.map((delivery) => ({ ...delivery, attempts: attempts.filter((a) => a.delivery_id === delivery.id) }));
}

/** Every delivery of a payment's webhookURL, oldest first, each with its attempts in order (its store endpoints' are theirs). */
export async function listWebhookDeliveries(db: Db, paymentId: string): Promise<DeliveryWithAttempts[]> {
  const deliveries = await db.any(sql.type(deliveryRow)`
    select ${DELIVERY_COLUMNS} from webhook_deliveries where payment_id = ${paymentId} and endpoint_id is null order by created_at, id
  `);
  return withAttempts(db, deliveries);
}

/** A store endpoint's most recent `limit` deliveries, newest first, each with its attempts in order. */
export async function listEndpointDeliveries(db: Db, endpointId: string, limit: number): Promise<DeliveryWithAttempts[]> {
  const deliveries = await db.any(sql.type(deliveryRow)`
    select ${DELIVERY_COLUMNS} from webhook_deliveries where endpoint_id = ${endpointId} order by created_at desc, id desc limit ${limit}
  `);
  return withAttempts(db, deliveries);
}

/** One delivery with its attempts, or null. */
export async function findWebhookDelivery(db: Db, deliveryId: string): Promise<DeliveryWithAttempts | null> {
  const delivery = await db.maybeOne(sql.type(deliveryRow)`select ${DELIVERY_COLUMNS} from webhook_deliveries where id = ${deliveryId}`);
  return delivery === null ? null : ((await withAttempts(db, [delivery]))[0] ?? null);
}
