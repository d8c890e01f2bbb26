--! Previous: sha1:22e650c106592c6e64146fecdd7549aa8a4dc37c
--! Hash: sha1:7f2bf1e94e505c5cba87cec80c2e446c2b828b9e
--! Message: api token names

-- A token's name, given when it is issued (`kassa token issue --name`, the dashboard's API tokens
-- page), so a merchant can tell which system holds which token.
alter table api_tokens add column name text;
alter table api_tokens add constraint api_tokens_name_is_short check (name is null or (length(name) between 1 and 100 and name !~ '[[:cntrl:]]'));
comment on column api_tokens.name is 'What the merchant called the token when issuing it (e.g. "shop backend"), at most 100 characters; null: issued without a name (every token issued before names). Shown in token lists, never part of the token.';
