--! Previous: sha1:6ec3b6f38b1089f6318b0a0845c805b4ba125e30
--! Hash: sha1:37aef057ed26836fa5f1ea1cbf29463960a71cb0
--! Message: store refund gas

-- Kassa schema: the shared gas wallet is never spent on one store's behalf without that store
-- having paid for it (issue 25, outcome 4). A jetton refund's TON comes from the gas wallet (a
-- jetton deposit holds no TON of its own); it is charged to the refund's store, and the refund is
-- refused unless what the store has paid for refund gas (store_gas_payments, recorded by the
-- operator: `kassa gas paid`) covers it. Also: outgoing_transfers.attempts was never written
-- (transient retries are counted from the failed rows themselves): dropped.

create table store_gas_payments (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references stores (id),
  amount_base_units numeric(78, 0) not null check (amount_base_units <> 0),
  note text,
  recorded_at timestamptz not null
);
create index store_gas_payments_store on store_gas_payments (store_id);
comment on table store_gas_payments is 'TON a store paid the operator for the gas of its jetton refunds (nanoTON; negative: a correction), recorded with `kassa gas paid`. Append-only: the store''s refund gas account is store_refund_gas.';
comment on column store_gas_payments.amount_base_units is 'nanoTON paid (negative: taken back, a correction).';
comment on column store_gas_payments.note is 'What the operator wrote about it (e.g. the transaction that paid it).';

create function store_refund_gas(p_store uuid)
returns table (paid numeric, spent numeric, available numeric)
language sql stable as $$
  with paid as (
    select coalesce(sum(g.amount_base_units), 0) as paid from store_gas_payments g where g.store_id = p_store
  ),
  -- A jetton refund's TON cost as deposit_money counts it: the real one once the chain says it
  -- (the 0.05 TON attached to its message and the fee), the reserve before; nothing when it failed unsent.
  refunds as (
    select coalesce(sum(case when o.state in ('confirmed', 'failed') then coalesce(o.fee_base_units, 0) else o.fee_reserved_base_units end), 0) as cost
    from outgoing_transfers o where o.store_id = p_store and o.kind = 'refund' and o.coin_symbol <> 'TON'
  ),
  -- The gas wallet's own fee for the top-ups it sent for them.
  top_ups as (
    select coalesce(sum(coalesce(t.fee_base_units, 0)), 0) as cost
    from outgoing_transfers t join outgoing_transfers r on r.id = t.for_transfer_id
    where t.kind = 'gas_top_up' and r.kind = 'refund' and r.store_id = p_store
  )
  select paid.paid, refunds.cost + top_ups.cost, paid.paid - refunds.cost - top_ups.cost from paid, refunds, top_ups
$$;
comment on function store_refund_gas(uuid) is 'A store''s refund gas account (nanoTON): paid (store_gas_payments), spent (the TON cost of its jetton refunds — what the chain said, or the reserve while planned or in flight — and the gas wallet''s fees for their top-ups) and available (paid less spent). A jetton refund is accepted only when available covers its reserve.';

create view reporting.store_refund_gas as
  select s.id as store_id, s.name, g.paid as paid_base_units, g.spent as spent_base_units, g.available as available_base_units
  from stores s cross join lateral store_refund_gas(s.id) g;
comment on view reporting.store_refund_gas is 'Each store''s refund gas account in nanoTON (divide by 10^9): what it paid for its jetton refunds'' gas, what they cost, what is left.';

alter table outgoing_transfers drop column attempts;
comment on column outgoing_transfers.failure_kind is 'A failed transfer: permanent (refused by a jetton wallet, a bad destination, not enough money, or a transient one past its last retry: never planned again by itself) or transient (the planner may plan the same transfer again after retry_at; earlier transient failures of the same payment, kind, reason and coin are counted from these rows, treasury/transitions.ts).';

-- 0.01 TON — a TON transfer's fee at most, the dust line and the smallest TON refund — is one
-- named figure here too (treasury/outgoing.ts TON_FEE_RESERVE_BASE_UNITS; a test holds them equal).
create function ton_fee_reserve_base_units() returns numeric language sql immutable as $$ select 10000000::numeric $$;
comment on function ton_fee_reserve_base_units() is 'nanoTON set aside for a TON transfer''s fee (0.01 TON): also the dust line (less TON is not swept) and the smallest TON refund. The code''s TON_FEE_RESERVE_BASE_UNITS.';
update coins set refund_minimum_base_units = ton_fee_reserve_base_units() where symbol = 'TON';
comment on view reporting.refundable_money is 'What each deposit holds that is refundable (deposit_money: the customer''s money less refunds, held-money sweeps and their fees), per coin, in base units (divide by 10^decimals), with when the last money arrived: it is swept to the treasury REFUND_HOLD_DAYS after that. TON under ton_fee_reserve_base_units() (0.01 TON) is dust: it stays.';

-- A refund asked in the payment's currency (fiat) rather than in the coin: what was asked and the
-- rate that converted it (the payment's own, or the day's), kept beside the coin amount.
alter table outgoing_transfers add column requested_amount numeric;
alter table outgoing_transfers add column requested_currency text;
alter table outgoing_transfers add column exchange_rate numeric;
alter table outgoing_transfers add column exchange_rate_source text;
alter table outgoing_transfers add constraint outgoing_transfers_requested_together check (
  (requested_amount is null) = (requested_currency is null) and (requested_amount is null) = (exchange_rate is null)
);
comment on column outgoing_transfers.requested_amount is 'A refund asked in the payment''s currency: the amount asked, in requested_currency (amount is its conversion into the coin).';
comment on column outgoing_transfers.requested_currency is 'A refund asked in the payment''s currency: that currency (e.g. USD).';
comment on column outgoing_transfers.exchange_rate is 'A refund asked in the payment''s currency: coins per one unit of it, as used (the payment''s own rate, or the day''s); amount = requested_amount × rate rounded up to the coin''s decimals.';
comment on column outgoing_transfers.exchange_rate_source is 'Where exchange_rate came from: payment (the rate the payment was priced with) or the rate source of the day (e.g. tonapi+coingecko, fixed).';
