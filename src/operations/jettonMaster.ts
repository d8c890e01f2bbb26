// A jetton master as the chain describes it (TEP-74 `get_jetton_data`, TEP-64 metadata), checked
// against the coin data in the database: by `kassa doctor` and `kassa coins set-master`.
import { createHash } from 'node:crypto';
import { type Address, beginCell, Dictionary, type Cell } from '@ton/core';
import { toChainApiError } from '../chain/apiError.ts';
import type { ChainClient } from '../chain/client.ts';

/** What the metadata content says about decimals (TEP-64). */
type ContentDecimals =
  | { source: 'on-chain'; decimals: number }
  /** On-chain content without `decimals` and without `uri`: TEP-64's default, 9. */
  | { source: 'default'; decimals: 9 }
  /** Off-chain (a URI) or semi-chain (on-chain with a `uri` and no `decimals`): the JSON behind the URI decides. */
  | { source: 'off-chain'; uri: string | null }
  | { source: 'unreadable'; reason: string };

const key = (name: string): Buffer => createHash('sha256').update(name, 'utf8').digest();

/** A TEP-64 content value: 0x00 + snake text (0x01 chunked values are not read). */
function contentText(cell: Cell): string | null {
  const slice = cell.beginParse();
  if (slice.remainingBits < 8 || slice.loadUint(8) !== 0x00) return null;
  return slice.loadStringTail();
}

/** Decimals from a jetton's metadata content cell (pure). */
export function contentDecimals(content: Cell): ContentDecimals {
  try {
    const slice = content.beginParse();
    if (slice.remainingBits < 8) return { source: 'unreadable', reason: 'empty content cell' };
    const layout = slice.loadUint(8);
    if (layout === 0x01) return { source: 'off-chain', uri: slice.loadStringTail() };
    if (layout !== 0x00) return { source: 'unreadable', reason: `unknown content layout 0x${layout.toString(16)}` };
    const dict = slice.loadDict(Dictionary.Keys.Buffer(32), Dictionary.Values.Cell());
    const decimals = dict.get(key('decimals'));
    if (decimals !== undefined) {
      const text = contentText(decimals);
      if (text === null || !/^\d{1,3}$/.test(text.trim())) return { source: 'unreadable', reason: `decimals is ${JSON.stringify(text)}` };
      return { source: 'on-chain', decimals: Number(text.trim()) };
    }
    const uri = dict.get(key('uri'));
    if (uri !== undefined) return { source: 'off-chain', uri: contentText(uri) };
    return { source: 'default', decimals: 9 };
  } catch (error) {
    return { source: 'unreadable', reason: (error as Error).message };
  }
}

interface MasterVerdict {
  ok: boolean;
  /** One line for the operator. */
  detail: string;
  /** True when the decimals could not be compared (off-chain metadata): a warning, not a failure. */
  decimalsUnverified: boolean;
}

/** Compares what the chain answered with the coin's decimals in the database (pure). */
export function judgeMaster(
  coin: string,
  expectedDecimals: number,
  chain: { decimals: ContentDecimals; walletCodeHash: string | null; walletAddressAnswered: boolean },
): MasterVerdict {
  const problems: string[] = [];
  let decimalsUnverified = false;
  let decimalsText: string;
  const found = chain.decimals;
  if (found.source === 'on-chain' || found.source === 'default') {
    decimalsText = `decimals ${found.decimals}${found.source === 'default' ? ' (TEP-64 default)' : ''}`;
    if (found.decimals !== expectedDecimals) problems.push(`decimals ${found.decimals} on chain, ${expectedDecimals} in the database`);
  } else if (found.source === 'off-chain') {
    decimalsUnverified = true;
    decimalsText = `decimals not verifiable offline (metadata at ${found.uri ?? 'an off-chain URI'}; the database says ${expectedDecimals})`;
  } else {
    decimalsText = '';
    problems.push(`metadata unreadable: ${found.reason}`);
  }
  if (chain.walletCodeHash === null) problems.push('no jetton wallet code in get_jetton_data');
  if (!chain.walletAddressAnswered) problems.push('get_wallet_address gave no address');
  if (problems.length > 0) return { ok: false, detail: `${coin}: ${problems.join('; ')}`, decimalsUnverified };
  return { ok: true, detail: `${coin}: ${decimalsText}; wallet code ${chain.walletCodeHash}`, decimalsUnverified };
}

/**
 * Asks the chain about `master`: `get_jetton_data` (metadata content and wallet code) and
 * `get_wallet_address` for a probe owner (the master itself), which is how the chain reader finds the
 * jetton wallets of deposit addresses. Throws a ChainApiError when a get-method fails.
 */
async function readJettonMaster(
  client: ChainClient,
  master: Address,
): Promise<{ decimals: ContentDecimals; walletCodeHash: string | null; walletAddressAnswered: boolean }> {
  let content: Cell;
  let walletCode: Cell | null;
  try {
    const data = await client.runMethod(master, 'get_jetton_data');
    data.stack.readBigNumber(); // total_supply
    data.stack.readBigNumber(); // mintable
    data.stack.readAddressOpt(); // admin
    content = data.stack.readCell();
    walletCode = data.stack.readCellOpt();
  } catch (error) {
    throw toChainApiError(error);
  }
  let walletAddressAnswered = false;
  try {
    const owner = beginCell().storeAddress(master).endCell();
    const wallet = await client.runMethod(master, 'get_wallet_address', [{ type: 'slice', cell: owner }]);
    walletAddressAnswered = wallet.stack.readAddressOpt() !== null;
  } catch (error) {
    const failure = toChainApiError(error);
    if (failure.retryable) throw failure;
  }
  return { decimals: contentDecimals(content), walletCodeHash: walletCode ? walletCode.hash().toString('hex') : null, walletAddressAnswered };
}

/** Reads and judges one master; a chain failure is a failed verdict with its reason. */
export async function verifyJettonMaster(client: ChainClient, coin: string, expectedDecimals: number, master: Address): Promise<MasterVerdict> {
  try {
    return judgeMaster(coin, expectedDecimals, await readJettonMaster(client, master));
  } catch (error) {
    return { ok: false, detail: `${coin}: get_jetton_data failed on ${master.toString()}: ${(error as Error).message}`, decimalsUnverified: false };
  }
}
