--! Previous: sha1:047ffe9f562241e07f28bd36e5152fc684caef81
--! Hash: sha1:fd0ce7b7b80fb9664b94443e5cf70558177d7ef8
--! Message: refund fee top-ups

-- A store's owner tops up its refund fee balance (the TON a token refund's network fee is paid
-- from: store_refund_gas) from the dashboard (issue 47 item 3): the owner's wallet sends TON to
-- Kassa's gas wallet through TON Connect with the top-up's reference as its comment, and the chain
-- reader books what arrives. Every TON transfer into the gas wallet is kept (gas_wallet_arrivals,
-- once per chain transaction); one whose comment is a top-up's reference is credited to that
-- top-up's store (store_gas_payments.arrival_id: once per arrival), however often or late it came.
-- An arrival with no known reference stays on the books with no store, for the operator to assign.

create table refund_fee_top_ups (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references stores (id),
  reference text not null unique,
  amount_base_units numeric(78, 0) not null check (amount_base_units > 0),
  asked_by_user_id uuid references dashboard_users (id) on delete set null,
  asked_by text not null,
  asked_at timestamptz not null,
  constraint refund_fee_top_ups_reference_is_ours check (reference ~ '^Kassa refund fees [A-Z0-9]{10}$')
);
create index refund_fee_top_ups_store on refund_fee_top_ups (store_id, asked_at desc);
comment on table refund_fee_top_ups is 'A top-up of a store''s refund fee balance asked from the dashboard: the owner''s wallet is asked to send amount_base_units nanoTON to the gas wallet with `reference` as its comment. Not money by itself: what arrives with the reference (gas_wallet_arrivals) is what counts, every time it arrives.';
comment on column refund_fee_top_ups.reference is 'The comment the transfer carries ("Kassa refund fees" and 10 letters or digits): how the reader knows the arrival is this store''s.';
comment on column refund_fee_top_ups.amount_base_units is 'nanoTON the owner chose to send (what arrives may differ: it is what is booked).';
comment on column refund_fee_top_ups.asked_by_user_id is 'The member who asked for it (the audit of its arrival names them).';
comment on column refund_fee_top_ups.asked_by is 'That member''s email at the time.';
comment on column refund_fee_top_ups.asked_at is 'When the member asked for it.';

create table gas_wallet_arrivals (
  id uuid primary key default gen_random_uuid(),
  network text not null,
  transaction_hash text not null unique,
  lt numeric(20, 0) not null,
  sender text not null,
  amount_base_units numeric(78, 0) not null check (amount_base_units > 0),
  comment text,
  top_up_id uuid references refund_fee_top_ups (id),
  chain_time timestamptz not null,
  booked_at timestamptz not null
);
create index gas_wallet_arrivals_top_up on gas_wallet_arrivals (top_up_id);
comment on table gas_wallet_arrivals is 'Every TON transfer into Kassa''s gas wallet from outside Kassa (the chain reader books it once per transaction): a store''s refund fee top-up when its comment is a top-up''s reference (top_up_id), else money with no known owner, kept for the operator (`kassa gas paid` assigns it to a store). Kassa''s own TON coming back (from payment addresses, token change) is not here.';
comment on column gas_wallet_arrivals.transaction_hash is 'The gas wallet''s transaction that received it (lower-case hex): booked once.';
comment on column gas_wallet_arrivals.lt is 'That transaction''s logical time.';
comment on column gas_wallet_arrivals.sender is 'Who sent it (raw address).';
comment on column gas_wallet_arrivals.amount_base_units is 'nanoTON that arrived.';
comment on column gas_wallet_arrivals.comment is 'The transfer''s text comment, if any.';
comment on column gas_wallet_arrivals.top_up_id is 'The top-up whose reference the comment is (null: no known reference).';
comment on column gas_wallet_arrivals.chain_time is 'When the chain received it.';
comment on column gas_wallet_arrivals.booked_at is 'When the reader booked it.';

alter table store_gas_payments add column arrival_id uuid unique references gas_wallet_arrivals (id);
comment on column store_gas_payments.arrival_id is 'A top-up that arrived on chain (gas_wallet_arrivals): credited once per arrival. Null: recorded by the operator with `kassa gas paid`.';
comment on table store_gas_payments is 'TON a store paid for the network fees of its token refunds (nanoTON; negative: a correction): a top-up from the dashboard that arrived (arrival_id), or what the operator recorded with `kassa gas paid`. Append-only: the store''s refund fee balance is store_refund_gas.';

create view reporting.gas_wallet_arrivals as
  select a.transaction_hash, a.chain_time, a.sender, a.amount_base_units, a.comment, t.store_id, t.reference, t.asked_by
  from gas_wallet_arrivals a left join refund_fee_top_ups t on t.id = a.top_up_id;
comment on view reporting.gas_wallet_arrivals is 'TON that reached the gas wallet from outside Kassa, with the store it was credited to (null: no known reference, for the operator to assign), in nanoTON.';
