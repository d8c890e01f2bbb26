// The chain reader: follows the masterchain block by block from a stored cursor (chain_reader),
// books the transactions of Kassa's accounts in each block (book.ts, as classify.ts decides), and
// then expires what the chain's clock says is due. Its cost follows the chain (blocks/s), not the
// number of payments. One reader at a time holds the cursor's lease (cursor.ts); others wait and
// take over when it lapses. What it knows of the API's tip, and how long it has waited for a
// block, is tip.ts's. This file is the loop: a step reads the blocks after the cursor, `run` paces
// the steps.
import crypto from 'node:crypto';
import os from 'node:os';
import { setTimeout as sleepFor } from 'node:timers/promises';
import type { Config } from '../config.ts';
import type { DatabasePool } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { expireDuePayments } from '../payments/commands.ts';
import { expireTreasuryRefunds } from '../treasury/treasuryConfirmations.ts';
import { CREDIT_PART_PAID } from '../subscriptions/engine.ts';
import { ChainApiError } from '../chain/apiError.ts';
import type { ChainClient } from '../chain/client.ts';
import { LATE_COMMIT_MARGIN_MS } from '../chain/clock.ts';
import type { BlockRef, ChainBlock, ChainSource } from '../chain/source.ts';
import { blockBooker } from './book.ts';
import { LEASE_MS, readerCursor, type CursorRow, type ReaderCursor } from './cursor.ts';
import { tipTracker } from './tip.ts';

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

