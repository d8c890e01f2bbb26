--! Previous: sha1:8230720756258096abb3b6ccacaf6515f9447f3e
--! Hash: sha1:cf9ac14ec3e3eb1f99270a60f8a01b02b6b3048b
--! Message: treasury refund once

-- A treasury refund is never paid twice without the books saying so (issue 44 §1, issue 48 items 6
-- and 13). The merchant's wallet signs it, Kassa holds no key of the treasury: what left is booked
-- as the chain says, and every way it can differ from what was asked is kept beside the refund.

alter table outgoing_transfers
  add column asked_amount_base_units numeric(78, 0),
  add column beyond_sale_base_units numeric(78, 0),
  add column paid_from text,
  add constraint outgoing_transfers_asked_amount_differs check (
    asked_amount_base_units is null or (source = 'treasury' and asked_amount_base_units > 0 and asked_amount_base_units <> amount_base_units)),
  add constraint outgoing_transfers_beyond_sale_is_positive check (beyond_sale_base_units is null or (source = 'treasury' and beyond_sale_base_units > 0)),
  add constraint outgoing_transfers_paid_from_is_treasury_refund check (paid_from is null or (source = 'treasury' and state = 'confirmed'));

comment on column outgoing_transfers.asked_amount_base_units is 'A treasury refund whose merchant''s wallet signed another amount than the refund asked: what it asked (in the coin''s base units). amount and amount_base_units are then what moved (books = chain), and the store heard that amount in refund.confirmed.';
comment on column outgoing_transfers.beyond_sale_base_units is 'A treasury refund whose confirmation brought what left the treasury for its sale (confirmed treasury refunds and their repeats) beyond what was swept to the treasury: by how much. The money was paid twice (an expired refund asked again, then signed anyway by a wallet ignoring validUntil); Kassa cannot stop a wallet it holds no key of, it says so.';
comment on column outgoing_transfers.paid_from is 'A treasury refund paid from another account than the treasury (its ton:// link carries no sender): that account (raw), seen by the chain reader on the customer''s side by the refund''s reference. Null: paid from the treasury.';
comment on column outgoing_transfers.valid_until is 'A message signed by Kassa: its valid_until. A treasury refund: the TON Connect request''s validUntil; a wallet may sign its own, later lifetime (Tonkeeper: its time + 300 s), so the refund is held until valid_until + 600 s + LATE_COMMIT_MARGIN_MS (60 s) on the chain reader''s clock, then expired.';

create index outgoing_transfers_treasury_destination on outgoing_transfers (to_address) where source = 'treasury' and coin_symbol = 'TON';
comment on index outgoing_transfers_treasury_destination is 'The chain reader finds the TON treasury refunds a transaction of their customer may be (paid from another account through the ton:// link).';
