--! Previous: -
--! Hash: sha1:7b4755b6018e19eb949bab5f03475cb36a9f8edc
--! Message: catalogue, stores, tokens, keys

-- Kassa schema, part 1: the catalogue of chains and coins, stores, API tokens and service keys.
-- Merchants report on this schema in SQL: tables and columns are named for people.

create extension if not exists pgcrypto;

create table chains (
  symbol text primary key,
  name text not null,
  created_at timestamptz not null default now()
);
comment on table chains is 'Blockchains Kassa takes payments on. symbol is what merchants send in payment_options.methods[].chain.';

create table coins (
  symbol text primary key,
  name text not null,
  chain_symbol text not null references chains (symbol) on delete restrict,
  kind text not null,
  decimals smallint not null,
  created_at timestamptz not null default now(),
  constraint coins_kind_is_known check (kind in ('native', 'jetton')),
  constraint coins_decimals_in_range check (decimals between 0 and 18)
);
comment on table coins is 'Coins a payment can be made in. decimals is the number of digits after the point of one base unit (TON 9: 1 TON = 10^9 nanoTON; USDT 6).';
comment on column coins.kind is 'native: the chain''s own coin (TON); jetton: a TEP-74 token identified by its master contract per network (see jetton_masters).';

create table jetton_masters (
  coin_symbol text not null references coins (symbol) on delete cascade,
  network text not null,
  master_address text not null,
  created_at timestamptz not null default now(),
  primary key (coin_symbol, network),
  constraint jetton_masters_network_is_known check (network in ('mainnet', 'testnet', 'sandbox')),
  constraint jetton_masters_address_is_raw check (master_address ~ '^-?[0-9]+:[0-9a-f]{64}$')
);
comment on table jetton_masters is 'The one jetton master contract Kassa accepts for a coin on a network (raw address form). Transfers of look-alike tokens from other masters are never counted.';

create table payment_methods (
  id uuid primary key default gen_random_uuid(),
  coin_symbol text not null references coins (symbol) on delete restrict,
  chain_symbol text not null references chains (symbol) on delete restrict,
  created_at timestamptz not null default now(),
  constraint payment_methods_one_per_coin_and_chain unique (coin_symbol, chain_symbol)
);
comment on table payment_methods is 'A coin on a chain. Its id is the paymentMethodID of POST /v1/payments/create.';

create table stores (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  created_at timestamptz not null default now(),
  constraint stores_name_is_not_blank check (length(btrim(name)) between 1 and 200)
);
comment on table stores is 'Merchant stores. Every payment, token and idempotency key belongs to one store.';

create table store_payment_methods (
  store_id uuid not null references stores (id) on delete cascade,
  payment_method_id uuid not null references payment_methods (id) on delete restrict,
  enabled_at timestamptz not null default now(),
  primary key (store_id, payment_method_id)
);
comment on table store_payment_methods is 'The payment methods a store accepts.';

create table api_tokens (
  jti uuid primary key,
  store_id uuid not null references stores (id) on delete cascade,
  issued_at timestamptz not null default now(),
  expires_at timestamptz,
  revoked_at timestamptz,
  constraint api_tokens_expire_after_issue check (expires_at is null or expires_at > issued_at)
);
comment on table api_tokens is 'Every API access token issued (the JWT itself is never stored). A token with revoked_at set is refused at once.';
create index api_tokens_by_store on api_tokens (store_id);
comment on index api_tokens_by_store is 'Lists a store''s tokens.';

create table service_secrets (
  name text primary key,
  secret bytea not null,
  created_at timestamptz not null default now(),
  constraint service_secrets_name_is_known check (name in ('api_token_signing_key', 'deposit_master_key'))
);
comment on table service_secrets is 'Private keys of the service itself: the Ed25519 key that signs API tokens (PKCS#8) and, in sandbox, the generated deposit master key. Never exposed by the API.';

create table webhook_signing_keys (
  kid text primary key,
  public_key bytea not null,
  secret_key bytea not null,
  created_at timestamptz not null default now(),
  retired_at timestamptz,
  constraint webhook_signing_keys_public_key_is_ed25519 check (length(public_key) = 32),
  constraint webhook_signing_keys_secret_key_is_ed25519 check (length(secret_key) = 64)
);
comment on table webhook_signing_keys is 'Ed25519 keys that sign webhooks. The one with retired_at null is active; a retired key stays published in the key set for 24 hours after retired_at.';
create unique index webhook_signing_keys_one_active on webhook_signing_keys ((true)) where retired_at is null;
comment on index webhook_signing_keys_one_active is 'At most one active signing key.';

-- The catalogue. Jetton masters are data, not code: check them before going live on mainnet.
insert into chains (symbol, name) values ('TON', 'TON');

insert into coins (symbol, name, chain_symbol, kind, decimals) values
  ('TON', 'Toncoin', 'TON', 'native', 9),
  ('USDT', 'Tether USD', 'TON', 'jetton', 6),
  ('NOT', 'Notcoin', 'TON', 'jetton', 9),
  ('DOGS', 'Dogs', 'TON', 'jetton', 9),
  ('BUILD', 'BUILD', 'TON', 'jetton', 9),
  ('BLUM', 'Blum', 'TON', 'jetton', 9),
  ('DUST', 'Dust', 'TON', 'jetton', 9),
  ('DYOR', 'DYOR', 'TON', 'jetton', 9),
  ('STON', 'STON', 'TON', 'jetton', 9),
  ('XAUt0', 'Tether Gold', 'TON', 'jetton', 6);

-- Mainnet masters confirmed so far (raw form of the EQ… addresses). BUILD, BLUM, DUST, DYOR and
-- XAUt0 have none yet: their methods cannot be watched on mainnet until an operator adds them.
insert into jetton_masters (coin_symbol, network, master_address) values
  ('USDT', 'mainnet', '0:b113a994b5024a16719f69139328eb759596c38a25f59028b146fecdc3621dfe'),
  ('NOT', 'mainnet', '0:2f956143c461769579baef2e32cc2d7bc18283f40d20bb03e432cd603ac33ffc'),
  ('DOGS', 'mainnet', '0:afc49cb8786f21c87045b19ede78fc6b46c51048513f8e9a6d44060199c1bf0c'),
  ('STON', 'mainnet', '0:3690254dc15b2297610cda60744a45f2b710aa4234b89adb630e99d79b01bd4f');

insert into payment_methods (coin_symbol, chain_symbol)
  select symbol, chain_symbol from coins order by symbol;
