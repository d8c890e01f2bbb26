// The signer: sends one deposit wallet's planned transfers, one message at a time, safely
// repeatable. The only code that reads KASSA_MASTER_KEY to spend (the worker runs it).
//
// A thin shell: the facts are read, whatToSend.ts (pure) decides, and every state change of a
// transfer is a command of signerCommands.ts through the pure transition (transitions.ts); the
// closing message's rules, shares and rows are closing.ts (the signer only signs it). For each
// message: sign → record (the `signed` transition: seqno, valid_until, message hash, the signed
// message itself, state `sent`) → broadcast. A crash before the record leaves nothing (the next run signs again
// with the same seqno); a crash after it leaves a recorded message that the next run broadcasts
// again (a repeat of the same signed message cannot be applied twice: the wallet's seqno moved
// on). A message nobody saw on chain until LATE_COMMIT_MARGIN_MS past its valid_until (by the chain
// reader's clock, settled_until) can never land any more: it is planned again, and signed afresh.
// Never sooner: a wallet accepts a message up to its valid_until, and the shard block holding that
// transaction may reach the masterchain (and the reader) up to the margin later; signed again
// before, the transfer would be paid twice once both landed (issue 31). Every message signed for a
// transfer is kept (outgoing_messages), so a late one still confirms it.
import { Address, internal, type MessageRelaxed } from '@ton/core';
import type { Config } from '../config.ts';
import { call, getAccountState, getJettonWalletAddress, type ChainClient } from '../chain/client.ts';
import { depositKeyPair, GAS_WALLET_CONTEXT, type Derivation } from '../chain/addresses.ts';
import { jettonTransferBody, transferQueryId } from '../chain/jettonTransfer.ts';
import { toChainApiError } from '../chain/apiError.ts';
import { newestBlockTime } from '../chain/clock.ts';
import { outgoingExpiredOnArrival } from '../metrics.ts';
import { gasWalletAddress } from './gas.ts';
import { sql, z, type DatabasePool, type DatabaseTransactionConnection } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { masterKey } from '../payments/deposit.ts';
import { closingFor, closingMessage, failOrphanShares, recordClosing, type Closing, type ClosingCandidate } from './closing.ts';
import { enqueueWalletSend, outgoingRow, OUTGOING_COLUMNS, type OutgoingRow } from './outgoing.ts';
import { planGasTopUp, whenToTopUpFor } from './gasTopUps.ts';
import { expireUnseen, failUnsendable, recordSigned, unseenCheckAt, type SignedRecord } from './signerCommands.ts';
import { nextSeqno, refusedAsExpired, signingClock, validUntilOf, whatToSend, type SendDecision, type SendInput } from './whatToSend.ts';
import { signWalletMessage, walletAddress, type SignedMessage } from './wallets.ts';

/** A wallet v5r1 message carries at most 255 actions; the gas wallet sends this many top-ups at once. */
const MAX_MESSAGES_PER_BATCH = 100;
/** A wallet held by a message the books have not seen (unbooked_message) looks again this often. */
const UNBOOKED_RECHECK_MS = 30_000;
/** A transfer held that long by unbooked_message is reported (kassa doctor, docs/OPERATIONS.md): the reader is far behind, or a message nobody recorded. */
export const HELD_UNBOOKED_WARN_MS = 10 * 60_000;
/** A deposit waiting for its top-up looks again this often (its confirmation wakes it sooner). */
const GAS_WAIT_RECHECK_MS = 30_000;

export interface SignerDeps {
  pool: DatabasePool;
  config: Pick<Config, 'masterKey' | 'tonNetwork' | 'outgoingMessageTtlSeconds'>;
  client: ChainClient;
  log: Logger;
  now: () => Date;
  /** Tests: a signed message's life in seconds instead of config.outgoingMessageTtlSeconds. */
  messageTtlSeconds?: number;
  /** Tests: what a closing message's refund leaves for the fees instead of CLOSING_REFUND_FEE (too little: the fees take a share's money, which the wallet then skips). */
  closingRefundFee?: bigint;
  /** Test hooks: a crash at that point (throw), or a broadcast that gets lost. */
  hooks?: {
    afterSign?: (transfer: OutgoingRow, message: SignedMessage) => void | Promise<void>;
    afterRecord?: (transfer: OutgoingRow) => void | Promise<void>;
    afterBroadcast?: (transfer: OutgoingRow) => void | Promise<void>;
    broadcast?: (boc: Buffer, send: () => Promise<void>) => Promise<void>;
  };
}

