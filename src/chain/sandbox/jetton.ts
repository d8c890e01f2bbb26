/**
 * Standard TEP-74 jetton contracts for the sandbox chain: the compiled minter/wallet code shipped
 * by @ton-community/assets-sdk (MIT; only its two code files are imported, not the SDK) and the
 * few message bodies the sandbox sends.
 */
import { createHash } from 'node:crypto';
import { Cell, Dictionary, beginCell, contractAddress } from '@ton/core';
import type { Address, StateInit } from '@ton/core';
import { jettonMinterCode } from '@ton-community/assets-sdk/dist/jetton/contracts/build/jetton-minter.js';
import { jettonWalletCode } from '@ton-community/assets-sdk/dist/jetton/contracts/build/jetton-wallet.js';
import { OP_JETTON_INTERNAL_TRANSFER, OP_TEXT_COMMENT } from '../detect.ts';

const OP_JETTON_MINT = 21;

let minterCode: Cell | null = null;
let walletCode: Cell | null = null;

function jettonMinterCodeCell(): Cell {
  minterCode ??= Cell.fromBase64(jettonMinterCode.codeBoc);
  return minterCode;
}

export function jettonWalletCodeCell(): Cell {
  walletCode ??= Cell.fromBase64(jettonWalletCode.codeBoc);
  return walletCode;
}

/** TEP-64 on-chain metadata: 0x00 prefix + dict sha256(key) → snake cell (0x00 + UTF-8 text). */
export function onchainContent(meta: Record<string, string>): Cell {
  const dict = Dictionary.empty(Dictionary.Keys.Buffer(32), Dictionary.Values.Cell());
  for (const [key, value] of Object.entries(meta)) {
    const k = createHash('sha256').update(key, 'utf8').digest();
    dict.set(k, beginCell().storeUint(0, 8).storeStringTail(value).endCell());
  }
  return beginCell().storeUint(0, 8).storeDict(dict).endCell();
}

/** StateInit of a standard minter: total_supply 0, admin, content, wallet code. */
export function minterInit(admin: Address, content: Cell): StateInit {
  const data = beginCell().storeCoins(0).storeAddress(admin).storeRef(content).storeRef(jettonWalletCodeCell()).endCell();
  return { code: jettonMinterCodeCell(), data };
}

export function minterAddress(admin: Address, content: Cell): Address {
  return contractAddress(0, minterInit(admin, content));
}

export function textComment(text: string): Cell {
  return beginCell().storeUint(OP_TEXT_COMMENT, 32).storeStringTail(text).endCell();
}

/** Minter op 21 (admin only): mint `jettonAmount` to `to`'s jetton wallet, sending it `walletTon`. */
export function mintBody(args: { minter: Address; to: Address; jettonAmount: bigint; walletTon: bigint; responseAddress: Address; queryId?: bigint }): Cell {
  const internalTransfer = beginCell()
    .storeUint(OP_JETTON_INTERNAL_TRANSFER, 32)
    .storeUint(args.queryId ?? 0n, 64)
    .storeCoins(args.jettonAmount)
    .storeAddress(args.minter)
    .storeAddress(args.responseAddress)
    .storeCoins(0)
    .storeMaybeRef(null)
    .endCell();
  return beginCell()
    .storeUint(OP_JETTON_MINT, 32)
    .storeUint(args.queryId ?? 0n, 64)
    .storeAddress(args.to)
    .storeCoins(args.walletTon)
    .storeRef(internalTransfer)
    .endCell();
}
