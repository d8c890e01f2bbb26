--! Previous: sha1:baed6a0a1576e710891db2caf15a415e605f9365
--! Hash: sha1:55057e41ea56c76c5b1b8e18435b34ba90552eeb
--! Message: subscriptions

-- Subscriptions (issue 45; docs/API.md, Subscriptions; CONTRACT §12): a store's plans, its customers'
-- subscriptions to them, and each subscription's append-only ledger. No crypto wallet on TON can be
-- charged without its owner's signature, so each period is an ordinary payment (payments.subscription_id)
-- whose money counts as credit in the plan's currency, and the billing engine charges a period from
-- that credit (src/subscriptions/engine.ts).

create table plans (
  id uuid primary key,
  store_id uuid not null references stores (id) on delete cascade,
  name text not null,
  currency text not null,
  amount numeric not null,
  interval_unit text not null,
  interval_count integer not null default 1,
  trial_days integer not null default 0,
  grace_days integer not null default 3,
  reminder_days integer not null default 3,
  created_at timestamptz not null,
  archived_at timestamptz,
  constraint plans_name_is_not_blank check (length(btrim(name)) between 1 and 200),
  constraint plans_amount_positive check (amount > 0),
  constraint plans_interval_unit_is_known check (interval_unit in ('day', 'week', 'month', 'year')),
  constraint plans_interval_count_in_range check (interval_count between 1 and 365),
  constraint plans_trial_days_in_range check (trial_days between 0 and 365),
  constraint plans_grace_days_in_range check (grace_days between 0 and 90),
  constraint plans_reminder_days_in_range check (reminder_days between 0 and 90)
);
create index plans_by_store on plans (store_id, created_at desc, id desc);
comment on table plans is 'A store''s subscription plans: what a period costs and how long it lasts. Archiving a plan keeps its subscribers; a price change applies from the next period charged.';
comment on column plans.name is 'The plan''s name, as the shop shows it to its customers.';
comment on column plans.currency is 'The unit of the price: a fiat code or a coin ticker (as a payment''s currency); a subscription''s credit is kept in it.';
comment on column plans.amount is 'The price of one period, in currency; each period is charged at the price of the moment it is charged.';
comment on column plans.interval_unit is 'The period''s calendar unit: day, week, month or year (a month after Jan 31 ends on the last day of February).';
comment on column plans.interval_count is 'How many interval_units a period lasts (1–365).';
comment on column plans.trial_days is 'Free days before the first period is charged (a subscription may set its own).';
comment on column plans.grace_days is 'Days a subscription stays past_due, waiting for its renewal to be paid, before it expires.';
comment on column plans.reminder_days is 'Days before a period ends that the store is told the renewal is coming when the credit will not cover it (0: no reminder).';
comment on column plans.created_at is 'When the plan was made.';
comment on column plans.archived_at is 'When the shop archived the plan (no new subscriptions; its subscribers go on); null while open.';

