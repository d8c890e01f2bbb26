--! Previous: sha1:a1fae402b22989731da2ae12033a3975809ce4e9
--! Hash: sha1:8edc83e3df1e3a8ad7796fcb0a28a12655ca9b3d
--! Message: treasury refund request sent

-- One request for a treasury refund across every browser and device of the store (issue 44 §1): the
-- dashboard records when it hands the refund's TON Connect request to a wallet, before it does. The
-- first recording wins; while it is set no other page offers "Sign with your wallet" for the refund,
-- until the wallet's own refusal clears it or the request can no longer land (heldUntil).
alter table outgoing_transfers add column request_sent_at timestamptz;
comment on column outgoing_transfers.request_sent_at is 'A treasury refund: when a dashboard page handed its TON Connect request to a wallet (null: none holds it, or the wallet declined it). Held until valid_until + the longest wallet lifetime + the late-commit margin.';
