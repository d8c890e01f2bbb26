// JSON Schemas of the store webhook endpoints (src/http/routes/webhookEndpoints.ts) and the request
// types derived from them.
import type { FromSchema } from 'json-schema-to-ts';
import { EVENT_TYPES } from '../../webhooks/events.ts';
import type { ParamsDefinition } from '../validate.ts';
import { urlSchema } from './shared.schema.ts';

export const createEndpointSchema = {
  $id: 'CreateWebhookEndpointRequest',
  type: 'object',
  additionalProperties: false,
  required: ['url', 'events'],
  properties: {
    url: { ...urlSchema('Where the events are POSTed'), errorCode: 'invalid_endpoint_url' },
    events: {
      type: 'array',
      minItems: 1,
      maxItems: EVENT_TYPES.length,
      uniqueItems: true,
      items: { type: 'string', enum: EVENT_TYPES, errorCode: 'invalid_event_types' },
      description: 'The event types it hears, each once (ping is sent by POST …/test whatever this lists).',
      examples: [['payment.completed', 'payment.expired', 'refund.failed']],
      errorCode: 'invalid_event_types',
    },
  },
} as const;
export type CreateEndpointBody = FromSchema<typeof createEndpointSchema>;

const endpointId = { type: 'string', format: 'uuid', errorCode: 'invalid_webhook_endpoint_id', errorParam: 'id' } as const;

export const endpointParams = {
  schema: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: endpointId } },
} as const satisfies ParamsDefinition;
export type EndpointParams = FromSchema<typeof endpointParams.schema>;

export const endpointDeliveryParams = {
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'deliveryId'],
    properties: { id: endpointId, deliveryId: { type: 'string', format: 'uuid', errorCode: 'invalid_delivery_id', errorParam: 'deliveryID' } },
  },
} as const satisfies ParamsDefinition;
export type EndpointDeliveryParams = FromSchema<typeof endpointDeliveryParams.schema>;

/** POST …/test and …/redeliver take no body, or `{}`. */
export { cancelPaymentSchema as emptyBodySchema, type CancelPaymentBody as EmptyBody } from './payments.schema.ts';
