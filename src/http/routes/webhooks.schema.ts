// JSON Schemas of the webhook-delivery endpoints (src/http/routes/webhooks.ts).
export { type PaymentParams, paymentParams } from './shared.schema.ts';
/** The redeliver request takes no body, or `{}`: the same schema as cancel. */
export { cancelPaymentSchema as redeliverSchema, type CancelPaymentBody as RedeliverBody } from './payments.schema.ts';
