// worker__unlock_dead: unlocks the jobs of workers that died (scheduled every minute).
import { unlockDeadWorkers } from '../src/worker/liveness.ts';
import type { TaskFactory } from '../src/worker/tasks.ts';

const task: TaskFactory = (deps) => async () => {
  const unlocked = await unlockDeadWorkers(deps.pool, deps.now(), deps.config.workerDeadAfterMs);
  if (unlocked.length > 0) deps.log.warn({ workers: unlocked }, 'unlocked the jobs of workers that stopped without finishing them');
};

export default task;
