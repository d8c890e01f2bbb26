// The task list handed to Graphile Worker. Each task lives in tasks/<identifier>.ts and is thin.
import type { TaskList } from 'graphile-worker';
import type { WorkerDeps } from './deps.ts';

export type TaskFactory = (deps: WorkerDeps) => TaskList[string];

export function taskList(deps: WorkerDeps, factories: Record<string, TaskFactory>): TaskList {
  const list: TaskList = {};
  for (const [identifier, factory] of Object.entries(factories)) list[identifier] = factory(deps);
  return list;
}

/**
 * A recurring (cron) task: its next tick is its retry. A failure is logged and ends the job, rather
 * than leaving Graphile Worker to retry it with backoff for days beside the jobs of the following
 * ticks (one more every minute through an outage) and then keep it as a permanently failed job.
 * A job interrupted by a crash is still taken again once its worker is known dead.
 */
export function recurring(identifier: string, factory: TaskFactory): TaskFactory {
  return (deps) => {
    const task = factory(deps);
    if (task === undefined) throw new Error(`task ${identifier} has no function`);
    return async (payload, helpers) => {
      try {
        await task(payload, helpers);
      } catch (error) {
        deps.log.error({ err: error, task: identifier, jobId: helpers.job.id }, 'recurring task failed; its next run retries it');
      }
    };
  };
}
