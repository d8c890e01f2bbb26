--! Previous: sha1:994012b3cbce605c29bc8c089f8fba01627c810e
--! Hash: sha1:703284fcb30908e9129c4dabd7fe88dc268f1579
--! Message: telegram mini app

-- The checkout as a Telegram Mini App (issue 30 §6–7, CONTRACT §11 "Telegram Mini App"): a store's
-- bot (its username and numeric id) and the Mini App's short name; payments opened in it record the
-- Telegram user whose init data Telegram signed (verified with Telegram's Ed25519 key, no bot token).

alter table stores
  add column telegram_bot text check (telegram_bot ~ '^[A-Za-z][A-Za-z0-9_]{3,31}$' and lower(telegram_bot) like '%bot'),
  add column telegram_app text check (telegram_app ~ '^[A-Za-z0-9_]{3,30}$'),
  add column telegram_bot_id bigint check (telegram_bot_id > 0);
comment on column stores.telegram_bot is 'The username of the store''s Telegram bot (without @): payments carry telegramURL https://t.me/<bot>/<app>?startapp=<payment id> when telegram_app is set too.';
comment on column stores.telegram_app is 'The short name of the bot''s Mini App registered with BotFather, whose URL is {checkout_base_url}/tg.';
comment on column stores.telegram_bot_id is 'The bot''s numeric id (the digits before the colon of its token): Telegram''s init data is verified with it and Telegram''s public key (third-party validation), so Kassa never holds the bot token.';

alter table payments
  add column telegram_user_id bigint,
  add column telegram_username text,
  add column telegram_user_at timestamptz,
  add constraint payments_telegram_user check ((telegram_user_id is null) = (telegram_user_at is null) and (telegram_username is null or telegram_user_id is not null));
comment on column payments.telegram_user_id is 'The Telegram user who opened the payment''s checkout in the store''s Mini App, from init data Telegram signed (verified server-side); the last one before the payment ended.';
comment on column payments.telegram_username is 'That user''s Telegram username (without @), when they have one.';
comment on column payments.telegram_user_at is 'When that init data was verified.';

create view reporting.telegram_payers as
  select p.id as payment_id, p.store_id, p.status, p.currency, p.amount, p.telegram_user_id, p.telegram_username,
         p.telegram_user_at, p.created_at, p.paid_at
  from payments p
  where p.telegram_user_id is not null;
comment on view reporting.telegram_payers is 'Payments opened in the store''s Telegram Mini App: the Telegram user (id, username) whose init data Telegram signed, with the payment''s status and amount.';
