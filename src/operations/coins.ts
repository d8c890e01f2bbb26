// Coin data without SQL: `kassa coins list`, `kassa coins set-master` and `kassa coins set-price-id`. A master is stored only
// once the chain of the configured network confirms it (get_jetton_data: decimals as in the
// database, a wallet code, get_wallet_address answering). A master for another network than the
// configured one is refused: it can be verified only on its own chain.
import { Address } from '@ton/core';
import type { ChainClient } from '../chain/client.ts';
import type { TonNetwork } from '../config.ts';
import { sql, z, type Db } from '../db/pool.ts';
import { verifyJettonMaster } from './jettonMaster.ts';
import { FormProblem } from '../errors.ts';

export const NETWORKS: readonly TonNetwork[] = ['mainnet', 'testnet', 'sandbox'];

const coinRow = z.object({
  symbol: z.string(),
  name: z.string(),
  kind: z.string(),
  decimals: z.number(),
  chain_symbol: z.string(),
  coingecko_id: z.string().nullable(),
});
const COIN_COLUMNS = sql.fragment`symbol, name, kind, decimals::int as decimals, chain_symbol, coingecko_id`;
const masterRow = z.object({ coin_symbol: z.string(), network: z.string(), master_address: z.string() });

/** Bounceable user-friendly form of a master on its network (`EQ…`, testnet `kQ…`). */
function masterFriendly(raw: string, network: TonNetwork): string {
  return Address.parseRaw(raw).toString({ urlSafe: true, bounceable: true, testOnly: network === 'testnet' });
}

/** Every coin with its master per network (null: none, the coin cannot be watched there). */
export async function listCoins(db: Db) {
  const coins = await db.any(sql.type(coinRow)`select ${COIN_COLUMNS} from coins order by kind desc, symbol`);
  const masters = await db.any(sql.type(masterRow)`select coin_symbol, network, master_address from jetton_masters`);
  return {
    data: coins.map((coin) => ({
      symbol: coin.symbol,
      name: coin.name,
      chain: coin.chain_symbol,
      kind: coin.kind,
      decimals: coin.decimals,
      coingeckoId: coin.coingecko_id,
      ...(coin.kind === 'jetton'
        ? {
            masters: Object.fromEntries(
              NETWORKS.map((network) => {
                const master = masters.find((row) => row.coin_symbol === coin.symbol && row.network === network);
                return [network, master ? { address: masterFriendly(master.master_address, network), raw: master.master_address } : null];
              }),
            ),
          }
        : {}),
    })),
  };
}

/** The address as given, in any form; a test-only (kQ…/0Q…) address is refused for mainnet. */
function parseMasterAddress(value: string, network: TonNetwork): Address {
  let address: Address;
  let testOnly = false;
  try {
    if (Address.isFriendly(value)) {
      const parsed = Address.parseFriendly(value);
      address = parsed.address;
      testOnly = parsed.isTestOnly;
    } else {
      address = Address.parseRaw(value);
    }
  } catch {
    throw new FormProblem(`"${value}" is not a TON address`);
  }
  if (address.workChain !== 0) throw new FormProblem(`${value} is not a basechain (workchain 0) address`);
  if (testOnly && network === 'mainnet') throw new FormProblem(`${value} is a testnet (test-only) address, not a mainnet one`);
  return address;
}

export async function setMaster(db: Db, input: { coin: string; network: TonNetwork; address: string }, chain: { network: TonNetwork; client: ChainClient }) {
  const coin = await db.maybeOne(sql.type(coinRow)`select ${COIN_COLUMNS} from coins where symbol = ${input.coin}`);
  if (!coin) throw new FormProblem(`no coin "${input.coin}" (kassa coins list shows them)`);
  if (coin.kind !== 'jetton') throw new FormProblem(`${coin.symbol} is the chain's own coin: it has no jetton master`);
  const address = parseMasterAddress(input.address, input.network);
  if (input.network !== chain.network) {
    throw new FormProblem(
      `TON_NETWORK is ${chain.network}: a ${input.network} master can be verified only on ${input.network}; run this command with TON_NETWORK=${input.network} (and its TON_API_URL, TON_API_KEY)`,
    );
  }
  const verdict = await verifyJettonMaster(chain.client, coin.symbol, coin.decimals, address);
  if (!verdict.ok) throw new FormProblem(`not stored: ${verdict.detail}`);
  const raw = address.toRawString();
  const previous = await db.maybeOneFirst(sql.type(z.object({ master_address: z.string() }))`
    select master_address from jetton_masters where coin_symbol = ${coin.symbol} and network = ${input.network}
  `);
  await db.query(sql.typeAlias('void')`
    insert into jetton_masters (coin_symbol, network, master_address) values (${coin.symbol}, ${input.network}, ${raw})
    on conflict (coin_symbol, network) do update set master_address = excluded.master_address
  `);
  return {
    coin: coin.symbol,
    network: input.network,
    master: { address: masterFriendly(raw, input.network), raw },
    previous,
    verified: verdict.detail,
    ...(verdict.decimalsUnverified
      ? { warning: `${coin.symbol}'s metadata is off-chain: check its decimals (${coin.decimals}) against the issuer's metadata` }
      : {}),
  };
}

/** CoinGecko's coin ids: lower-case letters, digits and dashes (`the-open-network`, `dogs-2`). */
const COINGECKO_ID = /^[a-z0-9][a-z0-9-]{0,99}$/;

/**
 * Sets (or, with null, clears) the coin's id at the second price source (coins.coingecko_id). A
 * live rate of a coin without one never prices a payment; a wrong one fails closed (its price
 * disagrees with the primary's), so check the id on the source's coin page before setting it.
 */
export async function setPriceId(db: Db, input: { coin: string; id: string | null }) {
  if (input.id !== null && !COINGECKO_ID.test(input.id)) throw new FormProblem(`"${input.id}" is not a CoinGecko coin id (lower-case letters, digits, dashes)`);
  const previous = await db.maybeOne(sql.type(z.object({ coingecko_id: z.string().nullable() }))`select coingecko_id from coins where symbol = ${input.coin}`);
  if (!previous) throw new FormProblem(`no coin "${input.coin}" (kassa coins list shows them)`);
  await db.query(sql.typeAlias('void')`update coins set coingecko_id = ${input.id} where symbol = ${input.coin}`);
  return { coin: input.coin, coingeckoId: input.id, previous: previous.coingecko_id };
}
