// The chain's clock as the API sees it: how far the chain reader has booked the chain
// (chain_reader.settled_until). A cancel of a pending payment waits for it to pass the cancel's
// time, so money sent before the cancel completes the payment instead of being booked after it.
import type { TonNetwork } from '../config.ts';
import { sql, z, type Db } from '../db/pool.ts';

/**
 * How late a shard block may be committed to the masterchain: a transaction made at chain time T
 * is on the books once the chain reader has read this far past T. A pending payment expires, a
 * cancel of one is decided, and a signed message out counts as unable to land (its valid_until
 * passed) only that far past their time (docs/API.md, "Expiry and late shard blocks", says why 60 s).
 */
export const LATE_COMMIT_MARGIN_MS = 60_000;

/** Every transaction made before this time is on the books; null before the reader's first block. */
async function chainSettledAt(db: Db, network: TonNetwork): Promise<Date | null> {
  return db.maybeOneFirst(sql.type(z.object({ settled_until: z.date() }))`select settled_until from chain_reader where network = ${network}`);
}

/**
 * The newest masterchain block's time the chain reader has seen (the tip at its last masterchain
 * info, or the last block it booked, whichever is later); null before its first block. The signer
 * signs by it (whatToSend.ts signingClock): a wallet checks a message's valid_until against the
 * chain's time, not this machine's.
 */
export async function newestBlockTime(db: Db, network: TonNetwork): Promise<Date | null> {
  return db.maybeOneFirst(sql.type(z.object({ at: z.date() }))`
    select greatest(latest_block_time, last_block_time) as at from chain_reader where network = ${network}
  `);
}

/** Where the chain reader stands (chain_reader), as the database's clock sees it; null before its first block. */
export interface ReaderPosition {
  lastBlock: number;
  latestBlock: number;
  /** Blocks the API had published that the reader had not booked, when it last wrote. */
  recordedBehind: number;
  /** Seconds since the reader last wrote its cursor (a running reader writes every block). */
  secondsSinceUpdate: number;
}

export async function readerPosition(db: Db, network: TonNetwork): Promise<ReaderPosition | null> {
  const row = await db.maybeOne(sql.type(z.object({ last: z.string(), latest: z.string(), since: z.number() }))`
    select last_block_seqno::text as last, latest_block_seqno::text as latest,
      greatest(0, extract(epoch from (now() - updated_at)))::float8 as since
    from chain_reader where network = ${network}
  `);
  if (!row) return null;
  const lastBlock = Number(row.last);
  const latestBlock = Number(row.latest);
  return { lastBlock, latestBlock, recordedBehind: Math.max(0, latestBlock - lastBlock), secondsSinceUpdate: row.since };
}

/** Waits (polling every `pollMs`) until the chain is settled up to `at`; false after `timeoutMs`. */
export async function waitForChain(db: Db, network: TonNetwork, at: Date, timeoutMs: number, pollMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const settled = await chainSettledAt(db, network);
    if (settled !== null && settled.getTime() >= at.getTime()) return true;
    if (Date.now() + pollMs > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
