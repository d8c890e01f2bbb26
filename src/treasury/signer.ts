// The signer: sends one deposit wallet's planned transfers, one message at a time, safely
// repeatable. The only code that reads KASSA_MASTER_KEY to spend (the worker runs it).
//
// For each message: sign → record (seqno, valid_until, message hash, the signed message itself:
// state `sent`) → broadcast. A crash before the record leaves nothing (the next run signs again
// with the same seqno); a crash after it leaves a recorded message that the next run broadcasts
// again (a repeat of the same signed message cannot be applied twice: the wallet's seqno moved
// on). A message nobody saw on chain until its valid_until passed (by the chain reader's clock,
// settled_until) can never land any more: it is planned again, and signed afresh.
import { Address, internal, SendMode } from '@ton/core';
import type { Config } from '../config.ts';
import { call, getAccountState, type ChainClient } from '../chain/client.ts';
import { depositKeyPair, type Derivation } from '../chain/addresses.ts';
import { sql, z, type DatabasePool } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { masterKey } from '../payments/deposit.ts';
import { enqueueWalletSend, outgoingRow, OUTGOING_COLUMNS, type OutgoingRow } from './outgoing.ts';
import { signWalletMessage, walletAddress, type SignedMessage } from './wallets.ts';

/** How long a signed message stays valid (the wallet refuses it afterwards). */
export const MESSAGE_TTL_SECONDS = 60;
/** A TON transfer that leaves less than this in the wallet carries the whole balance instead (fees taken from it). */
export const FEE_RESERVE_BASE_UNITS = 10_000_000n; // 0.01 TON

export interface SignerDeps {
  pool: DatabasePool;
  config: Pick<Config, 'masterKey' | 'tonNetwork'>;
  client: ChainClient;
  log: Logger;
  now: () => Date;
  messageTtlSeconds?: number;
  /** Test hooks: a crash at that point (throw), or a broadcast that gets lost. */
  hooks?: {
    afterSign?: (transfer: OutgoingRow, message: SignedMessage) => void | Promise<void>;
    afterRecord?: (transfer: OutgoingRow) => void | Promise<void>;
    broadcast?: (boc: Buffer, send: () => Promise<void>) => Promise<void>;
  };
}

export type SendOutcome =
  | { outcome: 'idle' }
  | { outcome: 'waiting'; transferId: string; validUntil: Date }
  | { outcome: 'sent'; transferId: string; seqno: number }
  | { outcome: 'failed'; transferId: string; reason: string };

const walletRow = z.object({ payment_id: z.string(), derivation_index: z.string(), derivation: z.enum(['v4r2-1', 'v5r1-1']), network: z.string() });

/**
 * One step for one deposit wallet: re-plans an expired message, re-broadcasts one in flight, or
 * signs and sends the next planned transfer. Returns what it did; `waiting` means a message is in
 * flight (the job comes back after its valid_until, or when the reader confirms it).
 */