type SendOutcome =
  | { outcome: 'idle' }
  | { outcome: 'waiting'; transferId: string; validUntil: Date }
  | { outcome: 'sent'; transferId: string; seqno: number; transfers: number }
  | { outcome: 'waiting_for_gas'; transferId: string; topUpPlanned: boolean }
  | { outcome: 'short_of_gas'; transferId: string }
  /** The wallet's seqno (v2) is past every message the books saw it accept: one not booked yet may be this transfer's. */
  | { outcome: 'unbooked_message'; transferId: string; chainSeqno: number; bookedNext: number }
  | { outcome: 'failed'; transferId: string; reason: string };

const walletRow = z.object({ index: z.number(), derivation: z.enum(['v4r2-1', 'v5r1-1']), network: z.string() });

/**
 * One step for one deposit wallet, a thin shell around the commands (signerCommands.ts) and the pure
 * decision (whatToSend.ts): moves messages that expired unseen (the `expired_unseen` transition),
 * re-broadcasts one in flight (until it can no longer land), or reads the facts, asks whatToSend and does what it says — sign,
 * record (`signed`), broadcast; fail (`not_sendable`); plan a gas top-up; or wait for the gas wallet
 * to be funded. Returns what it did; `waiting` means a message is in flight (the job comes back
 * once it can no longer land, or when the reader confirms it).
 */
