--! Previous: sha1:93f15580292e7c5b13a974bf10ebb9e49caf8ac4
--! Hash: sha1:047ffe9f562241e07f28bd36e5152fc684caef81
--! Message: treasury refund paid after expiry

-- A treasury refund the chain shows paid after Kassa had found it expired (issue 48 item 6): its
-- amount had been freed, and may have been asked again and paid again, within the sale or beyond
-- it. The time it had been found expired is kept beside the confirmation, so the books flag every
-- such refund, not only one that took more than the sale.
alter table outgoing_transfers
  add column expired_before_paid_at timestamptz,
  add constraint outgoing_transfers_paid_after_expiry_is_treasury check (expired_before_paid_at is null or source = 'treasury');
comment on column outgoing_transfers.expired_before_paid_at is 'A treasury refund confirmed after Kassa had found it expired (a wallet that ignored validUntil signed it anyway): when it had been found expired. Its amount had been freed meanwhile and may have been refunded again (paidAfterExpiry on the refund).';
