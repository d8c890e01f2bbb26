// JSON Schema of GET /v1/unmatched-transfers's query (src/http/routes/unmatchedTransfers.ts) and its type.
import type { FromSchema } from 'json-schema-to-ts';
import { UNMATCHED_STATES } from '../../payments/treasuryTransfers.ts';
import type { QueryDefinition } from '../validate.ts';

export const listUnmatchedQuery = {
  schema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      state: { type: 'string', enum: UNMATCHED_STATES, description: 'Only those in this state (default: all).', errorCode: 'invalid_unmatched_state' },
    },
  },
  published: {},
} as const satisfies QueryDefinition;
export type ListUnmatchedQuery = FromSchema<typeof listUnmatchedQuery.schema>;
