// The chain reader: follows the masterchain block by block from a stored cursor (chain_reader),
// keeps the transactions whose account is one of Kassa's (chain_watches: every deposit address and
// deposit jetton wallet ever issued), books them (recordTransfer) as classify.ts decides, and then
// expires what the chain's clock says is due. Its cost follows the chain (blocks/s), not the number
// of payments. One reader at a time holds the cursor's lease; others wait and take over when it
// lapses. This file is the I/O: the cursor, the lease, the chain API and the database.
import crypto from 'node:crypto';
import os from 'node:os';
import { Address } from '@ton/core';
import type { Config } from '../config.ts';
import { prepared, sql, z, type DatabasePool } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { chainBlocksWaitedFor, chainBlockWait, chainLag } from '../metrics.ts';
import { expireDuePayments } from '../payments/commands.ts';
import { recordTransfer, type IncomingTransfer } from '../payments/transfers.ts';
import { confirmOutgoing, jettonTransferBounced, jettonTransferRefused } from '../treasury/commands.ts';
import { planPaymentSweep } from '../treasury/sweeps.ts';
import { ChainApiError, call, getJettonWalletAddress, toChainApiError, type ChainClient } from '../chain/client.ts';
import { LATE_COMMIT_MARGIN_MS } from '../chain/clock.ts';
import type { BlockRef, ChainBlock, ChainSource } from '../chain/source.ts';
import type { ChainTransaction } from '../chain/transactions.ts';
import { classifyIncoming, routeTransaction, type Notifier, type Watch } from './classify.ts';

/** A reader that stops renewing loses the cursor to another after this long. */
export const LEASE_MS = 6_000;
/** Blocks processed per step (then the run loop looks at the cursor's lease again). */
const BLOCKS_PER_STEP = 50;
/** While behind, this many blocks after the one being booked are already asked for. */
const PREFETCH_BLOCKS = 3;
/** While behind, the cursor is written at least every this many blocks (and after any that booked something). */
const WRITE_EVERY_BLOCKS = 8;
/** Mainnet's block interval: the pace the reader expects blocks at. */
const POLL_MS = 400;
/**
 * A caught-up reader asks for the block after its cursor this long after it last asked (the step's
 * own time included): a little more than a block interval, so the block is nearly always there by
 * then (one request per block, not a miss and a hit); the lag this lets build up (a block every
 * ~4 s) is drained at each masterchainInfo.
 */
export const CAUGHT_UP_POLL_MS = Math.round(POLL_MS * 1.1);
/** A block read this much older than the tip's age at the last masterchainInfo means the reader is behind. */
const BEHIND_AFTER_MS = 1_000;
/** A caught-up reader asks masterchainInfo (where the tip is) at most this often; it reads blocks by seqno otherwise. */
export const INFO_EVERY_MS = 3_000;
/** Waiting for a block: masterchainInfo is asked again after this long (are later blocks indexed?). */
const INFO_WHILE_WAITING_MS = 2_000;
/** A block not served while later ones are is logged once it has been waited for this long, then every LAG_LOG_EVERY_MS. */
const WAIT_LOG_AFTER_MS = 2_000;
/** How long the tip may seem behind the cursor (toncenter's backends are not all equally fresh) before it is called a wrong network. */
const TIP_BEHIND_TOLERANCE = 100;
/** A lease with at least this much left is not renewed by a step that reads no block. */
const LEASE_RENEW_MARGIN_MS = LEASE_MS / 2;
const LAG_LOG_EVERY_MS = 10_000;
/** Mainnet's masterchain block interval since 2026 (for estimates only). */
const MAINNET_BLOCK_MS = 400;

interface ChainReaderDeps {
  pool: DatabasePool;
  config: Pick<Config, 'tonNetwork'>;
  source: ChainSource;
  /** For get methods: pending jetton wallets, and attributing jetton notifications. */
  client: ChainClient;
  log: Logger;
  now: () => Date;
  /** Identifies this reader in the lease (default host:pid:random). */
  id?: string;
  /** How often a caught-up reader asks masterchainInfo (default INFO_EVERY_MS). */
  infoEveryMs?: number;
}

