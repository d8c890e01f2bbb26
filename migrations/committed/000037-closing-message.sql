--! Previous: sha1:692d179d39641c14e9275f738ea83c39d5468f8a
--! Hash: sha1:1332e43d395e08172a2f90159bba6ed790cfdcd7
--! Message: closing message

-- The last movement out of a deposit pays each owner in one message (issue 29 item 4): the refund of
-- everything refundable, when the deposit holds besides it only the merchant's leftover (what a
-- sweep's fee reserve did not use) and Kassa's gas, carries the whole balance to the customer, and
-- the same wallet v5 message pays the merchant's leftover to the treasury and Kassa's gas back to the
-- gas wallet, each of those from its own amount (its forwarding fee taken from it). The refund's row
-- is the message's; the others are its shares (closing_of), with two new reasons.
alter table outgoing_transfers add column closing_of uuid references outgoing_transfers (id);
comment on column outgoing_transfers.closing_of is 'A share of another owner paid in the same message as the refund of everything refundable (its id): the merchant''s leftover (reason leftover) or Kassa''s gas (reason gas_return). Its fee is what its own message cost it (amount less what arrived), or all of it when it was too small to send (under 0.002 TON: it paid part of the message''s fee, sent_amount 0); the refund''s fee is the rest.';
create index outgoing_transfers_closing_of on outgoing_transfers (closing_of) where closing_of is not null;

-- The final sweep (the recurring planner): a settled deposit's last dust of every owner leaves in one
-- closing message REFUND_HOLD_DAYS after its last money; a deposit found with nothing worth a message
-- is marked, so the planner does not ask it again unless money arrives after the mark.
alter table payments add column deposit_settled_at timestamptz;
comment on column payments.deposit_settled_at is 'When the final-sweep planner found the deposit holding nothing worth moving (less than a closing message costs, or nothing); asked again only if money arrives after it.';

alter table outgoing_transfers drop constraint outgoing_transfers_reason_is_known;
alter table outgoing_transfers add constraint outgoing_transfers_reason_is_known
  check (reason in ('payment', 'held_money', 'refund', 'gas', 'leftover', 'gas_return'));
comment on column outgoing_transfers.reason is 'Why it moves: payment (a completed payment''s counted amount to the treasury), held_money (refundable money after REFUND_HOLD_DAYS, to the treasury; dust too, in the deposit''s final sweep), refund (asked by the merchant), gas (a gas top-up from the gas wallet), leftover (the merchant''s money left after its sweep, to the treasury with the last movement out of the deposit or as its final sweep), gas_return (Kassa''s TON in the deposit back to the gas wallet, likewise).';

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
      coalesce((select sum(o.moved) from outgoing o where o.coin_symbol = c.coin_symbol and o.reason in ('payment', 'leftover')), 0) as merchant_out,
      -- TON the transfers of this coin cost: of the customer's money (refunds, held-money sweeps), of the merchant's (the payment's sweep).
      coalesce((select sum(o.cost) from outgoing o where o.coin_symbol = c.coin_symbol and (o.kind = 'refund' or o.reason = 'held_money')), 0) as customer_cost,
      coalesce((select sum(o.cost) from outgoing o where o.coin_symbol = c.coin_symbol and o.reason in ('payment', 'leftover')), 0) as merchant_cost,
      case when c.coin_symbol = 'TON' then coalesce(i.credited_fees, 0) else 0 end as in_fees,
      i.last_money_at
    from coins_of c join coins co on co.symbol = c.coin_symbol cross join p left join incoming i on i.coin_symbol = c.coin_symbol
  ),
  -- The deposit's TON has three owners: the customer (refundable), the merchant (counted, until
  -- swept) and Kassa (gas top-ups and other TON that is no payment, which pays jetton transfers).
  ton as (
    select
      coalesce((select i.kassa_in from incoming i where i.coin_symbol = 'TON'), 0)
        - coalesce((select sum(o.cost) from outgoing o where o.coin_symbol <> 'TON' and o.state in ('confirmed', 'failed')), 0)
        - coalesce((select sum(o.moved + o.cost) from outgoing o where o.coin_symbol = 'TON' and o.reason = 'gas_return'), 0) as gas,
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

comment on function deposit_money(uuid) is 'A payment''s deposit money per coin, in base units of the coin (fees and gas in nanoTON): received (credited transfers), held (counted toward a payment still open: not refundable yet), counted (a completed payment''s coinAmount: the merchant''s), refunded and swept (not failed; planned ones included; swept counts leftovers and gas returns too), fees (nanoTON paid or set aside for receiving this coin and moving it out), merchant_unswept (counted money still in the deposit, less its sweep and leftover transfers), gas (TON row: Kassa''s own TON in the deposit — gas top-ups less what jetton transfers cost and what went back to the gas wallet), gas_free (gas less what jetton transfers planned or in flight set aside: what the signer may spend), refundable (what a refund may take with its fee: the customer''s money less refunds, held-money sweeps and their fees, and less any fee the merchant''s or Kassa''s money could not pay). The one definition: the refunds API, the sweep planner and reporting.refundable_money read it.';
