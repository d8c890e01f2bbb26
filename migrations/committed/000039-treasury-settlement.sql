--! Previous: sha1:552bb2be18cb082156ef559f1e5f5c6b7edbb52a
--! Hash: sha1:eea7bf887d13d46e2a79f9bce071b48378cc15b9
--! Message: treasury settlement

-- Settling straight to the store's treasury by reference (issue 43, CONTRACT §12): a store may have
-- its customers pay its treasury directly, each payment told apart by the reference its customer
-- sends as a comment; no deposit wallet, no sweep, no key. Money that arrives there matching no
-- payment is kept as an unmatched transfer.

alter table stores add column settlement text not null default 'deposit';
alter table stores add constraint stores_settlement_is_known check (settlement in ('deposit', 'treasury'));
alter table stores add constraint stores_treasury_settlement_has_treasury check (settlement = 'deposit' or treasury is not null);
comment on column stores.settlement is 'How its payments are paid: deposit (one deposit wallet per payment, swept to the treasury) or treasury (the customer pays the treasury itself, with the payment''s reference as the comment). New payments take it; a payment keeps the one it was created with.';
create index stores_by_treasury_settlement on stores (treasury) where settlement = 'treasury';
comment on index stores_by_treasury_settlement is 'The chain reader: which of a block''s accounts is the treasury of a store settling there.';

alter table payments
  add column settlement text not null default 'deposit',
  add column settlement_address text,
  add column settlement_address_friendly text,
  add column reference text;
alter table payments add constraint payments_settlement_is_known check (settlement in ('deposit', 'treasury'));
alter table payments add constraint payments_treasury_settlement_is_whole check (
  (settlement = 'deposit' and settlement_address is null and settlement_address_friendly is null and reference is null)
  or (settlement = 'treasury' and settlement_address is not null and settlement_address_friendly is not null and reference is not null));
alter table payments add constraint payments_reference_is_crockford check (reference ~ '^[0-9A-HJKMNP-TV-Z]{9}$');
comment on column payments.settlement is 'The store''s settlement when the payment was created (deposit or treasury); it never changes.';
comment on column payments.settlement_address is 'Treasury settlement: the store''s treasury (raw) when the payment was created, where the customer pays.';
comment on column payments.settlement_address_friendly is 'settlement_address in the non-bounceable form shown to customers.';
comment on column payments.reference is 'Treasury settlement: 8 Crockford base32 characters and a check character (mod 37), shown XXXX-XXXXX, that the customer sends as the comment.';
create unique index payments_reference_while_open on payments (reference) where reference is not null and status in ('created', 'pending');
comment on index payments_reference_while_open is 'A reference names one payment while that payment can be paid (created, pending); the create draws again on a clash.';
create index payments_by_reference on payments (settlement_address, reference) where settlement = 'treasury';
comment on index payments_by_reference is 'The chain reader: the payment a transfer into a treasury names by its reference (open first), and the references one character away.';

create table unmatched_transfers (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references stores (id) on delete cascade,
  account text not null,
  lt numeric(20, 0) not null,
  hash text not null,
  coin_symbol text not null references coins (symbol) on delete restrict,
  amount_base_units numeric(78, 0) not null,
  amount numeric not null,
  sender text,
  comment text,
  reference text,
  reason text not null,
  suggestions jsonb not null default '[]',
  state text not null default 'open',
  payment_id uuid references payments (id) on delete cascade,
  resolved_at timestamptz,
  note text,
  chain_time timestamptz not null,
  recorded_at timestamptz not null,
  constraint unmatched_transfers_once_per_store unique (store_id, account, lt, hash),
  constraint unmatched_transfers_reason_is_known check (reason in ('no_reference', 'unknown_reference', 'malformed_reference', 'encrypted')),
  constraint unmatched_transfers_state_is_known check (state in ('open', 'assigned', 'refunded', 'kept')),
  constraint unmatched_transfers_amount_is_positive check (amount_base_units > 0),
  constraint unmatched_transfers_hash_is_hex check (hash ~ '^[0-9a-f]{64}$'),
  constraint unmatched_transfers_open_is_unresolved check ((state = 'open') = (resolved_at is null)),
  constraint unmatched_transfers_assigned_has_payment check (state <> 'assigned' or payment_id is not null)
);
comment on table unmatched_transfers is 'Money that reached a treasury-settlement store''s treasury matching no payment (no comment, an unknown or mistyped reference, an encrypted comment, binary junk): kept, never lost, with suggestions a person may act on (never applied by themselves). Keyed by the chain identity of its transaction, per store.';
comment on column unmatched_transfers.reference is 'What the comment carried that looks like a reference (normalised: upper case, no dash), if anything.';
comment on column unmatched_transfers.suggestions is '[{paymentID, why}]: why is reference_one_character_away, same_amount_open (a payment of the same coin and amount open at its chain time) or same_sender (who paid an earlier payment of the store).';
comment on column unmatched_transfers.comment is 'The text comment it carried, as the books keep comments (at most 1,000 characters), if any.';
create index unmatched_transfers_by_store on unmatched_transfers (store_id, state, chain_time desc);
comment on column unmatched_transfers.payment_id is 'assigned: the payment a person booked it on (POST /v1/unmatched-transfers/{id}/assign), as if it had carried its reference, at its chain time (the books then hold it in transfers too).';
comment on column unmatched_transfers.resolved_at is 'When a person assigned, refunded or kept it (null while open).';
comment on index unmatched_transfers_by_store is 'GET /v1/unmatched-transfers?state=: a store''s, newest first.';

alter table webhook_endpoints drop constraint webhook_endpoints_events_are_known;
alter table webhook_endpoints add constraint webhook_endpoints_events_are_known check (
  cardinality(events) > 0 and events <@ array['payment.pending', 'payment.completed', 'payment.expired', 'payment.cancelled',
    'payment.money_received', 'refund.confirmed', 'refund.failed', 'sweep.confirmed', 'sweep.failed', 'money.unmatched', 'money.assigned']::text[]);
alter table webhook_deliveries drop constraint webhook_deliveries_event_is_known;
alter table webhook_deliveries add constraint webhook_deliveries_event_is_known check (event in ('payment.pending', 'payment.completed', 'payment.expired',
  'payment.cancelled', 'payment.money_received', 'refund.confirmed', 'refund.failed', 'sweep.confirmed', 'sweep.failed', 'money.unmatched', 'money.assigned', 'ping'));