create table subscriptions (
  id uuid primary key,
  store_id uuid not null references stores (id) on delete cascade,
  plan_id uuid not null references plans (id),
  customer_reference text not null,
  customer_email text,
  customer_telegram_user_id bigint,
  status text not null,
  anchor_at timestamptz not null,
  periods_charged integer not null default 0,
  current_period_end timestamptz not null,
  credit numeric not null default 0,
  cancel_at_period_end boolean not null default false,
  renewal_payment_id uuid references payments (id),
  reminded_for timestamptz,
  next_run_at timestamptz,
  portal_token text not null unique,
  created_at timestamptz not null,
  cancelled_at timestamptz,
  expired_at timestamptz,
  constraint subscriptions_status_is_known check (status in ('trialing', 'active', 'past_due', 'expired', 'cancelled')),
  constraint subscriptions_customer_reference_length check (length(customer_reference) between 1 and 200),
  constraint subscriptions_periods_charged_not_negative check (periods_charged >= 0),
  constraint subscriptions_ended_not_run check (status not in ('expired', 'cancelled') or next_run_at is null)
);
create index subscriptions_by_store on subscriptions (store_id, created_at desc, id desc);
create index subscriptions_by_customer on subscriptions (store_id, customer_reference);
create index subscriptions_due on subscriptions (next_run_at) where next_run_at is not null;
comment on table subscriptions is 'A customer''s subscription to a store''s plan: a period at a time, charged from its credit (money paid, in the plan''s currency) by the billing engine (src/subscriptions/engine.ts).';
comment on column subscriptions.customer_reference is 'The shop''s own reference for its customer (a user id of the shop''s).';
comment on column subscriptions.customer_email is 'The customer''s email, if the shop gave it.';
comment on column subscriptions.customer_telegram_user_id is 'The customer''s Telegram user id, if the shop gave it.';
comment on column subscriptions.status is 'trialing (free days before the first period), active (the current period is paid), past_due (a period is due and unpaid; its renewal payment is open), expired (unpaid after the plan''s grace days), cancelled. expired and cancelled are final.';
comment on column subscriptions.anchor_at is 'The start of the first charged period (the trial''s end, or the creation): every period end is counted from it by the calendar, never from the previous, clamped, end.';
comment on column subscriptions.periods_charged is 'How many periods have been charged; the current period ends at anchor_at + periods_charged periods (anchor_at itself before the first).';
comment on column subscriptions.current_period_end is 'The end of the paid (or trial) period: the next period is due then.';
comment on column subscriptions.credit is 'Money paid and not yet charged, in the plan''s currency: the sum of the subscription''s ledger (subscription_ledger), kept here for the engine.';
comment on column subscriptions.cancel_at_period_end is 'The shop asked to cancel at the end of the current period (POST /v1/subscriptions/{id}/cancel with atPeriodEnd).';
comment on column subscriptions.renewal_payment_id is 'The last renewal payment the engine opened for what the credit lacks: reused while it can be paid, never a second one beside it.';
comment on column subscriptions.reminded_for is 'The period end the store was last told of (subscription.renewal_upcoming): once per period, whatever restarts and reruns happen.';
comment on column subscriptions.next_run_at is 'When the billing engine next has something to do for the subscription (by the billing clock); null once it has ended.';
comment on column subscriptions.portal_token is 'The secret of the customer''s portal URL ({checkout_base_url}/s/{token}).';
comment on column subscriptions.created_at is 'When the subscription was made.';
comment on column subscriptions.cancelled_at is 'When it was cancelled (at once, or at its period''s end).';
comment on column subscriptions.expired_at is 'When it expired (unpaid past its grace days).';

create table subscription_ledger (
  id uuid primary key,
  subscription_id uuid not null references subscriptions (id) on delete cascade,
  store_id uuid not null references stores (id) on delete cascade,
  kind text not null,
  amount numeric not null,
  currency text not null,
  balance_after numeric not null,
  period_start timestamptz,
  period_end timestamptz,
  payment_id uuid references payments (id),
  actor text not null,
  note text,
  created_at timestamptz not null,
  constraint subscription_ledger_kind_is_known check (kind in ('credit', 'charge', 'adjustment', 'refund')),
  constraint subscription_ledger_charge_has_period check (kind <> 'charge' or (period_start is not null and period_end is not null))
);
create index subscription_ledger_by_subscription on subscription_ledger (subscription_id, created_at, id);
-- A payment's money is credited once, whatever reruns happen.
create unique index subscription_ledger_credit_once on subscription_ledger (payment_id) where kind = 'credit' and payment_id is not null;
-- A period is charged once.
create unique index subscription_ledger_charge_once on subscription_ledger (subscription_id, period_start) where kind = 'charge';
comment on table subscription_ledger is 'Every change of a subscription''s credit, append-only (a trigger refuses updates and deletes): a shop can rebuild every period from it after its webhooks were down.';
comment on column subscription_ledger.kind is 'credit (money of a completed payment), charge (a period charged), adjustment (a manual credit, POST /v1/subscriptions/{id}/credits), refund (money given back).';
comment on column subscription_ledger.amount is 'The change of the credit, in the plan''s currency: positive for credit and adjustment up, negative for a charge or a refund.';
comment on column subscription_ledger.currency is 'The plan''s currency at the time.';
comment on column subscription_ledger.balance_after is 'The subscription''s credit after this row.';
comment on column subscription_ledger.period_start is 'A charge: the start of the period it paid for.';
comment on column subscription_ledger.period_end is 'A charge: the end of the period it paid for.';
comment on column subscription_ledger.payment_id is 'A credit: the completed payment whose counted money it is.';
comment on column subscription_ledger.actor is 'Who: kassa (the billing engine, or a payment''s completion), or the API token''s id (jti) that made a manual credit.';
comment on column subscription_ledger.note is 'Why, in words (a manual credit''s note).';
comment on column subscription_ledger.created_at is 'When it was written (by the billing clock).';

