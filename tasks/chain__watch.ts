// chain__watch: one round of the chain watcher, then it schedules the next round (job_key
// chain__watch, so there is one at a time however many workers run).
import type { TaskFactory } from '../src/worker/tasks.ts';
import { scheduleNextWatch } from '../src/chain/schedule.ts';

const task: TaskFactory = (deps) => async (_payload, helpers) => {
  if (!deps.watcher) {
    helpers.logger.warn('chain__watch: no chain watcher in this worker');
    return;
  }
  try {
    const result = await deps.watcher.round();
    if (result.recorded > 0 || result.backedOff) deps.log.debug({ ...result }, 'chain watch round');
  } finally {
    await scheduleNextWatch(deps.pool, 1000);
  }
};

export default task;
