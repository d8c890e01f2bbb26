// idempotency__purge: deletes idempotency keys older than 24 hours (scheduled hourly).
import { purgeIdempotencyKeys } from '../src/idempotency.ts';
import type { TaskFactory } from '../src/worker/tasks.ts';

const task: TaskFactory = (deps) => async () => {
  const purged = await purgeIdempotencyKeys(deps.pool, deps.now());
  if (purged > 0) deps.log.info({ purged }, 'idempotency keys purged');
};

export default task;
