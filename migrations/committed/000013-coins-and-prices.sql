--! Previous: sha1:969d37c52c6bd99c5f82635cba771c84032367ee
--! Hash: sha1:0a21cefa55ef01eebbf60b21ecaf3a2584b5ae5a
--! Message: coins and prices

-- Coins as they are on mainnet, and prices that two sources agree on.

-- 1. The mainnet jetton masters missing until now, from tonkeeper/ton-assets at commit
-- 08f877ccf9c4d7cafb03a419677d69f503ee0919. Every raw form below was derived with @ton/core by
-- migrations/scripts/jetton-masters-from-ton-assets.ts (run once; it reads the YAML files from git
-- and prints these rows); none was typed by hand. As with USDT, NOT, DOGS and STON (000001), a master
-- is catalogue data: no coin is accepted until a store enables its method (kassa store create
-- --methods), and `kassa doctor` / `kassa coins set-master` check each master against the chain.
--   BUILD  EQBYnUrIlwBrWqp_rl-VxeSBvTR2VmTfC4ManQ657n_BUILD  jettons/BUILD.yaml
--   BLUM   EQCAj5oiRRrXokYsg_B-e0KG9xMwh5upr5I8HQzErm0_BLUM  jettons/blum_launchpad.yaml (symbol BLUM)
--   DUST   EQBlqsm144Dq6SjbPI4jjZvA1hqTIP3CvHovbIfW_t-SCALE  jettons/DUST.yaml (DeDust's former SCALE master)
--   DYOR   EQCQZpelevHNsbw5IUtwSa4Cs8kqWww0KsYeDri9kwS18eCz  jettons/DYOR.yaml
--   XAUt0  EQA1R_LuQCLHlMgOo1S4G7Y7W1cd0FrAkbA10Zq7rddKxi9k  jettons/tether-usdt.yaml (second entry, Tether Gold)
insert into jetton_masters (coin_symbol, network, master_address) values
  ('BUILD', 'mainnet', '0:589d4ac897006b5aaa7fae5f95c5e481bd34765664df0b831a9d0eb9ee7fc150'),
  ('BLUM', 'mainnet', '0:808f9a22451ad7a2462c83f07e7b4286f71330879ba9af923c1d0cc4ae6d3f04'),
  ('DUST', 'mainnet', '0:65aac9b5e380eae928db3c8e238d9bc0d61a9320fdc2bc7a2f6c87d6fedf9208'),
  ('DYOR', 'mainnet', '0:906697a57af1cdb1bc39214b7049ae02b3c92a5b0c342ac61e0eb8bd9304b5f1'),
  ('XAUt0', 'mainnet', '0:3547f2ee4022c794c80ea354b81bb63b5b571dd05ac091b035d19abbadd74ac6')
on conflict (coin_symbol, network) do nothing;

-- 2. Decimals. ton-assets lists none of these five. Settled from token lists that copy the masters'
-- metadata, as indexed by the DEXes that trade them:
--   BUILD 9  — STON.fi's asset list (asset.ston.fi), as quoted in STON.fi's Omniston demo app's static assets.
--   BLUM  9  — token lists of TON wallets and DEX widgets (Blum's master, TonAPI-whitelisted).
--   DUST  9  — DeDust's own asset list (assets.dedust.io, "DeDust"/DUST) and the SCALE listing before it.
--   XAUt0 6  — Tether's multichain product tables and TON lending/DEX lists (XAUt is 6 on every chain);
--             one STON.fi demo list says 9 and is the odd one out (not hand-written data we trust over the rest).
--   DYOR 15  — DeDust's asset list (api.dedust.io/v2/assets: "DYOR Coin", decimals 15). The catalogue
--             said 9 (000001), which would misprice every DYOR payment by 10^6: corrected here.
-- `kassa coins set-master` and `kassa doctor` compare these with the master's on-chain metadata
-- (TEP-64 `decimals`, 9 when absent) wherever it is on chain and refuse a mismatch.
-- A DYOR payment already priced keeps its coinAmount (a decimal string); its base units are read
-- with 15 from now on, which is what the chain has always meant.
update coins set decimals = 15 where symbol = 'DYOR';

-- The sandbox chain deploys its DYOR master with the catalogue's decimals (15) in its on-chain
-- metadata, which makes it another address (printed by the same script); the sandbox re-registers
-- its masters on start, this keeps the row right before it has started.
update jetton_masters set master_address = '0:07bdde0f7c236f0b1b49f3eedf9a6f2c6c39ac32419286940de87a262f8088fa', wallet_code = null
  where coin_symbol = 'DYOR' and network = 'sandbox';

-- 3. The second price source. Prices are asked of a CoinGecko-compatible /simple/price API by coin
-- id; which id is a coin's is catalogue data, here, not code. Null: the coin has no id yet, so no
-- second source prices it and no fiat-priced payment in it is made (rate_unavailable) until an
-- operator sets one (docs/OPERATIONS.md). A wrong id fails closed: its price disagrees, nothing is priced.
alter table coins add column coingecko_id text;
alter table coins add constraint coins_coingecko_id_is_an_id check (coingecko_id ~ '^[a-z0-9][a-z0-9-]{0,99}$');
comment on column coins.coingecko_id is 'The coin''s id at CoinGecko (https://docs.coingecko.com/reference/simple-price, ids=…), used by the second price source; null: not priced by it, so never priced from fiat.';
update coins set coingecko_id = v.id from (values
  ('TON', 'the-open-network'),
  ('USDT', 'tether'),
  ('NOT', 'notcoin'),
  ('DOGS', 'dogs-2'),
  ('STON', 'ston-2'),
  ('BLUM', 'blum'),
  ('DUST', 'scaleton'),
  ('XAUt0', 'tether-gold')
) as v (symbol, id) where coins.symbol = v.symbol;

-- 4. A stored rate records both sources: `rate`, `source`, `fetched_at` stay the primary source's
-- (tonapi), the confirming_* columns are the second source's latest price of the same pair. A payment
-- is priced only when both are fresh and agree within RATES_MAX_DIVERGENCE_PERCENT (the primary's
-- rate is used); `fixed` rows (the sandbox table) need no second source.
alter table exchange_rates
  add column confirming_source text,
  add column confirming_rate numeric,
  add column confirming_fetched_at timestamptz,
  add constraint exchange_rates_confirming_rate_is_positive check (confirming_rate > 0),
  add constraint exchange_rates_confirmation_is_whole check (
    (confirming_source is null and confirming_rate is null and confirming_fetched_at is null)
    or (confirming_source is not null and confirming_rate is not null and confirming_fetched_at is not null));
comment on column exchange_rates.rate is 'Coins per one unit of currency, from the primary source (source, fetched_at).';
comment on column exchange_rates.confirming_source is 'The second, independent source that confirms rate (for example coingecko); null: none has priced this pair.';
comment on column exchange_rates.confirming_rate is 'The same pair''s rate by confirming_source. A payment is priced only when it and rate are both fresh and agree within the configured bound.';
comment on column exchange_rates.confirming_fetched_at is 'When confirming_source gave confirming_rate.';