interface ChainReaderDeps {
  pool: DatabasePool;
  config: Pick<Config, 'tonNetwork'>;
  source: ChainSource;
  /** For get methods: pending jetton wallets, and attributing jetton notifications. */
  client: ChainClient;
  log: Logger;
  /** The reader's clock: booking and expiry, and the waits tip.ts measures (`run` paces on the monotonic clock, never this one). */
  now: () => Date;
  /** How `run` waits between steps (default node:timers/promises; a test drives it with its clock). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Identifies this reader in the lease (default host:pid:random). */
  id?: string;
  /** How often a caught-up reader asks masterchainInfo (default tip.ts INFO_EVERY_MS). */
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

/** Where a step stands: the last block read and its time, what is settled, the tip as known. */
interface Progress {
  last: number;
  lastTime: Date;
  settled: Date;
  latest: BlockRef;
}

const noResult = (): StepResult => ({ owner: false, processed: 0, recorded: 0, expired: 0, lastSeqno: null, latestSeqno: null, waitingFor: null });

/** The chain's clock for expiry: settled, less the margin for shard blocks committed late. */
const expiryClock = (settled: Date): Date => new Date(settled.getTime() - LATE_COMMIT_MARGIN_MS);

export function createChainReader(deps: ChainReaderDeps) {
  const { pool, source, log } = deps;
  const network = deps.config.tonNetwork;
  const me = deps.id ?? `${os.hostname()}:${process.pid}:${crypto.randomBytes(3).toString('hex')}`;
  const clock = () => deps.now().getTime();
  const cursor = readerCursor({ pool, network, me, log });
  const tip = tipTracker({ source, network, log, now: clock, ...(deps.infoEveryMs ? { infoEveryMs: deps.infoEveryMs } : {}) });
  const booker = blockBooker({ pool, network, client: deps.client, log, now: deps.now });

  /**
   * The block the step reads after: the cursor's, or — the sandbox chain lives in memory and,
   * restarted, numbers its blocks from the wall clock, so an old cursor lies outside the new chain
   * (past its newest block, or before its first) — the new chain's first block (nothing sent on it
   * is missed). Null: the API's tip is behind the cursor (another network?); the step waits.
   */
  async function startAfter(held: CursorRow, latest: BlockRef, fresh: boolean): Promise<number | null> {
    const last = Number(held.last_block_seqno);
    const first = latest.firstSeqno ?? null;
    if (fresh && network === 'sandbox' && (last > latest.seqno || (first !== null && last < first - 1))) {
      const restart = first !== null && first - 1 <= latest.seqno ? first - 1 : latest.seqno;
      log.warn({ cursor: last, first, latest: latest.seqno }, 'the sandbox chain restarted: the chain reader starts again from its first block');
      await cursor.restartAt(restart, latest);
      tip.restarted();
      return restart;
    }
    if (last > latest.seqno) {
      log.error({ cursor: last, latest: latest.seqno }, 'the chain API reports an older block than the cursor: is TON_API_URL on the same network? waiting');
      return null;
    }
    return last;
  }

  /** What the chain's clock says is due: pending payments, and treasury refunds no wallet can land any more (heldUntil: validUntil + the longest wallet lifetime), both LATE_COMMIT_MARGIN_MS behind. */
  async function expireDue(settled: Date, result: StepResult): Promise<void> {
    result.expired += await expireDuePayments(pool, { chainSettledAt: expiryClock(settled), now: deps.now() }, CREDIT_PART_PAID);
    await expireTreasuryRefunds(pool, { expiryClock: expiryClock(settled), now: deps.now() });
  }

  /**
   * Books `block` (the one after `at.last`) and expires what is due, then moves `at` onto it (the
   * cursor is written later). Settled: the time of the block before this one. A shard block is
   * normally committed a masterchain block later, but may be committed several blocks late, so what
   * is due expires only LATE_COMMIT_MARGIN_MS behind it — before the cursor moves (a crash in
   * between repeats both). Block times have whole seconds: when this block's settled time is the
   * previous one's, nothing more is due by it, and the expiry of this step's previous block stands.
   */
  async function take(block: ChainBlock, at: Progress, result: StepResult): Promise<number> {
    const time = new Date(Math.max(at.lastTime.getTime(), block.time.getTime(), block.seqno === at.latest.seqno ? at.latest.time.getTime() : 0));
    const recorded = await booker.book(block);
    result.recorded += recorded;
    const before = at.settled.getTime();
    at.settled = new Date(Math.max(before, at.lastTime.getTime()));
    if (result.processed === 0 || at.settled.getTime() !== before) await expireDue(at.settled, result);
    at.last = block.seqno;
    at.lastTime = time;
    result.processed += 1;
    if (block.seqno > at.latest.seqno) {
      at.latest = { seqno: block.seqno, time };
      tip.readPast(at.latest);
    }
    return recorded;
  }

  /**
   * Reads the blocks after `at.last` in order — behind: up to the tip, caught up: the one block
   * after the cursor, asked for directly; at most BLOCKS_PER_STEP — and stops at the first the API
   * does not serve (not indexed yet, or not made yet): the cursor holds there, however far the
   * API's tip is past it, and the next step asks again. Behind, the next few blocks are asked for
   * while one is booked. The cursor is written every few blocks rather than after each (a crash
   * reads those few again: booking is idempotent); always after a block that booked something, at
   * the end, and often enough to keep the lease; progress made before a failure is kept.
   */
  async function readBlocks(at: Progress, result: StepResult, signal?: AbortSignal): Promise<void> {
    const until = Math.min(Math.max(at.latest.seqno, at.last + 1), at.last + BLOCKS_PER_STEP);
    const next = blocksAhead(source, until, signal);
    const writer = cursorWriter(cursor, at, log);
    try {
      for (let seqno = at.last + 1; seqno <= until; seqno += 1) {
        signal?.throwIfAborted();
        const block = await next(seqno, at.latest.seqno);
        if (block === null) {
          tip.notServed(seqno);
          result.waitingFor = seqno;
          break;
        }
        tip.served(seqno);
        const recorded = await take(block, at, result);
        if (writer.due(recorded) && !(await writer.write())) {
          result.owner = false;
          break;
        }
      }
    } finally {
      // Unless the failure was the database's own.
      if (result.owner && !(await writer.write().catch(() => true))) result.owner = false;
    }
  }

  /**
   * One step: if this reader holds (or can take) the cursor, reads the blocks after it in order
   * (readBlocks), books them, then expires what is due. Requests: while behind, one per block (its
   * pages) and masterchainInfo every INFO_EVERY_MS; caught up, the block after the cursor asked for
   * directly and masterchainInfo only now and then (tip.ts). `refresh` asks masterchainInfo whatever
   * its age (catchUp). The lease is renewed by every block read; a step renews it on its own (a
   * write) only when less than half is left.
   */
  async function step(signal?: AbortSignal, options: { refresh?: boolean } = {}): Promise<StepResult> {
    const result = noResult();
    const state = await cursor.state();
    if (state?.held_by_other) {
      tip.forget();
      return result;
    }
    const stored = state === null ? null : { seqno: Number(state.last_block_seqno), time: state.last_block_time };
    const { latest, fresh } = await tip.latest(stored, options.refresh === true, signal);
    result.latestSeqno = latest.seqno;
    const held = state?.held_long_enough && Number(state.last_block_seqno) <= latest.seqno ? state : await cursor.claim(latest, state !== null);
    if (!held) return result;
    result.owner = true;
    const last = await startAfter(held, latest, fresh);
    if (last === null) return result;
    if (held.pending_wallets) await booker.resolvePendingJettonWallets();
    await booker.resolveTreasuryJettonWallets();
    const at: Progress = { last, lastTime: held.last_block_time, settled: held.settled_until, latest };
    await readBlocks(at, result, signal);
    result.lastSeqno = at.last;
    result.latestSeqno = at.latest.seqno;
    // Caught up by what it knows, but more blocks are there (tip.behind): read on now.
    if (result.processed > 0 && result.waitingFor === null && at.last >= at.latest.seqno && tip.behind(at.lastTime)) result.latestSeqno = at.last + 1;
    // Created payments expire on the wall clock, blocks or not (readBlocks' expiry did it when it read one).
    if (result.processed === 0) await expireDue(at.settled, result);
    tip.lag(at.latest, at.last, at.lastTime);
    return result;
  }

  return {
    id: me,
    step,
    release: cursor.release,
    bookBlock: booker.book,
    catchUp: () => catchUp(step),
    run: (signal: AbortSignal) => runSteps({ step, release: cursor.release }, { log, sleep: deps.sleep ?? sleep }, signal),
  };
}

export type ChainReader = ReturnType<typeof createChainReader>;

/** Waits `ms`, or less when `signal` aborts. */
const sleep = (ms: number, signal: AbortSignal): Promise<void> => sleepFor(ms, undefined, { signal }).catch(() => {});

/** The block source's answers in turn, the next PREFETCH_BLOCKS (up to `until` and the tip) asked for while one is booked. */
function blocksAhead(source: ChainSource, until: number, signal?: AbortSignal) {
  const ahead = new Map<number, Promise<ChainBlock | null>>();
  return async (seqno: number, tipSeqno: number): Promise<ChainBlock | null> => {
    const block = await (ahead.get(seqno) ?? source.block(seqno, signal));
    ahead.delete(seqno);
    if (block === null) return null;
    for (let n = seqno + 1; n <= Math.min(until, tipSeqno, seqno + PREFETCH_BLOCKS); n += 1) {
      if (ahead.has(n)) continue;
      const fetching = source.block(n, signal);
      fetching.catch(() => {}); // awaited (and its error thrown) on its turn, or dropped with the step
      ahead.set(n, fetching);
    }
    return block;
  };
}

/**
 * Writes the cursor where `at` stands: `due` after a block that booked something, every
 * WRITE_EVERY_BLOCKS, and often enough to keep the lease (measured on the wall clock: the lease
 * runs on the database's). `write` is false when the lease was lost (`at.last` goes back to what was written).
 */
function cursorWriter(cursor: ReaderCursor, at: Progress, log: Logger) {
  let written = at.last;
  let writtenAt = Date.now();
  return {
    due: (recorded: number): boolean => recorded > 0 || at.last - written >= WRITE_EVERY_BLOCKS || Date.now() - writtenAt >= LEASE_MS / 4,
    async write(): Promise<boolean> {
      if (at.last === written) return true;
      const latest = at.last > at.latest.seqno ? { seqno: at.last, time: at.lastTime } : at.latest;
      if (!(await cursor.advance(written, { seqno: at.last, time: at.lastTime }, at.settled, latest))) {
        log.warn({ seqno: at.last }, 'the chain reader lost its lease; another reader goes on');
        at.last = written;
        return false;
      }
      written = at.last;
      writtenAt = Date.now();
      return true;
    },
  };
}

/**
 * Steps until the cursor reaches the newest block the API serves (tests and tools): each step asks
 * masterchainInfo; stops at the first step that reads nothing (caught up, or waiting for a block not
 * indexed yet).
 */
async function catchUp(step: (signal?: AbortSignal, options?: { refresh?: boolean }) => Promise<StepResult>): Promise<StepResult> {
  const total = noResult();
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
}

/**
 * Runs until `signal` aborts: reads as fast as the budget allows while behind, asks for the next
 * block every CAUGHT_UP_POLL_MS when caught up, asks again sooner (then less often) for a block not
 * served yet, waits for the lease while another reader holds it. Chain API failures back off (the
 * budget pauses every request after a 429). The cursor never moves past a block the API has not served.
 */
async function runSteps(
  reader: { step: (signal?: AbortSignal) => Promise<StepResult>; release: () => Promise<void> },
  deps: { log: Logger; sleep: (ms: number, signal: AbortSignal) => Promise<void> },
  signal: AbortSignal,
): Promise<void> {
  const { log } = deps;
  // The pace is kept on the monotonic clock, never the injected one (the chain's or a test's): a
  // clock set back — NTP, or a test that moved its clock days ahead and back — made the pause until
  // the next poll as long as the jump, and the reader stood still.
  const now = () => performance.now();
  let failures = 0;
  let misses = 0;
  while (!signal.aborted) {
    let pause = CAUGHT_UP_POLL_MS;
    const started = now();
    try {
      const r = await reader.step(signal);
      failures = 0;
      if (!r.owner) pause = 1_000;
      else if (r.waitingFor !== null) {
        pause = Math.min(1_000, Math.round((POLL_MS / 2) * 1.5 ** misses));
        misses += 1;
      } else {
        misses = 0;
        // Caught up: the next ask CAUGHT_UP_POLL_MS after this one began, whatever the step took.
        pause = r.lastSeqno !== null && r.latestSeqno !== null && r.lastSeqno < r.latestSeqno ? 0 : Math.max(0, started + CAUGHT_UP_POLL_MS - now());
      }
    } catch (error) {
      if (signal.aborted) break;
      failures += 1;
      pause = Math.min(30_000, 500 * 2 ** Math.min(failures, 6));
      const chainError = error instanceof ChainApiError ? error : null;
      if (chainError) log.warn({ status: chainError.status, err: chainError.message, retryInMs: pause }, 'chain API error; the reader retries the same block');
      else log.error({ err: error, retryInMs: pause }, 'chain reader step failed; retrying');
    }
    if (pause > 0) await deps.sleep(pause, signal);
  }
  await reader.release().catch(() => {});
}
