// chain__watch: one round of the chain watcher, then it schedules the next round (job_key
// chain__watch, so there is one at a time however many workers run).
import type { TaskFactory } from '../src/worker/tasks.ts';
import { scheduleNextWatchPatiently } from '../src/chain/schedule.ts';

const ROUND_SIZE = 100;

const task: TaskFactory = (deps) => async (_payload, helpers) => {
  if (!deps.watcher) {
    helpers.logger.warn('chain__watch: no chain watcher in this worker');
    return;
  }
  let delayMs = 1000;
  try {
    const result = await deps.watcher.round(ROUND_SIZE);
    if (result.recorded > 0 || result.backedOff) deps.log.debug({ ...result }, 'chain watch round');
    // A full round means accounts are waiting: go on at once rather than after a pause.
    if (result.claimed >= ROUND_SIZE && !result.backedOff) delayMs = 0;
  } finally {
    // Also after a round the database went away in: the next one is scheduled once it is back.
    await scheduleNextWatchPatiently(deps.pool, delayMs, helpers.abortSignal);
  }
};

export default task;
