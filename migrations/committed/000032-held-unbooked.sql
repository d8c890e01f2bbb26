--! Previous: sha1:6eb0742cc9eadbc4b9c26b66ab1e151787cc9080
--! Hash: sha1:91a4fb994835e71c24f349f27feb99e101e55389
--! Message: held unbooked

-- The signer holds a wallet's planned transfers while the wallet's seqno is past every message the
-- books saw it accept (issue 31: a message not booked yet may be one of them; signing the next seqno
-- could pay it twice). It looks again every 30 s, for as long as it takes: when that is long, an
-- operator must know (kassa doctor "transfers held", the kassa_outgoing_held_unbooked_* gauges).

alter table outgoing_transfers add column held_unbooked_since timestamptz;
comment on column outgoing_transfers.held_unbooked_since is 'A planned transfer the signer holds because its wallet accepted a message the books have not seen (the signer''s unbooked_message): since when. Cleared once the books catch up (the next signer run that is not held) or the transfer changes state.';
