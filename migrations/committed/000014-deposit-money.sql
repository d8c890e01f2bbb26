--! Previous: sha1:0a21cefa55ef01eebbf60b21ecaf3a2584b5ae5a
--! Hash: sha1:aa61c62136c62a2ff42dd89fb1d58b17f531c9ec
--! Message: deposit money

-- Kassa schema: money out on one definition of a deposit's money (issue 25). A deposit's money per
-- coin — received, held, counted, refunded, swept, fees and refundable — is the function
-- deposit_money; the refunds API, the sweep planner and the reporting schema all read it. Base
-- units come from stored amounts only (payments.coin_amount_base_units is written by the code with
-- money.ts; rows made before it are converted once here).

alter table payments add column coin_amount_base_units numeric(78, 0);
update payments p set coin_amount_base_units = (p.coin_amount * power(10::numeric, c.decimals))::numeric(78, 0)
  from coins c where c.symbol = p.coin_symbol and p.coin_amount is not null;
alter table payments add constraint payments_coin_amount_has_base_units check ((coin_amount is null) = (coin_amount_base_units is null));
comment on column payments.coin_amount_base_units is 'coin_amount in the coin''s base units (money.ts toBaseUnits when the method is chosen): what the merchant''s counted money is in every sum.';

alter table coins add column refund_minimum_base_units numeric(78, 0) not null default 0;
update coins set refund_minimum_base_units = case symbol when 'TON' then 10000000 when 'USDT' then 100000 when 'XAUt0' then 100 else 1000000000 end;
comment on column coins.refund_minimum_base_units is 'The smallest refund of this coin (base units), so that a refund never costs more than it moves: a TON refund''s fee is about 0.003 TON, a jetton refund''s TON about 0.03 TON (TON 0.01; USDT 0.1; XAUt0 0.0001; other jettons 1).';

alter table outgoing_transfers add column fee_reserved_base_units numeric(78, 0) not null default 0;
comment on column outgoing_transfers.fee_reserved_base_units is 'nanoTON set aside for this transfer''s fee when it was planned (a TON transfer: its fee; a jetton transfer: the TON attached to its message and its fee). The books count it until the chain says the real fee (fee_base_units).';
-- Refunds planned before this migration were partial refunds under the old rule, never "the refund
-- of everything" (which is told by a reserve of 0): they get the reserve a refund gets now (TON:
-- 0.01 TON, treasury/outgoing.ts TON_FEE_RESERVE_BASE_UNITS; a jetton: the 0.05 TON attached to its
-- message, chain/jettonTransfer.ts JETTON_TRANSFER_TON, and that fee), so that no earlier refund
-- carries the whole deposit, the merchant's money with it.
update outgoing_transfers set fee_reserved_base_units = case when coin_symbol = 'TON' then 10000000 else 60000000 end
where kind = 'refund';
alter table outgoing_transfers add column failure_kind text;
alter table outgoing_transfers add column attempts integer not null default 0;
alter table outgoing_transfers add column retry_at timestamptz;
alter table outgoing_transfers add constraint outgoing_transfers_failure_kind_is_known check (failure_kind is null or failure_kind in ('permanent', 'transient'));
comment on column outgoing_transfers.failure_kind is 'A failed transfer: permanent (refused by a jetton wallet, a bad destination, not enough money: never planned again by itself) or transient (planned again after retry_at, at most a few times: attempts counts them).';
comment on column outgoing_transfers.retry_at is 'A transient failure: when the planner may plan the transfer again (backoff).';

