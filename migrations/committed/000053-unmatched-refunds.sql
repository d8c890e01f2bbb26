--! Previous: sha1:55057e41ea56c76c5b1b8e18435b34ba90552eeb
--! Hash: sha1:27fc292ae144f24b778b321abd89e63c1d90a7ae
--! Message: unmatched refunds

-- Unmatched money sent back (issue 43, CONTRACT §12: POST /v1/unmatched-transfers/{id}/refund): a
-- treasury refund (outgoing_transfers, source treasury, signed by the merchant's wallet) of money that
-- reached the treasury naming no payment. Such a refund belongs to its unmatched transfer, not to a
-- payment: exactly one of the two is set. While the refund awaits the signature (and its hold) the
-- unmatched transfer is `refunding`; the chain reader seeing it leave makes it `refunded`; a refund
-- that expired unseen leaves it `open` again.

alter table outgoing_transfers
  alter column payment_id drop not null,
  add column unmatched_transfer_id uuid references unmatched_transfers (id) on delete restrict,
  add constraint outgoing_transfers_for_payment_or_unmatched check (num_nonnulls(payment_id, unmatched_transfer_id) = 1),
  add constraint outgoing_transfers_unmatched_is_treasury_refund check (unmatched_transfer_id is null or (source = 'treasury' and kind = 'refund'));
comment on column outgoing_transfers.payment_id is 'The payment whose money it moves; null for a refund of unmatched money (unmatched_transfer_id).';
comment on column outgoing_transfers.unmatched_transfer_id is 'A treasury refund of unmatched money (POST /v1/unmatched-transfers/{id}/refund): the transfer into the treasury it sends back, whole, to its sender or an address the merchant named. Null for every other transfer out (payment_id).';
create unique index outgoing_transfers_one_unmatched_refund_awaiting on outgoing_transfers (unmatched_transfer_id)
  where unmatched_transfer_id is not null and state = 'awaiting_signature';
comment on index outgoing_transfers_one_unmatched_refund_awaiting is 'One refund of an unmatched transfer in a wallet at a time; also finds an unmatched transfer''s refunds.';

alter table unmatched_transfers drop constraint unmatched_transfers_state_is_known;
alter table unmatched_transfers add constraint unmatched_transfers_state_is_known check (state in ('open', 'refunding', 'assigned', 'refunded', 'kept'));
alter table unmatched_transfers drop constraint unmatched_transfers_open_is_unresolved;
alter table unmatched_transfers add constraint unmatched_transfers_open_is_unresolved check ((state in ('open', 'refunding')) = (resolved_at is null));
comment on column unmatched_transfers.state is 'open: nobody decided yet; refunding: a refund of it awaits the merchant''s wallet''s signature (open again if it expires unseen); assigned: booked on a payment; refunded: the refund left the treasury; kept: stays in the treasury (note).';
comment on column unmatched_transfers.resolved_at is 'When a person assigned or kept it, or when its refund left the treasury (null while open or refunding).';

create or replace view reporting.outgoing_transfers as
  select o.id, o.store_id, o.payment_id, p.order_id, o.kind, o.reason, o.state, o.coin_symbol, o.amount,
         o.sent_amount_base_units, o.fee, o.from_address, o.to_address, o.transaction_hash, o.failure_reason,
         o.created_at, o.confirmed_at, o.failed_at, o.unmatched_transfer_id
  from outgoing_transfers o left join payments p on p.id = o.payment_id;
comment on view reporting.outgoing_transfers is 'Every transfer out of a deposit wallet (sweeps to the treasury, refunds, gas top-ups) and every refund from a treasury (a payment''s, or unmatched money''s: unmatched_transfer_id) with its state and the fee it cost (TON).';
