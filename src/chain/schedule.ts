import { sql, type Db } from '../db/pool.ts';

export const WATCH_TASK = 'chain__watch';

/** Schedules the next watcher round (one job, whatever the number of workers). */
export async function scheduleNextWatch(db: Db, delayMs: number): Promise<void> {
  await db.query(sql.unsafe`
    select graphile_worker.add_job(${WATCH_TASK}, '{}'::json, run_at := now() + ${`${delayMs} milliseconds`}::interval,
      job_key := ${WATCH_TASK}, job_key_mode := 'replace', max_attempts := 1)
  `);
}
