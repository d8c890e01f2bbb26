--! Previous: sha1:3a8477598c690626ef6213466bd9ef1afceae3f3
--! Hash: sha1:5d26c62dddb3ffe1034fbf92f3b39bc871c81e2c
--! Message: outgoing messages

-- Every message ever signed for a transfer out (issue 31): a message signed, found expired unseen and
-- signed again could still land when its shard block was committed to the masterchain late; its hash
-- stays here, so the chain reader confirms the transfer by whichever of its messages landed.

create table outgoing_messages (
  transfer_id uuid not null references outgoing_transfers (id) on delete cascade,
  wallet_seqno bigint not null,
  valid_until timestamptz not null,
  message_hash text not null,
  message_hash_normalized text not null,
  signed_at timestamptz not null,
  primary key (transfer_id, message_hash),
  constraint outgoing_messages_hashes_are_hex check (message_hash ~ '^[0-9a-f]{64}$' and message_hash_normalized ~ '^[0-9a-f]{64}$')
);
comment on table outgoing_messages is 'Every external message the signer signed and recorded for an outgoing transfer, one row per transfer it carries (a gas wallet batch carries several), kept after the message expired: a message can land after its valid_until when its shard block is committed to the masterchain late, and then it still confirms its transfer. outgoing_transfers.message_hash is the newest; outgoing_transfers.messages_signed counts these rows.';
comment on column outgoing_messages.valid_until is 'The message''s valid_until: no wallet accepts it after this time; the signer treats it as unable to land only once the chain reader has read the chain LATE_COMMIT_MARGIN_MS (60 s) past it.';
create index outgoing_messages_by_hash on outgoing_messages (message_hash);
comment on index outgoing_messages_by_hash is 'The chain reader finds the transfers a wallet''s transaction sent by the hash of the message that started it.';
create index outgoing_messages_by_normalized_hash on outgoing_messages (message_hash_normalized);
comment on index outgoing_messages_by_normalized_hash is 'The same, by the TEP-467 normalized hash (toncenter reports either).';

insert into outgoing_messages (transfer_id, wallet_seqno, valid_until, message_hash, message_hash_normalized, signed_at)
select id, wallet_seqno, valid_until, message_hash, message_hash_normalized, coalesce(signed_at, updated_at)
from outgoing_transfers
where message_hash is not null and message_hash_normalized is not null and wallet_seqno is not null and valid_until is not null;

comment on column outgoing_transfers.messages_signed is 'How many messages were signed for this transfer (its rows in outgoing_messages). A message is signed again only after the one before expired unseen: the chain reader read the chain LATE_COMMIT_MARGIN_MS past its valid_until without seeing it. The transfer fails (transient) when MAX_MESSAGES_SIGNED (5) messages all expired unseen.';
comment on table outgoing_transfers is 'Every transfer out of a deposit wallet: sweeps to the store''s treasury (reason payment: a completed payment''s counted amount; held_money: refundable money after REFUND_HOLD_DAYS), refunds the merchant asked for, and gas top-ups. planned: on the books, not signed yet; sent: signed (wallet_seqno, valid_until, message_hash: the message in flight) and recorded before it was broadcast, so a repeat broadcasts the same message (harmless); confirmed: the chain reader saw the deposit''s transaction that sent it (by any message ever signed for it, outgoing_messages); failed: it did not leave (failure_reason). A sent message the chain reader has read 60 s (the late-commit margin) past its valid_until without seeing it is planned again and signed afresh (messages_signed counts them).';