export async function sendFromWallet(deps: SignerDeps, wallet: string): Promise<SendOutcome> {
  const { pool, log } = deps;
  // 1. Messages in flight that the chain has been read past without seeing them: planned again (or failed).
  await pool.transaction((tx) => expireUnseen(tx, { wallet, network: deps.config.tonNetwork, now: deps.now(), log }));

  // 2. One in flight: broadcast it again (harmless) and come back once it can no longer land.
  const inFlight = await pool.maybeOne(sql.type(outgoingRow.extend({ signed_message: z.instanceof(Buffer) }))`
    select ${OUTGOING_COLUMNS}, signed_message from outgoing_transfers where from_address = ${wallet} and state = 'sent' order by created_at limit 1
  `);
  if (inFlight) {
    await broadcast(deps, inFlight.id, inFlight.signed_message, inFlight.valid_until!);
    const validUntil = inFlight.valid_until!;
    // Come back once it can no longer land — unless the chain confirmed it meanwhile (the reader may
    // book it while this run broadcasts): then the wallet's next transfer goes now. The row is locked
    // as confirmOutgoing (confirmations.ts) locks it, so a confirmation is either seen here or commits after this and
    // brings the job forward itself; never does this push back the job a confirmation brought
    // forward (issue 48: a second refund waited ~2 minutes, valid_until + the late-commit margin).
    await pool.transaction(async (tx) => {
      const state = await tx.maybeOneFirst(sql.type(z.object({ state: z.string() }))`
        select state from outgoing_transfers where id = ${inFlight.id} for update
      `);
      await enqueueWalletSend(tx, wallet, state === 'sent' ? unseenCheckAt(validUntil, deps.now()) : undefined);
    });
    return { outcome: 'waiting', transferId: inFlight.id, validUntil };
  }

  // A closing share still planned belongs to a message that expired unseen: failed (closing.ts).
  await failOrphanShares(pool, wallet, deps.now, log);

  // 3. The facts, 4. the decision (pure), 5. doing it.
  const facts = await readFacts(deps, wallet);
  if (facts === null) return { outcome: 'idle' };
  // The wallet accepted a message the reader has not booked (only Kassa signs for it): a transfer
  // planned again may be the one it pays (its earlier message committed later than the margin), so
  // signing the next seqno could pay it twice. Wait for the reader to book it; one nobody recorded
  // ("a message Kassa has no record of") keeps the wallet waiting until an operator looks.
  // Held transfers are marked (held_unbooked_since: kassa doctor, the kassa_outgoing_held_unbooked_*
  // gauges), since this looks again every 30 s for as long as it takes; the mark goes once not held.
  // The mark is the database's clock, as the doctor and the gauges read it (deps.now is the chain's).
  if (facts.chainSeqno > facts.bookedNext) {
    log.error(
      { wallet, transferId: facts.next.id, chainSeqno: facts.chainSeqno, bookedNext: facts.bookedNext },
      'the wallet accepted a message the books have not seen yet; nothing is signed until the chain reader books it',
    );
    await pool.transaction(async (tx) => {
      await tx.query(sql.typeAlias('void')`
        update outgoing_transfers set held_unbooked_since = now()
        where from_address = ${wallet} and state = 'planned' and held_unbooked_since is null
      `);
      await enqueueWalletSend(tx, wallet, new Date(deps.now().getTime() + UNBOOKED_RECHECK_MS));
    });
    return { outcome: 'unbooked_message', transferId: facts.next.id, chainSeqno: facts.chainSeqno, bookedNext: facts.bookedNext };
  }
  await pool.query(sql.typeAlias('void')`
    update outgoing_transfers set held_unbooked_since = null where from_address = ${wallet} and held_unbooked_since is not null
  `);
  // The deposit's final sweep (closing.ts finalSweep) goes as a closing message or not at all: its
  // shares may each be under the dust line whatToSend keeps for a transfer on its own.
  if (facts.next.final_sweep) {
    const closing = await closingFor(pool, candidateOf(deps, facts));
    if (closing !== null) return signClosing(deps, facts, closing);
    return fail(deps, facts.next, 'the deposit no longer holds what its final sweep was planned for; the planner looks again', false);
  }
  const decision = whatToSend(facts.input);
  switch (decision.action) {
    case 'short_of_gas':
      log.error({ wallet, balance: facts.input.balance.toString() }, 'the gas wallet cannot pay the top-ups it owes: fund it (kassa gas prints its address)');
      await pool.transaction((tx) => enqueueWalletSend(tx, wallet, new Date(deps.now().getTime() + 30_000)));
      return { outcome: 'short_of_gas', transferId: facts.next.id };
    case 'fail':
      return fail(deps, facts.next, decision.reason, decision.permanent);
    case 'wait_for_gas':
      return waitForGas(deps, facts.next, facts.gas, decision.topUp);
    case 'send': {
      // All of one owner's money out of a deposit (the refund of everything, a sweep), the last
      // movement out: each other owner's share in the same message.
      // The refund of everything always closes the deposit when it can (its carry-all then goes to
      // the treasury or the gas wallet, never to the refund's address); a sweep only with shares.
      const closing = await closingFor(pool, candidateOf(deps, facts));
      return closing !== null && (closing.shares.length > 0 || facts.next.kind === 'refund')
        ? signClosing(deps, facts, closing)
        : signAndSend(deps, facts, decision);
    }
  }
}

// ---- the closing message (closing.ts plans it and books it; the signer signs it) ----------------

/** What the closing message asks of the transfer about to be signed. */
const candidateOf = (deps: SignerDeps, facts: SendFacts): ClosingCandidate => ({
  transfer: facts.next,
  isGas: facts.isGas,
  derivation: facts.walletRef.derivation,
  gasWallet: facts.gas,
  balance: facts.input.balance,
  refundFee: deps.closingRefundFee,
});

/**
 * Signs the closing message (closing.ts closingMessage: a refund first as its exact value, each share
 * sent from its own amount, last the carry-all to the treasury or the gas wallet; a final sweep is
 * its own) and records it with its shares' rows (closing.ts recordClosing); then it is broadcast.
 */
async function signClosing(deps: SignerDeps, facts: SendFacts, closing: Closing): Promise<SendOutcome> {
  const candidate = candidateOf(deps, facts);
  return signRecordBroadcast(deps, facts, closingMessage(candidate, closing), (tx, signed) => recordClosing(tx, candidate, closing, signed), {
    signed: "the closing message signed: the primary, every other owner's share, the carry-all to the treasury or the gas wallet",
    notRecorded: 'the closing message was not recorded; the next run decides again',
    fields: { coin: 'TON', shares: closing.shares.map((share) => share.reason), carryTo: closing.carryTo },
  });
}

