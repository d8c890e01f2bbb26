// JSON Schemas of the checkout's public endpoints (src/http/routes/checkout.ts and its area files
// checkoutLinks.ts, checkoutTelegram.ts).
import type { FromSchema } from 'json-schema-to-ts';
import type { ParamsDefinition, QueryDefinition } from '../validate.ts';
import { paymentIdParams } from './shared.schema.ts';

/** The payment id of the checkout's routes (`…/v1/checkout/payments/:paymentId/…`). */
export const checkoutParams = paymentIdParams('paymentId');

/** A payment link's page (`{prefix}/l/:linkId`): a malformed id names no link (the link's not-found page, as an unknown one). */
export const linkPageParams = {
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['linkId'],
    properties: { linkId: { type: 'string', format: 'uuid', errorCode: 'payment_link_not_found' } },
  },
} as const satisfies ParamsDefinition;
export type LinkPageParams = FromSchema<typeof linkPageParams.schema>;

export const selectMethodSchema = {
  $id: 'SelectMethodRequest',
  type: 'object',
  additionalProperties: false,
  required: ['paymentMethodID'],
  properties: { paymentMethodID: { type: 'string', format: 'uuid', errorCode: 'invalid_payment_method_id' } },
} as const;
export type SelectMethodBody = FromSchema<typeof selectMethodSchema>;

/** GET …/ton-connect: the connected wallet's address, once (other parameters are left alone); the handler parses it. */
export const tonConnectQuery = {
  schema: {
    type: 'object',
    additionalProperties: true,
    required: ['account'],
    properties: {
      account: { type: 'string', description: 'The connected wallet address (raw or user-friendly, workchain 0).', errorCode: 'invalid_address' },
    },
  },
} as const satisfies QueryDefinition;
export type TonConnectQuery = FromSchema<typeof tonConnectQuery.schema>;

/** POST …/telegram: Telegram's init data as the Mini App received it (Telegram.WebApp.initData: the launch's tgWebAppData). */
export const telegramInitDataSchema = {
  $id: 'TelegramInitDataRequest',
  type: 'object',
  additionalProperties: false,
  required: ['initData'],
  properties: {
    initData: {
      type: 'string',
      minLength: 1,
      maxLength: 8192,
      description: "The Mini App's init data, a query string signed by Telegram (its `signature` field, Ed25519).",
      errorCode: 'telegram_init_data_invalid',
    },
  },
} as const;
export type TelegramInitDataBody = FromSchema<typeof telegramInitDataSchema>;
