// Where the chain's tip is, and how long the reader has waited for a block: what the chain reader
// knows of the API between its steps. It asks masterchainInfo only when that knowledge is old (a
// caught-up reader reads blocks by seqno and learns the tip from them), measures a wait on the
// block after the cursor (kassa_chain_block_wait_seconds, kassa_chain_unindexed_waits_total, the
// log lines of an indexer hole) and reports the lag (kassa_chain_lag_seconds). Every duration is
// measured on the one injected clock (`now`, epoch ms); a clock that went back starts them afresh.
import type { TonNetwork } from '../config.ts';
import type { Logger } from '../log.ts';
import { chainBlocksWaitedFor, chainBlockWait, chainLag } from '../metrics.ts';
import type { BlockRef, ChainSource } from '../chain/source.ts';

/** A caught-up reader asks masterchainInfo (where the tip is) at most this often; it reads blocks by seqno otherwise. */
export const INFO_EVERY_MS = 3_000;
/** Waiting for a block: masterchainInfo is asked again after this long (are later blocks indexed?). */
const INFO_WHILE_WAITING_MS = 2_000;
/** A block not served while later ones are is logged once it has been waited for this long, then every LOG_EVERY_MS. */
const WAIT_LOG_AFTER_MS = 2_000;
/** A lag or a wait is logged at most this often. */
const LOG_EVERY_MS = 10_000;
/** A block read this much older than the tip's age at the last masterchainInfo means the reader is behind. */
const BEHIND_AFTER_MS = 1_000;
/** How long the tip may seem behind the cursor (toncenter's backends are not all equally fresh) before it is called a wrong network. */
const TIP_BEHIND_TOLERANCE = 100;

export function tipTracker(deps: { source: ChainSource; network: TonNetwork; log: Logger; now: () => number; infoEveryMs?: number }) {
  const { source, network, log, now } = deps;
  const infoEveryMs = deps.infoEveryMs ?? INFO_EVERY_MS;
  /** The tip as last learnt (masterchainInfo, or a block read past it), and when masterchainInfo was last asked. */
  let known: BlockRef | null = null;
  let infoAskedAt = Number.NEGATIVE_INFINITY;
  /** The clock minus the tip's time when masterchainInfo was last asked (clock skew, indexing delay, whole seconds). */
  let tipSkewMs = 0;
  /** The block after the cursor while the API does not serve it: since when this reader asks. */
  let waiting: { seqno: number; since: number; hole: boolean; logged: number } | null = null;
  let lagLogged = Number.NEGATIVE_INFINITY;

  return {
    /** Another reader holds the cursor: what this one knew of the tip is stale by the time it gets it back. */
    forget(): void {
      known = null;
    },

    /**
     * The tip to read up to: masterchainInfo when asked for (`refresh`), when the last answer is
     * older than `infoEveryMs`, or while a wait has lasted INFO_WHILE_WAITING_MS; else the tip as
     * known. `fresh`: masterchainInfo was asked. A tip behind the cursor (`stored`) is the cursor's
     * when remembered (another reader moved it) or when a fresh one is a little behind (a backend
     * less fresh than the one that served the block).
     */
    async latest(stored: BlockRef | null, refresh: boolean, signal?: AbortSignal): Promise<{ latest: BlockRef; fresh: boolean }> {
      const at = now();
      const fresh =
        refresh ||
        known === null ||
        stored === null ||
        // The clock went back (NTP, a test's clock set back): what was learnt is as old as unknown.
        at < infoAskedAt ||
        at - infoAskedAt >= infoEveryMs ||
        (waiting !== null && at - waiting.since >= INFO_WHILE_WAITING_MS && at - infoAskedAt >= INFO_WHILE_WAITING_MS);
      let latest: BlockRef;
      if (fresh || known === null) {
        latest = await source.latestBlock(signal);
        infoAskedAt = now();
        tipSkewMs = infoAskedAt - latest.time.getTime();
      } else latest = known;
      if (stored !== null && latest.seqno < stored.seqno && (!fresh || (stored.seqno - latest.seqno <= TIP_BEHIND_TOLERANCE && network !== 'sandbox'))) {
        latest = { ...latest, seqno: stored.seqno, time: new Date(Math.max(latest.time.getTime(), stored.time.getTime())) };
      }
      known = latest;
      return { latest, fresh };
    },

    /** A block past the known tip was read: it is the tip now. */
    readPast(tip: BlockRef): void {
      known = tip;
    },

    /** The cursor moved elsewhere (a restarted sandbox chain): no block is waited for. */
    restarted(): void {
      waiting = null;
    },

    /** Notes that `seqno` was not served: measured (kassa_chain_block_wait_seconds), and logged when later blocks are served (an indexer hole). */
    notServed(seqno: number): void {
      const at = now();
      // A new block to wait for, or the clock went back: the wait is counted from now.
      if (waiting?.seqno !== seqno || at < waiting.since) waiting = { seqno, since: at, hole: waiting?.seqno === seqno && waiting.hole, logged: 0 };
      const waited = at - waiting.since;
      chainBlockWait.set(waited / 1000);
      const hole = known !== null && known.seqno > seqno;
      if (hole && !waiting.hole) {
        waiting.hole = true;
        chainBlocksWaitedFor.inc();
      }
      if (((hole && waited >= WAIT_LOG_AFTER_MS) || waited >= LOG_EVERY_MS) && at - waiting.logged >= LOG_EVERY_MS) {
        waiting.logged = at;
        log.warn(
          { seqno, waitedSeconds: Math.round(waited / 100) / 10, latestIndexed: known?.seqno ?? null },
          hole
            ? 'the chain API has not indexed this block while it serves later ones; the reader waits for it (it never skips a block)'
            : 'the chain API serves no block after the cursor; the reader waits',
        );
      }
    },

    /** `seqno` was served: the wait (if any) is over. */
    served(seqno: number): void {
      if (waiting?.seqno === seqno) {
        const waited = now() - waiting.since;
        if (waiting.logged > 0 || waited >= WAIT_LOG_AFTER_MS)
          log.info({ seqno, waitedSeconds: Math.round(waited / 100) / 10 }, 'the block waited for is indexed; reading on');
        waiting = null;
      }
      chainBlockWait.set(0);
    },

    /** Caught up by what it knows, but the block just read is older than the tip was when last seen (beyond the noise of whole-second block times). */
    behind(lastTime: Date): boolean {
      return now() - tipSkewMs - lastTime.getTime() > BEHIND_AFTER_MS;
    },

    /** kassa_chain_lag_seconds: the tip's time minus the last booked block's; logged while far behind. */
    lag(latest: BlockRef, last: number, lastTime: Date): void {
      const lagSeconds = Math.max(0, (latest.time.getTime() - lastTime.getTime()) / 1000);
      chainLag.set(lagSeconds);
      const at = now();
      if (latest.seqno - last > 5 && at - lagLogged > LOG_EVERY_MS) {
        lagLogged = at;
        log.warn({ behindBlocks: latest.seqno - last, lagSeconds, lastBlock: last, latestBlock: latest.seqno }, 'chain reader is behind; catching up');
      }
    },
  };
}
