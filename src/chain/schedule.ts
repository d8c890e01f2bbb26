import { isDatabaseUnavailable, sql, type Db } from '../db/pool.ts';

export const WATCH_TASK = 'chain__watch';

/** Schedules the next watcher round (one job, whatever the number of workers). */
export async function scheduleNextWatch(db: Db, delayMs: number): Promise<void> {
  await db.query(sql.unsafe`
    select graphile_worker.add_job(${WATCH_TASK}, '{}'::json, run_at := now() + ${`${delayMs} milliseconds`}::interval,
      job_key := ${WATCH_TASK}, job_key_mode := 'replace', max_attempts := 1)
  `);
}

/** How long a round waits for the database to schedule its successor before leaving it to the keep-alive cron. */
const SCHEDULE_PATIENCE_MS = 5 * 60_000;

/**
 * scheduleNextWatch, waiting out a database outage (retrying with backoff up to 5 s, for at most
 * 5 minutes, or until `signal` aborts): a round that the outage interrupted still schedules the
 * next one as soon as the database is back, instead of leaving the watcher to the keep-alive cron
 * (up to a minute later).
 */
export async function scheduleNextWatchPatiently(db: Db, delayMs: number, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + SCHEDULE_PATIENCE_MS;
  for (let pause = 100; ; pause = Math.min(5_000, pause * 2)) {
    try {
      await scheduleNextWatch(db, delayMs);
      return;
    } catch (error) {
      if (!isDatabaseUnavailable(error) || signal?.aborted || Date.now() + pause > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}
