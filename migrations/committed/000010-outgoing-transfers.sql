--! Previous: sha1:961f387e18d9f57fd60bf8d4a3a37cf6cdd3d221
--! Hash: sha1:36d5afebe8c3446952134f4de8aa6b3e5224cce2
--! Message: outgoing transfers

-- Kassa schema, part 10: money out. Every transfer that leaves a deposit wallet (a sweep to the
-- store's treasury, a refund, a gas top-up) is on the books before it is signed, with the signed
-- message's identity before it is sent, and with the chain's transaction once the reader sees it.

create table outgoing_transfers (
  id uuid primary key default gen_random_uuid(),
  kind text not null,
  reason text not null,
  payment_id uuid not null references payments (id) on delete restrict,
  store_id uuid not null references stores (id) on delete restrict,
  for_transfer_id uuid references outgoing_transfers (id) on delete restrict,
  from_address text not null,
  to_address text not null,
  to_address_given text,
  coin_symbol text not null references coins (symbol) on delete restrict,
  amount numeric not null,
  amount_base_units numeric(78, 0) not null,
  state text not null default 'planned',
  wallet_seqno bigint,
  valid_until timestamptz,
  send_mode smallint,
  message_hash text,
  message_hash_normalized text,
  signed_message bytea,
  messages_signed integer not null default 0,
  broadcasts integer not null default 0,
  sent_amount_base_units numeric(78, 0),
  fee_base_units numeric(78, 0),
  fee numeric,
  transaction_hash text,
  transaction_lt numeric(20, 0),
  failure_reason text,
  created_at timestamptz not null default now(),
  signed_at timestamptz,
  last_broadcast_at timestamptz,
  confirmed_at timestamptz,
  failed_at timestamptz,
  updated_at timestamptz not null default now(),
  constraint outgoing_transfers_kind_is_known check (kind in ('sweep', 'refund', 'gas_top_up')),
  constraint outgoing_transfers_reason_is_known check (reason in ('payment', 'held_money', 'refund', 'gas')),
  constraint outgoing_transfers_state_is_known check (state in ('planned', 'sent', 'confirmed', 'failed')),
  constraint outgoing_transfers_amount_is_positive check (amount_base_units > 0),
  constraint outgoing_transfers_addresses_are_raw check (from_address ~ '^-?[0-9]+:[0-9a-f]{64}$' and to_address ~ '^-?[0-9]+:[0-9a-f]{64}$'),
  constraint outgoing_transfers_sent_has_message check (state <> 'sent' or (wallet_seqno is not null and valid_until is not null and message_hash is not null and signed_message is not null)),
  constraint outgoing_transfers_confirmed_has_transaction check (state <> 'confirmed' or (transaction_hash is not null and confirmed_at is not null and fee_base_units is not null)),
  constraint outgoing_transfers_failed_has_time check ((state = 'failed') = (failed_at is not null)),
  constraint outgoing_transfers_hashes_are_hex check (
    (message_hash is null or message_hash ~ '^[0-9a-f]{64}$') and (message_hash_normalized is null or message_hash_normalized ~ '^[0-9a-f]{64}$')
    and (transaction_hash is null or transaction_hash ~ '^[0-9a-f]{64}$'))
);
comment on table outgoing_transfers is 'Every transfer out of a deposit wallet: sweeps to the store''s treasury (reason payment: a completed payment''s counted amount; held_money: refundable money after REFUND_HOLD_DAYS), refunds the merchant asked for, and gas top-ups. planned: on the books, not signed yet; sent: signed (wallet_seqno, valid_until, message_hash) and recorded before it was broadcast, so a repeat broadcasts the same message (harmless); confirmed: the chain reader saw the deposit''s transaction that sent it; failed: it did not leave (failure_reason). A sent message whose valid_until passed unseen is planned again with a fresh seqno (messages_signed counts them).';
comment on column outgoing_transfers.amount is 'What the books move, in coin units (amount_base_units in base units). sent_amount_base_units is what the message actually carried: less when the transfer carried the wallet''s whole balance with the fees taken from it.';
comment on column outgoing_transfers.for_transfer_id is 'A gas top-up: the jetton transfer out of the deposit it pays for.';
comment on column outgoing_transfers.to_address_given is 'The destination as the merchant gave it (refunds); to_address is its raw form.';
comment on column outgoing_transfers.message_hash is 'The signed external message''s identity: the hash of its cell (hex). message_hash_normalized is its TEP-467 normalized hash, which toncenter also reports.';
comment on column outgoing_transfers.fee_base_units is 'nanoTON the deposit wallet paid for the transaction that sent it (its total fees plus the forwarding fees of its messages). fee is the same in TON.';
comment on column outgoing_transfers.send_mode is 'The wallet send mode: 1 = fees paid on top of the amount, 128 = the whole balance (fees taken from it).';
create index outgoing_transfers_by_wallet on outgoing_transfers (from_address, created_at) where state in ('planned', 'sent');
comment on index outgoing_transfers_by_wallet is 'The signer''s queue per deposit wallet: what is planned or in flight.';
create index outgoing_transfers_by_payment on outgoing_transfers (payment_id, created_at);
comment on index outgoing_transfers_by_payment is 'A payment''s outgoing transfers (refundable balance, GET /v1/payments/{id}/refunds).';
create index outgoing_transfers_by_message on outgoing_transfers (message_hash) where message_hash is not null;
comment on index outgoing_transfers_by_message is 'The chain reader finds the transfers a wallet''s outgoing transaction sent by its message''s hash (one message may carry several: batched gas top-ups).';
create index outgoing_transfers_by_normalized_message on outgoing_transfers (message_hash_normalized) where message_hash_normalized is not null;
comment on index outgoing_transfers_by_normalized_message is 'The same, by the TEP-467 normalized hash.';
create unique index outgoing_transfers_one_payment_sweep on outgoing_transfers (payment_id, coin_symbol) where kind = 'sweep' and reason = 'payment' and state <> 'failed';
comment on index outgoing_transfers_one_payment_sweep is 'A completed payment''s counted amount is swept once.';

alter table transfers add column fee_base_units numeric(78, 0);
comment on column transfers.fee_base_units is 'nanoTON the receiving account paid for the transaction (its total fees); null for transfers booked before it was recorded. Reconciliation subtracts it from what the deposit holds.';

create table deposit_reconciliations (
  payment_id uuid not null references payments (id) on delete cascade,
  coin_symbol text not null references coins (symbol) on delete restrict,
  account text not null,
  booked_base_units numeric(78, 0) not null,
  on_chain_base_units numeric(78, 0) not null,
  difference_base_units numeric(78, 0) not null,
  checked_at timestamptz not null,
  primary key (payment_id, coin_symbol)
);
comment on table deposit_reconciliations is 'The latest comparison of each deposit''s books (in minus out, minus fees) with what the chain says it holds, per coin. difference = on chain minus booked: not zero means money moved that the books do not explain.';

create view reporting.outgoing_transfers as
  select o.id, o.store_id, o.payment_id, p.order_id, o.kind, o.reason, o.state, o.coin_symbol, o.amount,
         o.sent_amount_base_units, o.fee, o.from_address, o.to_address, o.transaction_hash, o.failure_reason,
         o.created_at, o.confirmed_at, o.failed_at
  from outgoing_transfers o join payments p on p.id = o.payment_id;
comment on view reporting.outgoing_transfers is 'Every transfer out of a deposit wallet (sweeps to the treasury, refunds, gas top-ups) with its state and the fee it cost (TON).';

create view reporting.deposit_differences as
  select r.payment_id, p.store_id, p.order_id, r.coin_symbol, r.account, r.booked_base_units, r.on_chain_base_units,
         r.difference_base_units, r.checked_at
  from deposit_reconciliations r join payments p on p.id = r.payment_id
  where r.difference_base_units <> 0;
comment on view reporting.deposit_differences is 'Deposits whose on-chain balance differs from their books at the last reconciliation (base units of the coin; positive: the chain holds more).';

create table gas_wallets (
  network text primary key,
  address text not null,
  constraint gas_wallets_network_is_known check (network in ('mainnet', 'testnet', 'sandbox')),
  constraint gas_wallets_address_is_raw check (address ~ '^-?[0-9]+:[0-9a-f]{64}$')
);
comment on table gas_wallets is 'Kassa''s gas wallet per network (wallet v5r1 of the deposit key, context 2147483647): it tops up deposit wallets with the TON their jetton transfers need. Written at start by every process; `kassa gas` prints its address and balance.';

create view reporting.refundable_money as
  select p.id as payment_id, p.store_id, p.order_id, p.status as payment_status, t.coin_symbol,
         sum(t.amount_base_units)
           - case when p.status = 'completed' and p.coin_symbol = t.coin_symbol then (p.coin_amount * power(10::numeric, c.decimals))::numeric(78, 0) else 0 end
           - coalesce((select sum(o.amount_base_units) from outgoing_transfers o
                       where o.payment_id = p.id and o.coin_symbol = t.coin_symbol and o.reason in ('refund', 'held_money') and o.state <> 'failed'), 0)
           as refundable_base_units,
         max(t.recorded_at) as last_money_at,
         c.decimals
  from transfers t
  join payments p on p.id = t.payment_id
  join coins c on c.symbol = t.coin_symbol
  where t.effect not in ('not_credited', 'not_counted', 'unknown_token')
    and (p.status not in ('created', 'pending') or t.effect not in ('partial', 'completed', 'overpaid'))
  group by p.id, t.coin_symbol, c.decimals;
comment on view reporting.refundable_money is 'What each deposit holds that is refundable (not part of a completed payment''s counted amount, less refunds and held-money sweeps), per coin, in base units (divide by 10^decimals), with when the last money arrived: it is swept to the treasury REFUND_HOLD_DAYS after that. TON under 10000000 (0.01 TON) is dust: it stays.';
