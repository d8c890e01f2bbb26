--! Previous: sha1:fc923ee0929ef9448eedc48eb025f461880e9299
--! Hash: sha1:361f184b600cb8d02b9a8c911483ca0367eb7b56
--! Message: treasury settlement

-- Settling straight to the store's treasury by reference (issue 43, CONTRACT §12): a store may have
-- its customers pay its treasury directly, each payment told apart by the reference its customer
-- sends as a comment; no deposit wallet, no sweep, no key. Money that arrives there matching no
-- payment is kept as an unmatched transfer.

alter table stores add column settlement text not null default 'deposit';
alter table stores add constraint stores_settlement_is_known check (settlement in ('deposit', 'treasury'));
alter table stores add constraint stores_treasury_settlement_has_treasury check (settlement = 'deposit' or treasury is not null);
comment on column stores.settlement is 'How its payments are paid: deposit (one deposit wallet per payment, swept to the treasury) or treasury (the customer pays the treasury itself, with the payment''s reference as the comment). New payments take it; a payment keeps the one it was created with.';
create index stores_by_treasury_settlement on stores (treasury) where settlement = 'treasury';
comment on index stores_by_treasury_settlement is 'The chain reader: which of a block''s accounts is the treasury of a store settling there.';

alter table payments
  add column settlement text not null default 'deposit',
  add column settlement_address text,
  add column settlement_address_friendly text,
  add column reference text;
alter table payments add constraint payments_settlement_is_known check (settlement in ('deposit', 'treasury'));
alter table payments add constraint payments_treasury_settlement_is_whole check (
  (settlement = 'deposit' and settlement_address is null and settlement_address_friendly is null and reference is null)
  or (settlement = 'treasury' and settlement_address is not null and settlement_address_friendly is not null and reference is not null));
alter table payments add constraint payments_reference_is_crockford check (reference ~ '^[0-9A-HJKMNP-TV-Z]{9}$');
comment on column payments.settlement is 'The store''s settlement when the payment was created (deposit or treasury); it never changes.';
comment on column payments.settlement_address is 'Treasury settlement: the store''s treasury (raw) when the payment was created, where the customer pays.';
comment on column payments.settlement_address_friendly is 'settlement_address in the non-bounceable form shown to customers.';
comment on column payments.reference is 'Treasury settlement: 8 Crockford base32 characters and a check character (mod 37), shown XXXX-XXXXX, that the customer sends as the comment.';
create unique index payments_reference_while_open on payments (reference) where reference is not null and status in ('created', 'pending');
comment on index payments_reference_while_open is 'A reference names one payment while that payment can be paid (created, pending); the create draws again on a clash.';
create index payments_by_reference on payments (settlement_address, reference) where settlement = 'treasury';
comment on index payments_by_reference is 'The chain reader: the payment a transfer into a treasury names by its reference (open first), and the references one character away.';

