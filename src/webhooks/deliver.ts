// One run of the webhook__deliver job: one attempt to deliver one webhook (docs/API.md, Webhooks) —
// a payment's completed webhook to its webhookURL, or an event to a store's webhook endpoint
// (webhooks/events.ts); both follow every rule below.
//
// - The body is built and signed afresh on every attempt, with the active key and a new signAt, so a
//   retry hours later still passes the receiver's 30-second check (and a key rotation between two
//   attempts shows up as a new kid). It names its store (`payload.storeID`: the endpoint's store for
//   an event, the payment's for the webhookURL), read here at each attempt, so a delivery recorded
//   before Kassa signed the store in carries it too.
// - The attempt row is written (and committed) *before* the request is sent, and completed after.
//   A worker killed mid-request leaves it with finished_at null; Graphile Worker runs the still
//   locked job again once its lock is released — within minutes by worker__unlock_dead (worker
//   heartbeats), at the latest by Graphile's own 4-hour lock timeout — and that run marks the row
//   interrupted and makes the next attempt, numbered after it. At least once, never silence.
// - Success is a 2xx. Anything else (3xx — not followed —, 4xx, 5xx, timeout, connection error, an
//   address refused by the SSRF guard) throws, and Graphile Worker schedules the retry (its fail_job
//   sets the job's run_at). When Graphile will run the job no more (attempts = max_attempts: its
//   get_job takes only attempts < max_attempts), the delivery is marked failed and the run ends
//   without throwing.
// - Retry timing is Graphile's alone; this file never predicts it. An attempt's next_retry_at is
//   recorded after Graphile has rescheduled: by the run that makes the next attempt, from the
//   run_at Graphile gave that run (helpers.job.run_at). While a retry waits, the delivery log reads
//   the job's run_at live (webhooks/deliveries.ts). Why not at failure time: the job's run_at is
//   set by Graphile's fail_job after this function has thrown, so the failing run cannot read it,
//   only recompute it — a copy of Graphile's formula that must follow its releases.
// - No attempt starts later than 12 h after the first one — our own rule, checked when a run
//   starts: a run that starts past the deadline (Graphile's backoff put it there, or a worker was
//   down, or a lock expired late) fails the delivery without an attempt. Until then the log shows
//   no next retry for a job due past the deadline.
// - A store holds at most STORE_DELIVERY_SLOTS attempts in flight at once, across every worker (issue
//   48.9): before an attempt the run counts its store's (the attempts started and not finished,
//   started less than the timeout and a margin ago), under a transaction lock of that store, and at
//   the share it makes no attempt: it adds its job again, STORE_BUSY_RETRY_MS later, and ends — so
//   the Graphile slot goes back at once, Graphile's attempts and backoff untouched. One store's
//   hanging receivers (its webhookURLs and its up to 16 endpoints) thus hold at most that many of a
//   worker's 20 delivery slots, never every one: the other stores' deliveries find slots free.
// - The clock is deps.now (injected); durations are measured, not derived from the clock.
import type { Config } from '../config.ts';
import { sql, z, type DatabasePool } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { webhookAttempts, webhookDeliveriesDeferred } from '../metrics.ts';
import { ExternalFailure } from '../errors.ts';
import { activeSigningKey } from './keys.ts';
import { DEFAULT_TIMEOUT_MS, postWebhook, type PostWebhookResult } from './send.ts';
import { buildEventBody, buildWebhookBody, signBody } from './sign.ts';
import { enqueue } from '../worker/enqueue.ts';
import { endpointDeliverJob, webhookDeliverJob } from '../worker/jobs.ts';

/** No attempt starts later than this after the first attempt (docs/API.md, Webhooks: 12 hours). */
export const DELIVERY_WINDOW_MS = 12 * 60 * 60 * 1000;

/**
 * At most this many attempts of one store's deliveries are in flight at once, across the deployment:
 * its share of a worker's 20 delivery slots (src/server.ts), so that two (or three) stores' hanging
 * receivers never hold every slot (issue 48.9).
 */
export const STORE_DELIVERY_SLOTS = 5;

