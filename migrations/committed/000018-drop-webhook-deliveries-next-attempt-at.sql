--! Previous: sha1:b517d27d81781f1d3178994a0caf54908ff0fb76
--! Hash: sha1:6ec3b6f38b1089f6318b0a0845c805b4ba125e30
--! Message: drop webhook_deliveries next_attempt_at

-- webhook_deliveries.next_attempt_at was never read and never set to a time: Graphile Worker alone
-- times a delivery's retries, and when the next one runs is the retry job's run_at, recorded on the
-- attempt it retries (webhook_attempts.next_retry_at, GET /v1/payments/{id}/webhook-deliveries).
-- No view reads the column.

alter table webhook_deliveries drop column next_attempt_at;
