--! Previous: sha1:36d5afebe8c3446952134f4de8aa6b3e5224cce2
--! Hash: sha1:760d4f876bba9a6deeb8ae53e4d9c232ca665ab3
--! Message: token last use

-- Kassa schema, part 11: when each API token was last used (kassa token list).

alter table api_tokens add column last_used_at timestamptz;
comment on column api_tokens.last_used_at is 'When the token last authenticated a request, to the minute: each API process writes it at most once a minute per token (null: never used).';