/** A delivery that found its store at its share is tried again this much later (without an attempt). */
const STORE_BUSY_RETRY_MS = 2_000;

/** An attempt still unfinished this long after its start is not counted in flight (its worker died; the next run marks it interrupted). */
const IN_FLIGHT_MARGIN_MS = 30_000;

export const INTERRUPTED_ERROR = 'interrupted: the worker stopped before this attempt finished; its outcome is unknown';

interface DeliverDeps {
  config: Pick<Config, 'webhookAllowInsecure'>;
  pool: DatabasePool;
  log: Logger;
  now: () => Date;
  /** Per-attempt deadline; default 30 s (docs/API.md, Webhooks). Tests shorten it. */
  webhookTimeoutMs?: number;
}

/** What deliverWebhook needs of Graphile Worker's helpers: the job's attempt counters. */
interface DeliverHelpers {
  job: {
    /** Graphile Worker's count of runs of this job, this one included. */
    attempts: number;
    max_attempts: number;
    /** When Graphile Worker scheduled this run (its fail_job's backoff for a retry). */
    run_at: Date;
  };
}

type DeliverOutcome =
  /** A 2xx answer. */
  | { result: 'delivered'; attempt: number }
  /** Retries are over (deadline or max attempts); the delivery is marked failed. */
  | { result: 'failed'; attempt: number | null }
  /** Nothing to do: already delivered or failed, or the delivery no longer exists. */
  | { result: 'skipped'; reason: 'delivered' | 'failed' | 'missing' }
  /** Its store had STORE_DELIVERY_SLOTS attempts in flight: no attempt; its job added again, STORE_BUSY_RETRY_MS later. */
  | { result: 'deferred'; inFlight: number };

/**
 * Thrown after a failed attempt that will be retried: Graphile Worker records it and backs off. The
 * receiver's fault, not Kassa's: an ExternalFailure (one warn line, no stack).
 */
class WebhookAttemptFailed extends ExternalFailure {
  override name = 'WebhookAttemptFailed';
  readonly deliveryId: string;
  readonly attempt: number;
  constructor(deliveryId: string, attempt: number, error: string) {
    super(`webhook delivery ${deliveryId} attempt ${attempt} failed: ${error}`);
    this.deliveryId = deliveryId;
    this.attempt = attempt;
  }
}

const target = z.object({
  id: z.string(),
  payment_id: z.string().nullable(),
  /** The store the webhook is for (the endpoint's, or the payment's): signed into the body as `storeID`. */
  store_id: z.string(),
  url: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  first_attempt_at: z.date().nullable(),
  payment_status: z.string().nullable(),
  metadata: z.record(z.string(), z.string()).nullable(),
  order_id: z.string().nullable(),
  last_attempt: z.number(),
  /** A store endpoint's event (webhooks/events.ts): its type, id and payload; null for the per-payment webhookURL. */
  endpoint_id: z.string().nullable(),
  event: z.string(),
  event_id: z.string().nullable(),
  payload: z.unknown(),
});

type Start =
  | { kind: 'attempt'; attempt: number; paymentId: string | null; url: string; body: string; headers: Record<string, string> }
  | { kind: 'done'; outcome: DeliverOutcome };

/**
 * Makes one delivery attempt of `deliveryId` (see the top of this file). Resolves with the outcome,
 * or throws WebhookAttemptFailed when the attempt failed and another one will follow.
 */
