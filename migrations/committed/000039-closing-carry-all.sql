--! Previous: sha1:552bb2be18cb082156ef559f1e5f5c6b7edbb52a
--! Hash: sha1:c7d61c2141cf53f245a11eed1b7666e72bbe1078
--! Message: closing carry-all

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
