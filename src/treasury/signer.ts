// The signer: sends one deposit wallet's planned transfers, one message at a time, safely
// repeatable. The only code that reads KASSA_MASTER_KEY to spend (the worker runs it).
//
// For each message: sign → record (seqno, valid_until, message hash, the signed message itself:
// state `sent`) → broadcast. A crash before the record leaves nothing (the next run signs again
// with the same seqno); a crash after it leaves a recorded message that the next run broadcasts
// again (a repeat of the same signed message cannot be applied twice: the wallet's seqno moved
// on). A message nobody saw on chain until its valid_until passed (by the chain reader's clock,
// settled_until) can never land any more: it is planned again, and signed afresh.
import { Address, internal, SendMode, type MessageRelaxed } from '@ton/core';
import type { Config } from '../config.ts';
import { call, getAccountState, getJettonWalletAddress, type ChainClient } from '../chain/client.ts';
import { depositKeyPair, GAS_WALLET_CONTEXT, type Derivation } from '../chain/addresses.ts';
import { JETTON_TRANSFER_TON, jettonTransferBody } from '../chain/jettonTransfer.ts';
import { fromBaseUnits } from '../money.ts';
import { gasWalletAddress } from './gas.ts';
import { sql, z, type DatabasePool } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { masterKey } from '../payments/deposit.ts';
import { enqueueWalletSend, outgoingRow, OUTGOING_COLUMNS, refundableBaseUnits, type OutgoingRow } from './outgoing.ts';
import { signWalletMessage, walletAddress, type SignedMessage } from './wallets.ts';

/** How long a signed message stays valid (the wallet refuses it afterwards). */
export const MESSAGE_TTL_SECONDS = 60;
/** A TON transfer that leaves less than this in the wallet carries the whole balance instead (fees taken from it). */
export const FEE_RESERVE_BASE_UNITS = 10_000_000n; // 0.01 TON
/** The smallest top-up: the attached TON, the deposit's own fees (it deploys itself) and a margin. */
export const JETTON_GAS_TOP_UP = 65_000_000n; // 0.065 TON
/** A wallet v5r1 message carries at most 255 actions; the gas wallet sends this many top-ups at once. */
export const MAX_MESSAGES_PER_BATCH = 100;
/** A transfer whose wallet accepted none of this many signed messages (each expired unseen) fails. */
export const MAX_MESSAGES_SIGNED = 5;
/** The gas wallet's job waits this long after a top-up is planned, so top-ups planned meanwhile share its message. */
export const GAS_BATCH_WINDOW_MS = 1_000;

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
  | { outcome: 'sent'; transferId: string; seqno: number; transfers: number }
  | { outcome: 'waiting_for_gas'; transferId: string; topUpPlanned: boolean }
  | { outcome: 'short_of_gas'; transferId: string }
  | { outcome: 'failed'; transferId: string; reason: string };