export async function deliverWebhook(deps: DeliverDeps, deliveryId: string, helpers: DeliverHelpers): Promise<DeliverOutcome> {
  const log = deps.log.child({ deliveryId });
  const startedAt = deps.now();
  // The key is read (or created, the very first time) outside the transaction below.
  const key = await activeSigningKey(deps.pool, startedAt);

  // An attempt left unfinished by an earlier run can only be one that was interrupted: the job is
  // locked by this run, and no other job delivers this delivery. Data-modifying CTEs all see the
  // statement's snapshot, so the attempt inserted beside this update is never marked by it.
  const markInterrupted = sql.fragment`
    update webhook_attempts set error = ${INTERRUPTED_ERROR}
    where delivery_id = ${deliveryId} and finished_at is null and error is null
  `;

  const start = await deps.pool.transaction(async (tx): Promise<Start> => {
    const delivery = await tx.maybeOne(sql.type(target)`
      select d.id, d.payment_id, coalesce(e.store_id, p.store_id) as store_id, d.url, d.status, d.first_attempt_at,
             p.status as payment_status, p.metadata, p.order_id,
             (select coalesce(max(a.attempt), 0)::int from webhook_attempts a where a.delivery_id = d.id) as last_attempt,
             d.endpoint_id, d.event, d.event_id, d.payload
      from webhook_deliveries d left join payments p on p.id = d.payment_id left join webhook_endpoints e on e.id = d.endpoint_id
      where d.id = ${deliveryId}
      for update of d
    `);
    if (delivery === null) return { kind: 'done', outcome: { result: 'skipped', reason: 'missing' } };
    if (delivery.status !== 'pending') return { kind: 'done', outcome: { result: 'skipped', reason: delivery.status } };

    const failNow = async (why: string): Promise<Start> => {
      await tx.query(sql.typeAlias('void')`
        with interrupted as (${markInterrupted})
        update webhook_deliveries set status = 'failed', failed_at = ${sql.timestamp(startedAt)} where id = ${deliveryId}
      `);
      log.warn({ paymentId: delivery.payment_id }, `webhook delivery failed: ${why}`);
      return { kind: 'done', outcome: { result: 'failed', attempt: null } };
    };
    // The per-payment webhookURL tells of completion only; an endpoint's event tells what happened when it happened.
    if (delivery.endpoint_id === null && delivery.payment_status !== 'completed') return failNow(`the payment is ${delivery.payment_status}, not completed`);
    if (delivery.first_attempt_at !== null && startedAt.getTime() - delivery.first_attempt_at.getTime() > DELIVERY_WINDOW_MS) {
      return failNow('no attempt may start more than 12 h after the first one');
    }

    // The store's share of the delivery slots: counted under a lock of the store held to this
    // transaction's end, so two runs of one store cannot both take its last slot.
    await tx.query(sql.typeAlias('void')`select from pg_advisory_xact_lock(hashtextextended(${`webhooks:store:${delivery.store_id}`}, 0))`);
    const inFlight = await tx.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n
      from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
        left join payments p on p.id = d.payment_id left join webhook_endpoints e on e.id = d.endpoint_id
      where a.finished_at is null and a.error is null
        and a.started_at > ${sql.timestamp(new Date(startedAt.getTime() - (deps.webhookTimeoutMs ?? DEFAULT_TIMEOUT_MS) - IN_FLIGHT_MARGIN_MS))}
        and a.delivery_id <> ${deliveryId} and coalesce(e.store_id, p.store_id) = ${delivery.store_id}
    `);
    if (inFlight >= STORE_DELIVERY_SLOTS) {
      // Its own queue again (an endpoint's keeps its events in order), with the same job key: Graphile
      // adds a new job beside this locked one, which ends without a retry.
      const job = delivery.endpoint_id !== null ? endpointDeliverJob(deliveryId, delivery.endpoint_id) : webhookDeliverJob(deliveryId, delivery.store_id);
      await enqueue(tx, { ...job, runAt: new Date(startedAt.getTime() + STORE_BUSY_RETRY_MS) });
      return { kind: 'done', outcome: { result: 'deferred', inFlight } };
    }

    const attempt = delivery.last_attempt + 1;
    const body =
      delivery.event_id !== null
        ? buildEventBody({ type: delivery.event, eventId: delivery.event_id, storeId: delivery.store_id, payload: delivery.payload }, startedAt)
        : buildWebhookBody(
            { paymentId: delivery.payment_id!, storeId: delivery.store_id, metadata: delivery.metadata ?? {}, orderId: delivery.order_id },
            startedAt,
          );
    const headers = { 'Content-Type': 'application/json', 'X-Signature': signBody(body, key.secretKey), 'X-Signature-Kid': key.kid };
    // The previous attempt, if it failed, was retried by this run: Graphile scheduled it for run_at.
    await tx.query(sql.typeAlias('void')`
      with interrupted as (${markInterrupted}),
      retried as (
        update webhook_attempts set next_retry_at = ${sql.timestamp(helpers.job.run_at)}
        where delivery_id = ${deliveryId} and attempt = ${delivery.last_attempt}
          and finished_at is not null and error is not null and next_retry_at is null
      ),
      recorded as (
        insert into webhook_attempts (delivery_id, attempt, started_at, kid, signed_at)
        values (${deliveryId}, ${attempt}, ${sql.timestamp(startedAt)}, ${key.kid}, ${sql.timestamp(startedAt)})
      )
      update webhook_deliveries
      set attempts = ${attempt}, first_attempt_at = coalesce(first_attempt_at, ${sql.timestamp(startedAt)}),
          last_attempt_at = ${sql.timestamp(startedAt)}
      where id = ${deliveryId}
    `);
    return { kind: 'attempt', attempt, paymentId: delivery.payment_id, url: delivery.url, body, headers };
  });
  if (start.kind === 'done') {
    if (start.outcome.result === 'deferred') {
      webhookDeliveriesDeferred.inc();
      log.debug({ inFlight: start.outcome.inFlight }, 'webhook delivery deferred: its store has its share of the delivery slots in flight');
    }
    return start.outcome;
  }

  const { attempt } = start;
  const sent: PostWebhookResult = await postWebhook({
    url: start.url,
    body: start.body,
    headers: start.headers,
    allowInsecure: deps.config.webhookAllowInsecure,
    timeoutMs: deps.webhookTimeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  const finishedAt = deps.now();
  const error = sent.ok ? null : (sent.error ?? `HTTP ${sent.status ?? '?'}`);
  // Graphile Worker runs the job again only while attempts < max_attempts (its get_job).
  const retried = !sent.ok && helpers.job.attempts < helpers.job.max_attempts;

  // One statement (atomic on its own): the attempt's outcome and, unless a retry follows, the delivery's.
  const at = sql.timestamp(finishedAt);
  const finishAttempt = sql.fragment`
    update webhook_attempts
    set finished_at = ${at}, duration_ms = ${sent.durationMs}, http_status = ${sent.status ?? null}, error = ${error}
    where delivery_id = ${deliveryId} and attempt = ${attempt}
  `;
  const deliveryUpdate = sent.ok
    ? sql.fragment`status = 'delivered', delivered_at = ${at}`
    : retried
      ? null
      : sql.fragment`status = 'failed', failed_at = ${at}`;
  await deps.pool.query(
    deliveryUpdate === null
      ? sql.typeAlias('void')`${finishAttempt}`
      : sql.typeAlias('void')`
        with finished as (${finishAttempt})
        update webhook_deliveries set ${deliveryUpdate} where id = ${deliveryId} and status = 'pending'
      `,
  );

  webhookAttempts.inc({ outcome: sent.ok ? 'delivered' : sent.status === undefined ? 'network_error' : 'http_error' });
  const fields = { paymentId: start.paymentId, attempt, httpStatus: sent.status ?? null, durationMs: sent.durationMs, kid: start.headers['X-Signature-Kid'] };
  if (sent.ok) {
    log.info(fields, 'webhook delivered');
    return { result: 'delivered', attempt };
  }
  if (!retried) {
    log.warn({ ...fields, error }, 'webhook delivery failed: Graphile Worker will not run the job again (attempts exhausted)');
    return { result: 'failed', attempt };
  }
  // The receiver's fault, not Kassa's: one warn line that says all (the queue's own line drops to
  // debug). When the next attempt runs is Graphile Worker's backoff: the delivery's `nextRetryAt`
  // in the API reads it back from the job once the queue has rescheduled it.
  log.warn(
    { ...fields, error, attemptsLeft: helpers.job.max_attempts - helpers.job.attempts },
    `webhook delivery attempt ${attempt} failed (${error}); Graphile Worker retries it (${helpers.job.max_attempts - helpers.job.attempts} attempts left)`,
  );
  throw new WebhookAttemptFailed(deliveryId, attempt, error ?? 'failed');
}
