--! Previous: sha1:7b4755b6018e19eb949bab5f03475cb36a9f8edc
--! Hash: sha1:5ca718c75fc6c40779c5d4341b981df6f9302fd6
--! Message: payments, deposit addresses, exchange rates, idempotency keys

-- Kassa schema, part 2: payments, their deposit addresses, exchange rates and idempotency keys.

create table exchange_rates (
  currency text not null,
  coin_symbol text not null references coins (symbol) on delete cascade,
  rate numeric not null,
  source text not null,
  fetched_at timestamptz not null,
  primary key (currency, coin_symbol),
  constraint exchange_rates_rate_is_positive check (rate > 0)
);
comment on table exchange_rates is 'Latest rate per pair, refreshed by the rates__refresh task: one unit of currency (fiat code or coin symbol) is worth rate coins. A payment keeps the rate it was priced with.';
comment on column exchange_rates.source is 'Who gave the rate: the provider name (for example tonapi) or fixed for an operator-set table (sandbox).';

create sequence deposit_address_index_seq as bigint minvalue 0 start with 0;
comment on sequence deposit_address_index_seq is 'Next derivation index of a deposit wallet (wallet id = base + index). Never reused.';

create table payments (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references stores (id) on delete cascade,
  status text not null,
  amount numeric not null,
  currency text not null,
  order_id text,
  description text,
  metadata jsonb not null default '{}'::jsonb,
  webhook_url text,
  return_url text,
  created_via text not null,
  invoice_type text,
  fiat_currency text,
  payment_method_id uuid references payment_methods (id) on delete restrict,
  coin_symbol text references coins (symbol) on delete restrict,
  coin_amount numeric,
  exchange_rate numeric,
  exchange_rate_source text,
  exchange_rate_at timestamptz,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  method_selected_at timestamptz,
  paid_at timestamptz,
  cancelled_at timestamptz,
  expired_at timestamptz,
  constraint payments_status_is_known check (status in ('created', 'pending', 'completed', 'expired', 'cancelled')),
  constraint payments_amount_is_positive check (amount > 0),
  constraint payments_created_via_is_known check (created_via in ('payments', 'invoice')),
  constraint payments_invoice_type_is_known check (invoice_type is null or invoice_type in ('FIAT', 'CRYPTO')),
  constraint payments_expire_after_creation check (expires_at > created_at),
  constraint payments_order_id_length check (order_id is null or length(order_id) <= 128),
  constraint payments_description_length check (description is null or length(description) <= 512),
  constraint payments_metadata_is_object check (jsonb_typeof(metadata) = 'object'),
  constraint payments_pending_has_method check (status = 'created' or (status in ('expired', 'cancelled') and method_selected_at is null) or (payment_method_id is not null and coin_amount is not null and method_selected_at is not null)),
  constraint payments_method_fixes_amount check ((payment_method_id is null) = (coin_amount is null)),
  constraint payments_coin_amount_is_positive check (coin_amount is null or coin_amount > 0),
  constraint payments_completed_has_paid_at check ((status = 'completed') = (paid_at is not null)),
  constraint payments_cancelled_has_cancelled_at check ((status = 'cancelled') = (cancelled_at is not null)),
  constraint payments_expired_has_expired_at check ((status = 'expired') = (expired_at is not null))
);
comment on table payments is 'Payment requests. amount/currency are what the merchant priced it in (amount exactly as given); coin_amount/coin_symbol what the customer must send, fixed when the method was chosen, with the exchange rate used.';
comment on column payments.status is 'created (no method yet), pending (method chosen, waiting for the transfer), completed, expired or cancelled. Moves only as the interface''s state table allows.';
comment on column payments.created_via is 'payments: POST /v1/payments; invoice: POST /v1/payments/create.';
comment on column payments.exchange_rate is 'Coins per one unit of currency used to fix coin_amount (1 when the currency is the coin itself).';
comment on column payments.paid_at is 'On-chain time of the transfer that completed the payment.';

create index payments_by_store_newest_first on payments (store_id, created_at desc, id desc);
comment on index payments_by_store_newest_first is 'GET /v1/payments: a store''s payments newest first, with cursor pagination.';
create index payments_open_by_expiry on payments (expires_at) where status in ('created', 'pending');
comment on index payments_open_by_expiry is 'Open payments by expiry time (operations and the expiry sweep).';

create table deposit_addresses (
  payment_id uuid primary key references payments (id) on delete cascade,
  derivation_index bigint not null,
  network text not null,
  address text not null,
  address_friendly text not null,
  created_at timestamptz not null default now(),
  constraint deposit_addresses_one_per_index unique (network, derivation_index),
  constraint deposit_addresses_one_per_address unique (address),
  constraint deposit_addresses_network_is_known check (network in ('mainnet', 'testnet', 'sandbox')),
  constraint deposit_addresses_address_is_raw check (address ~ '^0:[0-9a-f]{64}$')
);
comment on table deposit_addresses is 'The wallet each payment is paid to, derived offline from the master key with the wallet id base + derivation_index. address is the raw form; address_friendly the non-bounceable form shown to customers.';

create table idempotency_keys (
  store_id uuid not null references stores (id) on delete cascade,
  endpoint text not null,
  idempotency_key uuid not null,
  request_hash text not null,
  response_status smallint,
  response_body text,
  payment_id uuid references payments (id) on delete cascade,
  created_at timestamptz not null default now(),
  primary key (store_id, endpoint, idempotency_key)
);
comment on table idempotency_keys is 'X-Idempotency-Key replays: the first successful response per store, endpoint and key, kept 24 hours (purged by idempotency__purge). The row is written first and completed in the same transaction as the work, so a concurrent request with the same key waits for it; a failed request leaves no row.';
create index idempotency_keys_by_age on idempotency_keys (created_at);
comment on index idempotency_keys_by_age is 'Purging keys older than 24 hours.';
