--! Previous: sha1:8e43679ef729b3b9bc2373c7298efa16f703a7ac
--! Hash: sha1:6570e08a56a3b0e5417abb31d63903a95e6d920a
--! Message: api token names

-- A token's name, given when it is issued (`kassa token issue --name`, the dashboard's API tokens
-- page), so a merchant can tell which system holds which token.
alter table api_tokens add column name text;
alter table api_tokens add constraint api_tokens_name_is_short check (name is null or (length(name) between 1 and 100 and name !~ '[[:cntrl:]]'));
comment on column api_tokens.name is 'What the merchant called the token when issuing it (e.g. "shop backend"), at most 100 characters; null: issued without a name (every token issued before names). Shown in token lists, never part of the token.';
