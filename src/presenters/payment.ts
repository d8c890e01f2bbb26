// The payment object (docs/API.md, The payment object): its JSON Schema, published in the OpenAPI
// document, and the presenter, the only place that decides its shape, including which fields each
// status shows. The presenter's type is derived from the schema (json-schema-to-ts, types only).
import type { FromSchema } from 'json-schema-to-ts';
import { ANOMALIES, anomaliesOf } from '../payments/anomalies.ts';
import { PAYMENT_STATUSES, type PaymentStatus } from '../payments/transitions.ts';
import { type PaymentView, receivedAmount, refundedAmount } from '../payments/view.ts';
import { formatReference, referencePayload } from '../payments/reference.ts';
import { FIAT_CURRENCIES } from '../rates/fiat.ts';
import { telegramPaymentUrl } from '../telegram/telegramUrls.ts';
import { chainImageUrl, coinImageUrl, coinOrChainSchema } from './method.ts';

/** A fiat code or a coin ticker: which coins exist is data (the `coins` table), checked when the payment is drafted. */
export const currencySchema = {
  type: 'string',
  minLength: 1,
  maxLength: 32,
  description: `Fiat code (${FIAT_CURRENCIES.join(', ')}) or coin ticker (GET /v1/payment-methods lists the coins), case-sensitive.`,
} as const;

export const paymentDetailsSchema = {
  type: 'object',
  description: 'Present once a method was chosen (pending, completed; expired or cancelled after pending).',
  required: ['address', 'coinAmount', 'coin', 'chain', 'receivedAmount'],
  properties: {
    address: {
      type: 'string',
      description:
        "Where the customer pays, non-bounceable form (present from pending on): the payment's own deposit address, or the store's treasury when the payment is settled there (reference present).",
    },
    reference: {
      type: 'string',
      pattern: '^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{5}$',
      description:
        "Extension (CONTRACT §12, treasury settlement only): the reference the customer must send as the transfer's comment, XXXX-XXXXX (8 Crockford base32 characters and a check character; case and the dash are ignored). Without it the money is not matched to the payment (it waits in GET /v1/unmatched-transfers).",
    },
    payload: {
      type: 'string',
      description:
        'Extension (treasury settlement only): the base64 BoC of the message body a wallet should send — a text comment of the reference (op 0). For a jetton, the forward_payload of the TEP-74 transfer to the treasury.',
    },
    coinAmount: { type: 'string' },
    coin: coinOrChainSchema,
    chain: coinOrChainSchema,
    receivedAmount: { type: 'string', description: 'Extension: the confirmed sum counted toward the payment so far, in the coin ("0" before any transfer).' },
    transactionSignatures: { type: 'array', items: { type: 'string' }, description: 'Hex transaction hashes; only when completed.' },
  },
} as const;
type PresentedPaymentDetails = FromSchema<typeof paymentDetailsSchema>;

