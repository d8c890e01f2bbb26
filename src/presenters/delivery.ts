// A webhook delivery as the API shows it (GET /v1/payments/{paymentID}/webhook-deliveries, redeliver;
// a store endpoint's, GET /v1/webhook-endpoints/{id}/deliveries):
// its JSON Schema and its presenter. (The webhook's own body, the bytes a merchant's receiver gets
// and verifies, is built and signed by the worker: src/webhooks/sign.ts.)
import type { FromSchema } from 'json-schema-to-ts';
import type { DeliveryWithAttempts } from '../webhooks/deliveries.ts';
import { EVENT_TYPES, PING } from '../webhooks/events.ts';

const time = { type: 'string', format: 'date-time' } as const;
const timeOrNull = { type: ['string', 'null'], format: 'date-time' } as const;

const attemptsSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['attempt', 'startedAt', 'finishedAt', 'durationMs', 'httpStatus', 'error', 'nextRetryAt'],
    properties: {
      attempt: { type: 'integer' },
      startedAt: time,
      finishedAt: { ...timeOrNull, description: 'null while the attempt runs, and for an attempt interrupted by a crash (error says so).' },
      durationMs: { type: ['integer', 'null'] },
      httpStatus: { type: ['integer', 'null'] },
      error: { type: ['string', 'null'] },
      nextRetryAt: {
        ...timeOrNull,
        description: "When the next attempt is due: the retry's run_at in Graphile Worker (its backoff, e^n s after the n-th failure); null when none follows.",
      },
    },
  },
} as const;

export const webhookDeliverySchema = {
  type: 'object',
  required: ['id', 'event', 'url', 'status', 'reason', 'attempts', 'createdAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    event: { const: 'payment.completed' },
    url: { type: 'string' },
    status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
    reason: { type: 'string', enum: ['completed', 'redelivery'] },
    attempts: attemptsSchema,
    createdAt: time,
    deliveredAt: timeOrNull,
    failedAt: timeOrNull,
  },
} as const;
type PresentedDelivery = FromSchema<typeof webhookDeliverySchema>;

/** A delivery to a store's webhook endpoint (GET /v1/webhook-endpoints/{id}/deliveries, test, redeliver). */
export const endpointDeliverySchema = {
  type: 'object',
  required: ['id', 'event', 'eventID', 'paymentID', 'url', 'status', 'reason', 'attempts', 'createdAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    event: { type: 'string', enum: [...EVENT_TYPES, PING], description: "The event type (the body's `type`)." },
    eventID: {
      type: 'string',
      format: 'uuid',
      description: "The body's `eventID`: the same for each endpoint that hears the event, and for a redelivery of it.",
    },
    paymentID: { type: ['string', 'null'], format: 'uuid', description: 'The payment the event is about; null for ping.' },
    url: { type: 'string' },
    status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
    reason: { type: 'string', enum: ['event', 'test', 'redelivery'], description: 'event: it happened; test: POST …/test; redelivery: asked again.' },
    attempts: attemptsSchema,
    createdAt: time,
    deliveredAt: timeOrNull,
    failedAt: timeOrNull,
  },
} as const;
type PresentedEndpointDelivery = FromSchema<typeof endpointDeliverySchema>;

const iso = (date: Date | null): string | null => (date === null ? null : date.toISOString());

/** The outward shape of a delivery (GET /v1/payments/{id}/webhook-deliveries, redeliver). */
export function presentDelivery(delivery: DeliveryWithAttempts): PresentedDelivery {
  return {
    id: delivery.id,
    // The table's check constraint webhook_deliveries_event_is_known allows this one event.
    event: delivery.event as PresentedDelivery['event'],
    url: delivery.url,
    status: delivery.status,
    // The check constraint webhook_deliveries_endpoint_event_is_whole: a webhookURL's delivery is completed or redelivery.
    reason: delivery.reason as PresentedDelivery['reason'],
    ...outcome(delivery),
  };
}

/** The outward shape of a delivery to a store endpoint. */
export function presentEndpointDelivery(delivery: DeliveryWithAttempts): PresentedEndpointDelivery {
  return {
    id: delivery.id,
    // The table's check constraint webhook_deliveries_event_is_known lists the same types.
    event: delivery.event as PresentedEndpointDelivery['event'],
    eventID: delivery.event_id ?? '',
    paymentID: delivery.payment_id,
    url: delivery.url,
    status: delivery.status,
    // webhook_deliveries_endpoint_event_is_whole: an endpoint's delivery is event, test or redelivery.
    reason: delivery.reason as PresentedEndpointDelivery['reason'],
    ...outcome(delivery),
  };
}

function outcome(delivery: DeliveryWithAttempts) {
  return {
    attempts: delivery.attempts.map((a) => ({
      attempt: a.attempt,
      startedAt: a.started_at.toISOString(),
      finishedAt: iso(a.finished_at),
      durationMs: a.duration_ms,
      httpStatus: a.http_status,
      error: a.error,
      nextRetryAt: iso(a.next_retry_at),
    })),
    createdAt: delivery.created_at.toISOString(),
    deliveredAt: iso(delivery.delivered_at),
    failedAt: iso(delivery.failed_at),
  };
}
