// Signing with a deposit wallet: the signed external message that makes deposit wallet `index`
// send `messages`, and its identity (hash, normalized hash). Pure: no I/O; the secret key is
// passed in by the signer (the only process holding KASSA_MASTER_KEY).
import { type Address, beginCell, external, storeMessage, type Cell, type MessageRelaxed, type SendMode } from '@ton/core';
import type { KeyPair } from '@ton/crypto';
import { WalletContractV4, WalletContractV5R1 } from '@ton/ton';
import { NETWORK_GLOBAL_ID, WALLET_ID_BASE, type Derivation, type TonNetwork } from '../chain/addresses.ts';
import { messageHash, normalizedMessageHash } from '../chain/transactions.ts';

export interface SignedMessage {
  /** The external message as a BOC (what sendBoc takes). */
  boc: Buffer;
  /** Hash of the message cell (hex). */
  hash: string;
  /** TEP-467 normalized hash (hex). */
  hashNormalized: string;
}

export interface WalletRef {
  index: number;
  derivation: Derivation;
  network: TonNetwork;
}

function contractOf(keys: KeyPair, wallet: WalletRef) {
  return wallet.derivation === 'v4r2-1'
    ? WalletContractV4.create({ workchain: 0, publicKey: keys.publicKey, walletId: WALLET_ID_BASE + wallet.index })
    : WalletContractV5R1.create({
        workchain: 0,
        publicKey: keys.publicKey,
        walletId: { networkGlobalId: NETWORK_GLOBAL_ID[wallet.network], context: wallet.index },
      });
}

/** The address deposit wallet `wallet` has under `keys` (the signer checks it against the books). */
export function walletAddress(keys: KeyPair, wallet: WalletRef): Address {
  return contractOf(keys, wallet).address;
}

/**
 * The external message that makes the wallet send `messages` with `sendMode` (or, wallet v5 only,
 * each with its own of `modes`), valid until
 * `validUntil` (unix seconds) at wallet seqno `seqno`. Seqno 0: the wallet is not deployed yet,
 * and the message carries its StateInit (the first message deploys it).
 */
export function signWalletMessage(
  keys: KeyPair,
  wallet: WalletRef,
  args: { seqno: number; validUntil: number; sendMode: SendMode; messages: MessageRelaxed[]; modes?: SendMode[] },
): SignedMessage {
  const contract = contractOf(keys, wallet);
  const transfer = { seqno: args.seqno, secretKey: keys.secretKey, sendMode: args.sendMode, messages: args.messages, timeout: args.validUntil };
  let body: Cell;
  if (args.modes === undefined) body = contract instanceof WalletContractV4 ? contract.createTransfer(transfer) : contract.createTransfer(transfer);
  else {
    // A send mode per message (the closing message, closing.ts): wallet v5's actions carry one each.
    if (contract instanceof WalletContractV4 || args.modes.length !== args.messages.length)
      throw new Error('a send mode per message needs wallet v5, one mode per message');
    const modes = args.modes;
    body = contract.createRequest({
      seqno: args.seqno,
      secretKey: keys.secretKey,
      timeout: args.validUntil,
      actions: args.messages.map((outMsg, i) => ({ type: 'sendMsg' as const, mode: modes[i]!, outMsg })),
    });
  }
  const message = external({ to: contract.address, ...(args.seqno === 0 ? { init: contract.init } : {}), body });
  const cell = beginCell().store(storeMessage(message)).endCell();
  return { boc: cell.toBoc(), hash: messageHash(message), hashNormalized: normalizedMessageHash(message)! };
}
