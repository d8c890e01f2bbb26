--! Previous: sha1:4cc5e6fefc01d44da7f04d4a31251c80b3e98037
--! Hash: sha1:86a5cb1a20b7420cb105fe19c1bbb9dd5d8133a1
--! Message: chain reader

-- Kassa schema, part 7: the chain is read block by block from one cursor, not account by account.

create table chain_reader (
  network text primary key,
  last_block_seqno bigint not null,
  last_block_time timestamptz not null,
  settled_until timestamptz not null,
  latest_block_seqno bigint not null,
  latest_block_time timestamptz not null,
  reader text,
  lease_expires_at timestamptz,
  updated_at timestamptz not null default now(),
  constraint chain_reader_network_is_known check (network in ('mainnet', 'testnet', 'sandbox')),
  constraint chain_reader_in_order check (last_block_seqno <= latest_block_seqno)
);
comment on table chain_reader is 'Where the chain reader is: the last masterchain block whose transactions (and those of the shard blocks it commits) are all on the books, and the newest block the chain API has reported. One reader at a time holds the lease; another takes over when it lapses.';
comment on column chain_reader.last_block_time is 'Generation time of the last processed masterchain block: the chain''s clock for expiry and cancel decisions.';
comment on column chain_reader.settled_until is 'Every transaction made before this time is on the books: the time of the block before the last processed one (a shard block reaches the masterchain at most a block later). Pending payments expire, and cancels are decided, against it.';
comment on column chain_reader.reader is 'The process holding the lease (host:pid:random), or null.';

-- The per-account polling state is gone: accounts are now only a filter for the blocks.
drop index chain_watches_due;
alter table chain_watches
  drop constraint chain_watches_cursor_is_whole,
  drop column cursor_lt,
  drop column cursor_hash,
  drop column last_checked_at,
  drop column next_check_at,
  drop column consecutive_failures;
comment on table chain_watches is 'Kassa''s accounts on chain, for every payment ever made: each deposit address, and the deposit''s jetton wallet of the payment''s coin. The chain reader keeps a block''s transaction when its account is listed here.';
comment on column chain_watches.account is 'Raw address. For a jetton wallet not resolved yet (its master''s wallet code is not known offline): pending:<payment id>:<coin>, resolved by the reader through get_wallet_address before it reads further blocks.';

create index chain_watches_unresolved on chain_watches (account) where account like 'pending:%';
comment on index chain_watches_unresolved is 'Jetton wallets the reader still has to ask their master for (checked before every step).';

alter table jetton_masters add column wallet_code bytea;
comment on column jetton_masters.wallet_code is 'When set: this master deploys standard TEP-74 jetton wallets (data: balance, owner, master, wallet code) with this code, so a deposit''s jetton wallet address is computed offline when the method is chosen. Null: asked of the master (get_wallet_address).';

create table jetton_wallets (
  address text primary key,
  master_address text,
  owner_address text,
  genuine boolean not null,
  checked_at timestamptz not null default now(),
  constraint jetton_wallets_address_is_raw check (address ~ '^-?[0-9]+:[0-9a-f]{64}$')
);
comment on table jetton_wallets is 'Jetton wallets that sent a transfer notification to a deposit, asked once each (get_wallet_data, then the master''s get_wallet_address for the owner): genuine means the master it names confirms it as the owner''s wallet. A cache, so spam cannot spend the chain API budget.';

alter table transfers
  add column notified_jetton_master text,
  add column notified_amount_base_units numeric(78, 0);
comment on column transfers.notified_jetton_master is 'A jetton transfer_notification that could not be verified as a transfer of an accepted coin (a foreign or look-alike token): the master its sender claims (null when unknown). The TON the message carried is booked as TON on this row.';
comment on column transfers.notified_amount_base_units is 'The amount that unverified notification claims, in that token''s base units.';

-- Expiry and the chain are no longer Graphile jobs per payment or per round.
do $$
begin
  if to_regclass('graphile_worker._private_jobs') is not null then
    delete from graphile_worker._private_jobs
    where task_id in (select id from graphile_worker._private_tasks where identifier in ('chain__watch', 'payment__expire'));
  end if;
end;
$$;
