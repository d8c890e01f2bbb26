--! Previous: sha1:6570e08a56a3b0e5417abb31d63903a95e6d920a
--! Hash: sha1:b0d7b9742a2ff213e35b63e6a1bce6634909ca9e
--! Message: sandbox chain epochs

-- The sandbox's emulated chain kept beside its books: its state is saved here while it runs and at
-- shutdown, and loaded at the next start, so a restart loses no money on chain. A chain started
-- afresh on a database that already holds sandbox books is a reset: a new epoch, said once here.
create table sandbox_chain_epochs (
  epoch integer generated always as identity primary key,
  started_at timestamptz not null default now(),
  reset boolean not null,
  reason text not null,
  state bytea,
  saved_at timestamptz,
  constraint sandbox_chain_epochs_saved_with_time check ((state is null) = (saved_at is null))
);
comment on table sandbox_chain_epochs is 'Each life of the sandbox network''s emulated chain (TON_NETWORK=sandbox only; empty elsewhere). The newest row is the chain in use: state is its gzipped @ton/sandbox snapshot, saved every few seconds while it changes and at shutdown, loaded at the next start. reset: the chain was started afresh on a database that already held sandbox books (reason says why): deposits issued before started_at hold nothing on this chain, and reconciliation leaves them out rather than report their money as missing.';
comment on column sandbox_chain_epochs.state is 'gzip of the JSON of @ton/sandbox''s snapshotToSerializable(blockchain.snapshot()); null until first saved.';
