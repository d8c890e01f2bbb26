--! Previous: sha1:1332e43d395e08172a2f90159bba6ed790cfdcd7
--! Hash: sha1:552bb2be18cb082156ef559f1e5f5c6b7edbb52a
--! Message: final sweep

-- The deposit's final sweep (the recurring planner, REFUND_HOLD_DAYS after a settled deposit's last
-- money) says so in its own column, instead of the signer telling it by its reason and amount.
alter table outgoing_transfers add column final_sweep boolean not null default false;
comment on column outgoing_transfers.final_sweep is 'The deposit''s final sweep: its last dust of every owner (the customer''s under 0.01 TON, the merchant''s leftover, Kassa''s gas) planned REFUND_HOLD_DAYS after its last money; it leaves as one closing message (its shares: closing_of) or not at all.';
-- Final sweeps planned before this column: a TON sweep that is no share and moves a leftover, a gas
-- return, or held money under the 0.01 TON line (the planner's rule for the customer's dust).
update outgoing_transfers set final_sweep = true
where kind = 'sweep' and closing_of is null and coin_symbol = 'TON'
  and (reason in ('leftover', 'gas_return') or (reason = 'held_money' and amount_base_units < 10000000));
