// Every job Kassa enqueues from its own code, in one place: the task it runs, its job key (a
// second enqueue of the same work replaces the first) and its queue (the jobs of one queue run one
// at a time). The key and queue strings are stored in graphile_worker's tables by running and
// waiting jobs: change them only with the jobs already enqueued in mind. Recurring tasks are added
// by the crontab (tasks/index.ts), not here.
import { sql, type FragmentSqlToken } from '../db/pool.ts';
import type { Job } from './enqueue.ts';

const DELIVER_TASK = 'webhook__deliver';
const SEND_TASK = 'outgoing__send';
const SALE_SWEEP_TASK = 'treasury__sweep_sale';
const NOTIFY_TASK = 'notification__send';

/**
 * Graphile Worker's max_attempts for a notification: with its backoff (e^min(n,10) s after the n-th
 * failure) the 10th and last attempt starts about 3.4 h after the first (an SMTP server or Telegram
 * down for a while); then the notification is marked failed.
 */
const NOTIFY_MAX_ATTEMPTS = 10;

/**
 * One notification's sending (webhooks/notify.ts), job key `notification__send:<notificationId>`; no
 * queue: notifications are sent side by side (one slow SMTP server holds no Telegram message).
 */
export function notificationSendJob(notificationId: string | FragmentSqlToken): Job {
  return {
    task: NOTIFY_TASK,
    payload: sql.fragment`json_build_object('notificationId', ${notificationId}::text)`,
    maxAttempts: NOTIFY_MAX_ATTEMPTS,
    jobKey: sql.fragment`${`${NOTIFY_TASK}:`} || ${notificationId}::text`,
  };
}

/**
 * Graphile Worker's max_attempts for a delivery job: a backstop only. With its backoff (e^min(n,10) s
 * after the n-th failure) at most 11 attempts start within 12 h of the first one (the 11th ≈ 9.7 h,
 * a 12th run ≈ 15.8 h); the 12 h deadline in webhooks/deliver.ts is what normally ends the
 * retries: that 12th run starts past it and marks the delivery failed without an attempt. When a
 * run failed before it could make its attempt (a database hiccup), the 11th attempt is the last run
 * and marks the delivery failed itself (attempts = max_attempts). (These figures describe Graphile's
 * backoff for the reader; no code here computes it.)
 */
export const DELIVER_MAX_ATTEMPTS = 12;

/**
 * A store's deliveries run in this many Graphile queues (jobs of one queue run one at a time), so
 * one store's slow receivers hold at most this many delivery slots and never delay another store's.
 */
export const DELIVERY_QUEUES_PER_STORE = 3;

/** One delivery's job key: `webhook__deliver:<deliveryId>`. */
export const deliverJobKey = (deliveryId: string): string => `${DELIVER_TASK}:${deliveryId}`;

/** One attempt at delivering a webhook, in one of its store's delivery queues (`webhooks:<storeId>:<n>`), picked at random. */
export function webhookDeliverJob(deliveryId: string, storeId: string): Job {
  return {
    task: DELIVER_TASK,
    payload: { deliveryId },
    maxAttempts: DELIVER_MAX_ATTEMPTS,
    jobKey: deliverJobKey(deliveryId),
    queueName: `webhooks:${storeId}:${Math.floor(Math.random() * DELIVERY_QUEUES_PER_STORE)}`,
  };
}

/**
 * One attempt at delivering an event to a store's webhook endpoint, in the endpoint's own queue
 * (`webhooks:endpoint:<endpointId>`): its deliveries run one at a time, in the order they were
 * recorded (Graphile takes a queue's due jobs by priority and run_at; webhooks/events.ts makes one
 * statement's events due a microsecond apart), and the next starts as soon as one is done (the
 * NOTIFY of src/db/migrate.ts, not the next poll); an endpoint that fails or
 * hangs holds only its own queue — never another endpoint's or another store's deliveries.
 */
export function endpointDeliverJob(deliveryId: string | FragmentSqlToken, endpointId: string | FragmentSqlToken): Job {
  // Values or fragments over a statement's rows (webhooks/events.ts adds one job per recorded delivery).
  return {
    task: DELIVER_TASK,
    payload: sql.fragment`json_build_object('deliveryId', ${deliveryId}::text)`,
    maxAttempts: DELIVER_MAX_ATTEMPTS,
    jobKey: sql.fragment`${deliverJobKey('')} || ${deliveryId}::text`,
    queueName: sql.fragment`'webhooks:endpoint:' || ${endpointId}::text`,
  };
}

/**
 * The signer's job for one deposit wallet: job key `outgoing__send:<wallet>`, queue
 * `outgoing:<wallet>`, so the wallet's transfers are signed one at a time, in order, each with the
 * next seqno. A second enqueue moves the one job to its `runAt` (sooner or later), unless
 * `preserveRunAt` (the gas wallet's batch window: a top-up planned meanwhile joins the waiting job).
 */
export function outgoingSendJob(wallet: string, runAt?: Date, preserveRunAt = false): Job {
  return {
    task: SEND_TASK,
    payload: { wallet },
    jobKey: `${SEND_TASK}:${wallet}`,
    queueName: `outgoing:${wallet}`,
    ...(runAt ? { runAt } : {}),
    ...(preserveRunAt ? { jobKeyMode: 'preserve_run_at' as const } : {}),
  };
}

/**
 * The sweep of one sale when its refund window ends (`runAt`: payments.refundable_until), enqueued
 * in the completing transaction; job key `treasury__sweep_sale:<paymentId>`.
 */
export function saleSweepJob(paymentId: string, runAt: Date): Job {
  return { task: SALE_SWEEP_TASK, payload: { paymentId }, jobKey: `${SALE_SWEEP_TASK}:${paymentId}`, runAt };
}
