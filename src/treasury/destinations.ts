// Where Kassa may send money (refunds, treasuries): a basechain (workchain 0) address of the
// configured network that is none of Kassa's own wallets. A jetton can go nowhere else (a
// jetton wallet refuses a masterchain destination, exit 333), and money sent to one of Kassa's
// deposits or its gas wallet moves nothing but a fee (and comes back as money to account for);
// sent to a deposit's jetton wallet it is lost.
//
// A deposit's jetton wallet is recognised two ways, so that one of ANY master is refused, a token
// Kassa has never seen or accepted included: what the books know (the payment's watched wallet, one
// that sent a deposit a notification or that reconciliation found listed as a deposit's), and — when
// the caller can ask the chain (a refund: `ownerOf`) — the destination itself: a contract that
// answers TEP-74's get_wallet_data naming one of Kassa's own wallets as its owner.
import { ChainApiError } from '../chain/apiError.ts';
import { parseNetworkAddress, type TonNetwork } from '../chain/addresses.ts';
import { sql, type Db } from '../db/pool.ts';
import { destinationUncheckable } from '../errors.ts';

/**
 * The raw owner a jetton wallet at `raw` names (its get_wallet_data), or null when it is no jetton
 * wallet (or not deployed). Throws ChainApiError when the chain API cannot answer.
 */
export type JettonOwnerOf = (raw: string) => Promise<string | null>;

/**
 * Why `value` cannot be a destination, from its form alone (not an address of the network, not
 * basechain), or its raw form. Pure: the CLI checks a treasury with it before opening the database.
 */
export function destinationForm(value: string, network: TonNetwork): { raw: string } | { problem: string } {
  const parsed = parseNetworkAddress(value, network);
  if ('problem' in parsed) return { problem: `not a TON address for this network: ${parsed.problem}` };
  if (parsed.address.workChain !== 0)
    return {
      problem: `a workchain ${parsed.address.workChain} address: Kassa sends only to basechain (workchain 0) addresses, the only ones a jetton can go to`,
    };
  return { raw: parsed.address.toRawString() };
}

const OWN_JETTON_WALLET = "a jetton wallet of one of Kassa's own deposits: money sent there cannot be got back";

/**
 * Why the raw address `raw` cannot be a destination because it is one of Kassa's own wallets, or
 * null. With `ownerOf`, a jetton wallet the books do not know is asked for its owner (one request);
 * a chain API that cannot answer refuses the destination for now (503 chain_unavailable).
 */
export async function ownWalletProblem(db: Db, raw: string, ownerOf: JettonOwnerOf | null = null): Promise<string | null> {
  if (await db.exists(sql.unsafe`select 1 from deposit_addresses where address = ${raw}`))
    return "one of Kassa's own deposit addresses: money sent there moves nothing but a fee";
  if (await db.exists(sql.unsafe`select 1 from gas_wallets where address = ${raw}`)) return "Kassa's own gas wallet: money sent there moves nothing but a fee";
  // A deposit's jetton wallet, of any master (watched; one a master confirmed as a deposit's; one
  // that sent a deposit a notification and names a deposit as its owner): jettons sent there go to
  // a wallet it owns and TON stays in it; neither can be got back.
  if (
    await db.exists(sql.unsafe`
      select 1 from chain_watches where account = ${raw} and kind = 'jetton_wallet'
      union all select 1 from jetton_wallets where address = ${raw}
        and (genuine or owner_address in (select address from deposit_addresses))
    `)
  )
    return OWN_JETTON_WALLET;
  if (ownerOf === null) return null;
  let owner: string | null;
  try {
    owner = await ownerOf(raw);
  } catch (error) {
    if (error instanceof ChainApiError) throw destinationUncheckable();
    throw error;
  }
  if (owner === null) return null;
  if (await db.exists(sql.unsafe`select 1 from deposit_addresses where address = ${owner} union all select 1 from gas_wallets where address = ${owner}`))
    return OWN_JETTON_WALLET;
  return null;
}

/** The raw form of a destination, or why it cannot be one (form first, then Kassa's own wallets). */
export async function checkDestination(
  db: Db,
  value: string,
  network: TonNetwork,
  ownerOf: JettonOwnerOf | null = null,
): Promise<{ raw: string } | { problem: string }> {
  const form = destinationForm(value, network);
  if ('problem' in form) return form;
  const own = await ownWalletProblem(db, form.raw, ownerOf);
  return own === null ? form : { problem: own };
}
