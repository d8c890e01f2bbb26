--! Previous: sha1:5971d53951e78affbde513e0bf7ba23b08db7561
--! Hash: sha1:6283491c7a07097f0ebbc93ce98e795a02cee67a
--! Message: token last use and rate limits

-- Kassa schema, part 11: when each API token was last used (kassa token list), and the rate-limit
-- counters every API process shares.

alter table api_tokens add column last_used_at timestamptz;
comment on column api_tokens.last_used_at is 'When the token last authenticated a request, to the minute: each API process writes it at most once a minute per token (null: never used).';

-- The layout rate-limiter-flexible's PostgreSQL store reads and writes (src/http/rateLimit.ts).
create table rate_limits (
  key varchar(255) primary key,
  points integer not null default 0,
  expire bigint
);
comment on table rate_limits is 'Rate-limit counters shared by every API process (rate-limiter-flexible''s PostgreSQL store): key is the counter (kassa:<limit>:store:<id>, kassa:<limit>:client:<address>, kassa:<limit>:auth-failures:<address>, where limit is the requests allowed per window), points the requests counted in its current window, expire the window''s end (ms since the epoch). Rows an hour past their expiry are deleted every 5 minutes by the API processes.';
