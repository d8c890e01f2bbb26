// Worker liveness. Graphile Worker keeps a job locked by a dead worker for 4 hours before another
// worker may take it. Kassa's worker processes record their Graphile worker ids every few seconds;
// the worker__unlock_dead task unlocks the jobs of workers not seen for 2 minutes, so a killed
// worker's webhook delivery, notification, outgoing transfer or recurring task is retried within
// minutes. (The chain reader is no job: its cursor has a lease of its own, reader/cursor.ts.)
import { EventEmitter } from 'node:events';
import os from 'node:os';
import type { WorkerEvents } from 'graphile-worker';
import { sql, z, type DatabasePool } from '../db/pool.ts';
import type { Logger } from '../log.ts';

const HEARTBEAT_INTERVAL_MS = 10_000;
/** Default of WORKER_DEAD_AFTER_SECONDS. */
export const DEAD_AFTER_MS = 2 * 60_000;

export interface Heartbeat {
  /** Pass as `events` to graphile-worker's run(): worker ids are collected as workers start. */
  events: WorkerEvents;
  stop(): Promise<void>;
}

export function startHeartbeat(pool: DatabasePool, log: Logger, now: () => Date): Heartbeat {
  const events = new EventEmitter() as WorkerEvents;
  const ids = new Set<string>();
  const process_ = `${os.hostname()}:${process.pid}`;
  const beat = async () => {
    if (ids.size === 0) return;
    await pool.query(sql.typeAlias('void')`
      insert into worker_heartbeats (worker_id, process, last_seen_at)
      select id, ${process_}, ${sql.timestamp(now())} from unnest(${sql.array([...ids], 'text')}) as id
      on conflict (worker_id) do update set last_seen_at = excluded.last_seen_at
    `);
  };
  // Graphile Worker 0.18 locks jobs with the id of the worker pool (`pool-…`); the ids of its
  // workers (`worker-…`) are recorded too, for versions that lock with those.
  const record = (id: string) => {
    ids.add(id);
    beat().catch((error: unknown) => log.warn({ err: error }, 'worker heartbeat failed'));
  };
  events.on('pool:create', ({ workerPool }) => record(workerPool.id));
  events.on('worker:create', ({ worker }) => record(worker.workerId));
  const timer = setInterval(() => {
    beat().catch((error: unknown) => log.warn({ err: error }, 'worker heartbeat failed'));
  }, HEARTBEAT_INTERVAL_MS);
  timer.unref();
  return {
    events,
    async stop() {
      clearInterval(timer);
      if (ids.size > 0) {
        await pool.query(sql.typeAlias('void')`delete from worker_heartbeats where worker_id = any(${sql.array([...ids], 'text')})`).catch(() => {});
      }
    },
  };
}

/**
 * Unlocks jobs held by workers that are gone: their heartbeat is older than `deadAfterMs`, or
 * they have none and have held the lock that long. Returns the worker ids unlocked.
 */
export async function unlockDeadWorkers(pool: DatabasePool, now: Date, deadAfterMs = DEAD_AFTER_MS): Promise<string[]> {
  const cutoff = sql.timestamp(new Date(now.getTime() - deadAfterMs));
  const dead = await pool.anyFirst(sql.type(z.object({ locked_by: z.string() }))`
    select distinct j.locked_by from graphile_worker._private_jobs j
    where j.locked_by is not null and j.locked_at < ${cutoff}
      and not exists (select 1 from worker_heartbeats h where h.worker_id = j.locked_by and h.last_seen_at >= ${cutoff})
  `);
  if (dead.length > 0) {
    await pool.query(sql.unsafe`select graphile_worker.force_unlock_workers(${sql.array([...dead], 'text')})`);
  }
  await pool.query(sql.typeAlias('void')`delete from worker_heartbeats where last_seen_at < ${sql.timestamp(new Date(now.getTime() - 24 * 60 * 60 * 1000))}`);
  return [...dead];
}
