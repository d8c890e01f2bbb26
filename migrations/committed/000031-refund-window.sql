--! Previous: sha1:373a10bd4ea2130a6322ede7ec1363f5c1dda5b8
--! Hash: sha1:6eb0742cc9eadbc4b9c26b66ab1e151787cc9080
--! Message: refund window

-- A sale is refundable from its deposit for a while (issue 29, CONTRACT §11 "Refund window"): a
-- store's refund_window_days; while a completed payment is inside it, its counted amount stays in
-- the deposit and refunds may take it; when the window ends, the sweep takes what is left.

alter table stores add column refund_window_days integer not null default 0 check (refund_window_days between 0 and 90);
-- Stores that existed before keep 0 (their sales are swept at once, as they were); new ones get 7
-- days (docs/OPERATIONS.md "Refund window": the custody trade-off).
alter table stores alter column refund_window_days set default 7;
comment on column stores.refund_window_days is 'Days after a payment completes (paid_at) during which its counted amount stays in the deposit wallet and is refundable from there; the sweep to the treasury runs when they end. 0: swept at once. Applies to payments that complete after it is set (payments.refundable_until).';

alter table payments add column refundable_until timestamptz;
comment on column payments.refundable_until is 'A completed payment of a store with a refund window: paid_at + the store''s refund_window_days as they were at completion. Until then its counted amount stays in the deposit and is refundable; then the sweep takes what is left. Null: no window (swept at completion).';

-- A jetton refund that takes more than the customer's own money (a sale refunded inside its
-- window) takes it from the merchant's counted amount: merchant_unswept says what is left, as it
-- already did for TON.
create or replace function deposit_money(p_payment uuid)
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
    case when pc.coin_symbol = 'TON' then greatest(ton.merchant + least(ton.customer, 0), 0) else greatest(pc.counted - pc.merchant_out + least(pc.received - pc.held - pc.counted - pc.customer_out, 0), 0) end as merchant_unswept,
    case when pc.coin_symbol = 'TON' then ton.gas end as gas,
    case when pc.coin_symbol = 'TON' then ton.gas - ton.gas_promised end as gas_free,
    greatest(0,
      case when pc.coin_symbol = 'TON' then ton.customer + least(ton.merchant, 0) + least(ton.gas, 0)
        else pc.received - pc.held - pc.counted - pc.customer_out end) as refundable,
    pc.last_money_at
  from per_coin pc cross join ton
$$;
