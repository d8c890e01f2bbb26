// The sandbox chain kept beside its books (sandbox_chain_epochs, migration 000029): loaded at start
// from the newest epoch's saved state, saved every SAVE_EVERY_MS while it changes and at stop, so a
// restart loses nothing on chain. A chain started afresh on a database that already holds sandbox
// deposits is a reset: a new epoch with the reason, said once (reconciliation leaves the deposits
// of the old chain out: src/treasury/reconcile.ts).
import { gunzipSync, gzipSync } from 'node:zlib';
import { sql, z, type DatabasePool } from '../../db/pool.ts';
import type { Logger } from '../../log.ts';
import { SandboxChain } from './chain.ts';

/** How often the chain's state is saved while it changes (a crash loses at most this much of it). */
const SAVE_EVERY_MS = 5_000;

const savedEpoch = z.object({ epoch: z.number(), state: z.instanceof(Buffer).nullable() });

interface KeptChain {
  chain: SandboxChain;
  epoch: number;
  /** A chain started afresh (not loaded): its own wallets need funding. */
  fresh: boolean;
  /** Saves now, then every SAVE_EVERY_MS while the chain changes. */
  startSaving(): Promise<void>;
  /** Stops saving after one last save. */
  stop(): Promise<void>;
}

/** The chain the books were kept with (the newest epoch's saved state), or a fresh one as a new epoch. */
export async function keepChain(pool: DatabasePool, log: Logger): Promise<KeptChain> {
  const { chain, epoch, fresh } = await loadChain(pool, log);
  let savedLt: bigint | null = null;
  let saving: Promise<void> = Promise.resolve();
  const save = () => {
    saving = saving
      .catch(() => {})
      .then(async () => {
        const lt = chain.lt;
        if (lt === savedLt) return;
        const state = gzipSync(JSON.stringify(chain.save()));
        await pool.query(sql.typeAlias('void')`update sandbox_chain_epochs set state = ${sql.binary(state)}, saved_at = now() where epoch = ${epoch}`);
        savedLt = lt;
      });
    return saving;
  };
  let saver: NodeJS.Timeout | null = null;
  return {
    chain,
    epoch,
    fresh,
    async startSaving() {
      await save();
      saver = setInterval(() => save().catch((error: unknown) => log.warn({ err: error }, 'the sandbox chain state could not be saved')), SAVE_EVERY_MS);
      saver.unref();
    },
    async stop() {
      if (saver) clearInterval(saver);
      await save();
    },
  };
}

/**
 * The newest epoch's saved chain, or a fresh chain as a new epoch: a reset when the database already
 * holds sandbox deposits (recorded with the reason and said once in the log).
 */
async function loadChain(pool: DatabasePool, log: Logger): Promise<{ chain: SandboxChain; epoch: number; fresh: boolean }> {
  const latest = await pool.maybeOne(sql.type(savedEpoch)`select epoch, state from sandbox_chain_epochs order by epoch desc limit 1`);
  let reason = latest ? 'no state was saved (the process was killed before its first save)' : 'no chain was kept with these books';
  if (latest?.state) {
    try {
      const chain = await SandboxChain.create({ saved: JSON.parse(gunzipSync(latest.state).toString('utf8')) });
      return { chain, epoch: latest.epoch, fresh: false };
    } catch (error) {
      reason = `the saved state could not be loaded (${(error as Error).message.split('\n')[0]})`;
    }
  }
  const booked = await pool.exists(sql.unsafe`select 1 from deposit_addresses where network = 'sandbox'`);
  const epoch = await pool.oneFirst(sql.type(z.object({ epoch: z.number() }))`
    insert into sandbox_chain_epochs (reset, reason) values (${booked}, ${booked ? `reset: ${reason}` : 'first start'}) returning epoch
  `);
  if (booked) {
    log.warn(
      { epoch },
      `the sandbox chain starts afresh (epoch ${epoch}): ${reason}. Deposits issued before now hold nothing on this chain; reconciliation leaves them out`,
    );
  }
  return { chain: await SandboxChain.create(), epoch, fresh: true };
}
