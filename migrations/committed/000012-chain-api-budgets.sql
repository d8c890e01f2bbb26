--! Previous: sha1:36d5afebe8c3446952134f4de8aa6b3e5224cce2
--! Hash: sha1:969d37c52c6bd99c5f82635cba771c84032367ee
--! Message: chain api budgets

-- Kassa schema, part 12: one chain API budget per API key across every process of a deployment.
-- toncenter counts requests per account across all its keys and processes (1/s without a key, 10/s
-- on the free plan): the API's checkout, the worker's reader, signer and reconciliation, and the
-- operator's commands all take their requests from one row here, so together they stay under it.

create table chain_api_budgets (
  key_id text primary key,
  next_slot_at timestamptz not null,
  paused_until timestamptz not null default '-infinity',
  requests bigint not null default 0,
  constraint chain_api_budgets_key_id_is_a_digest check (key_id ~ '^[0-9a-f]{64}$')
);
comment on table chain_api_budgets is 'The chain API request budget shared by every Kassa process that uses one API (TON_API_URL) with one key (TON_API_KEY): requests are spaced 1/TON_API_RPS apart by reserving the next slot in one atomic update, and a 429 pauses them all.';
comment on column chain_api_budgets.key_id is 'sha256 (hex) of the API root and the API key: identifies the budget without storing the key.';
comment on column chain_api_budgets.next_slot_at is 'When the next request may be sent: each request reserves the slot and moves it on by 1/TON_API_RPS.';
comment on column chain_api_budgets.paused_until is 'After a 429 (or another retryable failure) no request is sent before this time, by any process.';
comment on column chain_api_budgets.requests is 'Requests taken from this budget so far (kassa doctor divides its growth by the blocks read: requests per block).';