create function subscription_ledger_append_only() returns trigger language plpgsql as $$
begin
  -- A delete cascading from its subscription (or store) is let through; nothing else changes a row.
  if tg_op = 'DELETE' and pg_trigger_depth() > 1 then
    return old;
  end if;
  raise exception 'subscription_ledger is append-only: % refused', tg_op using errcode = 'restrict_violation';
end
$$;
create trigger subscription_ledger_append_only before update or delete on subscription_ledger
  for each row execute function subscription_ledger_append_only();
comment on function subscription_ledger_append_only() is 'Refuses an update or a delete of a subscription_ledger row (a delete cascading from its subscription is let through).';

alter table payments add column subscription_id uuid references subscriptions (id);
create index payments_by_subscription on payments (subscription_id, created_at desc) where subscription_id is not null;
comment on column payments.subscription_id is 'The subscription the payment pays toward: its completed money counts as the subscription''s credit (null for other payments).';
alter table payments drop constraint payments_created_via_is_known;
alter table payments add constraint payments_created_via_is_known check (created_via in ('payments', 'invoice', 'payment_link', 'dashboard', 'subscription'));
comment on column payments.created_via is 'payments: POST /v1/payments; invoice: POST /v1/payments/create; payment_link: a visit of its payment link ({checkout_base_url}/l/{id}); dashboard: a one-off payment made in the dashboard; subscription: a subscription''s period, opened by the billing engine.';

-- The sandbox's billing clock: how far a test (or a shop trying Kassa) moved it ahead of the database's.
create table billing_clock (
  id boolean primary key default true,
  offset_seconds bigint not null default 0,
  constraint billing_clock_one_row check (id)
);
comment on table billing_clock is 'Sandbox only: how far POST /sandbox/v1/clock/advance moved the clock subscriptions bill by ahead of the database''s clock. Production bills by the database''s clock alone.';
comment on column billing_clock.offset_seconds is 'Seconds added to the database''s clock.';

-- The store's webhook endpoints hear the subscription events too.
alter table webhook_endpoints drop constraint webhook_endpoints_events_are_known;
alter table webhook_endpoints add constraint webhook_endpoints_events_are_known check (
  cardinality(events) > 0 and events <@ array['payment.pending', 'payment.completed', 'payment.expired', 'payment.cancelled',
    'payment.money_received', 'refund.confirmed', 'refund.failed', 'sweep.confirmed', 'sweep.failed', 'money.unmatched', 'money.assigned',
    'subscription.created', 'subscription.renewed', 'subscription.renewal_upcoming', 'subscription.payment_due', 'subscription.past_due',
    'subscription.expired', 'subscription.cancelled']::text[]);
alter table webhook_deliveries drop constraint webhook_deliveries_event_is_known;
alter table webhook_deliveries add constraint webhook_deliveries_event_is_known check (event in ('payment.pending', 'payment.completed', 'payment.expired',
  'payment.cancelled', 'payment.money_received', 'refund.confirmed', 'refund.failed', 'sweep.confirmed', 'sweep.failed', 'money.unmatched', 'money.assigned',
  'subscription.created', 'subscription.renewed', 'subscription.renewal_upcoming', 'subscription.payment_due', 'subscription.past_due',
  'subscription.expired', 'subscription.cancelled', 'ping'));
