// Redelivery of a payment's webhook (POST /v1/payments/{id}/webhook/redeliver, and the dashboard's
// button): the payment's rule — only a completed payment, created with a webhookURL, has a webhook
// to deliver again — decided here, with the payment row locked; webhooks/ records and sends it.
import type { Db } from '../db/pool.ts';
import { KassaError, paymentNotFound } from '../errors.ts';
import { type DeliveryWithAttempts, enqueueWebhookDelivery, findWebhookDelivery } from '../webhooks/deliveries.ts';
import { lockPayment } from './commands.ts';
import type { StorePayment } from './view.ts';

const paymentNotCompleted = (): KassaError => new KassaError('payment_not_completed');
const noWebhookUrl = (): KassaError => new KassaError('no_webhook_url');

/**
 * A new delivery of the store's payment's completed event, signed afresh when it is sent (reason
 * `redelivery`), in the caller's transaction. Throws payment_not_completed, no_webhook_url. Returns
 * the new delivery.
 */
export async function redeliverWebhook(tx: Db, payment: Pick<StorePayment, 'id'>, now: Date): Promise<DeliveryWithAttempts> {
  const locked = await lockPayment(tx, payment.id);
  if (locked === null) throw paymentNotFound();
  if (locked.status !== 'completed') throw paymentNotCompleted();
  const id = await enqueueWebhookDelivery(tx, payment.id, 'redelivery', now);
  if (id === null) throw noWebhookUrl();
  const delivery = await findWebhookDelivery(tx, id);
  if (delivery === null) throw new Error(`webhook delivery ${id} vanished in its own transaction`);
  return delivery;
}