interface SendFacts {
  wallet: string;
  /** The next planned transfer, and (the gas wallet) every planned top-up of its batch. */
  next: OutgoingRow;
  planned: readonly OutgoingRow[];
  isGas: boolean;
  gas: string | null;
  walletRef: { index: number; derivation: Derivation; network: SignerDeps['config']['tonNetwork'] };
  keys: ReturnType<typeof depositKeyPair>;
  seqno: number;
  /** The wallet's seqno as v2 answers it, and the one after the last message the books saw it accept. */
  chainSeqno: number;
  bookedNext: number;
  input: SendInput;
}

/** What the decision needs, read from the books and the chain; null when nothing is planned. */
async function readFacts(deps: SignerDeps, wallet: string): Promise<SendFacts | null> {
  const { pool } = deps;
  const network = deps.config.tonNetwork;
  // The gas wallet: every planned top-up, in one message.
  const gas = await gasWalletAddress(pool, network);
  const isGas = gas === wallet;
  const planned = await pool.any(sql.type(outgoingRow)`
    select ${OUTGOING_COLUMNS} from outgoing_transfers where from_address = ${wallet} and state = 'planned'
    order by created_at, id limit ${isGas ? MAX_MESSAGES_PER_BATCH : 1}
  `);
  const next = planned[0];
  if (!next) return null;
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
  const gasLane =
    !isGas && next.coin_symbol !== 'TON'
      ? await pool.oneFirst(sql.type(z.object({ gas: z.string() }))`
          select coalesce(gas_free, 0)::text as gas from deposit_money(${next.payment_id}) where coin_symbol = 'TON'
        `)
      : null;
  return {
    wallet,
    next,
    planned,
    isGas,
    gas,
    walletRef,
    keys,
    seqno: nextSeqno(chainSeqno, Number(booked)),
    chainSeqno,
    bookedNext: Number(booked),
    input: {
      transfer: {
        kind: next.kind,
        reason: next.reason,
        coin: next.coin_symbol,
        amount: BigInt(next.amount_base_units),
        feeReserved: BigInt(next.fee_reserved_base_units),
      },
      balance: state.balance,
      batchTotal: isGas ? planned.reduce((sum, row) => sum + BigInt(row.amount_base_units), 0n) : undefined,
      batchSize: isGas ? planned.length : undefined,
      gas: gasLane === null ? undefined : BigInt(gasLane),
    },
  };
}

/**
 * The messages of a decision to send (pure): the gas wallet's top-ups (one message each), a TON
 * transfer (non-bounceable: a treasury or refund address may be a wallet never deployed), or the
 * jetton `transfer` to the deposit's jetton wallet (its query id is the transfer's own,
 * transferQueryId: the jetton wallets' transactions — the receiving one's internal_transfer, a
 * bounce — name the transfer by it; the excess goes to the gas wallet).
 */
function messagesFor(
  facts: Pick<SendFacts, 'next' | 'planned' | 'isGas' | 'gas' | 'seqno' | 'wallet'>,
  value: bigint,
  jettonWallet: Address | null,
): MessageRelaxed[] {
  const { next } = facts;
  if (facts.isGas) return facts.planned.map((row) => internal({ to: Address.parse(row.to_address), value: BigInt(row.amount_base_units), bounce: false }));
  if (jettonWallet === null) return [internal({ to: Address.parse(next.to_address), value, bounce: false })];
  return [
    internal({
      to: jettonWallet,
      value,
      bounce: true,
      body: jettonTransferBody({
        queryId: transferQueryId(next.id),
        amount: BigInt(next.amount_base_units),
        destination: Address.parse(next.to_address),
        responseDestination: Address.parse(facts.gas ?? facts.wallet),
      }),
    }),
  ];
}