export async function sendFromWallet(deps: SignerDeps, wallet: string): Promise<SendOutcome> {
  const { pool, log } = deps;
  const network = deps.config.tonNetwork;
  // 1. A message in flight that the chain has been read past without seeing it: plan it again.
  // One statement (one snapshot): settled_until moves only after the reader booked the blocks.
  const replanned = await pool.anyFirst(sql.type(z.object({ id: z.string() }))`
    update outgoing_transfers set state = 'planned', wallet_seqno = null, valid_until = null, message_hash = null,
      message_hash_normalized = null, signed_message = null, send_mode = null, updated_at = ${sql.timestamp(deps.now())}
    where from_address = ${wallet} and state = 'sent'
      and valid_until < (select settled_until from chain_reader where network = ${network})
    returning id
  `);
  for (const id of replanned) log.warn({ transferId: id, wallet }, 'an outgoing message expired unseen; it is signed again with a fresh seqno');

  // 2. One in flight: broadcast it again (harmless) and come back after its valid_until.
  const inFlight = await pool.maybeOne(sql.type(outgoingRow.extend({ signed_message: z.instanceof(Buffer) }))`
    select ${OUTGOING_COLUMNS}, signed_message from outgoing_transfers where from_address = ${wallet} and state = 'sent' order by created_at limit 1
  `);
  if (inFlight) {
    await broadcast(deps, inFlight.id, inFlight.signed_message);
    const validUntil = inFlight.valid_until!;
    await pool.transaction((tx) => enqueueWalletSend(tx, wallet, new Date(Math.max(validUntil.getTime(), deps.now().getTime()) + 2_000)));
    return { outcome: 'waiting', transferId: inFlight.id, validUntil };
  }

  // 3. The next planned transfer.
  const next = await pool.maybeOne(sql.type(outgoingRow)`
    select ${OUTGOING_COLUMNS} from outgoing_transfers where from_address = ${wallet} and state = 'planned' order by created_at, id limit 1
  `);
  if (!next) return { outcome: 'idle' };
  if (next.coin_symbol !== 'TON') throw new Error(`the signer cannot move ${next.coin_symbol} yet`);
  const ref = await pool.one(sql.type(walletRow)`
    select payment_id, derivation_index::text as derivation_index, derivation, network from deposit_addresses where address = ${wallet}
  `);
  const keys = depositKeyPair(await masterKey(pool, deps.config));
  const walletRef = { index: Number(ref.derivation_index), derivation: ref.derivation as Derivation, network: ref.network as typeof network };
  if (walletAddress(keys, walletRef).toRawString() !== wallet) {
    throw new Error(`the master key does not derive deposit wallet ${wallet}: is KASSA_MASTER_KEY the one that made it?`);
  }

  const state = await getAccountState(deps.client, wallet);
  const chainSeqno = state.state === 'active' ? await walletSeqno(deps.client, wallet) : 0;
  // The books know every message this wallet accepted; a stale API answer cannot take a seqno back.
  const booked = await pool.oneFirst(sql.type(z.object({ next: z.string() }))`
    select coalesce(max(wallet_seqno) + 1, 0)::text as next from outgoing_transfers where from_address = ${wallet} and transaction_hash is not null
  `);
  const seqno = Math.max(chainSeqno, Number(booked));
  const amount = BigInt(next.amount_base_units);
  // Fees are paid from the wallet, so the last transfer out of it may find a little less than the
  // books say: within FEE_RESERVE it carries what there is; beyond, the books and the chain disagree.
  if (amount > state.balance + FEE_RESERVE_BASE_UNITS) {
    return fail(deps, next, `the wallet holds ${state.balance} nanoTON, less than the ${amount} to send`);
  }
  // What would be left could not pay for its own transfer: the whole balance goes, fees taken from it.
  const carryAll = state.balance - amount < FEE_RESERVE_BASE_UNITS;
  const sendMode = carryAll ? SendMode.CARRY_ALL_REMAINING_BALANCE : SendMode.PAY_GAS_SEPARATELY;
  const validUntil = Math.floor(deps.now().getTime() / 1000) + (deps.messageTtlSeconds ?? MESSAGE_TTL_SECONDS);
  const message = signWalletMessage(keys, walletRef, {
    seqno,
    validUntil,
    sendMode,
    // Non-bounceable: a treasury or refund address may be a wallet that was never deployed.
    messages: [internal({ to: Address.parse(next.to_address), value: carryAll ? 0n : amount, bounce: false })],
  });
  await deps.hooks?.afterSign?.(next, message);

  const recorded = await pool.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    update outgoing_transfers set state = 'sent', wallet_seqno = ${seqno}, valid_until = ${sql.timestamp(new Date(validUntil * 1000))},
      send_mode = ${sendMode}, message_hash = ${message.hash}, message_hash_normalized = ${message.hashNormalized},
      signed_message = ${sql.binary(message.boc)}, messages_signed = messages_signed + 1,
      signed_at = ${sql.timestamp(deps.now())}, updated_at = ${sql.timestamp(deps.now())}
    where id = ${next.id} and state = 'planned'
    returning id
  `);
  if (recorded === null) return { outcome: 'idle' }; // another run took it
  await deps.hooks?.afterRecord?.(next);
  log.info({ transferId: next.id, kind: next.kind, wallet, to: next.to_address, amount: next.amount, coin: next.coin_symbol, seqno, sendMode, message: message.hash }, 'outgoing transfer signed');
  await broadcast(deps, next.id, message.boc);
  await pool.transaction((tx) => enqueueWalletSend(tx, wallet, new Date(validUntil * 1000 + 2_000)));
  return { outcome: 'sent', transferId: next.id, seqno };
}

async function walletSeqno(client: ChainClient, wallet: string): Promise<number> {
  const result = await call(() => client.runMethod(Address.parse(wallet), 'seqno'));
  return result.stack.readNumber();
}

/** Sends a recorded message to the chain API. A refusal is no error: a repeat is refused once the first landed. */
async function broadcast(deps: SignerDeps, transferId: string, boc: Buffer): Promise<void> {
  const send = async () => {
    await call(() => deps.client.sendFile(boc));
  };
  try {
    if (deps.hooks?.broadcast) await deps.hooks.broadcast(boc, send);
    else await send();
  } catch (error) {
    deps.log.info({ transferId, err: error instanceof Error ? error.message : String(error) }, 'the chain API did not take the message (a repeat of one already applied, or it will be retried)');
  }
  await deps.pool.query(sql.typeAlias('void')`
    update outgoing_transfers set broadcasts = broadcasts + 1, last_broadcast_at = ${sql.timestamp(deps.now())} where id = ${transferId}
  `);
}

async function fail(deps: SignerDeps, transfer: OutgoingRow, reason: string): Promise<SendOutcome> {
  await deps.pool.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`
      update outgoing_transfers set state = 'failed', failure_reason = ${reason}, failed_at = ${sql.timestamp(deps.now())}, updated_at = ${sql.timestamp(deps.now())}
      where id = ${transfer.id} and state = 'planned'
    `);
    await enqueueWalletSend(tx, transfer.from_address);
  });
  deps.log.error({ transferId: transfer.id, wallet: transfer.from_address, reason }, 'an outgoing transfer cannot be sent');
  return { outcome: 'failed', transferId: transfer.id, reason };
}