create function deposit_money(p_payment uuid)
returns table (
  coin_symbol text,
  decimals integer,
  received numeric,
  held numeric,
  counted numeric,
  refunded numeric,
  swept numeric,
  fees numeric,
  merchant_unswept numeric,
  gas numeric,
  gas_free numeric,
  refundable numeric,
  last_money_at timestamptz
)
language sql stable as $$
  with p as (
    select p.id, p.status, p.coin_symbol, p.coin_amount_base_units, d.address
    from payments p left join deposit_addresses d on d.payment_id = p.id where p.id = p_payment
  ),
  coins_of as (
    select t.coin_symbol from transfers t where t.payment_id = p_payment and t.coin_symbol is not null
    union select o.coin_symbol from outgoing_transfers o where o.payment_id = p_payment and o.kind <> 'gas_top_up'
    union select p.coin_symbol from p where p.coin_symbol is not null
    union select 'TON'
  ),
  incoming as (
    select t.coin_symbol,
      coalesce(sum(t.amount_base_units) filter (where t.effect not in ('not_credited', 'not_counted', 'unknown_token')), 0) as credited,
      coalesce(sum(t.fee_base_units) filter (where t.effect not in ('not_credited', 'not_counted', 'unknown_token')), 0) as credited_fees,
      coalesce(sum(t.amount_base_units) filter (where t.effect in ('partial', 'completed', 'overpaid')), 0) as counted_in,
      coalesce(sum(t.amount_base_units - coalesce(t.fee_base_units, 0)) filter (where t.effect = 'not_counted'), 0) as kassa_in,
      max(t.recorded_at) filter (where t.effect not in ('not_credited', 'not_counted', 'unknown_token')) as last_money_at
    from transfers t where t.payment_id = p_payment and t.coin_symbol is not null
    group by t.coin_symbol
  ),
  -- What each transfer out of the deposit takes: its coin (what it sent once confirmed; its amount
  -- while planned or in flight; nothing when it failed) and its TON cost (the real fee once the
  -- chain says it, the reserve before).
  outgoing as (
    select o.coin_symbol, o.kind, o.reason,
      case when o.state = 'confirmed' then coalesce(o.sent_amount_base_units, o.amount_base_units) when o.state = 'failed' then 0 else o.amount_base_units end as moved,
      case when o.state in ('confirmed', 'failed') then coalesce(o.fee_base_units, 0) else o.fee_reserved_base_units end as cost,
      o.state
    from outgoing_transfers o, p where o.payment_id = p_payment and o.from_address = p.address and o.kind <> 'gas_top_up'
  ),
  per_coin as (
    select c.coin_symbol, co.decimals::int as decimals,
      coalesce(i.credited, 0) as received,
      case when p.status in ('created', 'pending') then coalesce(i.counted_in, 0) else 0 end as held,
      case when p.status = 'completed' and p.coin_symbol = c.coin_symbol then p.coin_amount_base_units else 0 end as counted,
      coalesce((select sum(o.moved) from outgoing o where o.coin_symbol = c.coin_symbol and o.kind = 'refund' and o.state <> 'failed'), 0) as refunded,
      coalesce((select sum(o.moved) from outgoing o where o.coin_symbol = c.coin_symbol and o.kind = 'sweep' and o.state <> 'failed'), 0) as swept,
      coalesce((select sum(o.moved) from outgoing o where o.coin_symbol = c.coin_symbol and (o.kind = 'refund' or o.reason = 'held_money')), 0) as customer_out,
      coalesce((select sum(o.moved) from outgoing o where o.coin_symbol = c.coin_symbol and o.reason = 'payment'), 0) as merchant_out,
      -- TON the transfers of this coin cost: of the customer's money (refunds, held-money sweeps), of the merchant's (the payment's sweep).
      coalesce((select sum(o.cost) from outgoing o where o.coin_symbol = c.coin_symbol and (o.kind = 'refund' or o.reason = 'held_money')), 0) as customer_cost,
      coalesce((select sum(o.cost) from outgoing o where o.coin_symbol = c.coin_symbol and o.reason = 'payment'), 0) as merchant_cost,
      case when c.coin_symbol = 'TON' then coalesce(i.credited_fees, 0) else 0 end as in_fees,
      i.last_money_at
    from coins_of c join coins co on co.symbol = c.coin_symbol cross join p left join incoming i on i.coin_symbol = c.coin_symbol
  ),
  -- The deposit's TON has three owners: the customer (refundable), the merchant (counted, until
  -- swept) and Kassa (gas top-ups and other TON that is no payment, which pays jetton transfers).
  ton as (
    select
      coalesce((select i.kassa_in from incoming i where i.coin_symbol = 'TON'), 0)
        - coalesce((select sum(o.cost) from outgoing o where o.coin_symbol <> 'TON' and o.state in ('confirmed', 'failed')), 0) as gas,
      coalesce((select sum(o.cost) from outgoing o where o.coin_symbol <> 'TON' and o.state in ('planned', 'sent')), 0) as gas_promised,
      coalesce((select pc.counted - pc.merchant_out - pc.merchant_cost from per_coin pc where pc.coin_symbol = 'TON'), 0) as merchant,
      coalesce((select pc.received - pc.held - pc.counted - pc.in_fees - pc.customer_out - pc.customer_cost from per_coin pc where pc.coin_symbol = 'TON'), 0) as customer
  )
  -- A share that went below zero (a fee it could not pay, a transfer that carried the whole
  -- balance) was paid by the others: it is taken from them, so the three add up to the books.
  select pc.coin_symbol, pc.decimals, pc.received, pc.held, pc.counted, pc.refunded, pc.swept,
    case when pc.coin_symbol = 'TON' then pc.in_fees + pc.customer_cost + pc.merchant_cost else pc.customer_cost + pc.merchant_cost end as fees,
    case when pc.coin_symbol = 'TON' then greatest(ton.merchant + least(ton.customer, 0), 0) else greatest(pc.counted - pc.merchant_out, 0) end as merchant_unswept,
    case when pc.coin_symbol = 'TON' then ton.gas end as gas,
    case when pc.coin_symbol = 'TON' then ton.gas - ton.gas_promised end as gas_free,
    greatest(0,
      case when pc.coin_symbol = 'TON' then ton.customer + least(ton.merchant, 0) + least(ton.gas, 0)
        else pc.received - pc.held - pc.counted - pc.customer_out end) as refundable,
    pc.last_money_at
  from per_coin pc cross join ton
