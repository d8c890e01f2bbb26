/**
 * Deposit addresses: derived offline from the deposit key, one wallet per payment. Only the
 * public key is needed to derive an address (the API); the master key only to spend (the signer).
 *
 * Each deposit records its derivation (deposit_addresses.derivation); every derivation is FROZEN:
 * changing any step moves the deposit addresses made with it and strands the funds on the old ones.
 *
 *   seed      = SHA-256( "kassa/deposit-key/v1" (UTF-8) || masterKey )       (all derivations)
 *   key pair  = Ed25519 keyPairFromSeed(seed)                      (@ton/crypto, tweetnacl)
 *
 * 'v4r2-1' (deposits made before v5r1-1; the same address on every network):
 *   wallet    = WalletContractV4, workchain 0, that public key, walletId = WALLET_ID_BASE + index
 *   address   = contractAddress(0, StateInit{ code: wallet v4r2 code, data }) where
 *               data = seqno:uint32(0) walletId:uint32 publicKey:bits256 plugins:bit(0)
 *
 * 'v5r1-1' (new payments; the address depends on the network):
 *   wallet    = WalletContractV5R1, workchain 0, that public key,
 *               walletId = { networkGlobalId: NETWORK_GLOBAL_ID[network], context: index }
 *               (a "custom" context: 31 bits, top bit 0, so index ≤ 2^31 − 1); the stored id is
 *               walletId:int32 = networkGlobalId XOR context (@ton/ton storeWalletIdV5R1)
 *   address   = contractAddress(0, StateInit{ code: wallet v5r1 code, data }) where
 *               data = signatureAllowed:bit(1) seqno:uint32(0) walletId:int32 publicKey:bits256 plugins:bit(0)
 *   networks  = mainnet −239, testnet −3, sandbox −3 (the sandbox is a test network: it shares
 *               testnet's id, so a sandbox deposit is spendable by any tool set up for testnet)
 *
 * One key controls all deposit wallets; the wallet id makes each address distinct.
 */
import { createHash } from 'node:crypto';
import { Address, beginCell, contractAddress } from '@ton/core';
import type { Cell } from '@ton/core';
import { keyPairFromSeed } from '@ton/crypto';
import type { KeyPair } from '@ton/crypto';
// The two wallet contracts from their own files: @ton/ton's index also loads its HTTP clients
// (axios and more, ~0.3 s of CPU), which every CLI command that reads an address would pay for.
import { WalletContractV4 } from '@ton/ton/dist/wallets/v4/WalletContractV4.js';
import { WalletContractV5R1 } from '@ton/ton/dist/wallets/v5r1/WalletContractV5R1.js';

export type TonNetwork = 'mainnet' | 'testnet' | 'sandbox';

/** The standard wallet v4 subwallet id for workchain 0; deposit n uses BASE + n. Frozen. */
export const WALLET_ID_BASE = 698983191;
/** v4r2: walletId is a uint32. */
export const MAX_DEPOSIT_INDEX = 0xffffffff - WALLET_ID_BASE;
/** v5r1: the wallet id's custom context is 31 bits. */
export const MAX_DEPOSIT_INDEX_V5 = 0x7fffffff;

/**
 * The gas wallet (it pays the TON that jetton transfers out of deposit wallets need): wallet
 * v5r1 of the deposit key with this context, on the network ('v5r1-1' with index 2^31 − 1, which
 * no deposit gets). Derived from the public key, so an API process knows its address too. Frozen.
 */
export const GAS_WALLET_CONTEXT = 0x7fffffff;

/** How a deposit's wallet was derived; recorded per deposit, so old deposits stay spendable. */
export type Derivation = 'v4r2-1' | 'v5r1-1';
/** The derivation new payments get. */
export const CURRENT_DERIVATION: Derivation = 'v5r1-1';
export const DERIVATIONS: readonly Derivation[] = ['v4r2-1', 'v5r1-1'];
/** The network's global id, which wallet v5r1 folds into its wallet id. Frozen. */
export const NETWORK_GLOBAL_ID: Record<TonNetwork, number> = { mainnet: -239, testnet: -3, sandbox: -3 };

