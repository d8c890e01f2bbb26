--! Previous: sha1:3d8b80eef2c7a648a72db516d5c29017b37fc14b
--! Hash: sha1:fa285efd82b6732d92ff044743e857bfe1439382
--! Message: reporting views

-- Reporting: documented views merchants can query in SQL. Columns are named for people; every
-- view carries store_id so a report can be limited to one store.
create schema if not exists reporting;
comment on schema reporting is 'Views for merchants'' own reports (payments by day, received against expected, late and extra money, webhook outcomes). Query them in SQL; filter by store_id.';

create view reporting.payments_by_day as
  select p.store_id, (p.created_at at time zone 'UTC')::date as day, p.status, p.currency,
         count(*) as payments, sum(p.amount) as total_amount
  from payments p
  group by p.store_id, (p.created_at at time zone 'UTC')::date, p.status, p.currency;
comment on view reporting.payments_by_day is 'Payments created per UTC day, by status and currency, with the sum of their amounts (in that currency).';

create view reporting.payment_receipts as
  select p.id as payment_id, p.store_id, p.order_id, p.status, p.currency, p.amount, p.coin_symbol,
         p.coin_amount as expected_coin_amount,
         coalesce(sum(t.amount) filter (where t.effect in ('partial', 'completed', 'overpaid')), 0) as received_coin_amount,
         coalesce(sum(t.amount) filter (where t.effect in ('partial', 'completed', 'overpaid')), 0) - p.coin_amount as difference,
         count(t.hash) as transfers, count(t.hash) filter (where t.effect not in ('partial', 'completed', 'overpaid')) as uncounted_transfers,
         p.exchange_rate, p.exchange_rate_source, p.created_at, p.expires_at, p.paid_at
  from payments p
  left join transfers t on t.payment_id = p.id
  where p.coin_amount is not null
  group by p.id;
comment on view reporting.payment_receipts is 'Each payment that had a method: the coin amount expected, the amount counted toward it, the difference (negative: underpaid, positive: overpaid), and how many transfers did not count.';

create view reporting.late_and_extra_money as
  select t.payment_id, p.store_id, p.order_id, p.status as payment_status, t.effect, t.coin_symbol, t.amount,
         t.amount_base_units, t.jetton_master, t.sender, t.hash, t.chain_time, t.recorded_at, t.detail
  from transfers t
  join payments p on p.id = t.payment_id
  where t.effect in ('overpaid', 'wrong_coin', 'after_expiry', 'after_cancel', 'after_completion', 'unknown_token');
comment on view reporting.late_and_extra_money is 'Money that arrived but did not (only) pay: overpayments, wrong coins, transfers after expiry, cancel or completion, and tokens Kassa does not accept. Each needs a decision (refund, credit) by the merchant.';

create view reporting.webhook_outcomes as
  select d.payment_id, p.store_id, p.order_id, d.id as delivery_id, d.reason, d.status, d.attempts, d.url,
         d.created_at, d.first_attempt_at, d.delivered_at, d.failed_at,
         last_attempt.http_status as last_http_status, last_attempt.error as last_error
  from webhook_deliveries d
  join payments p on p.id = d.payment_id
  left join lateral (
    select a.http_status, a.error from webhook_attempts a where a.delivery_id = d.id order by a.attempt desc limit 1
  ) last_attempt on true;
comment on view reporting.webhook_outcomes is 'Every webhook delivery with its outcome (pending, delivered, failed), its number of attempts and the last answer or error.';
