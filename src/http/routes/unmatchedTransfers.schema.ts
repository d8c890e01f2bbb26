// JSON Schema of GET /v1/unmatched-transfers's query (src/http/routes/unmatchedTransfers.ts) and its type.
import type { FromSchema } from 'json-schema-to-ts';
import { UNMATCHED_STATES } from '../../payments/treasuryTransfers.ts';
import type { ParamsDefinition, QueryDefinition } from '../validate.ts';

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

export const unmatchedParams = {
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['id'],
    properties: { id: { type: 'string', format: 'uuid', errorCode: 'invalid_unmatched_transfer_id', errorParam: 'id' } },
  },
} as const satisfies ParamsDefinition;
export type UnmatchedParams = FromSchema<typeof unmatchedParams.schema>;

export const assignUnmatchedSchema = {
  $id: 'AssignUnmatchedTransferRequest',
  type: 'object',
  additionalProperties: false,
  required: ['paymentID'],
  properties: {
    paymentID: {
      type: 'string',
      format: 'uuid',
      description: 'The payment to book it on: one of the store, settled to the treasury the money reached.',
      examples: ['5f0c6c1e-8a4e-4d7a-9a51-0c1f2f3e4d5c'],
      errorCode: 'invalid_payment_id',
    },
  },
} as const;
export type AssignUnmatchedBody = FromSchema<typeof assignUnmatchedSchema>;

export const keepUnmatchedSchema = {
  $id: 'KeepUnmatchedTransferRequest',
  type: 'object',
  additionalProperties: false,
  required: ['note'],
  properties: {
    note: {
      type: 'string',
      minLength: 1,
      maxLength: 500,
      description: 'Why the money stays in the treasury as it is (for the audit log and the list).',
      examples: ['Top-up from our own wallet'],
      errorCode: 'invalid_note',
    },
  },
} as const;
export type KeepUnmatchedBody = FromSchema<typeof keepUnmatchedSchema>;

export const refundUnmatchedSchema = {
  $id: 'RefundUnmatchedTransferRequest',
  type: 'object',
  additionalProperties: false,
  properties: {
    address: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description: 'Where to send it back (raw or user-friendly, basechain); default: its sender.',
      examples: ['UQBvI0aFLnw2QbZgjMPCLRdtRHxhUyinQudg6sdiohIwg5jL'],
      errorCode: 'invalid_address',
    },
  },
} as const;
export type RefundUnmatchedBody = FromSchema<typeof refundUnmatchedSchema>;