const DERIVATION_LABEL = Buffer.from('kassa/deposit-key/v1', 'utf8');
const MIN_MASTER_KEY_BYTES = 16;
export const RAW_ADDRESS = /^(0|-1):[0-9a-fA-F]{64}$/;

export type DepositWallet = {
  index: number;
  address: Address;
  /** `0:<64 hex>`, the form to store and compare. */
  raw: string;
  /** Non-bounceable user-friendly form for the network (testOnly on testnet). Show this one. */
  friendly: string;
  derivation: Derivation;
  /** The wallet contract: 'v4r2' or 'v5r1'. */
  walletVersion: 'v4r2' | 'v5r1';
  /** The wallet id as stored in the wallet's data (v4r2: uint32; v5r1: int32, networkGlobalId XOR context). */
  walletId: number;
  /** v5r1 only: the wallet id's parts, as @ton/ton's WalletContractV5R1.create takes them. */
  networkGlobalId: number | null;
  context: number | null;
  /** Public key of the deposit key pair (hex); the same for every index. */
  publicKey: string;
};

let cachedMaster: Buffer | null = null;
let cachedKeyPair: KeyPair | null = null;
let cachedCode: Cell | null = null;
let cachedCodeV5: Cell | null = null;

/** The one Ed25519 key pair behind all deposit wallets. Cached for the last master key used. */
export function depositKeyPair(masterKey: Buffer): KeyPair {
  if (!Buffer.isBuffer(masterKey) || masterKey.length < MIN_MASTER_KEY_BYTES) {
    throw new Error(`master key must be a Buffer of at least ${MIN_MASTER_KEY_BYTES} bytes`);
  }
  if (cachedKeyPair && cachedMaster?.equals(masterKey)) {
    return cachedKeyPair;
  }
  const seed = createHash('sha256').update(DERIVATION_LABEL).update(masterKey).digest();
  const pair = keyPairFromSeed(seed);
  cachedMaster = Buffer.from(masterKey);
  cachedKeyPair = pair;
  return pair;
}

/** Wallet v4r2 code, parsed once (WalletContractV4.create re-parses it on every call). */
function walletV4Code(): Cell {
  if (cachedCode === null) {
    cachedCode = WalletContractV4.create({ workchain: 0, publicKey: Buffer.alloc(32) }).init.code;
  }
  return cachedCode;
}

/** Wallet v5r1 code, parsed once. */
function walletV5Code(): Cell {
  if (cachedCodeV5 === null) {
    cachedCodeV5 = WalletContractV5R1.create({ workchain: 0, publicKey: Buffer.alloc(32) }).init.code;
  }
  return cachedCodeV5;
}

function checkIndex(index: number, derivation: Derivation): void {
  const max = derivation === 'v4r2-1' ? MAX_DEPOSIT_INDEX : MAX_DEPOSIT_INDEX_V5;
  if (!Number.isSafeInteger(index) || index < 0 || index > max) {
    throw new RangeError(`deposit index must be an integer in 0..${max}, got ${index}`);
  }
}

/** The v5r1 wallet id as stored (int32): networkGlobalId XOR context, context's top bit 0. */
function walletIdV5(network: TonNetwork, index: number): number {
  return (NETWORK_GLOBAL_ID[network] ^ index) | 0;
}

/** The StateInit of a deposit wallet (needed to deploy it, e.g. when sweeping). */
function derivedWalletInit(publicKey: Buffer, index: number, network: TonNetwork, derivation: Derivation): { code: Cell; data: Cell } {
  checkIndex(index, derivation);
  if (publicKey.length !== 32) throw new Error('a deposit public key is 32 bytes');
  if (derivation === 'v4r2-1') {
    const data = beginCell()
      .storeUint(0, 32) // seqno
      .storeUint(WALLET_ID_BASE + index, 32)
      .storeBuffer(publicKey)
      .storeBit(0) // empty plugins dict
      .endCell();
    return { code: walletV4Code(), data };
  }
  const data = beginCell()
    .storeBit(1) // signature auth allowed
    .storeUint(0, 32) // seqno
    .storeInt(walletIdV5(network, index), 32)
    .storeBuffer(publicKey)
    .storeBit(0) // empty extensions dict
    .endCell();
  return { code: walletV5Code(), data };
}