create table unmatched_transfers (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references stores (id) on delete cascade,
  account text not null,
  lt numeric(20, 0) not null,
  hash text not null,
  coin_symbol text not null references coins (symbol) on delete restrict,
  amount_base_units numeric(78, 0) not null,
  amount numeric not null,
  sender text,
  comment text,
  reference text,
  reason text not null,
  suggestions jsonb not null default '[]',
  state text not null default 'open',
  payment_id uuid references payments (id) on delete cascade,
  resolved_at timestamptz,
  note text,
  chain_time timestamptz not null,
  recorded_at timestamptz not null,
  constraint unmatched_transfers_once_per_store unique (store_id, account, lt, hash),
  constraint unmatched_transfers_reason_is_known check (reason in ('no_reference', 'unknown_reference', 'malformed_reference', 'encrypted')),
  constraint unmatched_transfers_state_is_known check (state in ('open', 'assigned', 'refunded', 'kept')),
  constraint unmatched_transfers_amount_is_positive check (amount_base_units > 0),
  constraint unmatched_transfers_hash_is_hex check (hash ~ '^[0-9a-f]{64}$'),
  constraint unmatched_transfers_open_is_unresolved check ((state = 'open') = (resolved_at is null)),
  constraint unmatched_transfers_assigned_has_payment check (state <> 'assigned' or payment_id is not null)
);
comment on table unmatched_transfers is 'Money that reached a treasury-settlement store''s treasury matching no payment (no comment, an unknown or mistyped reference, an encrypted comment, binary junk): kept, never lost, with suggestions a person may act on (never applied by themselves). Keyed by the chain identity of its transaction, per store.';
comment on column unmatched_transfers.reference is 'What the comment carried that looks like a reference (normalised: upper case, no dash), if anything.';
comment on column unmatched_transfers.suggestions is '[{paymentID, why}]: why is reference_one_character_away, same_amount_open (a payment of the same coin and amount open at its chain time) or same_sender (who paid an earlier payment of the store).';
comment on column unmatched_transfers.comment is 'The text comment it carried, as the books keep comments (at most 1,000 characters), if any.';
create index unmatched_transfers_by_store on unmatched_transfers (store_id, state, chain_time desc);
comment on column unmatched_transfers.payment_id is 'assigned: the payment a person booked it on (POST /v1/unmatched-transfers/{id}/assign), as if it had carried its reference, at its chain time (the books then hold it in transfers too).';
comment on column unmatched_transfers.resolved_at is 'When a person assigned, refunded or kept it (null while open).';
comment on index unmatched_transfers_by_store is 'GET /v1/unmatched-transfers?state=: a store''s, newest first.';

alter table webhook_endpoints drop constraint webhook_endpoints_events_are_known;
alter table webhook_endpoints add constraint webhook_endpoints_events_are_known check (
  cardinality(events) > 0 and events <@ array['payment.pending', 'payment.completed', 'payment.expired', 'payment.cancelled',
    'payment.money_received', 'refund.confirmed', 'refund.failed', 'sweep.confirmed', 'sweep.failed', 'money.unmatched', 'money.assigned']::text[]);
alter table webhook_deliveries drop constraint webhook_deliveries_event_is_known;
alter table webhook_deliveries add constraint webhook_deliveries_event_is_known check (event in ('payment.pending', 'payment.completed', 'payment.expired',
  'payment.cancelled', 'payment.money_received', 'refund.confirmed', 'refund.failed', 'sweep.confirmed', 'sweep.failed', 'money.unmatched', 'money.assigned', 'ping'));

-- A payment settled to the treasury has no deposit: deposit_money (refunds, sweeps, GET …/balance,
-- reporting.store_money, the dashboard's money) has nothing of it. The function as 000037 left it, with that one condition.
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
    from payments p left join deposit_addresses d on d.payment_id = p.id where p.id = p_payment and p.settlement = 'deposit'
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
comment on function deposit_money(uuid) is 'A payment''s deposit money per coin, in base units of the coin (fees and gas in nanoTON): received (credited transfers), held (counted toward a payment still open: not refundable yet), counted (a completed payment''s coinAmount: the merchant''s), refunded and swept (not failed; planned ones included; swept counts leftovers and gas returns too), fees (nanoTON paid or set aside for receiving this coin and moving it out), merchant_unswept (counted money still in the deposit, less its sweep and leftover transfers), gas (TON row: Kassa''s own TON in the deposit — gas top-ups less what jetton transfers cost and what went back to the gas wallet), gas_free (gas less what jetton transfers planned or in flight set aside: what the signer may spend), refundable (what a refund may take with its fee: the customer''s money less refunds, held-money sweeps and their fees, and less any fee the merchant''s or Kassa''s money could not pay). None for a payment settled to the store''s treasury (it has no deposit: its money is the merchant''s from the start). The one definition: the refunds API, the sweep planner and reporting.refundable_money read it.';