interface StepResult {
  /** False: another reader holds the cursor. */
  owner: boolean;
  processed: number;
  recorded: number;
  expired: number;
  lastSeqno: number | null;
  /** The tip as this reader knows it (masterchainInfo, or the newest block it read). */
  latestSeqno: number | null;
  /** The block after the cursor when the API did not serve it (not made, or not indexed yet): the cursor holds. */
  waitingFor: number | null;
}

const watchRow = z.object({
  account: z.string(),
  payment_id: z.string(),
  kind: z.enum(['deposit', 'jetton_wallet']),
  coin_symbol: z.string().nullable(),
  jetton_master: z.string().nullable(),
  deposit_address: z.string(),
});

const cursorRow = z.object({
  last_block_seqno: z.string(),
  last_block_time: z.date(),
  settled_until: z.date(),
  /** Jetton wallets not yet computed wait (`pending:…` watches): resolved before any block is read. */
  pending_wallets: z.boolean(),
});

const cursorStateRow = cursorRow.extend({ held_by_other: z.boolean(), held_long_enough: z.boolean() });

/** The chain's clock for expiry: settled, less the margin for shard blocks committed late. */
const expiryClock = (settled: Date): Date => new Date(settled.getTime() - LATE_COMMIT_MARGIN_MS);

const rawOf = (address: Address | string): string => (typeof address === 'string' ? Address.parse(address) : address).toRawString();