/**
 * Deposit wallet `index` of the deposit public key. 'v4r2-1': the address of
 * WalletContractV4.create({workchain: 0, publicKey, walletId: BASE + index}); 'v5r1-1': that of
 * WalletContractV5R1.create({workchain: 0, publicKey, walletId: {networkGlobalId, context: index}}).
 */
export function derivedWallet(publicKey: Buffer, index: number, network: TonNetwork, derivation: Derivation): DepositWallet {
  const init = derivedWalletInit(publicKey, index, network, derivation);
  const address = contractAddress(0, init);
  const v4 = derivation === 'v4r2-1';
  return {
    index,
    address,
    raw: address.toRawString(),
    friendly: friendlyAddress(address, network),
    derivation,
    walletVersion: v4 ? 'v4r2' : 'v5r1',
    walletId: v4 ? WALLET_ID_BASE + index : walletIdV5(network, index),
    networkGlobalId: v4 ? null : NETWORK_GLOBAL_ID[network],
    context: v4 ? null : index,
    publicKey: publicKey.toString('hex'),
  };
}

/** Deposit wallet `index` from the master key ('v4r2-1' unless told; new payments use CURRENT_DERIVATION). */
export function depositWallet(masterKey: Buffer, index: number, network: TonNetwork, derivation: Derivation = 'v4r2-1'): DepositWallet {
  return derivedWallet(depositKeyPair(masterKey).publicKey, index, network, derivation);
}

/** The gas wallet of the deposit key on `network`. */
export function gasWallet(publicKey: Buffer, network: TonNetwork): DepositWallet {
  return derivedWallet(publicKey, GAS_WALLET_CONTEXT, network, 'v5r1-1');
}

/** Non-bounceable URL-safe form (`UQ…` on mainnet and sandbox, `0Q…` on testnet). */
export function friendlyAddress(address: Address, network: TonNetwork): string {
  return address.toString({ urlSafe: true, bounceable: false, testOnly: network === 'testnet' });
}

/** Accepts raw (`0:<hex>`) or user-friendly (any flags, URL-safe or not); null when not an address. */
export function parseAddress(value: string): Address | null {
  if (typeof value !== 'string') return null;
  const s = value.trim();
  try {
    if (RAW_ADDRESS.test(s)) return Address.parseRaw(s.toLowerCase());
    if (Address.isFriendly(s)) {
      const address = Address.parseFriendly(s).address;
      return address.workChain === 0 || address.workChain === -1 ? address : null;
    }
  } catch {
    return null;
  }
  return null;
}

/** Raw form of any accepted address string, or null. */
export function toRawAddress(value: string): string | null {
  return parseAddress(value)?.toRawString() ?? null;
}

/**
 * The address of `owner`'s wallet of a standard TEP-74 jetton master whose wallets run `walletCode`
 * (data: balance 0, owner, master, wallet code), computed offline. Exact only for masters that
 * deploy this layout (jetton_masters.wallet_code says so); others are asked (get_wallet_address).
 */
export function standardJettonWalletAddress(master: Address, owner: Address, walletCode: Cell): Address {
  const data = beginCell().storeCoins(0).storeAddress(owner).storeAddress(master).storeRef(walletCode).endCell();
  return contractAddress(0, { code: walletCode, data });
}

/**
 * An address for `network`, or why not: raw (`0:<hex>`) or user-friendly; a friendly address
 * flagged test-only is refused on mainnet, and one not so flagged on testnet (it was written
 * for the other network). The sandbox takes either.
 */
export function parseNetworkAddress(value: string, network: TonNetwork): { address: Address } | { problem: string } {
  const address = parseAddress(value);
  if (address === null) return { problem: 'not a TON address (expected raw 0:<64 hex> or user-friendly)' };
  const s = value.trim();
  if (network !== 'sandbox' && !RAW_ADDRESS.test(s)) {
    const { isTestOnly } = Address.parseFriendly(s);
    if (isTestOnly && network === 'mainnet') return { problem: 'a testnet-only address cannot be used on mainnet' };
    if (!isTestOnly && network === 'testnet') return { problem: 'a mainnet address cannot be used on testnet (use its testnet form, 0Q…/kQ…)' };
  }
  return { address };
}
