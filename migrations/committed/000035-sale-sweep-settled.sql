--! Previous: sha1:703284fcb30908e9129c4dabd7fe88dc268f1579
--! Hash: sha1:9721b54596f6ae814f262353c4d9b3fba06b197e
--! Message: sale sweep settled

-- A sale whose refund window ended with nothing of the merchant's left above the dust line to
-- sweep (refunded in full, or the rest under 0.01 TON) is marked, so the recurring sweep planner
-- (planDueSweeps) stops asking deposit_money of it on every run: that set only grows (issue 29).
-- The merchant's share of a completed sale never grows once no transfer out is planned or in
-- flight, so the mark is final.
alter table payments add column sale_sweep_settled_at timestamptz;
comment on column payments.sale_sweep_settled_at is 'A sale with a refund window: when the sweep planner found, after the window, nothing of the merchant''s money to sweep (under the dust line) and nothing in flight; it is not asked again.';
