// The customer's jetton wallet for a jetton master, asked of the master through the chain API
// (get_wallet_address), for the TON Connect jetton transfer. The answer never changes for a pair, so
// it is remembered (a bounded map). In the sandbox the chain API is the emulated chain this API
// process serves itself. Requests take from the deployment's shared chain budget (chain/sharedBudget.ts).
import type { Address } from '@ton/core';
import { createChainClient, getJettonWalletAddress, type ChainClient } from '../chain/client.ts';
import { SANDBOX_JSON_RPC_PATH } from '../chain/sandbox/path.ts';
import { sharedRequestBudget } from '../chain/sharedBudget.ts';
import { tonApiRoot, type Config } from '../config.ts';
import type { Db } from '../db/pool.ts';

const MAX_REMEMBERED = 10_000;

interface JettonWalletLookup {
  /** `ownApiUrl`: this process's own origin (http://host:port), used for the sandbox chain. */
  walletOf(master: Address, owner: Address, ownApiUrl: string): Promise<Address>;
}

export function createJettonWalletLookup(config: Pick<Config, 'tonApiUrl' | 'tonApiKey' | 'tonApiRps'>, db?: Db): JettonWalletLookup {
  const clients = new Map<string, ChainClient>();
  const remembered = new Map<string, Address>();
  const clientFor = (endpoint: string): ChainClient => {
    let client = clients.get(endpoint);
    if (!client) {
      const budget = db ? sharedRequestBudget(db, { apiRoot: tonApiRoot(endpoint), apiKey: config.tonApiKey, rps: config.tonApiRps }) : null;
      client = createChainClient({ endpoint, apiKey: config.tonApiKey, timeoutMs: 10_000, budget });
      clients.set(endpoint, client);
    }
    return client;
  };
  return {
    async walletOf(master, owner, ownApiUrl) {
      const key = `${master.toRawString()}|${owner.toRawString()}`;
      const known = remembered.get(key);
      if (known) return known;
      const wallet = await getJettonWalletAddress(clientFor(config.tonApiUrl ?? `${ownApiUrl}${SANDBOX_JSON_RPC_PATH}`), master, owner);
      if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.keys().next().value!);
      remembered.set(key, wallet);
      return wallet;
    },
  };
}
