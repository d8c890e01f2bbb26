--! Previous: sha1:552bb2be18cb082156ef559f1e5f5c6b7edbb52a
--! Hash: sha1:8230720756258096abb3b6ccacaf6515f9447f3e
--! Message: webhook attempts in flight

-- A store's deliveries in flight (issue 48.9): the delivery job counts the attempts of the store it
-- is about to deliver for that started and have not finished, and waits its turn when the store
-- already holds its share of the delivery slots (webhooks/deliver.ts, STORE_DELIVERY_SLOTS). Only
-- attempts in flight are in this index: a few rows, whatever the size of the attempt log.
create index webhook_attempts_in_flight on webhook_attempts (started_at, delivery_id) where finished_at is null and error is null;
comment on index webhook_attempts_in_flight is 'Attempts started and not finished (nor marked interrupted): what a store has in flight, counted before each attempt so that one store''s hanging receivers hold at most its share of the delivery slots.';
