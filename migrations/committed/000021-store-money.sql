--! Previous: sha1:f58b18259d86b517cd444812eef95336df51e385
--! Hash: sha1:d33f82443da3cd29848c922e5a3c5a7ae3efea3c
--! Message: store money

-- The dashboard's Money page (issue 24) as a view merchants can query too: a store's money per
-- coin, the sum of deposit_money (migration 000014, the one definition of a deposit's money) over
-- the store's payments that received anything. Nothing is computed twice: the page reads this view.
create view reporting.store_money as
  select p.store_id, m.coin_symbol, m.decimals,
         count(*) filter (where m.received > 0) as payments_with_money,
         sum(m.received) as received,
         sum(m.counted) as counted,
         sum(m.refunded) as refunded,
         sum(m.swept) as swept,
         sum(m.fees) as fees,
         sum(m.held) as held,
         sum(m.merchant_unswept) as merchant_unswept,
         sum(m.refundable) as refundable,
         sum(m.held + m.merchant_unswept + m.refundable) as in_deposits,
         sum(coalesce(m.gas, 0)) as gas
  from payments p cross join lateral deposit_money(p.id) m
  where exists (select 1 from transfers t where t.payment_id = p.id)
  group by p.store_id, m.coin_symbol, m.decimals;
comment on view reporting.store_money is 'Each store''s money per coin: the sums of deposit_money over its payments that received anything, in base units of the coin (divide by 10^decimals; fees and gas in nanoTON). received (credited transfers), counted (completed payments'' coinAmount: the merchant''s), refunded and swept (planned, sent or confirmed), fees (TON paid or set aside for receiving this coin and moving it out), held (counted toward payments still open), merchant_unswept (counted money not yet swept to the treasury), refundable (customers'' money a refund may take), in_deposits (held + merchant_unswept + refundable: what of the merchant''s and customers'' money the deposits still hold), gas (TON row: Kassa''s own TON in the deposits, for jetton transfers). The dashboard''s Money page.';
