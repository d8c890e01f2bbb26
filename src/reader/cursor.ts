// The chain reader's cursor and its lease (chain_reader, one row per network): where the reader
// stands, which reader holds it, and the only statements that move it. A reader that stops
// renewing loses the cursor to another after LEASE_MS; a move is made only by the holder, from the
// block it last wrote (so two readers can never both move it).
import type { TonNetwork } from '../config.ts';
import { sql, z, type DatabasePool } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import type { BlockRef } from '../chain/source.ts';

/** A reader that stops renewing loses the cursor to another after this long. */
export const LEASE_MS = 6_000;
/** A lease with at least this much left is not renewed by a step that reads no block. */
const LEASE_RENEW_MARGIN_MS = LEASE_MS / 2;
/** Mainnet's masterchain block interval since 2026 (for estimates only). */
const MAINNET_BLOCK_MS = 400;

const cursorRow = z.object({
  last_block_seqno: z.string(),
  last_block_time: z.date(),
  settled_until: z.date(),
  /** Jetton wallets not yet computed wait (`pending:…` watches not set aside): resolved before any block is read. */
  pending_wallets: z.boolean(),
});
export type CursorRow = z.infer<typeof cursorRow>;

const cursorStateRow = cursorRow.extend({ held_by_other: z.boolean(), held_long_enough: z.boolean() });
type CursorState = z.infer<typeof cursorStateRow>;

const lease = sql.fragment`now() + ${`${LEASE_MS} milliseconds`}::interval`;

export function readerCursor(deps: { pool: DatabasePool; network: TonNetwork; me: string; log: Logger }) {
  const { pool, network, me, log } = deps;

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

  return {
    /**
     * One look at the cursor row: is there one yet, does another reader hold it, does this reader
     * hold it with time to spare (then nothing needs renewing before reading), and where it stands.
     */
    async state(): Promise<CursorState | null> {
      return pool.maybeOne(sql.type(cursorStateRow)`
        select last_block_seqno::text as last_block_seqno, last_block_time, settled_until,
          coalesce(reader is not null and reader <> ${me} and lease_expires_at >= now(), false) as held_by_other,
          coalesce(reader = ${me} and lease_expires_at > now() + ${`${LEASE_RENEW_MARGIN_MS} milliseconds`}::interval, false) as held_long_enough,
          exists (select 1 from chain_watches where account like 'pending:%' and set_aside_at is null) as pending_wallets
        from chain_reader where network = ${network}
      `);
    },

    /** Takes (or renews) the cursor's lease; creates the cursor the first time (startingBlock). Null: another reader holds it. */
    async claim(latest: BlockRef, exists: boolean): Promise<CursorRow | null> {
      const start = exists ? latest : await startingBlock(latest);
      return pool.maybeOne(sql.type(cursorRow)`
        insert into chain_reader as c (network, last_block_seqno, last_block_time, settled_until, latest_block_seqno, latest_block_time, reader, lease_expires_at)
        values (${network}, ${start.seqno}, ${sql.timestamp(start.time)}, ${sql.timestamp(start.time)}, ${latest.seqno}, ${sql.timestamp(latest.time)}, ${me}, ${lease})
        on conflict (network) do update set
          reader = ${me}, lease_expires_at = ${lease}, updated_at = now(),
          latest_block_seqno = greatest(c.latest_block_seqno, c.last_block_seqno, excluded.latest_block_seqno),
          latest_block_time = greatest(c.latest_block_time, excluded.latest_block_time)
        where c.reader = ${me} or c.reader is null or c.lease_expires_at is null or c.lease_expires_at < now()
        returning last_block_seqno::text as last_block_seqno, last_block_time, settled_until,
          exists (select 1 from chain_watches where account like 'pending:%' and set_aside_at is null) as pending_wallets
      `);
    },

    /** Moves the cursor from `from` to `block` (only if this reader still holds it there); false: the lease is lost. */
    async advance(from: number, block: BlockRef, settled: Date, latest: BlockRef): Promise<boolean> {
      const moved = await pool.maybeOneFirst(sql.type(z.object({ ok: z.boolean() }))`
        update chain_reader set last_block_seqno = ${block.seqno}, last_block_time = ${sql.timestamp(block.time)},
          settled_until = greatest(settled_until, ${sql.timestamp(settled)}),
          latest_block_seqno = greatest(latest_block_seqno, ${latest.seqno}::bigint), latest_block_time = greatest(latest_block_time, ${sql.timestamp(latest.time)}),
          lease_expires_at = ${lease}, updated_at = now()
        where network = ${network} and reader = ${me} and last_block_seqno = ${from}
        returning true as ok
      `);
      return moved === true;
    },

    /** Puts the cursor on `seqno` whatever it was (a restarted sandbox chain: its first block). */
    async restartAt(seqno: number, latest: BlockRef): Promise<void> {
      await pool.query(sql.typeAlias('void')`
        update chain_reader set last_block_seqno = ${seqno}, latest_block_seqno = greatest(${seqno}::bigint, ${latest.seqno}::bigint), latest_block_time = ${sql.timestamp(latest.time)}
        where network = ${network} and reader = ${me}
      `);
    },

    /** Lets go of the lease (another reader may take the cursor at once). */
    async release(): Promise<void> {
      await pool.query(sql.typeAlias('void')`update chain_reader set reader = null, lease_expires_at = null where network = ${network} and reader = ${me}`);
    },
  };
}

export type ReaderCursor = ReturnType<typeof readerCursor>;