$$;
comment on function deposit_money(uuid) is 'A payment''s deposit money per coin, in base units of the coin (fees and gas in nanoTON): received (credited transfers), held (counted toward a payment still open: not refundable yet), counted (a completed payment''s coinAmount: the merchant''s), refunded and swept (not failed; planned ones included), fees (nanoTON paid or set aside for receiving this coin and moving it out), merchant_unswept (counted money still in the deposit), gas (TON row: Kassa''s own TON in the deposit — gas top-ups less what jetton transfers cost), gas_free (gas less what jetton transfers planned or in flight set aside: what the signer may spend), refundable (what a refund may take with its fee: the customer''s money less refunds, held-money sweeps and their fees, and less any fee the merchant''s or Kassa''s money could not pay). The one definition: the refunds API, the sweep planner and reporting.refundable_money read it.';

drop view reporting.refundable_money;
create view reporting.refundable_money as
  select p.id as payment_id, p.store_id, p.order_id, p.status as payment_status, m.coin_symbol, m.refundable as refundable_base_units,
         m.last_money_at, m.decimals
  from payments p cross join lateral deposit_money(p.id) m
  where exists (select 1 from transfers t where t.payment_id = p.id) and m.received > 0;
comment on view reporting.refundable_money is 'What each deposit holds that is refundable (deposit_money: the customer''s money less refunds, held-money sweeps and their fees), per coin, in base units (divide by 10^decimals), with when the last money arrived: it is swept to the treasury REFUND_HOLD_DAYS after that. TON under 10000000 (0.01 TON) is dust: it stays.';

create view reporting.deposit_money as
  select p.id as payment_id, p.store_id, p.order_id, p.status as payment_status, m.*
  from payments p cross join lateral deposit_money(p.id) m;
comment on view reporting.deposit_money is 'Every payment''s deposit money per coin (the function deposit_money): received, held, counted, refunded, swept, fees, merchant_unswept, gas, refundable, in base units (fees and gas in nanoTON).';
