--! Previous: sha1:5ca718c75fc6c40779c5d4341b981df6f9302fd6
--! Hash: sha1:467cfb728e934c6456ba3732ee8caf9cf38e9564
--! Message: transfers, chain watches, webhook deliveries

-- Kassa schema, part 3: the books of every transfer, what the chain watcher watches, and the
-- webhook delivery log.

create table chain_watches (
  account text primary key,
  payment_id uuid not null references payments (id) on delete cascade,
  kind text not null,
  coin_symbol text references coins (symbol) on delete restrict,
  jetton_master text,
  cursor_lt numeric(20, 0),
  cursor_hash text,
  last_checked_at timestamptz,
  next_check_at timestamptz not null default now(),
  consecutive_failures integer not null default 0,
  created_at timestamptz not null default now(),
  constraint chain_watches_kind_is_known check (kind in ('deposit', 'jetton_wallet')),
  constraint chain_watches_jetton_wallet_has_master check (kind = 'deposit' or (jetton_master is not null and coin_symbol is not null)),
  constraint chain_watches_cursor_is_whole check ((cursor_lt is null) = (cursor_hash is null))
);
comment on table chain_watches is 'Accounts the chain watcher reads: each deposit address, and the deposit''s jetton wallet of the payment''s coin (found with get_wallet_address on the allow-listed master). The cursor is the last transaction read (lt + hex hash).';
comment on column chain_watches.account is 'Raw address. For a jetton wallet whose address is not resolved yet: pending:<payment id>:<coin>.';
create index chain_watches_by_payment on chain_watches (payment_id);
comment on index chain_watches_by_payment is 'The watches of one payment (the expiry''s last look at the chain).';
create index chain_watches_due on chain_watches (next_check_at);
comment on index chain_watches_due is 'The watcher''s next accounts to read.';

create table transfers (
  account text not null,
  lt numeric(20, 0) not null,
  hash text not null,
  payment_id uuid not null references payments (id) on delete cascade,
  deposit_address text not null,
  coin_symbol text references coins (symbol) on delete restrict,
  jetton_master text,
  amount_base_units numeric(78, 0) not null,
  amount numeric,
  sender text,
  comment text,
  chain_time timestamptz not null,
  recorded_at timestamptz not null default now(),
  effect text not null,
  detail text,
  primary key (account, lt, hash),
  constraint transfers_effect_is_known check (effect in ('partial', 'completed', 'overpaid', 'wrong_coin', 'after_expiry', 'after_cancel', 'after_completion', 'not_credited', 'unknown_token', 'not_counted')),
  constraint transfers_amount_is_not_negative check (amount_base_units >= 0),
  constraint transfers_hash_is_hex check (hash ~ '^[0-9a-f]{64}$')
);
comment on table transfers is 'The books: every incoming transfer to a deposit address (or its jetton wallet), whatever the payment''s state, keyed by its chain identity (account, lt, hash) and never changed. effect says what it did: partial / completed / overpaid were counted toward the payment; the others were not.';
comment on column transfers.effect is 'partial: counted, the payment is still underpaid; completed: counted, reached coinAmount; overpaid: counted, went beyond coinAmount; wrong_coin; after_expiry / after_cancel / after_completion: arrived when the payment was no longer open (or, for after_expiry, made after expiresAt); not_credited: bounced or failed, the value did not stay; unknown_token: a jetton of a master Kassa does not accept (look-alikes); not_counted: value that stayed but is not a payment (jetton notification or excess TON).';
comment on column transfers.amount is 'amount_base_units in coin units (null when the coin is unknown).';
comment on column transfers.chain_time is 'On-chain time of the transaction (utime).';
create index transfers_by_payment on transfers (payment_id, lt);
comment on index transfers_by_payment is 'A payment''s transfers in chain order (sums, GET /v1/payments/{id}/transfers).';

create table webhook_deliveries (
  id uuid primary key default gen_random_uuid(),
  payment_id uuid not null references payments (id) on delete cascade,
  event text not null default 'payment.completed',
  url text not null,
  status text not null default 'pending',
  reason text not null default 'completed',
  attempts integer not null default 0,
  created_at timestamptz not null default now(),
  first_attempt_at timestamptz,
  last_attempt_at timestamptz,
  next_attempt_at timestamptz,
  delivered_at timestamptz,
  failed_at timestamptz,
  constraint webhook_deliveries_event_is_known check (event in ('payment.completed')),
  constraint webhook_deliveries_status_is_known check (status in ('pending', 'delivered', 'failed')),
  constraint webhook_deliveries_reason_is_known check (reason in ('completed', 'redelivery')),
  constraint webhook_deliveries_delivered_has_time check ((status = 'delivered') = (delivered_at is not null)),
  constraint webhook_deliveries_failed_has_time check ((status = 'failed') = (failed_at is not null))
);
comment on table webhook_deliveries is 'One row per webhook to deliver: the completed event of a payment, or a redelivery the merchant asked for. Delivered at least once, retried with backoff for up to 12 hours, then failed.';
create index webhook_deliveries_by_payment on webhook_deliveries (payment_id, created_at);
comment on index webhook_deliveries_by_payment is 'GET /v1/payments/{id}/webhook-deliveries.';

create table webhook_attempts (
  id bigint generated always as identity primary key,
  delivery_id uuid not null references webhook_deliveries (id) on delete cascade,
  attempt integer not null,
  started_at timestamptz not null,
  finished_at timestamptz,
  duration_ms integer,
  http_status smallint,
  error text,
  kid text,
  signed_at timestamptz,
  next_retry_at timestamptz,
  constraint webhook_attempts_one_per_number unique (delivery_id, attempt)
);
comment on table webhook_attempts is 'Every delivery attempt: written when it starts and completed when it ends, so an attempt interrupted by a crash stays visible (finished_at null). http_status is null when no answer came (error says why).';
