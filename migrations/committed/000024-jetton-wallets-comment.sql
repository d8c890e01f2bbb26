--! Previous: sha1:5d26c62dddb3ffe1034fbf92f3b39bc871c81e2c
--! Hash: sha1:22e650c106592c6e64146fecdd7549aa8a4dc37c
--! Message: jetton wallets comment

-- jetton_wallets is also where reconciliation remembers the deposits' jetton wallets of other
-- accepted coins that the indexer listed and their master confirmed (issue 31).
comment on table jetton_wallets is 'Jetton wallets asked about once each, so spam cannot spend the chain API budget: those that sent a transfer notification to a deposit (get_wallet_data, then the master''s get_wallet_address for the owner), and deposits'' jetton wallets of other accepted coins that reconciliation found listed by the indexer (/api/v3/jetton/wallets; the master''s get_wallet_address). genuine means the master confirms it as the owner''s wallet.';
