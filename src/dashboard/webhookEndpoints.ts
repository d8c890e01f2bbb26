// The store's webhook endpoints as the dashboard's Webhooks page manages them (issue 29): add, send a
// test event, redeliver a delivery, delete — by an owner, through the API's own commands
// (webhooks/endpoints.ts), each with its audit row in the same transaction. Every member reads them.
import type { DatabasePool } from '../db/pool.ts';
import { listEndpointDeliveries, type DeliveryWithAttempts } from '../webhooks/deliveries.ts';
import {
  createEndpoint,
  deleteEndpoint,
  type EndpointRow,
  endpointUrlProblem,
  findEndpoint,
  listEndpoints,
  MAX_ENDPOINTS_PER_STORE,
  redeliverToEndpoint,
  sendPing,
} from '../webhooks/endpoints.ts';
import type { EventType } from '../webhooks/events.ts';
import { type Actor, recordAudit } from './audit.ts';
import { FormProblem } from '../errors.ts';

/** How many deliveries the page shows per endpoint, newest first. */
const DELIVERIES_SHOWN = 10;

export interface EndpointWithDeliveries extends EndpointRow {
  deliveries: readonly DeliveryWithAttempts[];
}

/** The store's endpoints, oldest first, each with its latest deliveries. */
export async function endpointsOfStore(pool: DatabasePool, storeId: string): Promise<readonly EndpointWithDeliveries[]> {
  const endpoints = await listEndpoints(pool, storeId);
  return Promise.all(endpoints.map(async (e) => ({ ...e, deliveries: await listEndpointDeliveries(pool, e.id, DELIVERIES_SHOWN) })));
}

/** Adds an endpoint (audited webhook_endpoint.add). FormProblem, keyed by field, when the form is refused. */
export async function addEndpoint(
  pool: DatabasePool,
  actor: Actor,
  storeId: string,
  input: { url: string; events: EventType[] },
  allowInsecure: boolean,
  now: Date,
): Promise<EndpointRow> {
  const urlProblem = input.url === '' ? 'Give the URL the events go to.' : endpointUrlProblem(input.url, allowInsecure);
  if (urlProblem !== null) throw new FormProblem(urlProblem, 'url');
  if (input.events.length === 0) throw new FormProblem('Choose at least one event.', 'events');
  return pool.transaction(async (tx) => {
    const endpoint = await createEndpoint(tx, storeId, input, now);
    if (endpoint === null) throw new FormProblem(`The store has ${MAX_ENDPOINTS_PER_STORE} endpoints, the most it may have; delete one first.`, 'url');
    await recordAudit(
      tx,
      actor,
      { storeId, action: 'webhook_endpoint.add', subject: endpoint.id, detail: { url: endpoint.url, events: endpoint.events } },
      now,
    );
    return endpoint;
  });
}

async function storeEndpoint(pool: DatabasePool, storeId: string, endpointId: string): Promise<EndpointRow> {
  const endpoint = await findEndpoint(pool, storeId, endpointId);
  if (endpoint === null) throw new FormProblem('That endpoint no longer exists.');
  return endpoint;
}

/** Sends the endpoint a ping (audited webhook_endpoint.test). */
export async function testEndpoint(pool: DatabasePool, actor: Actor, storeId: string, endpointId: string, now: Date): Promise<DeliveryWithAttempts> {
  const endpoint = await storeEndpoint(pool, storeId, endpointId);
  return pool.transaction(async (tx) => {
    const delivery = await sendPing(tx, endpoint, now);
    await recordAudit(tx, actor, { storeId, action: 'webhook_endpoint.test', subject: endpoint.id, detail: { delivery: delivery.id } }, now);
    return delivery;
  });
}

/** Sends one of the endpoint's deliveries again (audited webhook.redeliver). */
export async function redeliverEndpointDelivery(
  pool: DatabasePool,
  actor: Actor,
  storeId: string,
  ids: { endpointId: string; deliveryId: string },
  now: Date,
): Promise<DeliveryWithAttempts> {
  const endpoint = await storeEndpoint(pool, storeId, ids.endpointId);
  return pool.transaction(async (tx) => {
    const delivery = await redeliverToEndpoint(tx, endpoint, ids.deliveryId, now);
    if (delivery === null) throw new FormProblem('That delivery is not one of this endpoint’s.');
    await recordAudit(tx, actor, { storeId, action: 'webhook.redeliver', subject: endpoint.id, detail: { delivery: delivery.id, of: ids.deliveryId } }, now);
    return delivery;
  });
}

/** Deletes the endpoint and its delivery log (audited webhook_endpoint.delete). */
export async function removeEndpoint(pool: DatabasePool, actor: Actor, storeId: string, endpointId: string, now: Date): Promise<void> {
  await pool.transaction(async (tx) => {
    const endpoint = await findEndpoint(tx, storeId, endpointId);
    if (endpoint === null || !(await deleteEndpoint(tx, storeId, endpointId))) throw new FormProblem('That endpoint no longer exists.');
    await recordAudit(tx, actor, { storeId, action: 'webhook_endpoint.delete', subject: endpointId, detail: { url: endpoint.url } }, now);
  });
}
