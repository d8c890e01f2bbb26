// webhook__deliver: one attempt to deliver one webhook (job_key webhook__deliver:<deliveryId>).
// Added by enqueueWebhookDelivery in the transaction that completes the payment or asks for a
// redelivery. A failed attempt throws, and Graphile Worker retries it with its backoff; the 12 h
// window and the attempt log are src/webhooks/deliver.ts's business.
import { deliverWebhook } from '../src/webhooks/deliver.ts';
import type { WorkerDeps } from '../src/worker/deps.ts';
import type { TaskFactory } from '../src/worker/tasks.ts';
import { uuidField } from '../src/worker/payloads.ts';

export default ((deps: WorkerDeps & { webhookTimeoutMs?: number }) => async (payload, helpers) => {
  const deliveryId = uuidField(payload, 'deliveryId');
  if (!deliveryId) {
    helpers.logger.error(`webhook__deliver: payload without a deliveryId, dropped: ${JSON.stringify(payload)}`);
    return;
  }
  await deliverWebhook(deps, deliveryId, helpers);
}) satisfies TaskFactory;
