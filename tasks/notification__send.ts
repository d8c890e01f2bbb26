// notification__send: one attempt to send one notification (job_key notification__send:<notificationId>),
// added with the store event it tells of (src/webhooks/events.ts). A failed attempt throws and Graphile
// Worker retries it; the attempt log is src/webhooks/notify.ts's business.
import { DASHBOARD_PATH, dashboardPaths } from '../src/dashboard/paths.ts';
import { sendNotification } from '../src/webhooks/notify.ts';
import type { WorkerDeps } from '../src/worker/deps.ts';
import type { TaskFactory } from '../src/worker/tasks.ts';
import { uuidField } from '../src/worker/payloads.ts';

export default ((deps: WorkerDeps) => {
  const base = new URL(deps.config.baseUrl);
  const paths = dashboardPaths(`${base.pathname.replace(/\/+$/, '')}${DASHBOARD_PATH}`);
  const paymentLink = (storeId: string, paymentId: string) => `${base.origin}${paths.store(storeId).payment(paymentId)}`;
  return async (payload, helpers) => {
    const notificationId = uuidField(payload, 'notificationId');
    if (!notificationId) {
      helpers.logger.error(`notification__send: payload without a notificationId, dropped: ${JSON.stringify(payload)}`);
      return;
    }
    await sendNotification({ ...deps, paymentLink }, notificationId, helpers);
  };
}) satisfies TaskFactory;
