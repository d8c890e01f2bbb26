--! Previous: sha1:8edc83e3df1e3a8ad7796fcb0a28a12655ca9b3d
--! Hash: sha1:93f15580292e7c5b13a974bf10ebb9e49caf8ac4
--! Message: telegram openings

-- Who opened a payment in the store's Telegram Mini App, every time (issue 48 item 8): the payment's
-- telegram_user_* columns named whoever opened it last, so anyone who opened it after the customer
-- had paid (before the chain reader booked the transfer) became its payer. Every verified opening is
-- kept here; at completion the payment's telegram_user_* become the last one who opened it by the
-- paying transfer's on-chain time (payments/commands.ts completePayment).
create table payment_telegram_openings (
  payment_id uuid not null references payments (id) on delete cascade,
  telegram_user_id bigint not null,
  telegram_username text,
  opened_at timestamptz not null
);
create index payment_telegram_openings_by_payment on payment_telegram_openings (payment_id, opened_at desc);
comment on table payment_telegram_openings is 'Every opening of a payment''s checkout in the store''s Telegram Mini App whose init data Telegram signed (verified server-side): who and when.';
-- The openings known so far: the one each payment names.
insert into payment_telegram_openings (payment_id, telegram_user_id, telegram_username, opened_at)
  select id, telegram_user_id, telegram_username, telegram_user_at from payments where telegram_user_id is not null;
comment on column payment_telegram_openings.opened_at is 'When that init data was verified.';
comment on column payments.telegram_user_id is 'The Telegram user who opened the payment''s checkout in the store''s Mini App (init data Telegram signed, verified server-side): while it is open, the last one so far; once completed, the last one who opened it by the paying transfer''s on-chain time (null when nobody had). Every opening: payment_telegram_openings.';
