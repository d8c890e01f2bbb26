// Store events (docs/API.md, Store webhook endpoints): what a store's webhook endpoints hear. An event is
// recorded as one `webhook_deliveries` row per endpoint that listens to its type — the one delivery
// log, sent by the same webhook__deliver job, signed and retried as the seed's webhook — and its job
// is added in the caller's transaction: the transaction of the change the event tells of.
//
// The parts that cause events say what happened with a SQL source of rows (payments/events.ts for a
// payment's, payments/treasuryTransfers.ts for unmatched money, treasury/events.ts for a refund's or a
// sweep's, subscriptions/engine.ts for a subscription's); this module imports none of them. It keeps
// the catalogue of the types a store can hear (EVENT_TYPES), which endpoints subscribe to and the
// API and the dashboard list, and the topics a member may be told of.
import { sql, z, type Db, type FragmentSqlToken } from '../db/pool.ts';
import { addJobCall } from '../worker/enqueue.ts';
import { endpointDeliverJob, notificationSendJob } from '../worker/jobs.ts';

/** The event types an endpoint can listen to, in the order docs/API.md lists them. */
export const EVENT_TYPES = [
  'payment.pending',
  'payment.completed',
  'payment.expired',
  'payment.cancelled',
  'payment.money_received',
  'refund.confirmed',
  'refund.failed',
  'sweep.confirmed',
  'sweep.failed',
  'money.unmatched',
  'money.assigned',
  'subscription.created',
  'subscription.renewed',
  'subscription.renewal_upcoming',
  'subscription.payment_due',
  'subscription.past_due',
  'subscription.expired',
  'subscription.cancelled',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * What a member may be told of (notification_choices.events), each the events it stands for, as a
 * SQL condition over `event` (the event) and `c` (the member's choices). A sale's threshold applies
 * to sales priced in its currency; a sale priced in another currency is always told.
 */
export const NOTIFICATION_TOPICS = ['sale', 'refund_done', 'refund_failed', 'late_money', 'transfer_failed', 'subscription_past_due'] as const;
export type NotificationTopic = (typeof NOTIFICATION_TOPICS)[number];

const TOLD = sql.fragment`case event.type
    when 'payment.completed' then 'sale' = any(c.events) and (c.sale_at_least is null or event.payload->>'currency' is distinct from c.sale_currency
      or (event.payload->>'amount')::numeric >= c.sale_at_least)
    when 'refund.confirmed' then 'refund_done' = any(c.events)
    when 'refund.failed' then 'refund_failed' = any(c.events)
    when 'payment.money_received' then 'late_money' = any(c.events) and event.payload->'transfer'->>'effect' in ('after_expiry', 'after_cancel')
    when 'money.unmatched' then 'late_money' = any(c.events)
    when 'sweep.failed' then 'transfer_failed' = any(c.events)
    when 'subscription.past_due' then 'subscription_past_due' = any(c.events)
    else false end`;

/** Sent only by `POST /v1/webhook-endpoints/{id}/test`, to that endpoint, whatever it listens to. */
export const PING = 'ping';

/**
 * The common table expressions that record the events a source describes — one delivery per
 * listening endpoint — and add each delivery's job, for a statement of the caller's that may begin
 * with its own (data-modifying) CTEs the source reads: `with due as (update …), ${eventCtes(…)} select …`.
 * `source` is a query whose rows are `(store_id uuid, payment_id uuid, type text, payload jsonb)`: one
 * event each; each gets its own eventID, shared by its endpoints. Deliveries and jobs follow the
 * source's row order, so an endpoint gets the events of one statement in that order (its deliveries
 * run one at a time: worker/jobs.ts): the n-th event's jobs are due n microseconds after now(), since
 * Graphile Worker 0.18 takes a queue's next job by priority and run_at only (its get_jobs has no
 * tie-break by id: jobs of one transaction, all due at now(), could be taken in any order). `event_jobs` has a row per job added (none when no endpoint
 * listens: no NOTIFY).
 *
 * The same events make the members' notifications (issue 47 item 7): one `notifications` row per
 * (event, member, channel) the member chose (notification_choices; Telegram only once their chat is
 * linked and the store has a bot), each with its notification__send job, in `event_jobs` too.
 */
export function eventCtes(source: FragmentSqlToken, now: Date): FragmentSqlToken {
  return sql.fragment`
    event as materialized (
      select s.store_id, s.payment_id, s.type, s.payload, gen_random_uuid() as event_id, row_number() over () as n from (${source}) s
    ),
    event_delivery as (
      insert into webhook_deliveries (endpoint_id, payment_id, event, event_id, payload, url, reason, created_at)
      select e.id, event.payment_id, event.type, event.event_id, event.payload, e.url, 'event', ${sql.timestamp(now)}
      from event join webhook_endpoints e on e.store_id = event.store_id and event.type = any(e.events)
      returning id, endpoint_id, event_id
    ),
    event_notification as (
      insert into notifications (store_id, user_id, channel, event, event_id, payment_id, payload, created_at)
      select event.store_id, c.user_id, ch.channel, event.type, event.event_id, event.payment_id, event.payload, ${sql.timestamp(now)}
      from event join notification_choices c on c.store_id = event.store_id join stores s on s.id = event.store_id
        cross join lateral (values ('email', c.by_email), ('telegram', c.by_telegram and c.telegram_chat_id is not null and s.notifications_bot_token is not null)) ch (channel, chosen)
      where ch.chosen and ${TOLD}
      order by event.n, c.user_id, ch.channel
      returning id
    ),
    event_jobs as materialized (
      select ${addJobCall({ ...endpointDeliverJob(sql.fragment`d.id`, sql.fragment`d.endpoint_id`), runAt: sql.fragment`now() + d.n * interval '1 microsecond'` })} as job
      from (select d.id, d.endpoint_id, event.n from event_delivery d join event on event.event_id = d.event_id order by event.n offset 0) d
      union all
      select ${addJobCall(notificationSendJob(sql.fragment`n.id`))} as job from event_notification n
    )`;
}

/**
 * Records the events a source describes and adds their jobs, in the caller's transaction, in one
 * statement (see `eventCtes`). Returns how many jobs it added (deliveries and notifications).
 */
export async function emitEvents(tx: Db, source: FragmentSqlToken, now: Date): Promise<number> {
  return tx.oneFirst(sql.type(z.object({ n: z.number() }))`with ${eventCtes(source, now)} select count(*)::int as n from event_jobs`);
}
