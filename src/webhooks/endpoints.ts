// A store's webhook endpoints (docs/API.md, Store webhook endpoints): add, list, delete, send a test
// ping, redeliver one of its deliveries. The API's routes and the dashboard's Webhooks page both act
// through these. The URL's rules (public HTTPS, as a payment's webhookURL) are checked by the caller
// before, and by the delivery's SSRF guard at each attempt.
import crypto from 'node:crypto';
import { sql, z, type Db } from '../db/pool.ts';
import { checkWebhookUrl } from '../net/addresses.ts';
import { enqueue } from '../worker/enqueue.ts';
import { endpointDeliverJob } from '../worker/jobs.ts';
import { type DeliveryWithAttempts, findWebhookDelivery } from './deliveries.ts';
import { EVENT_TYPES, type EventType, PING } from './events.ts';

/** Why `url` cannot be an endpoint's (the rules of a payment's webhookURL), or null when it can. */
export function endpointUrlProblem(url: string, allowInsecure: boolean): string | null {
  const check = checkWebhookUrl(url, { allowInsecure, name: 'url' });
  return check.ok ? null : check.reason;
}

/** How many endpoints a store may have: enough for every service of a shop, few enough that an event fans out cheaply. */
export const MAX_ENDPOINTS_PER_STORE = 16;

const endpointRow = z.object({ id: z.string(), store_id: z.string(), url: z.string(), events: z.array(z.enum(EVENT_TYPES)), created_at: z.date() });
export type EndpointRow = z.infer<typeof endpointRow>;

const COLUMNS = sql.fragment`id, store_id, url, events, created_at`;

/** Adds an endpoint; null when the store has MAX_ENDPOINTS_PER_STORE already. `events` are kept in EVENT_TYPES' order, once each. */
export async function createEndpoint(tx: Db, storeId: string, input: { url: string; events: readonly EventType[] }, now: Date): Promise<EndpointRow | null> {
  const events = EVENT_TYPES.filter((type) => input.events.includes(type));
  // The store's row is locked so that two concurrent adds cannot both pass the count.
  await tx.query(sql.unsafe`select 1 from stores where id = ${storeId} for update`);
  return tx.maybeOne(sql.type(endpointRow)`
    insert into webhook_endpoints (store_id, url, events, created_at)
    select ${storeId}, ${input.url}, ${sql.array(events, 'text')}, ${sql.timestamp(now)}
    where (select count(*) from webhook_endpoints where store_id = ${storeId}) < ${MAX_ENDPOINTS_PER_STORE}
    returning ${COLUMNS}
  `);
}

/** The store's endpoints, oldest first. */
export async function listEndpoints(db: Db, storeId: string): Promise<readonly EndpointRow[]> {
  return db.any(sql.type(endpointRow)`select ${COLUMNS} from webhook_endpoints where store_id = ${storeId} order by created_at, id`);
}

/** The store's endpoint, or null (another store's is null too). */
export async function findEndpoint(db: Db, storeId: string, endpointId: string): Promise<EndpointRow | null> {
  return db.maybeOne(sql.type(endpointRow)`select ${COLUMNS} from webhook_endpoints where id = ${endpointId} and store_id = ${storeId}`);
}

/** Deletes the store's endpoint with its delivery log (its waiting deliveries find no row and end). Returns whether it existed. */
export async function deleteEndpoint(db: Db, storeId: string, endpointId: string): Promise<boolean> {
  const deleted = await db.maybeOne(sql.unsafe`delete from webhook_endpoints where id = ${endpointId} and store_id = ${storeId} returning id`);
  return deleted !== null;
}

async function recordDelivery(
  tx: Db,
  endpoint: EndpointRow,
  delivery: { event: string; eventId: string; paymentId: string | null; payload: unknown; reason: 'test' | 'redelivery' },
  now: Date,
): Promise<DeliveryWithAttempts> {
  const id = await tx.oneFirst(sql.type(z.object({ id: z.string() }))`
    insert into webhook_deliveries (endpoint_id, payment_id, event, event_id, payload, url, reason, created_at)
    values (${endpoint.id}, ${delivery.paymentId}, ${delivery.event}, ${delivery.eventId}, ${sql.jsonb(delivery.payload as never)}, ${endpoint.url},
            ${delivery.reason}, ${sql.timestamp(now)})
    returning id
  `);
  await enqueue(tx, endpointDeliverJob(id, endpoint.id));
  const recorded = await findWebhookDelivery(tx, id);
  if (recorded === null) throw new Error(`webhook delivery ${id} vanished in its own transaction`);
  return recorded;
}

/** A `ping` to the endpoint (POST /v1/webhook-endpoints/{id}/test), whatever events it hears. Payload: {"endpointID", "storeID"}. */
export async function sendPing(tx: Db, endpoint: EndpointRow, now: Date): Promise<DeliveryWithAttempts> {
  return recordDelivery(
    tx,
    endpoint,
    { event: PING, eventId: crypto.randomUUID(), paymentId: null, payload: { endpointID: endpoint.id, storeID: endpoint.store_id }, reason: 'test' },
    now,
  );
}

/**
 * The same event again to the endpoint (its current URL), signed afresh when sent: a new delivery with
 * the same type, eventID and payload (reason `redelivery`). Null when the delivery is not the endpoint's.
 */
export async function redeliverToEndpoint(tx: Db, endpoint: EndpointRow, deliveryId: string, now: Date): Promise<DeliveryWithAttempts | null> {
  const original = await tx.maybeOne(sql.type(z.object({ event: z.string(), event_id: z.string(), payment_id: z.string().nullable(), payload: z.unknown() }))`
    select event, event_id, payment_id, payload from webhook_deliveries where id = ${deliveryId} and endpoint_id = ${endpoint.id}
  `);
  if (original === null) return null;
  return recordDelivery(
    tx,
    endpoint,
    { event: original.event, eventId: original.event_id, paymentId: original.payment_id, payload: original.payload, reason: 'redelivery' },
    now,
  );
}
