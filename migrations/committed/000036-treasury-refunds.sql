--! Previous: sha1:9721b54596f6ae814f262353c4d9b3fba06b197e
--! Hash: sha1:692d179d39641c14e9275f738ea83c39d5468f8a
--! Message: treasury refunds

-- A sale refunded after its window, from the store's treasury, signed by the merchant (issue 29,
-- CONTRACT §11 "Refund from the treasury"): a refund row like any other (outgoing_transfers, kind
-- refund) whose `source` is the treasury. Kassa holds no key of the treasury: the row carries the
-- TON Connect message the merchant's wallet signs (request_*), waits `awaiting_signature` until the
-- chain reader sees it leave (matched by `reference`, the comment its payload carries, on
-- `watch_account`), and is `expired` when its valid_until passed unseen (the late-commit margin after).

alter table outgoing_transfers drop constraint outgoing_transfers_state_is_known;
alter table outgoing_transfers add constraint outgoing_transfers_state_is_known
  check (state in ('planned', 'sent', 'confirmed', 'failed', 'awaiting_signature', 'expired'));

alter table outgoing_transfers
  add column source text not null default 'deposit',
  add column watch_account text,
  add column reference text,
  add column request_address text,
  add column request_amount_base_units numeric(78, 0),
  add column request_payload bytea,
  add column expired_at timestamptz,
  add constraint outgoing_transfers_source_is_known check (source in ('deposit', 'treasury')),
  add constraint outgoing_transfers_treasury_has_request check (
    (source = 'treasury') = (watch_account is not null and reference is not null and request_address is not null
                             and request_amount_base_units is not null and request_payload is not null)),
  add constraint outgoing_transfers_treasury_states check (
    case when source = 'treasury' then state in ('awaiting_signature', 'confirmed', 'expired') and valid_until is not null
         else state in ('planned', 'sent', 'confirmed', 'failed') end),
  add constraint outgoing_transfers_expired_has_time check ((state = 'expired') = (expired_at is not null));

comment on column outgoing_transfers.source is 'Where the money leaves from: deposit (Kassa''s deposit wallet, signed by Kassa''s signer) or treasury (a refund from the store''s treasury, signed by the merchant''s wallet through TON Connect; from_address is the treasury, Kassa holds no key of it).';
comment on column outgoing_transfers.watch_account is 'A treasury refund: the account whose transaction moves the money, which the chain reader watches — the treasury itself for TON, the treasury''s jetton wallet of the coin for a jetton.';
comment on column outgoing_transfers.reference is 'A treasury refund: the text comment its payload carries (a TON transfer''s body; a jetton transfer''s forward_payload), by which the chain reader recognises it leaving the treasury.';
comment on column outgoing_transfers.request_address is 'A treasury refund: the TON Connect message''s destination (raw): the customer for TON, the treasury''s jetton wallet for a jetton (a TEP-74 transfer). request_amount_base_units: nanoTON it carries; request_payload: its body (a BoC).';
comment on column outgoing_transfers.valid_until is 'A message signed by Kassa: its valid_until. A treasury refund: the TON Connect request''s validUntil; unseen LATE_COMMIT_MARGIN_MS (60 s) past it on the chain reader''s clock, the refund is expired.';
comment on column outgoing_transfers.expired_at is 'A treasury refund nobody signed in time: when it was found expired (its amount may be asked again).';

create index outgoing_transfers_treasury_watch on outgoing_transfers (watch_account) where source = 'treasury';
comment on index outgoing_transfers_treasury_watch is 'The chain reader finds the treasury refunds a transaction of a treasury (or its jetton wallet) may pay.';
create index outgoing_transfers_awaiting_signature on outgoing_transfers (valid_until) where state = 'awaiting_signature';
comment on index outgoing_transfers_awaiting_signature is 'Treasury refunds waiting for the merchant''s signature, by when they expire.';
create unique index outgoing_transfers_treasury_reference on outgoing_transfers (reference) where reference is not null;

-- A treasury refund the merchant's wallet paid more than once (signed twice): the first transfer
-- confirms it; every later one with the same reference is kept here, so the books say what left.
create table treasury_refund_repeats (
  transfer_id uuid not null references outgoing_transfers (id) on delete restrict,
  transaction_hash text not null primary key,
  transaction_lt numeric(20, 0) not null,
  amount_base_units numeric(78, 0) not null,
  seen_at timestamptz not null,
  constraint treasury_refund_repeats_hash_is_hex check (transaction_hash ~ '^[0-9a-f]{64}$')
);
comment on table treasury_refund_repeats is 'A treasury refund paid again: a transfer leaving the treasury with the reference of a refund already confirmed (the merchant signed its TON Connect request twice). Kassa cannot stop a wallet it holds no key of; it books what left (amount_base_units of the refund''s coin) and shows it on the refund (paidAgain).';
create index treasury_refund_repeats_by_transfer on treasury_refund_repeats (transfer_id);
