// The API process's jetton wallet questions to the chain API: the customer's jetton wallet for a
// jetton master, asked of the master (get_wallet_address), for the TON Connect jetton transfer; and
// the owner a jetton wallet names (get_wallet_data), so that a refund to a deposit's jetton wallet
// of any master is refused (treasury/destinations.ts). Answers never change, so they are remembered
// (bounded maps). In the sandbox the chain API is the emulated chain this API process serves itself.
// Requests take from the deployment's shared chain budget (chain/sharedBudget.ts).
import type { Socket } from 'node:net';
import { Address } from '@ton/core';
import { toChainApiError } from '../chain/apiError.ts';
import { call, createChainClient, getJettonWalletAddress, type ChainClient } from '../chain/client.ts';
import { SANDBOX_JSON_RPC_PATH } from '../chain/sandbox/path.ts';
import { sharedRequestBudget } from '../chain/sharedBudget.ts';
import { tonApiRoot, type Config } from '../config.ts';
import type { Db } from '../db/pool.ts';

const MAX_REMEMBERED = 10_000;

interface JettonWalletLookup {
  /** `ownApiUrl`: this process's own origin (http://host:port), used for the sandbox chain. */
  walletOf(master: Address, owner: Address, ownApiUrl: string): Promise<Address>;
  /**
   * The raw owner the contract at `wallet` (raw) names as a TEP-74 jetton wallet (its
   * get_wallet_data), of any master; null when it answers no such thing (not a jetton wallet, not
   * deployed). A chain API that cannot be reached throws its ChainApiError.
   */
  ownerOf(wallet: string, ownApiUrl: string): Promise<string | null>;
  /**
   * Whether the contract at `raw` answers as a token's contract rather than a wallet's account: a
   * TEP-74 jetton wallet (get_wallet_data) or jetton master (get_jetton_data); null when it answers
   * neither (a wallet, or nothing deployed). A chain API that cannot be reached throws its ChainApiError.
   */
  tokenContractKind(raw: string, ownApiUrl: string): Promise<'jetton_wallet' | 'jetton_master' | null>;
}

/** This process's own origin (http://host:port) as a request's socket reached it: where the sandbox chain API is. */
export function ownApiUrl(socket: Socket): string {
  const host = socket.localAddress?.includes(':') ? `[${socket.localAddress}]` : socket.localAddress;
  return `http://${host}:${socket.localPort}`;
}

export function createJettonWalletLookup(config: Pick<Config, 'tonApiUrl' | 'tonApiKey' | 'tonApiRps'>, db?: Db): JettonWalletLookup {
  const clients = new Map<string, ChainClient>();
  const remembered = new Map<string, Address>();
  const owners = new Map<string, string>();
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
    async ownerOf(wallet, ownApiUrl) {
      const known = owners.get(wallet);
      if (known) return known;
      const client = clientFor(config.tonApiUrl ?? `${ownApiUrl}${SANDBOX_JSON_RPC_PATH}`);
      let owner: string;
      try {
        const data = await call(() => client.runMethod(Address.parseRaw(wallet), 'get_wallet_data'));
        data.stack.readBigNumber();
        owner = data.stack.readAddress().toRawString();
      } catch (error) {
        // A get method that fails (exit code, no such method, an account not deployed) or answers
        // something else: not a jetton wallet. Only an API that cannot answer is an error.
        const chainError = toChainApiError(error);
        if (chainError.retryable) throw chainError;
        return null;
      }
      if (owners.size >= MAX_REMEMBERED) owners.delete(owners.keys().next().value!);
      owners.set(wallet, owner);
      return owner;
    },
    async tokenContractKind(raw, ownApiUrl) {
      if ((await this.ownerOf(raw, ownApiUrl)) !== null) return 'jetton_wallet';
      const client = clientFor(config.tonApiUrl ?? `${ownApiUrl}${SANDBOX_JSON_RPC_PATH}`);
      try {
        const data = await call(() => client.runMethod(Address.parseRaw(raw), 'get_jetton_data'));
        data.stack.readBigNumber();
        return 'jetton_master';
      } catch (error) {
        const chainError = toChainApiError(error);
        if (chainError.retryable) throw chainError;
        return null;
      }
    },
  };
}
