--! Previous: sha1:361f184b600cb8d02b9a8c911483ca0367eb7b56
--! Hash: sha1:d30c9566e5d0bb3af80b340c985dd65027065509
--! Message: closing carry-all, jetton delivery

-- A closing message never hands late money to a stranger (issue 44 §2). Wallet v5 accepts no reserve
-- action, so its last action, which carries the whole balance (+128), takes whatever reached the
-- deposit between the signer's look at the books and the wallet's transaction. It now goes to an
-- address Kassa or the merchant controls — the store's treasury, else Kassa's gas wallet — never to
-- the refund's address; the refund itself is sent as an exact value, its fee paid on top (+1).
alter table outgoing_transfers add column carry_all_to text;
comment on column outgoing_transfers.carry_all_to is 'The closing message this transfer leads (closing.ts): where its last action, carrying the whole remaining balance, went (raw; the store''s treasury, else Kassa''s gas wallet; the transfer''s own address when it is that action itself, a final sweep). Null for any other message.';
alter table outgoing_transfers add constraint outgoing_transfers_carry_all_to_is_raw check (carry_all_to is null or carry_all_to ~ '^-?[0-9]+:[0-9a-f]{64}$');
alter table outgoing_transfers add column books_lt numeric(20, 0);
comment on column outgoing_transfers.books_lt is 'A closing message: the lt of the newest incoming transaction of the deposit its books held when it was signed (0: none). What the carry-all took beyond the plan is attributed from the deposit''s transfers after it and before the closing transaction: money that arrived since.';
-- What the carry-all carried beyond its plan is booked on rows of its own (closing_of the message's
-- transfer): the money that arrived since, a share the wallet skipped (+2), the unused part of the
-- refund's fee. A fee is what a transfer cost, never a gain: it cannot be below zero. Rows written
-- before this rule (a closing refund whose fee was the transaction's less its shares') are not checked.
alter table outgoing_transfers add constraint outgoing_transfers_fee_not_negative check (fee_base_units is null or fee_base_units >= 0) not valid;
alter table outgoing_transfers add constraint outgoing_transfers_sent_not_negative check (sent_amount_base_units is null or sent_amount_base_units >= 0) not valid;

-- A jetton transfer out is confirmed when its destination has it (issue 44 §3): the receiving jetton
-- wallet's successful internal_transfer from the sending jetton wallet, with the transfer's own query
-- id; not when the deposit's transaction leaves (two hops before). A bounce is caught at the sending
-- jetton wallet for every coin a deposit sends, not only the payment's own.
alter table outgoing_transfers add column query_id numeric(20, 0);
comment on column outgoing_transfers.query_id is 'A jetton transfer: the TEP-74 query id its message carried, unique per transfer (from its id); the receiving jetton wallet''s internal_transfer and a bounce name it. Null before this column (the deposit''s wallet seqno was the query id then).';
alter table outgoing_transfers add column jetton_wallet text;
comment on column outgoing_transfers.jetton_wallet is 'A jetton transfer out of a deposit: the sending jetton wallet (the deposit''s of that coin), where a bounce comes back.';
alter table outgoing_transfers add column destination_jetton_wallet text;
comment on column outgoing_transfers.destination_jetton_wallet is 'A jetton transfer out of a deposit: the receiving jetton wallet (the destination''s of that coin, asked of its master when signed); its successful internal_transfer delivers the transfer. Null when it could not be asked: then the transfer is delivered when it leaves, as before.';
alter table outgoing_transfers add column delivered_at timestamptz;
comment on column outgoing_transfers.delivered_at is 'When the destination had it: a TON transfer when it left; a jetton transfer when the receiving jetton wallet took it. A confirmed jetton refund or sweep not delivered yet is shown as sent, and its refund.confirmed or sweep.confirmed event waits for this.';
alter table outgoing_transfers add constraint outgoing_transfers_jetton_wallets_are_raw check (
  (jetton_wallet is null or jetton_wallet ~ '^-?[0-9]+:[0-9a-f]{64}$') and (destination_jetton_wallet is null or destination_jetton_wallet ~ '^-?[0-9]+:[0-9a-f]{64}$'));
update outgoing_transfers set delivered_at = confirmed_at where state = 'confirmed';
create index outgoing_transfers_in_delivery_to on outgoing_transfers (destination_jetton_wallet) where state = 'confirmed' and delivered_at is null;
comment on index outgoing_transfers_in_delivery_to is 'The chain reader finds the jetton transfers on their way by the receiving jetton wallet of a transaction it reads.';
create index outgoing_transfers_in_delivery_from on outgoing_transfers (jetton_wallet) where state = 'confirmed' and delivered_at is null;
comment on index outgoing_transfers_in_delivery_from is 'The same by the sending jetton wallet, where a bounce comes back.';
-- A treasury jetton refund that bounces back to the treasury's jetton wallet (a frozen customer wallet) is failed.
alter table outgoing_transfers drop constraint outgoing_transfers_treasury_states;
alter table outgoing_transfers add constraint outgoing_transfers_treasury_states check (
  case when source = 'treasury' then state in ('awaiting_signature', 'confirmed', 'expired', 'failed') and valid_until is not null
       else state in ('planned', 'sent', 'confirmed', 'failed') end);
