// A store's webhook endpoint (POST/GET /v1/webhook-endpoints): its JSON Schema and its presenter.
import type { FromSchema } from 'json-schema-to-ts';
import type { EndpointRow } from '../webhooks/endpoints.ts';
import { EVENT_TYPES } from '../webhooks/events.ts';

export const webhookEndpointSchema = {
  type: 'object',
  required: ['id', 'url', 'events', 'createdAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    url: { type: 'string' },
    events: { type: 'array', items: { type: 'string', enum: EVENT_TYPES }, description: 'The event types it hears, in the order docs/API.md lists them.' },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;
type PresentedEndpoint = FromSchema<typeof webhookEndpointSchema>;

export function presentEndpoint(row: EndpointRow): PresentedEndpoint {
  return { id: row.id, url: row.url, events: [...row.events], createdAt: row.created_at.toISOString() };
}
