--! Previous: sha1:d30c9566e5d0bb3af80b340c985dd65027065509
--! Hash: sha1:242adf18ae641efbcf716473b45dca880c30f618
--! Message: unmatched dust

-- Dust (issue 43): money that reaches a treasury matching no payment is kept and listed whatever its
-- size, but below the store's threshold it raises no alert (no money.unmatched event).
alter table stores add column unmatched_dust numeric not null default 0.01;
alter table stores add constraint stores_unmatched_dust_is_sane check (unmatched_dust >= 0 and unmatched_dust <= 1000000);
comment on column stores.unmatched_dust is 'Unmatched money below this amount of the coin it came in (0.01 TON, 0.01 USDT by default) is dust: kept and listed as any other, but no money.unmatched event is sent for it. 0: every transfer raises the event.';

alter table unmatched_transfers add column dust boolean not null default false;
comment on column unmatched_transfers.dust is 'Below the store''s unmatched_dust when it arrived: listed, no money.unmatched event.';
