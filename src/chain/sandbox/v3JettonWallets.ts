// toncenter API v3 `GET /api/v3/jetton/wallets` over the sandbox chain, as ton-index-go serves it
// (`index/crud/crud_jettons.go`, `models/jettons.go` `JettonWallet`): filtered by `owner_address`
// (repeated, any address form) and optionally `jetton_address`; `exclude_zero_balance`; paged by
// `limit`/`offset`, ordered by owner then id (the wallet's row id: the sandbox takes its address)
// as crud_jettons.go orders a query by owners; each row `{address, balance, owner, jetton, last_transaction_lt, code_hash,
// data_hash}`, addresses raw upper case, numbers as strings. Reconciliation asks it which jetton
// wallets its deposits own (src/treasury/reconcile.ts).
import { parseAddress } from '../addresses.ts';
import type { SandboxChain } from './chain.ts';
import type { V3Reply } from './v3.ts';
import { pageParams, v3Error } from './v3Params.ts';

const rawUpper = (raw: string) => raw.toUpperCase();

function addressList(query: URLSearchParams, name: string): Set<string> | 'invalid' {
  const out = new Set<string>();
  for (const value of query.getAll(name).flatMap((v) => v.split(','))) {
    if (value === '') continue;
    const address = parseAddress(value);
    if (address === null) return 'invalid';
    out.add(address.toRawString());
  }
  return out;
}

export async function handleV3JettonWallets(chain: SandboxChain, query: URLSearchParams): Promise<V3Reply> {
  const paging = pageParams(query, chain.v3);
  if ('status' in paging) return paging;
  const owners = addressList(query, 'owner_address');
  const masters = addressList(query, 'jetton_address');
  if (owners === 'invalid' || masters === 'invalid') return v3Error(422, 'failed to parse query: an address is not valid');
  if (owners.size === 0) return v3Error(422, 'the sandbox lists jetton wallets by owner_address only');
  const excludeZero = query.get('exclude_zero_balance') === 'true';
  const rows = (await chain.jettonWalletsOwnedBy(owners))
    .filter((w) => (masters.size === 0 || masters.has(w.master)) && (!excludeZero || w.balance > 0n))
    // `order by owner, id` (crud_jettons.go with owner_address): the owner first, then the row.
    .sort((a, b) => (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  const page = rows.slice(paging.skip, paging.skip + paging.take).map((w) => ({
    address: rawUpper(w.address),
    balance: w.balance.toString(),
    owner: rawUpper(w.owner),
    jetton: rawUpper(w.master),
    last_transaction_lt: w.lastLt.toString(),
    code_hash: null,
    data_hash: null,
  }));
  return { status: 200, json: { jetton_wallets: page, address_book: {}, metadata: {} } };
}
