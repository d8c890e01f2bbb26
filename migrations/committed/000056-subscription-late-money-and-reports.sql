--! Previous: sha1:1c3970757383a69f48acf2effb678fd7f1e6f4e8
--! Hash: sha1:8ebf2843916117f2597db7d829f978b3c79a1e34
--! Message: subscription late money, refunds in the ledger, reporting views

-- Subscriptions, the second part (issue 45; docs/API.md, Subscriptions). Money of a subscription's
-- payment that arrives after it completed or expired is credited too: a payment may now have several
-- credit rows (each the part not yet credited, written under the subscription's row lock, so each
-- coin is credited once), so the one-credit-per-payment index goes.
drop index subscription_ledger_credit_once;
create index subscription_ledger_by_payment on subscription_ledger (payment_id, kind) where payment_id is not null;
comment on column subscription_ledger.payment_id is 'A credit: the payment whose money it is (its completion, or money that arrived after it completed or expired); a refund: the payment refunded.';
comment on column subscription_ledger.kind is 'credit (money of a subscription''s payment, late money included), charge (a period charged), adjustment (a manual credit, POST /v1/subscriptions/{id}/credits), refund (a refund of a subscription''s payment: its value taken from credit as far as the credit goes; the period stays).';

-- The order rows were written in: a manual credit and the charge it pays are written in one
-- transaction, with the same created_at (the transaction's clock); ordered by their random ids they
-- came back either way round.
alter table subscription_ledger add column position bigint generated always as identity;
create index subscription_ledger_in_order on subscription_ledger (subscription_id, position);
comment on column subscription_ledger.position is 'The order rows were written in (rising; gaps possible): GET …/ledger lists a subscription''s rows by it, so balance_after follows row by row.';

create view reporting.subscriptions as
  select s.store_id, s.id as subscription_id, s.customer_reference, s.status, p.id as plan_id, p.name as plan_name,
         p.currency, p.amount as plan_price, p.interval_unit, p.interval_count,
         s.credit, s.periods_charged, s.anchor_at, s.current_period_end, s.cancel_at_period_end, s.created_at, s.cancelled_at, s.expired_at,
         coalesce(sum(l.amount) filter (where l.kind = 'credit'), 0) as credited,
         coalesce(-sum(l.amount) filter (where l.kind = 'charge'), 0) as charged,
         coalesce(-sum(l.amount) filter (where l.kind = 'refund'), 0) as refunded,
         coalesce(sum(l.amount) filter (where l.kind = 'adjustment'), 0) as adjusted
  from subscriptions s
  join plans p on p.id = s.plan_id
  left join subscription_ledger l on l.subscription_id = s.id
  group by s.id, p.id;
comment on view reporting.subscriptions is 'Each subscription with its plan (name, price now, interval), status, credit and periods charged, and its ledger summed by kind in the plan''s currency: credited (money paid), charged (periods), refunded (taken from credit by refunds), adjusted (manual credits). Filter by store_id.';

create view reporting.subscription_ledger as
  select l.store_id, l.subscription_id, s.customer_reference, p.name as plan_name, l.id as entry_id, l.position, l.kind, l.amount, l.currency,
         l.balance_after, l.period_start, l.period_end, l.payment_id, l.actor, l.note, l.created_at
  from subscription_ledger l
  join subscriptions s on s.id = l.subscription_id
  join plans p on p.id = s.plan_id;
comment on view reporting.subscription_ledger is 'Every change of every subscription''s credit (in the order written when ordered by position): credit (money paid, late money included), charge (a period, with its start and end), adjustment (a manual credit: actor is the API token''s id, note why), refund. amount is signed (negative takes from credit); balance_after is the credit after it. Filter by store_id.';
