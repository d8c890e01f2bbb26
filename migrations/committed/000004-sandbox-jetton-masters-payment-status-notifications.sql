--! Previous: sha1:467cfb728e934c6456ba3732ee8caf9cf38e9564
--! Hash: sha1:3d8b80eef2c7a648a72db516d5c29017b37fc14b
--! Message: sandbox jetton masters, payment status notifications

-- The sandbox chain's jetton masters. The emulated chain deploys them at the same addresses on
-- every start (and re-registers them when it starts); kept here so that sandbox payments can be
-- priced and watched before the chain has started. They apply to network 'sandbox' only.
insert into jetton_masters (coin_symbol, network, master_address) values
  ('USDT', 'sandbox', '0:43f94512d56d2512c33e76886573de8068a49caba527cfe5d3adc8b34d5a420a'),
  ('NOT', 'sandbox', '0:64c7e03243f0eba2c19077e4916b6af5af7e99850a4c713d59068e9959c549f4'),
  ('DOGS', 'sandbox', '0:db6ebadecf596c58440eb03cd92d38ef6b8a95afc5addfda24224de025600c4e'),
  ('BUILD', 'sandbox', '0:9f02a5bd390ed0f7f3037cd3ff0eefc401b30b43038cf3dc467ccda5e132640a'),
  ('BLUM', 'sandbox', '0:d6c288c389c6680f35b243e31bc9115819b8ebc1c97e994b5704e3c061df7d74'),
  ('DUST', 'sandbox', '0:3a9dc41c628d8120749582b40dd2667473f625d02ec992a0682c7785f6470ef3'),
  ('DYOR', 'sandbox', '0:7ccba86039994a4d258ca9560492b875080bb55a56faa986e2d4ecdbae9705d3'),
  ('STON', 'sandbox', '0:dbfa7683674d32791c32104856d0145e77ed070475dc941792ddb668c1915054'),
  ('XAUt0', 'sandbox', '0:675f41ee7dbb08135276a9f25ab2e3af3b9ad54bd413c3db9973a9da76ff87c3')
on conflict (coin_symbol, network) do update set master_address = excluded.master_address;

-- Status changes of a payment are announced on the channel kassa_payment_changed (payload: the
-- payment id), for the checkout page's live status.
create function notify_payment_changed() returns trigger language plpgsql as $$
begin
  perform pg_notify('kassa_payment_changed', new.id::text);
  return null;
end;
$$;
comment on function notify_payment_changed() is 'NOTIFY kassa_payment_changed with the payment id when a payment''s status changes.';
create trigger payments_notify_status_change after update of status on payments
  for each row when (old.status is distinct from new.status) execute function notify_payment_changed();