/** One message for the planned transfers (the decision's value and send mode), through `signRecordBroadcast`. */
async function signAndSend(deps: SignerDeps, facts: SendFacts, decision: Extract<SendDecision, { action: 'send' }>): Promise<SendOutcome> {
  const { next, wallet } = facts;
  const jettonWallet = !facts.isGas && next.coin_symbol !== 'TON' ? await depositJettonWallet(deps, next, wallet) : null;
  // Where the jettons arrive: the destination's jetton wallet, whose internal_transfer delivers the
  // transfer (the reader watches it, and the sending one for a bounce, whatever the coin).
  const destination = jettonWallet ? await destinationJettonWallet(deps, next) : null;
  const ids = facts.planned.map((row) => row.id);
  return signRecordBroadcast(
    deps,
    facts,
    { messages: messagesFor(facts, decision.value, jettonWallet), sendMode: decision.mode },
    async (tx, signed) => {
      await recordSigned(tx, { ...signed, ids });
      if (jettonWallet)
        await tx.query(sql.typeAlias('void')`
          update outgoing_transfers set query_id = ${transferQueryId(next.id).toString()}, jetton_wallet = ${jettonWallet.toRawString()},
            destination_jetton_wallet = ${destination} where id = ${next.id}
        `);
      return ids;
    },
    { signed: 'outgoing transfers signed', notRecorded: 'not recorded; the next run signs again', fields: { coin: next.coin_symbol, sendMode: decision.mode } },
  );
}

/**
 * Every message a wallet sends: sign → record → broadcast. `record` writes the message's books in one
 * transaction (recordSigned: the `signed` transition, with the wallet's next job) and returns the ids
 * of the transfers it carries. A crash before the record leaves nothing (the next run signs again
 * with the same seqno); a crash after it leaves a recorded message that the next run broadcasts
 * again. A record that fails (the books moved meanwhile) sends nothing: the next run decides again.
 */
async function signRecordBroadcast(
  deps: SignerDeps,
  facts: SendFacts,
  sign: { messages: MessageRelaxed[]; sendMode: number; modes?: number[] },
  record: (tx: DatabaseTransactionConnection, signed: SignedRecord) => Promise<string[]>,
  said: { signed: string; notRecorded: string; fields: Record<string, unknown> },
): Promise<SendOutcome> {
  const { next, wallet, seqno } = facts;
  // By the chain's clock where this machine's is behind it: the wallet checks valid_until against the chain's.
  const validUntil = validUntilOf(await signingNow(deps), deps.messageTtlSeconds ?? deps.config.outgoingMessageTtlSeconds);
  const message = signWalletMessage(facts.keys, facts.walletRef, { seqno, validUntil, ...sign });
  await deps.hooks?.afterSign?.(next, message);
  const ids = await deps.pool
    .transaction((tx) => record(tx, { wallet, seqno, validUntil: new Date(validUntil * 1000), sendMode: sign.sendMode, message, now: deps.now() }))
    .catch((error: unknown) => {
      deps.log.warn({ err: error instanceof Error ? error.message : String(error), wallet }, said.notRecorded);
      return null;
    });
  if (ids === null) return { outcome: 'idle' };
  await deps.hooks?.afterRecord?.(next);
  deps.log.info({ transferIds: ids, kind: next.kind, wallet, messages: sign.messages.length, seqno, ...said.fields, message: message.hash }, said.signed);
  await broadcast(deps, next.id, message.boc, new Date(validUntil * 1000));
  await deps.hooks?.afterBroadcast?.(next);
  return { outcome: 'sent', transferId: next.id, seqno, transfers: ids.length };
}

/**
 * The deposit lacks the TON its jetton transfer needs: the gas top-up planner (gasTopUps.ts) decides
 * and plans a top-up from the gas wallet, and this wallet's job comes back when the reader confirms
 * it (or in a few seconds).
 */
