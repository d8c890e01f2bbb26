// Signing with a deposit wallet: the signed external message that makes deposit wallet `index`
// send `messages`, and its identity (hash, normalized hash). Pure: no I/O; the secret key is
// passed in by the signer (the only process holding KASSA_MASTER_KEY).
import { type Address, beginCell, external, SendMode, storeMessage, type Cell, type MessageRelaxed } from '@ton/core';
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
 * Every action a deposit or gas wallet signs is sent with +2 (IGNORE_ERRORS) on top of its mode: an
 * action that cannot be carried out (the balance short of it) is skipped and the transaction still
 * commits — the seqno moves on and the message cannot apply again. Without it a failing action
 * phase rolls the whole transaction back but its gas: wallet v4 commits nothing before its actions,
 * so validators apply the same external message again, paying gas each time, until valid_until.
 * @ton/ton adds it by itself to wallet v5r1's external actions (`toSafeV5R1SendMode`); v4's it
 * sends as given. The books (outgoing_transfers.send_mode) keep the mode without it; a skipped
 * action sent no message, and the reader books its transfer as failed with the fee (no_message_sent).
 */
const signedMode = (mode: SendMode): SendMode => mode | SendMode.IGNORE_ERRORS;

/**
 * The external message that makes the wallet send `messages` with `sendMode` (or, wallet v5 only,
 * each with its own of `modes`), each with +2 (signedMode), valid until
 * `validUntil` (unix seconds) at wallet seqno `seqno`. Seqno 0: the wallet is not deployed yet,
 * and the message carries its StateInit (the first message deploys it).
 */
export function signWalletMessage(
  keys: KeyPair,
  wallet: WalletRef,
  args: { seqno: number; validUntil: number; sendMode: SendMode; messages: MessageRelaxed[]; modes?: SendMode[] },
): SignedMessage {
  const contract = contractOf(keys, wallet);
  const transfer = { seqno: args.seqno, secretKey: keys.secretKey, sendMode: signedMode(args.sendMode), messages: args.messages, timeout: args.validUntil };
  let body: Cell;
  if (args.modes === undefined) body = contract instanceof WalletContractV4 ? contract.createTransfer(transfer) : contract.createTransfer(transfer);
  else {
    // A send mode per message (the closing message, closing.ts): wallet v5's actions carry one each.
    if (contract instanceof WalletContractV4 || args.modes.length !== args.messages.length)
      throw new Error('a send mode per message needs wallet v5, one mode per message');
    const modes = args.modes.map(signedMode);
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