const paymentSchema = {
  type: 'object',
  required: ['id', 'status', 'amount', 'currency', 'checkoutURL', 'telegramURL', 'timer', 'metadata', 'anomalies'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    status: { type: 'string', enum: PAYMENT_STATUSES },
    order_id: { type: 'string', maxLength: 128 },
    amount: { type: 'string', description: 'Exactly as given at creation.' },
    currency: currencySchema,
    checkoutURL: { type: 'string', format: 'uri' },
    telegramURL: {
      type: ['string', 'null'],
      format: 'uri',
      description:
        "Extension: the checkout as the store's Telegram Mini App, https://t.me/<bot>/<app>?startapp=<id>; null when the store has no telegramBot and telegramApp (docs/API.md, Telegram Mini App).",
    },
    telegramUser: {
      type: 'object',
      required: ['id'],
      additionalProperties: false,
      description:
        "Extension: the Telegram user who opened the checkout in the store's Mini App, from init data Telegram signed (checked by Kassa). While the payment is open: the last one who opened it so far; once completed: the last one who had opened it by the paying transfer's on-chain time (the payer), never someone who opened it after the money was sent. Absent when none did.",
      properties: { id: { type: 'integer' }, username: { type: 'string', description: 'Without the @; absent when the user has none.' } },
    },
    paymentDetails: paymentDetailsSchema,
    refunded: {
      type: 'string',
      description:
        'Extension: what of the payment\'s coin (the coin of its details) was refunded, in the coin ("0" when nothing; present once a method was chosen): refunds from the payment address planned, sent or confirmed (each refund\'s amount, its network fee included when taken from it), and refunds from the treasury once confirmed (what left the treasury). `status` stays as it was (a refunded sale stays `completed`).',
    },
    timer: {
      type: 'object',
      required: ['createdAt', 'expiresAt'],
      properties: {
        createdAt: { type: 'string', format: 'date-time' },
        expiresAt: {
          type: 'string',
          format: 'date-time',
          description:
            'A transfer made before this (its on-chain time) counts. A created payment expires at this time; a pending one once the chain is read 60 s past it (shard blocks committed late), so its status turns expired about a minute later.',
        },
        paidAt: { type: 'string', format: 'date-time', description: 'Only when completed.' },
      },
    },
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
    description: { type: 'string' },
    returnURL: { type: 'string', format: 'uri', description: 'Extension.' },
    paymentLinkID: { type: 'string', format: 'uuid', description: 'Extension: the payment link whose visit created the payment (absent otherwise).' },
    subscriptionID: {
      type: 'string',
      format: 'uuid',
      description: 'Extension: the subscription whose period the payment pays (its money counts as the subscription’s credit; absent otherwise).',
    },
    anomalies: {
      type: 'array',
      items: { type: 'string', enum: ANOMALIES },
      description:
        "Extension: what the books say beside the status, derived from the effects of the payment's transfers (empty when nothing): partially_paid (counted money on a payment that did not complete), overpaid (more of its coin than its amount, at or after completion), paid_late (its coin after it expired), paid_after_cancel, wrong_coin (another accepted coin).",
    },
  },
} as const;
type PresentedPayment = FromSchema<typeof paymentSchema>;

/**
 * The payment object per status, as the OpenAPI document publishes it (the seed's presence table):
 * `created` has no paymentDetails; `pending` has them with the address; `completed` also has
 * transactionSignatures and timer.paidAt; `expired` and `cancelled` have them only when the
 * payment had reached pending. `Payment` is their oneOf, told apart by `status`.
 */
export function paymentSchemasByStatus(): Record<string, object> {
  const { paymentDetails: _details, timer, status: _status, ...properties } = paymentSchema.properties;
  const { transactionSignatures: _signatures, ...openDetails } = paymentDetailsSchema.properties;
  const { paidAt: _paidAt, ...openTimer } = timer.properties;
  const details = (withSignatures: boolean) => ({
    ...paymentDetailsSchema,
    required: [...paymentDetailsSchema.required, ...(withSignatures ? ['transactionSignatures'] : [])],
    properties: withSignatures ? paymentDetailsSchema.properties : openDetails,
  });
  const variant = (status: PaymentStatus, description: string, shape: { details: 'none' | 'required' | 'optional'; completed: boolean }) => ({
    type: 'object',
    description,
    required: [...paymentSchema.required, ...(shape.details === 'required' ? ['paymentDetails'] : [])],
    properties: {
      ...properties,
      status: { type: 'string', const: status },
      ...(shape.details === 'none' ? {} : { paymentDetails: details(shape.completed) }),
      timer: shape.completed
        ? { ...timer, required: [...timer.required, 'paidAt'] }
        : { ...timer, properties: openTimer, description: 'paidAt only once completed.' },
    },
  });
  return {
    PaymentCreated: variant('created', 'Created (Customer Choice): no method chosen yet, no paymentDetails.', { details: 'none', completed: false }),
    PaymentPending: variant('pending', 'Pending: paymentDetails with the deposit address.', { details: 'required', completed: false }),
    PaymentCompleted: variant('completed', 'Completed: paymentDetails with transactionSignatures; timer.paidAt.', { details: 'required', completed: true }),
    PaymentExpired: variant('expired', 'Expired: paymentDetails only when it had reached pending.', { details: 'optional', completed: false }),
    PaymentCancelled: variant('cancelled', 'Cancelled: paymentDetails only when it had reached pending.', { details: 'optional', completed: false }),
  };
}

/** GET /v1/payments/{paymentID}/status. */
export const paymentStatusSchema = {
  type: 'object',
  required: ['id', 'status'],
  properties: { id: { type: 'string', format: 'uuid' }, status: { type: 'string', enum: PAYMENT_STATUSES } },
} as const;

/** POST /v1/payments/create: the invoice-type variant answers the id and the checkout URL only. */
export const createdInvoiceSchema = {
  type: 'object',
  required: ['paymentID', 'checkoutURL'],
  properties: { paymentID: { type: 'string', format: 'uuid' }, checkoutURL: { type: 'string', format: 'uri' } },
} as const;

