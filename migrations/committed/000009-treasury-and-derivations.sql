--! Previous: sha1:77bb4e05919241dde552d7ec9b68f05bf444109e
--! Hash: sha1:961f387e18d9f57fd60bf8d4a3a37cf6cdd3d221
--! Message: treasury and derivations

-- Kassa schema, part 8: where a store's money goes, and how each deposit wallet was derived.

alter table stores add column treasury text;
alter table stores add constraint stores_treasury_is_raw check (treasury ~ '^(0|-1):[0-9a-f]{64}$');
comment on column stores.treasury is 'The store''s own wallet (raw form) that its payments'' money is moved to; null: the money stays in the deposit wallets until the store has one.';

alter table deposit_addresses add column derivation text not null default 'v4r2-1';
alter table deposit_addresses alter column derivation drop default;
alter table deposit_addresses add constraint deposit_addresses_derivation_is_known check (derivation in ('v4r2-1', 'v5r1-1'));
comment on column deposit_addresses.derivation is 'How the wallet was derived from the deposit key (src/chain/addresses.ts, frozen): v4r2-1 = wallet v4r2, wallet id 698983191 + derivation_index, the same address on every network (deposits made before this column); v5r1-1 = wallet v5r1, wallet id = network global id (mainnet -239, testnet and sandbox -3) XOR derivation_index.';
comment on table deposit_addresses is 'The wallet each payment is paid to, derived offline from the deposit key with derivation_index as its derivation says. address is the raw form; address_friendly the non-bounceable form shown to customers.';
