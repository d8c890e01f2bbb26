/**
 * Deposit addresses: derived offline from the master key, one wallet per payment.
 *
 * Derivation (FROZEN: changing any step moves every deposit address and strands the funds on the
 * old ones):
 *
 *   seed      = SHA-256( "kassa/deposit-key/v1" (UTF-8) || masterKey )
 *   key pair  = Ed25519 keyPairFromSeed(seed)                      (@ton/crypto, tweetnacl)
 *   wallet    = WalletContractV4, workchain 0, that public key, walletId = WALLET_ID_BASE + index
 *   address   = contractAddress(0, StateInit{ code: wallet v4r2 code, data }) where
 *               data = seqno:uint32(0) walletId:uint32 publicKey:bits256 plugins:bit(0)
 *
 * One key controls all deposit wallets; the walletId (a.k.a. subwallet id) makes each address
 * distinct. A V4 address does not depend on the network, only its user-friendly form does.
 */
import { createHash } from 'node:crypto';
import { Address, beginCell, contractAddress } from '@ton/core';
import type { Cell } from '@ton/core';
import { keyPairFromSeed } from '@ton/crypto';
import type { KeyPair } from '@ton/crypto';
import { WalletContractV4 } from '@ton/ton';

export type TonNetwork = 'mainnet' | 'testnet' | 'sandbox';

/** The standard wallet v4 subwallet id for workchain 0; deposit n uses BASE + n. Frozen. */
export const WALLET_ID_BASE = 698983191;
/** walletId is a uint32. */
export const MAX_DEPOSIT_INDEX = 0xffffffff - WALLET_ID_BASE;

const DERIVATION_LABEL = Buffer.from('kassa/deposit-key/v1', 'utf8');
const MIN_MASTER_KEY_BYTES = 16;
const RAW_ADDRESS = /^(0|-1):[0-9a-fA-F]{64}$/;

export type DepositWallet = {
  index: number;
  address: Address;
  /** `0:<64 hex>`, the form to store and compare. */
  raw: string;
  /** Non-bounceable user-friendly form for the network (testOnly on testnet). Show this one. */
  friendly: string;
  walletId: number;
  /** Public key of the deposit key pair (hex); the same for every index. */
  publicKey: string;
};

let cachedMaster: Buffer | null = null;
let cachedKeyPair: KeyPair | null = null;
let cachedCode: Cell | null = null;

/** The one Ed25519 key pair behind all deposit wallets. Cached for the last master key used. */
export function depositKeyPair(masterKey: Buffer): KeyPair {
  if (!Buffer.isBuffer(masterKey) || masterKey.length < MIN_MASTER_KEY_BYTES) {
    throw new Error(`master key must be a Buffer of at least ${MIN_MASTER_KEY_BYTES} bytes`);
  }
  if (cachedKeyPair !== null && cachedMaster !== null && cachedMaster.equals(masterKey)) {
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

function checkIndex(index: number): void {
  if (!Number.isSafeInteger(index) || index < 0 || index > MAX_DEPOSIT_INDEX) {
    throw new RangeError(`deposit index must be an integer in 0..${MAX_DEPOSIT_INDEX}, got ${index}`);
  }
}

/** The StateInit of deposit wallet `index` (needed to deploy it, e.g. when sweeping). */
export function depositWalletInit(masterKey: Buffer, index: number): { code: Cell; data: Cell } {
  checkIndex(index);
  const { publicKey } = depositKeyPair(masterKey);
  const data = beginCell()
    .storeUint(0, 32) // seqno
    .storeUint(WALLET_ID_BASE + index, 32)
    .storeBuffer(publicKey)
    .storeBit(0) // empty plugins dict
    .endCell();
  return { code: walletV4Code(), data };
}

/** Deposit wallet `index`: same address as WalletContractV4.create({workchain: 0, publicKey, walletId: BASE + index}). */
export function depositWallet(masterKey: Buffer, index: number, network: TonNetwork): DepositWallet {
  const init = depositWalletInit(masterKey, index);
  const address = contractAddress(0, init);
  return {
    index,
    address,
    raw: address.toRawString(),
    friendly: friendlyAddress(address, network),
    walletId: WALLET_ID_BASE + index,
    publicKey: depositKeyPair(masterKey).publicKey.toString('hex'),
  };
}

/** Non-bounceable URL-safe form (`UQ…` on mainnet and sandbox, `0Q…` on testnet). */
export function friendlyAddress(address: Address, network: TonNetwork): string {
  return address.toString({ urlSafe: true, bounceable: false, testOnly: network === 'testnet' });
}

/** Raw form `wc:<64 hex>`. */
export function rawAddress(address: Address): string {
  return address.toRawString();
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