/** RFC 3339 in UTC with milliseconds. */
const rfc3339 = (date: Date): string => date.toISOString();

interface PresentOptions {
  checkoutBaseUrl: string;
}

/**
 * The payment object (docs/API.md). paymentDetails is present once a method was chosen (pending,
 * completed, and expired/cancelled payments that had reached pending); transactionSignatures and
 * timer.paidAt only when completed. `anomalies` (extension): what the books say beside the status
 * (payments/anomalies.ts), an empty list when nothing.
 */
export function presentPayment(payment: PaymentView, { checkoutBaseUrl }: PresentOptions): PresentedPayment {
  const status: PaymentStatus = payment.status;
  const completed = status === 'completed';
  const details = presentPaymentDetails(payment, checkoutBaseUrl, receivedAmount(payment));
  return {
    id: payment.id,
    status,
    ...(payment.order_id !== null ? { order_id: payment.order_id } : {}),
    amount: payment.amount,
    currency: payment.currency,
    checkoutURL: `${checkoutBaseUrl}/${payment.id}`,
    telegramURL: telegramPaymentUrl(payment.telegram_mini_app, payment.id),
    ...(payment.telegram_user_id !== null
      ? { telegramUser: { id: Number(payment.telegram_user_id), ...(payment.telegram_username !== null ? { username: payment.telegram_username } : {}) } }
      : {}),
    ...(details ? { paymentDetails: details, refunded: refundedAmount(payment) } : {}),
    timer: {
      createdAt: rfc3339(payment.created_at),
      expiresAt: rfc3339(payment.expires_at),
      ...(completed && payment.paid_at ? { paidAt: rfc3339(payment.paid_at) } : {}),
    },
    metadata: payment.metadata,
    ...(payment.description !== null ? { description: payment.description } : {}),
    ...(payment.return_url !== null ? { returnURL: payment.return_url } : {}),
    ...(payment.payment_link_id !== null ? { paymentLinkID: payment.payment_link_id } : {}),
    ...(payment.subscription_id !== null ? { subscriptionID: payment.subscription_id } : {}),
    anomalies: anomaliesOf(status, payment.transfer_effects),
  };
}

/** GET /v1/payments/{paymentID}/status: the id and the status only. */
export function presentPaymentStatus(payment: Pick<PaymentView, 'id' | 'status'>): FromSchema<typeof paymentStatusSchema> {
  return { id: payment.id, status: payment.status };
}

/** POST /v1/payments/create: the id and where the customer pays. */
export function presentCreatedInvoice(payment: PaymentView, options: PresentOptions): FromSchema<typeof createdInvoiceSchema> {
  return { paymentID: payment.id, checkoutURL: presentPayment(payment, options).checkoutURL };
}

type DetailFields = Pick<
  PaymentView,
  'status' | 'coin_symbol' | 'coin_name' | 'chain_symbol' | 'chain_name' | 'coin_amount' | 'address_friendly' | 'transaction_hashes' | 'reference'
>;

/**
 * The payment object's paymentDetails (docs/API.md), for the merchant's payment object and the checkout's view alike;
 * undefined until a method is chosen. `receivedAmount` (extension): the confirmed sum counted
 * toward the payment so far. transactionSignatures only once completed.
 */
export function presentPaymentDetails(row: DetailFields, checkoutBaseUrl: string, receivedAmount: string): PresentedPaymentDetails | undefined {
  // A method is chosen when the payment reaches pending, with its deposit address (payments_pending_has_method).
  if (row.coin_symbol === null || row.coin_amount === null || row.chain_symbol === null || row.address_friendly === null) return undefined;
  return {
    address: row.address_friendly,
    coinAmount: row.coin_amount,
    coin: { name: row.coin_name ?? row.coin_symbol, symbol: row.coin_symbol, imgUrl: coinImageUrl(checkoutBaseUrl, row.coin_symbol) },
    chain: { name: row.chain_name ?? row.chain_symbol, symbol: row.chain_symbol, imgUrl: chainImageUrl(checkoutBaseUrl, row.chain_symbol) },
    receivedAmount,
    ...(row.reference !== null ? { reference: formatReference(row.reference), payload: referencePayload(row.reference) } : {}),
    ...(row.status === 'completed' ? { transactionSignatures: row.transaction_hashes } : {}),
  };
}