const walletRow = z.object({ index: z.number(), derivation: z.enum(['v4r2-1', 'v5r1-1']), network: z.string() });

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
  // After MAX_MESSAGES_SIGNED messages the wallet never accepted, the transfer fails instead.
  const replanned = await pool.any(sql.type(z.object({ id: z.string(), state: z.string() }))`
    update outgoing_transfers set state = case when messages_signed >= ${MAX_MESSAGES_SIGNED} then 'failed' else 'planned' end,
      failed_at = case when messages_signed >= ${MAX_MESSAGES_SIGNED} then ${sql.timestamp(deps.now())}::timestamptz end,
      failure_reason = case when messages_signed >= ${MAX_MESSAGES_SIGNED} then ${`the wallet accepted none of ${MAX_MESSAGES_SIGNED} signed messages`} end,
      wallet_seqno = null, valid_until = null, message_hash = null,
      message_hash_normalized = null, signed_message = null, send_mode = null, updated_at = ${sql.timestamp(deps.now())}
    where from_address = ${wallet} and state = 'sent'
      and valid_until < (select settled_until from chain_reader where network = ${network})
    returning id, state
  `);
  for (const row of replanned) {
    if (row.state === 'failed')
      log.error({ transferId: row.id, wallet }, `an outgoing transfer failed: the wallet accepted none of ${MAX_MESSAGES_SIGNED} signed messages`);
    else log.warn({ transferId: row.id, wallet }, 'an outgoing message expired unseen; it is signed again with a fresh seqno');
  }

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

  // 3. The next planned transfer (the gas wallet: every planned top-up, in one message).
  const gas = await gasWalletAddress(pool, network);
  const isGas = gas === wallet;
  const planned = await pool.any(sql.type(outgoingRow)`
    select ${OUTGOING_COLUMNS} from outgoing_transfers where from_address = ${wallet} and state = 'planned'
    order by created_at, id limit ${isGas ? MAX_MESSAGES_PER_BATCH : 1}
  `);
  const next = planned[0];
  if (!next) return { outcome: 'idle' };
  const walletRef = isGas
    ? { index: GAS_WALLET_CONTEXT, derivation: 'v5r1-1' as Derivation, network }
    : await pool
        .one(sql.type(walletRow)`
        select derivation_index::int as index, derivation, network from deposit_addresses where address = ${wallet}
      `)
        .then((row) => ({ index: row.index, derivation: row.derivation as Derivation, network: row.network as typeof network }));
  const keys = depositKeyPair(await masterKey(pool, deps.config));
  if (walletAddress(keys, walletRef).toRawString() !== wallet) {
    throw new Error(`the master key does not derive wallet ${wallet}: is KASSA_MASTER_KEY the one that made it?`);
  }

  const state = await getAccountState(deps.client, wallet);
  const chainSeqno = state.state === 'active' ? await walletSeqno(deps.client, wallet) : 0;
  // The books know every message this wallet accepted; a stale API answer cannot take a seqno back.
  const booked = await pool.oneFirst(sql.type(z.object({ next: z.string() }))`
    select coalesce(max(wallet_seqno) + 1, 0)::text as next from outgoing_transfers where from_address = ${wallet} and transaction_hash is not null
  `);
  const seqno = Math.max(chainSeqno, Number(booked));
  let sendMode: SendMode = SendMode.PAY_GAS_SEPARATELY;
  let messages: MessageRelaxed[];
  if (isGas) {
    const total = planned.reduce((sum, row) => sum + BigInt(row.amount_base_units), 0n);
    if (total + FEE_RESERVE_BASE_UNITS > state.balance) {
      log.error(
        { wallet, balance: state.balance.toString(), needed: total.toString() },
        'the gas wallet cannot pay the top-ups it owes: fund it (kassa gas prints its address)',
      );
      await pool.transaction((tx) => enqueueWalletSend(tx, wallet, new Date(deps.now().getTime() + 30_000)));
      return { outcome: 'short_of_gas', transferId: next.id };
    }
    messages = planned.map((row) => internal({ to: Address.parse(row.to_address), value: BigInt(row.amount_base_units), bounce: false }));
  } else if (next.coin_symbol === 'TON') {
    const amount = BigInt(next.amount_base_units);
    // Fees are paid from the wallet, so the last transfer out of it may find a little less than the
    // books say: within FEE_RESERVE it carries what there is; beyond, the books and the chain disagree.
    if (amount > state.balance + FEE_RESERVE_BASE_UNITS) {
      return fail(deps, next, `the wallet holds ${state.balance} nanoTON, less than the ${amount} to send`);
    }
    if (state.balance < FEE_RESERVE_BASE_UNITS) {
      return fail(deps, next, `the wallet holds ${state.balance} nanoTON: too little to pay for a transfer (dust)`);
    }
    // What would be left could not pay for its own transfer: the whole balance goes, fees taken from it.
    const carryAll = state.balance - amount < FEE_RESERVE_BASE_UNITS;
    if (carryAll) sendMode = SendMode.CARRY_ALL_REMAINING_BALANCE;
    // Non-bounceable: a treasury or refund address may be a wallet that was never deployed.
    messages = [internal({ to: Address.parse(next.to_address), value: carryAll ? 0n : amount, bounce: false })];
  } else {
    // A jetton: the deposit's jetton wallet sends it; the deposit pays the TON for that, which the
    // gas wallet tops up (never the customer's refundable TON).
    const refundableTon = await refundableBaseUnits(pool, next.payment_id, 'TON');
    const needed = (refundableTon > 0n ? refundableTon : 0n) + JETTON_TRANSFER_TON + FEE_RESERVE_BASE_UNITS;
    if (state.balance < needed) return waitForGas(deps, next, gas, needed - state.balance);
    const jettonWallet = await depositJettonWallet(deps, next, wallet);
    messages = [
      internal({
        to: jettonWallet,
        value: JETTON_TRANSFER_TON,
        bounce: true,
        // The query id is the wallet's seqno: the jetton wallet's transaction names the transfer by it.
        body: jettonTransferBody({
          queryId: BigInt(seqno),
          amount: BigInt(next.amount_base_units),
          destination: Address.parse(next.to_address),
          responseDestination: Address.parse(gas ?? wallet),
        }),
      }),
    ];
  }

  const validUntil = Math.floor(deps.now().getTime() / 1000) + (deps.messageTtlSeconds ?? MESSAGE_TTL_SECONDS);
  const message = signWalletMessage(keys, walletRef, { seqno, validUntil, sendMode, messages });
  await deps.hooks?.afterSign?.(next, message);

  const ids = planned.map((row) => row.id);
  const recorded = await pool
    .transaction(async (tx) => {
      const taken = await tx.anyFirst(sql.type(z.object({ id: z.string() }))`
      update outgoing_transfers set state = 'sent', wallet_seqno = ${seqno}, valid_until = ${sql.timestamp(new Date(validUntil * 1000))},
        send_mode = ${sendMode}, message_hash = ${message.hash}, message_hash_normalized = ${message.hashNormalized},
        signed_message = ${sql.binary(message.boc)}, messages_signed = messages_signed + 1,
        signed_at = ${sql.timestamp(deps.now())}, updated_at = ${sql.timestamp(deps.now())}
      where id = any(${sql.array(ids, 'uuid')}) and state = 'planned'
      returning id
    `);
      if (taken.length !== ids.length) throw new Error('another run took some of these transfers; nothing recorded');
      return true;
    })
    .catch((error: unknown) => {
      log.warn({ err: error instanceof Error ? error.message : String(error), wallet }, 'not recorded; the next run signs again');
      return false;
    });
  if (!recorded) return { outcome: 'idle' };
  await deps.hooks?.afterRecord?.(next);
  log.info(
    { transferIds: ids, kind: next.kind, wallet, coin: next.coin_symbol, messages: messages.length, seqno, sendMode, message: message.hash },
    'outgoing transfers signed',
  );
  await broadcast(deps, next.id, message.boc);
  await pool.transaction((tx) => enqueueWalletSend(tx, wallet, new Date(validUntil * 1000 + 2_000)));
  return { outcome: 'sent', transferId: next.id, seqno, transfers: ids.length };
}

