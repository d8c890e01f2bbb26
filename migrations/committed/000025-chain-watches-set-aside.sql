--! Previous: sha1:75ba080c8100fc6f1ca903523c735625c99dcf93
--! Hash: sha1:d4c3fac0daa49fde44d5acd30c15c46e283be6ec
--! Message: chain watches set aside

-- A deposit's jetton wallet whose master will not give its address (get_wallet_address fails for
-- good: an odd master, an exotic wallet) is set aside: the chain reader stops asking and reads on,
-- so one such payment never stops every other payment from being booked. kassa doctor lists them.
alter table chain_watches
  add column set_aside_at timestamptz,
  add column set_aside_reason text,
  add constraint chain_watches_set_aside_says_why check ((set_aside_at is null) = (set_aside_reason is null)),
  add constraint chain_watches_only_unresolved_set_aside check (set_aside_at is null or account like 'pending:%');
comment on column chain_watches.set_aside_at is 'When the chain reader gave up computing this jetton wallet (its master''s get_wallet_address failed for good) and read on without it; null while it is watched or still to be asked. Put back to null (with set_aside_reason) to have the reader ask again.';
comment on column chain_watches.set_aside_reason is 'Why the jetton wallet was set aside: the chain API''s answer to get_wallet_address.';

drop index chain_watches_unresolved;
create index chain_watches_unresolved on chain_watches (account) where account like 'pending:%' and set_aside_at is null;
comment on index chain_watches_unresolved is 'Jetton wallets the reader still has to ask their master for (checked before every step); those set aside are not.';
