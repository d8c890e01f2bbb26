// The one way Kassa adds a Graphile Worker job: the SQL function graphile_worker.add_job, in the
// caller's transaction, so the job exists exactly when the change that asks for it commits.
import { sql, type Db } from '../db/pool.ts';

export interface JobOptions {
  /** A second add with the same key replaces the waiting job instead of adding another. */
  jobKey?: string;
  /** Jobs of one queue run one at a time, in order. */
  queueName?: string;
  runAt?: Date;
  maxAttempts?: number;
}

export async function enqueueJob(tx: Db, task: string, payload: Record<string, unknown>, options: JobOptions = {}): Promise<void> {
  await tx.query(sql.unsafe`
    select graphile_worker.add_job(
      ${task}::text,
      ${JSON.stringify(payload)}::json,
      queue_name => ${options.queueName ?? null}::text,
      run_at => ${options.runAt ? sql.timestamp(options.runAt) : null}::timestamptz,
      max_attempts => ${options.maxAttempts ?? 25}::int,
      job_key => ${options.jobKey ?? null}::text
    )
  `);
}
