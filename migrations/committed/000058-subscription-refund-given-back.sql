--! Previous: sha1:f703e1248978d960ad39fbd439cde3d37d88a580
--! Hash: sha1:499e06d70cd548b108bca6a77c1d9810df15b1f2
--! Message: subscription refund given back

-- A refund of a subscription's payment that finally fails (its transfer failed, or a refund from the
-- treasury nobody signed in time) gives back to the credit what its ledger row took, once, by a
-- reversing `refund` row (positive); one that lands after all takes it again. Both name the refund,
-- so the ledger is settled by what it already holds for that refund, whatever retries happen.
alter table subscription_ledger add column refund_id uuid references outgoing_transfers (id);
comment on column subscription_ledger.refund_id is 'A refund row: the refund (outgoing_transfers.id) it is of — the row that took its value from credit when it was asked, and the one that gave it back when that refund failed or expired unsigned (or took it again when it landed after all).';
create index subscription_ledger_by_refund on subscription_ledger (refund_id) where refund_id is not null;
comment on index subscription_ledger_by_refund is 'A refund''s ledger rows, read when the refund ends (failed, expired, confirmed) to give back or take again only what is not yet.';

-- The refund rows written before name their refund in their note ("refund <id> of …"). The ledger
-- is append-only: its trigger is set aside for this one update.
alter table subscription_ledger disable trigger subscription_ledger_append_only;
update subscription_ledger l set refund_id = o.id
  from outgoing_transfers o
  where l.kind = 'refund' and l.refund_id is null and l.note ~ '^refund [0-9a-f-]{36}'
    and o.id = substring(l.note from '^refund ([0-9a-f-]{36})')::uuid;
alter table subscription_ledger enable trigger subscription_ledger_append_only;

comment on column subscription_ledger.kind is 'credit (money of a subscription''s payment, late money included), charge (a period charged), adjustment (a manual credit, POST /v1/subscriptions/{id}/credits), refund (a refund of a subscription''s payment: negative, its value taken from credit as far as the credit goes, the period stays; positive, that value given back when the refund failed or expired unsigned — refund_id names the refund).';

create or replace view reporting.subscription_ledger as
  select l.store_id, l.subscription_id, s.customer_reference, p.name as plan_name, l.id as entry_id, l.position, l.kind, l.amount, l.currency,
         l.balance_after, l.period_start, l.period_end, l.payment_id, l.actor, l.note, l.created_at, l.refund_id
  from subscription_ledger l
  join subscriptions s on s.id = l.subscription_id
  join plans p on p.id = s.plan_id;
comment on view reporting.subscription_ledger is 'Every change of every subscription''s credit (in the order written when ordered by position): credit (money paid, late money included), charge (a period, with its start and end), adjustment (a manual credit: actor is the API token''s id, note why), refund (negative: taken from credit by a refund; positive: given back when that refund failed; refund_id names it). amount is signed (negative takes from credit); balance_after is the credit after it. Filter by store_id.';
comment on view reporting.subscriptions is 'Each subscription with its plan (name, price now, interval), status, credit and periods charged, and its ledger summed by kind in the plan''s currency: credited (money paid), charged (periods), refunded (taken from credit by refunds, less what refunds that failed gave back), adjusted (manual credits). Filter by store_id.';
