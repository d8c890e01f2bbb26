--! Previous: sha1:27fc292ae144f24b778b321abd89e63c1d90a7ae
--! Hash: sha1:97503fbf3f99524c79220f68a912af489bbc56ca
--! Message: notify subscription past due

-- A member may be told when a subscription falls past due (issue 47 item 7), now that subscriptions
-- exist (000052): the topic subscription_past_due, for the event subscription.past_due.
alter table notification_choices drop constraint notification_choices_events_are_known;
alter table notification_choices add constraint notification_choices_events_are_known
  check (events <@ array['sale', 'refund_done', 'refund_failed', 'late_money', 'transfer_failed', 'subscription_past_due']::text[]);
comment on column notification_choices.events is 'What the member is told of: sale (a payment completed), refund_done, refund_failed, late_money (money after a payment expired or was cancelled, and unmatched money), transfer_failed (a transfer of the store''s money out of Kassa failed), subscription_past_due (a subscription''s credit did not cover its next period).';