export function createChainReader(deps: ChainReaderDeps) {
  const { pool, source, client, log } = deps;
  const network = deps.config.tonNetwork;
  const me = deps.id ?? `${os.hostname()}:${process.pid}:${crypto.randomBytes(3).toString('hex')}`;
  const masterCoins = new Map<string, string | null>();
  let lastLagLog = 0;
  let gasWallet: string | null = null;
  /** When the gas wallet was last looked for and not found (every process records it at start, before its reader runs; asked again at most every 5 s). */
  let gasLookedFor = 0;

  /** The tip as last learnt (masterchainInfo, or a block read past it), and when masterchainInfo was last asked (ms). */
  let known: BlockRef | null = null;
  let infoAskedAt = 0;
  /** Wall clock minus the tip's time when masterchainInfo was last asked (clock skew, indexing delay, whole seconds). */
  let tipSkewMs = 0;
  /** The block after the cursor while the API does not serve it: since when this reader asks (deps.now, ms). */
  let waiting: { seqno: number; since: number; hole: boolean; logged: number } | null = null;
  /** Kassa's gas wallet (gas_wallets): its outgoing transactions are confirmed like the deposits'. */
  async function gas(): Promise<string | null> {
    if (gasWallet === null && Date.now() - gasLookedFor >= 5_000) {
      gasWallet = await pool.maybeOneFirst(sql.type(z.object({ address: z.string() }))`select address from gas_wallets where network = ${network}`);
      if (gasWallet === null) gasLookedFor = Date.now();
    }
    return gasWallet;
  }

  async function coinOfMaster(master: string): Promise<string | null> {
    if (!masterCoins.has(master)) {
      const coin = await pool.maybeOneFirst(sql.type(z.object({ coin_symbol: z.string() }))`
        select coin_symbol from jetton_masters where master_address = ${master} and network = ${network}
      `);
      masterCoins.set(master, coin);
    }
    return masterCoins.get(master) ?? null;
  }

  /**
   * Who sent a jetton notification to `deposit`: asked of the chain once per sending wallet ever
   * (jetton_wallets), so a flood of notifications from fake wallets costs nothing after the first.
   * Genuine: the master the wallet names confirms it as `deposit`'s wallet.
   */
  async function attribute(wallet: string, deposit: string): Promise<{ master: string | null; genuine: boolean; owner: string | null }> {
    const cached = await pool.maybeOne(sql.type(
      z.object({ master_address: z.string().nullable(), owner_address: z.string().nullable(), genuine: z.boolean() }),
    )`
      select master_address, owner_address, genuine from jetton_wallets where address = ${wallet}
    `);
    if (cached) return { master: cached.master_address, owner: cached.owner_address, genuine: cached.genuine };
    let master: string | null = null;
    let owner: string | null = null;
    let genuine = false;
    try {
      const data = await call(() => client.runMethod(Address.parse(wallet), 'get_wallet_data'));
      data.stack.readBigNumber();
      owner = data.stack.readAddress().toRawString();
      master = data.stack.readAddress().toRawString();
    } catch (error) {
      const chainError = toChainApiError(error);
      if (chainError.retryable) throw chainError;
    }
    if (master !== null && owner === deposit && (await coinOfMaster(master)) !== null) {
      genuine = rawOf(await getJettonWalletAddress(client, master, deposit)) === wallet;
    }
    await pool.query(sql.typeAlias('void')`
      insert into jetton_wallets (address, master_address, owner_address, genuine) values (${wallet}, ${master}, ${owner}, ${genuine})
      on conflict (address) do nothing
    `);
    return { master, owner, genuine };
  }

  /** Who sent a jetton notification to `watch`'s deposit (classify.ts decides what that makes of it). */
  async function notifierOf(wallet: string, watch: Watch): Promise<Notifier> {
    const own = await pool.exists(
      sql.unsafe`select 1 from chain_watches where payment_id = ${watch.payment_id} and kind = 'jetton_wallet' and account = ${wallet}`,
    );
    if (own) return { own: true };
    const who = await attribute(wallet, watch.deposit_address);
    return { own: false, master: who.master, coin: who.genuine && who.master !== null ? await coinOfMaster(who.master) : null };
  }

  /** What one transaction on a watched account puts on the books (null: nothing incoming). */
  async function transferOf(watch: Watch, tx: ChainTransaction, gasWallet: string | null): Promise<IncomingTransfer | null> {
    const decided = classifyIncoming(watch, tx, { gasWallet });
    if (decided === null || !('needs' in decided)) return decided;
    const settled = classifyIncoming(watch, tx, { gasWallet, notifier: await notifierOf(decided.wallet, watch) });
    if (settled !== null && 'needs' in settled) throw new Error('classifyIncoming asked twice who sent a notification');
    return settled;
  }

  /** Jetton wallets whose address could not be computed offline: asked of their master, before any block is read. */
  async function resolvePendingJettonWallets(): Promise<void> {
    const pending = await pool.any(sql.type(z.object({ account: z.string(), jetton_master: z.string(), deposit_address: z.string() }))`
      select w.account, w.jetton_master, d.address as deposit_address
      from chain_watches w join deposit_addresses d on d.payment_id = w.payment_id
      where w.account like 'pending:%'
    `);
    for (const row of pending) {
      const wallet = rawOf(await getJettonWalletAddress(client, row.jetton_master, row.deposit_address));
      await pool.query(sql.typeAlias('void')`update chain_watches set account = ${wallet} where account = ${row.account}`);
    }
  }

  async function watchesOf(accounts: string[]): Promise<Map<string, Watch>> {
    if (accounts.length === 0) return new Map();
    const rows = await pool.any(
      prepared(sql.type(watchRow)`
      select w.account, w.payment_id, w.kind, w.coin_symbol, w.jetton_master, d.address as deposit_address
      from chain_watches w join deposit_addresses d on d.payment_id = w.payment_id
      where w.account = any(${sql.array(accounts, 'text')})
    `),
    );
    return new Map(rows.map((row) => [row.account, row]));
  }

  /** A transaction of a deposit or the gas wallet started by an external message (Kassa's signer): money out. */
  async function bookOutgoing(tx: ChainTransaction, block: ChainBlock, paymentId: string | null): Promise<void> {
    const outcome = await confirmOutgoing(pool, tx, deps.now(), log);
    log.info({ paymentId, account: tx.account, hash: tx.hash, outcome, block: block.seqno }, 'outgoing transaction seen');
  }

  /**
   * Books every transaction of `block` on Kassa's accounts. Idempotent: a block read twice changes
   * nothing. `also`: an account the reader does not follow, booked as this watch (reconciliation's
   * heal of a deposit's jetton wallet of another coin).
   */
  async function book(block: ChainBlock, also?: Watch): Promise<number> {
    const watches = await watchesOf([...new Set(block.transactions.map((tx) => tx.account))]);
    if (also && !watches.has(also.account)) watches.set(also.account, also);
    const gasAccount = await gas();
    let recorded = 0;
    for (const tx of block.transactions) {
      const route = routeTransaction(tx, watches.get(tx.account), gasAccount);
      if (route.kind === 'ignored') continue;
      if (route.kind === 'outgoing') {
        await bookOutgoing(tx, block, route.paymentId);
        continue;
      }
      const { watch } = route;
      const own = { deposit: watch.deposit_address, coin: watch.coin_symbol };
      if (route.jettonTransferOut) await jettonTransferRefused(pool, own, tx, deps.now(), log);
      if (route.jettonTransferBack) await jettonTransferBounced(pool, own, route.jettonTransferBack, tx, deps.now(), log);
      const transfer = await transferOf(watch, tx, gasAccount);
      if (!transfer) continue;
      // A completed payment's counted amount moves to the store's treasury (when it has one),
      // planned in the completing transaction.
      const outcome = await recordTransfer(pool, transfer, deps.now(), { onCompleted: planPaymentSweep });
      if (outcome.recorded) {
        recorded += 1;
        log.info(
          {
            paymentId: watch.payment_id,
            account: tx.account,
            hash: transfer.hash,
            coin: transfer.coinSymbol,
            amount: transfer.amountBaseUnits.toString(),
            effect: outcome.effect,
            block: block.seqno,
          },
          'transfer recorded',
        );
      }
    }
    return recorded;
  }

  /**
   * Where a new cursor starts: the newest block, or — when payments already wait for money (the
   * API took them before any reader ran) — far enough back to cover the oldest one's address
   * (estimated at twice mainnet's block rate, never before the API's first block, at most 12 h).
   * Reading a few blocks too many costs requests, never money.
   */
  async function startingBlock(latest: BlockRef): Promise<BlockRef> {
    const oldest = await pool.maybeOneFirst(sql.type(z.object({ since: z.date().nullable() }))`
      select min(method_selected_at) as since from payments where status = 'pending'
    `);
    if (!oldest) return latest;
    const span = Math.min(latest.time.getTime() - oldest.getTime() + 60_000, 12 * 3600_000);
    if (span <= 0) return latest;
    const back = Math.ceil((span / MAINNET_BLOCK_MS) * 2);
    const seqno = Math.max(latest.firstSeqno ?? 0, latest.seqno - back);
    log.info({ from: seqno, latest: latest.seqno, openSince: oldest.toISOString() }, 'new chain cursor: starting far enough back to cover the open payments');
    return { seqno, time: new Date(Math.min(oldest.getTime(), latest.time.getTime())) };
  }

  /** Takes (or renews) the cursor's lease; creates the cursor the first time (startingBlock). */
  async function claim(latest: BlockRef, exists: boolean) {
    const start = exists ? latest : await startingBlock(latest);
    return pool.maybeOne(sql.type(cursorRow)`
      insert into chain_reader as c (network, last_block_seqno, last_block_time, settled_until, latest_block_seqno, latest_block_time, reader, lease_expires_at)
      values (${network}, ${start.seqno}, ${sql.timestamp(start.time)}, ${sql.timestamp(start.time)}, ${latest.seqno}, ${sql.timestamp(latest.time)}, ${me},
              now() + ${`${LEASE_MS} milliseconds`}::interval)
      on conflict (network) do update set
        reader = ${me}, lease_expires_at = now() + ${`${LEASE_MS} milliseconds`}::interval, updated_at = now(),
        latest_block_seqno = greatest(c.latest_block_seqno, c.last_block_seqno, excluded.latest_block_seqno),
        latest_block_time = greatest(c.latest_block_time, excluded.latest_block_time)
      where c.reader = ${me} or c.reader is null or c.lease_expires_at is null or c.lease_expires_at < now()
      returning last_block_seqno::text as last_block_seqno, last_block_time, settled_until,
        exists (select 1 from chain_watches where account like 'pending:%') as pending_wallets
    `);
  }

  /**
   * One look at the cursor row: is there one yet, does another reader hold it, does this reader
   * hold it with time to spare (then nothing needs renewing before reading), and where it stands.
   */
  async function cursorState() {
    return pool.maybeOne(sql.type(cursorStateRow)`
      select last_block_seqno::text as last_block_seqno, last_block_time, settled_until,
        coalesce(reader is not null and reader <> ${me} and lease_expires_at >= now(), false) as held_by_other,
        coalesce(reader = ${me} and lease_expires_at > now() + ${`${LEASE_RENEW_MARGIN_MS} milliseconds`}::interval, false) as held_long_enough,
        exists (select 1 from chain_watches where account like 'pending:%') as pending_wallets
      from chain_reader where network = ${network}
    `);
  }

  /** Moves the cursor from `from` to `block` (only if this reader still holds it there). */
  async function advance(from: number, block: { seqno: number; time: Date }, settled: Date, latest: BlockRef): Promise<boolean> {
    const moved = await pool.maybeOneFirst(sql.type(z.object({ ok: z.boolean() }))`
      update chain_reader set last_block_seqno = ${block.seqno}, last_block_time = ${sql.timestamp(block.time)},
        settled_until = greatest(settled_until, ${sql.timestamp(settled)}),
        latest_block_seqno = greatest(latest_block_seqno, ${latest.seqno}::bigint), latest_block_time = greatest(latest_block_time, ${sql.timestamp(latest.time)}),
        lease_expires_at = now() + ${`${LEASE_MS} milliseconds`}::interval, updated_at = now()
      where network = ${network} and reader = ${me} and last_block_seqno = ${from}
      returning true as ok
    `);
    return moved === true;
  }

  async function release(): Promise<void> {
    await pool.query(sql.typeAlias('void')`update chain_reader set reader = null, lease_expires_at = null where network = ${network} and reader = ${me}`);
  }

  function noteLag(latest: BlockRef, last: number, lastTime: Date): void {
    const lagSeconds = Math.max(0, (latest.time.getTime() - lastTime.getTime()) / 1000);
    chainLag.set(lagSeconds);
    if (latest.seqno - last > 5 && Date.now() - lastLagLog > LAG_LOG_EVERY_MS) {
      lastLagLog = Date.now();
      log.warn({ behindBlocks: latest.seqno - last, lagSeconds, lastBlock: last, latestBlock: latest.seqno }, 'chain reader is behind; catching up');
    }
  }

  /** Notes that `seqno` was not served: measured (kassa_chain_block_wait_seconds), and logged when later blocks are served (an indexer hole). */
  function noteWaiting(seqno: number): void {
    const now = deps.now().getTime();
    if (waiting?.seqno !== seqno) waiting = { seqno, since: now, hole: false, logged: 0 };
    const waited = now - waiting.since;
    chainBlockWait.set(waited / 1000);
    const hole = known !== null && known.seqno > seqno;
    if (hole && !waiting.hole) {
      waiting.hole = true;
      chainBlocksWaitedFor.inc();
    }
    if ((hole && waited >= WAIT_LOG_AFTER_MS) || waited >= LAG_LOG_EVERY_MS) {
      if (now - waiting.logged >= LAG_LOG_EVERY_MS) {
        waiting.logged = now;
        log.warn(
          { seqno, waitedSeconds: Math.round(waited / 100) / 10, latestIndexed: known?.seqno ?? null },
          hole
            ? 'the chain API has not indexed this block while it serves later ones; the reader waits for it (it never skips a block)'
            : 'the chain API serves no block after the cursor; the reader waits',
        );
      }
    }
  }

  function noteServed(seqno: number): void {
    if (waiting?.seqno === seqno) {
      const waited = deps.now().getTime() - waiting.since;
      if (waiting.logged > 0 || waited >= WAIT_LOG_AFTER_MS)
        log.info({ seqno, waitedSeconds: Math.round(waited / 100) / 10 }, 'the block waited for is indexed; reading on');
      waiting = null;
    }
    chainBlockWait.set(0);
  }

  /**
   * One step: if this reader holds (or can take) the cursor, reads the blocks after it in order
   * (at most BLOCKS_PER_STEP), books them, then expires what is due. The cursor moves only onto a
   * block the API served: a block it does not serve yet (toncenter answers 200 and an empty list)
   * stops the step there, however far the API's tip is past it — the next step asks again.
   * Requests: while behind, one per block (its pages) and masterchainInfo every INFO_EVERY_MS;
   * caught up, the block after the cursor is asked for directly (found: it is read; not served:
   * not yet) and masterchainInfo only every INFO_EVERY_MS or after INFO_WHILE_WAITING_MS of
   * waiting. `refresh` asks masterchainInfo whatever its age (catchUp). The lease is renewed by
   * every block read; a step renews it on its own (a write) only when less than half is left.
   */
  async function step(signal?: AbortSignal, options: { refresh?: boolean } = {}): Promise<StepResult> {
    const result: StepResult = { owner: false, processed: 0, recorded: 0, expired: 0, lastSeqno: null, latestSeqno: null, waitingFor: null };
    const state = await cursorState();
    if (state?.held_by_other) {
      known = null;
      return result;
    }
    const clock = deps.now().getTime();
    const stateLast = state === null ? null : Number(state.last_block_seqno);
    const fresh =
      options.refresh === true ||
      known === null ||
      state === null ||
      Date.now() - infoAskedAt >= (deps.infoEveryMs ?? INFO_EVERY_MS) ||
      (waiting !== null && clock - waiting.since >= INFO_WHILE_WAITING_MS && Date.now() - infoAskedAt >= INFO_WHILE_WAITING_MS);
    let latest: BlockRef;
    if (fresh || known === null) {
      latest = await source.latestBlock(signal);
      infoAskedAt = Date.now();
      tipSkewMs = infoAskedAt - latest.time.getTime();
    } else latest = known;
    // A remembered tip behind the cursor is out of date (another reader moved it); a fresh one a
    // little behind is a backend less fresh than the one that served the block.
    if (stateLast !== null && latest.seqno < stateLast && (!fresh || (stateLast - latest.seqno <= TIP_BEHIND_TOLERANCE && network !== 'sandbox'))) {
      latest = { ...latest, seqno: stateLast, time: new Date(Math.max(latest.time.getTime(), state!.last_block_time.getTime())) };
    }
    known = latest;
    result.latestSeqno = latest.seqno;
    const cursor = state?.held_long_enough && Number(state.last_block_seqno) <= latest.seqno ? state : await claim(latest, state !== null);
    if (!cursor) return result;
    result.owner = true;
    let last = Number(cursor.last_block_seqno);
    let lastTime = cursor.last_block_time;
    // The sandbox chain lives in memory: after a restart it starts afresh, its blocks numbered from
    // the wall clock, so the old cursor is outside the new chain (past its newest block, or before
    // its first). The new chain is read from its first block: nothing sent on it is missed.
    const first = latest.firstSeqno ?? null;
    if (fresh && network === 'sandbox' && (last > latest.seqno || (first !== null && last < first - 1))) {
      const restart = first !== null && first - 1 <= latest.seqno ? first - 1 : latest.seqno;
      log.warn({ cursor: last, first, latest: latest.seqno }, 'the sandbox chain restarted: the chain reader starts again from its first block');
      await pool.query(sql.typeAlias('void')`
        update chain_reader set last_block_seqno = ${restart}, latest_block_seqno = greatest(${restart}::bigint, ${latest.seqno}::bigint), latest_block_time = ${sql.timestamp(latest.time)}
        where network = ${network} and reader = ${me}
      `);
      last = restart;
      waiting = null;
    } else if (last > latest.seqno) {
      log.error({ cursor: last, latest: latest.seqno }, 'the chain API reports an older block than the cursor: is TON_API_URL on the same network? waiting');
      return result;
    }
    if (cursor.pending_wallets) await resolvePendingJettonWallets();
    // The time of the block before the newest processed one: every transaction made before it is booked.
    let settled = cursor.settled_until;
    // Behind: up to the tip. Caught up: the one block after the cursor, asked for directly.
    const until = Math.min(Math.max(latest.seqno, last + 1), last + BLOCKS_PER_STEP);
    // Behind, the next few blocks are asked for while this one is booked (the budget still spaces
    // the requests; when one of them is not served, those after it are asked again next step).
    // The cursor is written every few blocks rather than after each (a crash reads those few
    // again: booking is idempotent); always after a block that booked something, at the end of
    // the step, and often enough to keep the lease.
    const ahead = new Map<number, Promise<ChainBlock | null>>();
    let written = last;
    let writtenAt = Date.now();
    const write = async (): Promise<boolean> => {
      if (last === written) return true;
      const tip = last > latest.seqno ? { seqno: last, time: lastTime } : latest;
      if (!(await advance(written, { seqno: last, time: lastTime }, settled, tip))) {
        log.warn({ seqno: last }, 'the chain reader lost its lease; another reader goes on');
        result.owner = false;
        last = written;
        return false;
      }
      written = last;
      writtenAt = Date.now();
      return true;
    };
    try {
      for (let seqno = last + 1; seqno <= until; seqno += 1) {
        signal?.throwIfAborted();
        const block = await (ahead.get(seqno) ?? source.block(seqno, signal));
        ahead.delete(seqno);
        if (block !== null) {
          for (let n = seqno + 1; n <= Math.min(until, latest.seqno, seqno + PREFETCH_BLOCKS); n += 1) {
            if (ahead.has(n)) continue;
            const fetching = source.block(n, signal);
            fetching.catch(() => {}); // awaited (and its error thrown) on its turn, or dropped with the step
            ahead.set(n, fetching);
          }
        }
        if (block === null) {
          // Not indexed yet (or not made yet): the cursor holds here; the next step asks again.
          noteWaiting(seqno);
          result.waitingFor = seqno;
          break;
        }
        noteServed(seqno);
        const time = new Date(Math.max(lastTime.getTime(), block.time.getTime(), seqno === latest.seqno ? latest.time.getTime() : 0));
        const recorded = await book(block);
        result.recorded += recorded;
        // Settled: the time of the block before this one. A shard block is normally committed a
        // masterchain block later, but may be committed several blocks late, so what is due expires
        // only LATE_COMMIT_MARGIN_MS behind it — before the cursor moves (a crash in between repeats both).
        // (Block times have whole seconds: when this block's settled time is the previous one's,
        // nothing more is due by it, and the expiry of this step's previous block stands.)
        const before = settled.getTime();
        settled = new Date(Math.max(before, lastTime.getTime()));
        if (result.processed === 0 || settled.getTime() !== before) {
          result.expired += await expireDuePayments(pool, { chainSettledAt: expiryClock(settled), now: deps.now() });
        }
        last = seqno;
        lastTime = time;
        result.processed += 1;
        if (seqno > latest.seqno) {
          latest = { seqno, time };
          known = latest;
          result.latestSeqno = seqno;
        }
        if (recorded > 0 || seqno - written >= WRITE_EVERY_BLOCKS || Date.now() - writtenAt >= LEASE_MS / 4) {
          if (!(await write())) break;
        }
      }
    } finally {
      // Progress made before a failure is kept (unless the failure was the database's own).
      if (result.owner) await write().catch(() => {});
    }
    result.lastSeqno = last;
    // Caught up by what it knows, but the block just read is older than the tip was when last
    // seen (beyond the noise of whole-second block times): more blocks are there, read on now.
    if (result.processed > 0 && result.waitingFor === null && last >= latest.seqno && Date.now() - tipSkewMs - lastTime.getTime() > BEHIND_AFTER_MS) {
      result.latestSeqno = last + 1;
    }
    // Created payments expire on the wall clock, blocks or not (the loop's expiry did it when it ran).
    if (result.processed === 0) result.expired += await expireDuePayments(pool, { chainSettledAt: expiryClock(settled), now: deps.now() });
    noteLag(latest, last, lastTime);
    return result;
  }

  return {
    id: me,
    step,
    release,
    bookBlock: book,

    /**
     * Steps until the cursor reaches the newest block the API serves (tests and tools): each step
     * asks masterchainInfo; stops at the first step that reads nothing (caught up, or waiting for
     * a block not indexed yet).
     */
    async catchUp(): Promise<StepResult> {
      const total: StepResult = { owner: false, processed: 0, recorded: 0, expired: 0, lastSeqno: null, latestSeqno: null, waitingFor: null };
      for (let i = 0; i < 10_000; i += 1) {
        const r = await step(undefined, { refresh: true });
        total.owner = r.owner;
        total.processed += r.processed;
        total.recorded += r.recorded;
        total.expired += r.expired;
        total.lastSeqno = r.lastSeqno;
        total.latestSeqno = r.latestSeqno;
        total.waitingFor = r.waitingFor;
        if (!r.owner || r.processed === 0) return total;
      }
      return total;
    },

    /**
     * Runs until `signal` aborts: reads as fast as the budget allows while behind, asks for the
     * next block every CAUGHT_UP_POLL_MS when caught up, asks again sooner (then less often) for a
     * block not served yet, waits for the lease while another reader holds it. Chain API failures
     * back off (the budget pauses every request after a 429). The cursor never moves past a block
     * the API has not served.
     */
    async run(signal: AbortSignal): Promise<void> {
      let failures = 0;
      let misses = 0;
      while (!signal.aborted) {
        let pause = CAUGHT_UP_POLL_MS;
        const started = Date.now();
        try {
          const r = await step(signal);
          failures = 0;
          if (!r.owner) pause = 1_000;
          else if (r.waitingFor !== null) {
            pause = Math.min(1_000, Math.round((POLL_MS / 2) * 1.5 ** misses));
            misses += 1;
          } else {
            misses = 0;
            // Caught up: the next ask CAUGHT_UP_POLL_MS after this one began, whatever the step took.
            pause = r.lastSeqno !== null && r.latestSeqno !== null && r.lastSeqno < r.latestSeqno ? 0 : Math.max(0, started + CAUGHT_UP_POLL_MS - Date.now());
          }
        } catch (error) {
          if (signal.aborted) break;
          failures += 1;
          pause = Math.min(30_000, 500 * 2 ** Math.min(failures, 6));
          const chainError = error instanceof ChainApiError ? error : null;
          if (chainError)
            log.warn({ status: chainError.status, err: chainError.message, retryInMs: pause }, 'chain API error; the reader retries the same block');
          else log.error({ err: error, retryInMs: pause }, 'chain reader step failed; retrying');
        }
        if (pause > 0) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, pause);
            signal.addEventListener(
              'abort',
              () => {
                clearTimeout(timer);
                resolve();
              },
              { once: true },
            );
          });
        }
      }
      await release().catch(() => {});
    },
  };
}

export type ChainReader = ReturnType<typeof createChainReader>;
