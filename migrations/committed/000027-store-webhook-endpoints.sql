--! Previous: sha1:2f03618151418e04fc5f9aa74ae4391e782aeb38
--! Hash: sha1:8e43679ef729b3b9bc2373c7298efa16f703a7ac
--! Message: store webhook endpoints

-- Store webhook endpoints (docs/API.md, Store webhook endpoints; CONTRACT §11): a store's own URLs that
-- hear the events they subscribe to. Their deliveries are rows of the one delivery log,
-- webhook_deliveries, sent by the same webhook__deliver job as the seed's per-payment webhookURL.

create table webhook_endpoints (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references stores (id) on delete cascade,
  url text not null,
  events text[] not null,
  created_at timestamptz not null,
  constraint webhook_endpoints_events_are_known check (
    cardinality(events) > 0 and events <@ array['payment.pending', 'payment.completed', 'payment.expired', 'payment.cancelled',
      'payment.money_received', 'refund.confirmed', 'refund.failed', 'sweep.confirmed', 'sweep.failed']::text[])
);
comment on table webhook_endpoints is 'A store''s webhook endpoints: a URL and the event types it hears. Deleting one deletes its delivery log; its waiting deliveries are never sent. Every endpoint hears ping (POST /v1/webhook-endpoints/{id}/test) whether it lists it or not.';
comment on column webhook_endpoints.url is 'Where the events are POSTed: public HTTPS (the rules of a payment''s webhookURL), checked again at each delivery.';
comment on column webhook_endpoints.events is 'The event types it hears (payment.pending, payment.completed, payment.expired, payment.cancelled, payment.money_received, refund.confirmed, refund.failed, sweep.confirmed, sweep.failed).';
create index webhook_endpoints_by_store on webhook_endpoints (store_id, created_at);
comment on index webhook_endpoints_by_store is 'A store''s endpoints (the list, and who hears an event of the store).';

alter table webhook_deliveries
  add column endpoint_id uuid references webhook_endpoints (id) on delete cascade,
  add column event_id uuid,
  add column payload jsonb,
  alter column payment_id drop not null;
comment on column webhook_deliveries.endpoint_id is 'The store''s webhook endpoint it goes to; null for the seed''s per-payment webhookURL (a payment''s completed webhook).';
comment on column webhook_deliveries.event_id is 'The event''s id (the body''s eventID): the same for every endpoint that hears the event and for a redelivery of it, so a receiver can drop a repeat. Null for the per-payment webhookURL, whose body has none.';
comment on column webhook_deliveries.payload is 'The event''s payload as it was when the event happened (the body''s payload, sent as is on every attempt). Null for the per-payment webhookURL, whose payload is built from the payment at each attempt.';
comment on column webhook_deliveries.payment_id is 'The payment the event is about; null for an event about no payment (ping).';
alter table webhook_deliveries drop constraint webhook_deliveries_event_is_known;
alter table webhook_deliveries add constraint webhook_deliveries_event_is_known check (event in ('payment.pending', 'payment.completed', 'payment.expired',
  'payment.cancelled', 'payment.money_received', 'refund.confirmed', 'refund.failed', 'sweep.confirmed', 'sweep.failed', 'ping'));
alter table webhook_deliveries drop constraint webhook_deliveries_reason_is_known;
alter table webhook_deliveries add constraint webhook_deliveries_reason_is_known check (reason in ('completed', 'redelivery', 'event', 'test'));
alter table webhook_deliveries add constraint webhook_deliveries_endpoint_event_is_whole check (
  case when endpoint_id is null
    then payment_id is not null and event = 'payment.completed' and reason in ('completed', 'redelivery') and event_id is null and payload is null
    else event_id is not null and payload is not null and reason in ('event', 'test', 'redelivery') end);
comment on column webhook_deliveries.reason is 'Why it was recorded: completed (the payment completed: its webhookURL), event (an event an endpoint hears), test (POST /v1/webhook-endpoints/{id}/test: a ping), redelivery (the merchant asked to send one again).';
comment on column webhook_deliveries.event is 'The event type: payment.completed for the per-payment webhookURL; any type an endpoint hears, or ping.';
create index webhook_deliveries_by_endpoint on webhook_deliveries (endpoint_id, created_at desc) where endpoint_id is not null;
comment on index webhook_deliveries_by_endpoint is 'GET /v1/webhook-endpoints/{id}/deliveries, newest first.';

comment on column audit_log.actor is 'Who: the dashboard user''s email at the time, "cli" for the operator''s command line, or an API token''s jti (a refund made through POST /v1/payments/{id}/refunds: detail.via is api).';
comment on column audit_log.action is 'What, as noun.verb: refund.create, refund.refused, webhook.redeliver, webhook.refused, token.issue, token.revoke, webhook_key.rotate, webhook_endpoint.add, webhook_endpoint.test, webhook_endpoint.delete, member.role_change, member.remove, invitation.create, invitation.accept, passkey.add, passkey.remove (detail.sessions: the sessions it had opened, ended), password.change (detail.sessions: the other sessions ended), password.reset (an invitation that reset it; detail.sessions), session.sign_in (detail.method: password or passkey), session.sign_out, session.sign_out_everywhere, store.update (name, display name, logo, accent colour, payment methods: detail holds the new values), treasury.change (detail: from, to).';