async function waitForGas(deps: SignerDeps, transfer: OutgoingRow, gas: string | null, topUp: bigint): Promise<SendOutcome> {
  if (gas === null) throw new Error('no gas wallet is recorded for this network (the worker records it at start)');
  const when = await whenToTopUpFor(deps.pool, transfer.id, deps.now());
  if (when.action === 'give_up') return fail(deps, transfer, when.reason, false);
  if (when.action === 'wait') {
    await deps.pool.transaction((tx) => enqueueWalletSend(tx, transfer.from_address, when.until));
    return { outcome: 'waiting_for_gas', transferId: transfer.id, topUpPlanned: false };
  }
  const planned = await deps.pool.transaction(async (tx) => {
    const planned = await planGasTopUp(tx, { transfer, gas, topUp, now: deps.now() });
    // The top-up's confirmation brings this job back (confirmations.ts confirmOutgoing, +1 s); this is
    // only the safety net, rare enough to cost the shared chain budget nothing while many wait.
    await enqueueWalletSend(tx, transfer.from_address, new Date(deps.now().getTime() + GAS_WAIT_RECHECK_MS));
    return planned;
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

/**
 * The destination's jetton wallet of the transfer's coin, asked of the master (null when it will not
 * say: the transfer is then delivered when it leaves, as before).
 */
async function destinationJettonWallet(deps: SignerDeps, transfer: OutgoingRow): Promise<string | null> {
  const master = await deps.pool.oneFirst(sql.type(z.object({ master_address: z.string() }))`
    select master_address from jetton_masters where coin_symbol = ${transfer.coin_symbol} and network = ${deps.config.tonNetwork}
  `);
  try {
    return (await getJettonWalletAddress(deps.client, master, transfer.to_address)).toRawString();
  } catch (error) {
    const failure = toChainApiError(error);
    if (failure.retryable) throw failure;
    deps.log.warn(
      { transferId: transfer.id, err: failure.message },
      "the destination's jetton wallet could not be asked of its master: the transfer is delivered when it leaves",
    );
    return null;
  }
}

async function walletSeqno(client: ChainClient, wallet: string): Promise<number> {
  const result = await call(() => client.runMethod(Address.parse(wallet), 'seqno'));
  return result.stack.readNumber();
}

/** The clock messages are signed by: the later of deps.now and the newest block's time the reader saw (whatToSend.ts signingClock). */
async function signingNow(deps: SignerDeps): Promise<Date> {
  return signingClock(deps.now(), await newestBlockTime(deps.pool, deps.config.tonNetwork));
}

/**
 * Sends a recorded message to the chain API. A refusal is no error: a repeat is refused once the
 * first landed. One refused as expired while it was valid by the signing clock (`validUntil` still
 * ahead) is: the chain's clock is ahead of every clock the signer has (kassa_outgoing_expired_on_arrival_total).
 */
async function broadcast(deps: SignerDeps, transferId: string, boc: Buffer, validUntil: Date): Promise<void> {
  const send = async () => {
    await call(() => deps.client.sendFile(boc));
  };
  try {
    if (deps.hooks?.broadcast) await deps.hooks.broadcast(boc, send);
    else await send();
  } catch (error) {
    const refusal = error instanceof Error ? error.message : String(error);
    const now = await signingNow(deps);
    if (refusedAsExpired(refusal) && now.getTime() < validUntil.getTime()) {
      outgoingExpiredOnArrival.inc();
      deps.log.error(
        { transferId, validUntil: validUntil.toISOString(), signingClock: now.toISOString(), err: refusal },
        "the wallet refused the message as expired although it was valid for the signer: the chain's clock is ahead of this machine's and of the chain reader's last block (is the reader behind?); it is signed again once it can no longer land",
      );
    } else if (refusedAsExpired(refusal)) {
      deps.log.warn({ transferId, validUntil: validUntil.toISOString(), err: refusal }, 'the wallet refused the message as expired (its valid_until passed)');
    } else {
      deps.log.info({ transferId, err: refusal }, 'the chain API did not take the message (a repeat of one already applied, or it will be retried)');
    }
  }
  await deps.pool.query(sql.typeAlias('void')`
    update outgoing_transfers set broadcasts = broadcasts + 1, last_broadcast_at = ${sql.timestamp(deps.now())} where id = ${transferId}
  `);
}

/** `not_sendable`: the transfer fails as the transition says (failUnsendable counts and tells it). */
async function fail(deps: SignerDeps, transfer: OutgoingRow, reason: string, permanent: boolean): Promise<SendOutcome> {
  await deps.pool.transaction((tx) =>
    failUnsendable(tx, { id: transfer.id, wallet: transfer.from_address, reason, permanent, now: deps.now(), log: deps.log }),
  );
  return { outcome: 'failed', transferId: transfer.id, reason };
}