/**
 * The deposit lacks the TON its jetton transfer needs: a top-up from the gas wallet is planned (once
 * per shortfall; the gas wallet's job runs a second later, so top-ups planned meanwhile go in one
 * message), and this wallet's job comes back when the reader confirms it (or in a few seconds).
 */
async function waitForGas(deps: SignerDeps, transfer: OutgoingRow, gas: string | null, shortBy: bigint): Promise<SendOutcome> {
  if (gas === null) throw new Error('no gas wallet is recorded for this network (the worker records it at start)');
  const planned = await deps.pool.transaction(async (tx) => {
    const pending = await tx.exists(sql.unsafe`
      select 1 from outgoing_transfers where for_transfer_id = ${transfer.id} and kind = 'gas_top_up'
        and (state in ('planned', 'sent') or (state = 'confirmed' and confirmed_at > ${sql.timestamp(new Date(deps.now().getTime() - 30_000))}))
    `);
    if (!pending) {
      const amount = shortBy > JETTON_GAS_TOP_UP ? shortBy : JETTON_GAS_TOP_UP;
      await tx.query(sql.typeAlias('void')`
        insert into outgoing_transfers (kind, reason, payment_id, store_id, for_transfer_id, from_address, to_address, coin_symbol, amount, amount_base_units, created_at, updated_at)
        values ('gas_top_up', 'gas', ${transfer.payment_id}, (select store_id from payments where id = ${transfer.payment_id}), ${transfer.id}, ${gas},
                ${transfer.from_address}, 'TON', ${fromBaseUnits(amount, 9)}, ${amount.toString()}, ${sql.timestamp(deps.now())}, ${sql.timestamp(deps.now())})
      `);
      await enqueueWalletSend(tx, gas, new Date(deps.now().getTime() + GAS_BATCH_WINDOW_MS));
    }
    await enqueueWalletSend(tx, transfer.from_address, new Date(deps.now().getTime() + 3_000));
    return !pending;
  });
  return { outcome: 'waiting_for_gas', transferId: transfer.id, topUpPlanned: planned };
}

/** The deposit's jetton wallet of the transfer's coin: the one the reader watches, else asked of the master. */
async function depositJettonWallet(deps: SignerDeps, transfer: OutgoingRow, wallet: string): Promise<Address> {
  const watched = await deps.pool.maybeOneFirst(sql.type(z.object({ account: z.string() }))`
    select account from chain_watches where payment_id = ${transfer.payment_id} and kind = 'jetton_wallet' and coin_symbol = ${transfer.coin_symbol} and account not like 'pending:%'
  `);
  if (watched) return Address.parse(watched);
  const master = await deps.pool.oneFirst(sql.type(z.object({ master_address: z.string() }))`
    select master_address from jetton_masters where coin_symbol = ${transfer.coin_symbol} and network = ${deps.config.tonNetwork}
  `);
  return getJettonWalletAddress(deps.client, master, wallet);
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
    deps.log.info(
      { transferId, err: error instanceof Error ? error.message : String(error) },
      'the chain API did not take the message (a repeat of one already applied, or it will be retried)',
    );
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
