--! Previous: sha1:db09eb5d30e6f3cdbcd259299a1c9a4e039ca47a
--! Hash: sha1:baed6a0a1576e710891db2caf15a415e605f9365
--! Message: notifications

-- Notifications (issue 47 item 7): each member of a store chooses what they are told and how — by
-- email (the operator's SMTP server) and by Telegram (a bot the store gives Kassa for this, its
-- token kept here; each member links their chat with a one-time code sent to the bot). The store
-- events that reach webhook endpoints (webhooks/events.ts) make one notification per (event, member,
-- channel), in the transaction of the change; a notification__send job sends it, Graphile Worker
-- retries it, each attempt is logged.

alter table stores add column notifications_bot_token text
  constraint stores_notifications_bot_token_is_a_token check (notifications_bot_token ~ '^[0-9]{1,20}:[A-Za-z0-9_-]{20,100}$');
comment on column stores.notifications_bot_token is 'Secret: the token of the Telegram bot the store gave Kassa to send its members notifications (BotFather''s <bot id>:<secret>). Never shown back, never logged, never in a message; null: no Telegram notifications.';

create table notification_choices (
  store_id uuid not null,
  user_id uuid not null,
  events text[] not null default '{}',
  sale_at_least numeric,
  sale_currency text,
  by_email boolean not null default false,
  by_telegram boolean not null default false,
  telegram_chat_id bigint,
  telegram_code_hash bytea,
  telegram_code_expires_at timestamptz,
  updated_at timestamptz not null,
  primary key (store_id, user_id),
  foreign key (store_id, user_id) references store_members (store_id, user_id) on delete cascade,
  constraint notification_choices_events_are_known check (events <@ array['sale', 'refund_done', 'refund_failed', 'late_money', 'transfer_failed']::text[]),
  constraint notification_choices_sale_threshold check ((sale_at_least is null) = (sale_currency is null) and (sale_at_least is null or sale_at_least > 0)),
  constraint notification_choices_code_is_sha256 check (telegram_code_hash is null or length(telegram_code_hash) = 32),
  constraint notification_choices_code_expires check ((telegram_code_hash is null) = (telegram_code_expires_at is null))
);
comment on table notification_choices is 'What a member of a store is told, and how (the dashboard''s Notifications page). A member without a row is told nothing. Removed with the membership.';
comment on column notification_choices.store_id is 'The store the member is told of.';
comment on column notification_choices.user_id is 'The member (dashboard_users.id): a member of the store (store_members).';
comment on column notification_choices.events is 'What the member is told of: sale (a payment completed), refund_done, refund_failed, late_money (money after a payment expired or was cancelled, and unmatched money), transfer_failed (a transfer of the store''s money out of Kassa failed).';
comment on column notification_choices.sale_at_least is 'Only sales of at least this amount, in sale_currency (a sale priced in another currency is always told); null: every sale.';
comment on column notification_choices.sale_currency is 'The currency of sale_at_least (a payment''s currency: USD, EUR, TON …).';
comment on column notification_choices.by_email is 'Told by email, at the member''s sign-in address (needs SMTP_URL).';
comment on column notification_choices.by_telegram is 'Told by Telegram, through the store''s notifications bot, in telegram_chat_id.';
comment on column notification_choices.telegram_chat_id is 'The member''s chat with the store''s bot, learnt from the /start <code> they sent it; null until linked.';
comment on column notification_choices.telegram_code_hash is 'SHA-256 of the one-time code the member sends the bot to link their chat; the code is shown once and never stored. Null once used.';
comment on column notification_choices.telegram_code_expires_at is 'The code is refused after this (15 minutes after it was made); a new code replaces it.';
comment on column notification_choices.updated_at is 'When the member last changed these choices or linked their chat.';

create table notifications (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references stores (id) on delete cascade,
  user_id uuid not null references dashboard_users (id) on delete cascade,
  channel text not null constraint notifications_channel_is_known check (channel in ('email', 'telegram')),
  event text not null,
  event_id uuid not null,
  payment_id uuid,
  payload jsonb not null,
  status text not null default 'pending' constraint notifications_status_is_known check (status in ('pending', 'sent', 'failed')),
  attempts integer not null default 0,
  created_at timestamptz not null,
  sent_at timestamptz,
  failed_at timestamptz,
  unique (event_id, user_id, channel)
);
comment on table notifications is 'One message to one member by one channel, about one store event (the event the webhook endpoints get: same event_id and payload). Sent by the notification__send job, retried by Graphile Worker; each attempt is in notification_attempts.';
comment on column notifications.id is 'The notification''s id (the notification__send job''s payload).';
comment on column notifications.store_id is 'The store the event happened in.';
comment on column notifications.user_id is 'The member told (dashboard_users.id).';
comment on column notifications.channel is 'email or telegram.';
comment on column notifications.event is 'The store event''s type (payment.completed, refund.failed …: docs/API.md, Store webhook endpoints).';
comment on column notifications.event_id is 'The store event''s id, shared with its webhook deliveries.';
comment on column notifications.payment_id is 'The payment the event is about, when it is about one.';
comment on column notifications.payload is 'The event''s payload, as the webhook endpoints get it: the message is written from it when sent.';
comment on column notifications.status is 'pending (being tried), sent (the SMTP server or Telegram accepted it), failed (no more attempts).';
comment on column notifications.attempts is 'How many attempts were made.';
comment on column notifications.created_at is 'When the event happened (its transaction).';
comment on column notifications.sent_at is 'When an attempt succeeded.';
comment on column notifications.failed_at is 'When the last attempt failed and no other followed.';
create index notifications_by_member on notifications (store_id, user_id, created_at desc);
comment on index notifications_by_member is 'A member''s recent notifications, newest first (the Notifications page).';

create table notification_attempts (
  notification_id uuid not null references notifications (id) on delete cascade,
  attempt integer not null,
  started_at timestamptz not null,
  finished_at timestamptz,
  error text,
  primary key (notification_id, attempt)
);
comment on table notification_attempts is 'Each attempt at sending a notification, written before it is made and completed after (finished_at null: the worker stopped during it).';
comment on column notification_attempts.notification_id is 'The notification tried.';
comment on column notification_attempts.attempt is 'The attempt''s number, from 1.';
comment on column notification_attempts.started_at is 'When the attempt began.';
comment on column notification_attempts.finished_at is 'When the SMTP server or Telegram answered, or the attempt gave up.';
comment on column notification_attempts.error is 'Why it failed (never a secret: the bot token is cut out); null: sent.';
