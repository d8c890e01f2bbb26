// The one way Kassa enqueues follow-up work: `graphile_worker.add_job` through the caller's
// connection, so that the job is added in the same transaction as the change that needs it (a
// rolled-back change leaves no job). A job key makes a second enqueue of the same work replace the
// first instead of adding another.
import { isSqlToken, sql, type Db, type FragmentSqlToken } from '../db/pool.ts';

export interface Job {
  /** The task identifier, `entity__verb` (a file of tasks/). */
  task: string;
  /**
   * Plain JSON; tasks check it again when they run (src/worker/payloads.ts). A fragment (a `json`
   * expression) when a statement adds one job per row (`addJobCall`).
   */
  payload: Record<string, string | number | boolean | null> | FragmentSqlToken;
  /** A fragment when the key is computed in SQL. */
  jobKey?: string | FragmentSqlToken;
  maxAttempts?: number;
  /** A queue runs its jobs one at a time; a fragment when the name is computed in SQL. */
  queueName?: string | FragmentSqlToken;
  /** When it is due (Graphile's default: now()); a fragment when computed in SQL. */
  runAt?: Date | FragmentSqlToken;
  /**
   * With a job key: `replace` (Graphile's default) moves the one job to this enqueue's run_at, sooner
   * or later; `preserve_run_at` keeps the waiting job's run_at (a batch window that more work joins).
   */
  jobKeyMode?: 'replace' | 'preserve_run_at';
}

export async function enqueue(db: Db, job: Job): Promise<void> {
  await db.query(sql.unsafe`select ${addJobCall(job)}`);
}

/**
 * The `graphile_worker.add_job(…)` call of `job`, for a statement that adds one job per row of its
 * own (`select ${addJobCall(job)} from rows`, each field a fragment over the row), so that the rows
 * and their jobs are written by one statement (webhooks/events.ts). `enqueue` is this for one job.
 */
export function addJobCall(job: Job): FragmentSqlToken {
  const options: FragmentSqlToken[] = [];
  if (job.maxAttempts !== undefined) options.push(sql.fragment`max_attempts => ${job.maxAttempts}::int`);
  if (job.jobKey !== undefined) options.push(sql.fragment`job_key => ${job.jobKey}`);
  if (job.queueName !== undefined) options.push(sql.fragment`queue_name => ${job.queueName}`);
  if (job.runAt !== undefined) options.push(sql.fragment`run_at => ${isSqlToken(job.runAt) ? job.runAt : sql.timestamp(job.runAt)}`);
  if (job.jobKeyMode !== undefined) options.push(sql.fragment`job_key_mode => ${job.jobKeyMode}`);
  const payload = isSqlToken(job.payload) ? job.payload : sql.fragment`${JSON.stringify(job.payload)}::json`;
  return sql.fragment`graphile_worker.add_job(${sql.join([sql.fragment`${job.task}`, payload, ...options], sql.fragment`, `)})`;
}
