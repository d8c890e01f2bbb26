--! Previous: sha1:d4c3fac0daa49fde44d5acd30c15c46e283be6ec
--! Hash: sha1:2f03618151418e04fc5f9aa74ae4391e782aeb38
--! Message: jetton wallets comment

-- jetton_wallets is also where reconciliation remembers the deposits' jetton wallets of other
-- accepted coins that the indexer listed and their master confirmed (issue 31).
comment on table jetton_wallets is 'Jetton wallets asked about once each, so spam cannot spend the chain API budget: those that sent a transfer notification to a deposit (get_wallet_data, then the master''s get_wallet_address for the owner), and deposits'' jetton wallets of other accepted coins that reconciliation found listed by the indexer (/api/v3/jetton/wallets; the master''s get_wallet_address). genuine means the master confirms it as the owner''s wallet.';
