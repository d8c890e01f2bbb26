/**
 * Standard TEP-74 jetton contracts for the sandbox chain: the compiled minter/wallet code shipped
 * by @ton-community/assets-sdk (MIT; only its two code files are imported, not the SDK), the
 * few message bodies the sandbox sends, and the locked wallet's code (a frozen stablecoin wallet).
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

/**
 * The code of a jetton wallet whose status locks incoming transfers, as Tether's stablecoin wallet
 * does for a frozen address (its `status` bit 2: `internal_transfer` throws error::contract_locked,
 * 45, and the message bounces back to the sending jetton wallet, which adds the amount back). It
 * wraps `code` (the standard wallet's, whose data it keeps): TVM assembly, hand-encoded —
 *   SETCP0  DUP  IFJMPREF:code          (not recv_internal: a get method or an internal call)
 *   OVER SBITS 32 PUSHINT GEQ IFNOTJMPREF:code     (a body shorter than an op)
 *   OVER 32 PLDU 0x178d4519 PUSHINT EQUAL IFNOTJMPREF:code   (not an internal_transfer)
 *   45 THROW
 * so every get method and every other message (a bounce, excesses, an outgoing transfer) runs the
 * wrapped code unchanged. Real TVM refuses the transfer; nothing is booked by hand.
 */
export function lockedJettonWalletCode(code: Cell): Cell {
  return beginCell()
    .storeUint(0xff00, 16) // SETCP0
    .storeUint(0x20, 8) // DUP (the selector: 0 for recv_internal)
    .storeUint(0xe302, 16) // IFJMPREF
    .storeRef(code)
    .storeUint(0x21, 8) // OVER (the body)
    .storeUint(0xd749, 16) // SBITS
    .storeUint(0x8020, 16) // PUSHINT 32
    .storeUint(0xbe, 8) // GEQ
    .storeUint(0xe303, 16) // IFNOTJMPREF
    .storeRef(code)
    .storeUint(0x21, 8) // OVER
    .storeUint(0xd70b1f, 24) // 32 PLDU (the op)
    .storeUint(0x82, 8) // PUSHINT (long: 5-bit length 2, 35-bit value)
    .storeUint(2, 5)
    .storeInt(OP_JETTON_INTERNAL_TRANSFER, 35)
    .storeUint(0xba, 8) // EQUAL
    .storeUint(0xe303, 16) // IFNOTJMPREF
    .storeRef(code)
    .storeUint(0xf22d, 16) // 45 THROW (error::contract_locked)
    .endCell();
}

/** A standard wallet's data (balance, owner, master, wallet code): what a never-used wallet of `owner` starts with. */
export function walletData(owner: Address, master: Address): Cell {
  return beginCell().storeCoins(0).storeAddress(owner).storeAddress(master).storeRef(jettonWalletCodeCell()).endCell();
}
