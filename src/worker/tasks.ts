// The task list handed to Graphile Worker. Each task lives in tasks/<identifier>.ts and is thin.
import type { TaskList } from 'graphile-worker';
import type { WorkerDeps } from './deps.ts';

export type TaskFactory = (deps: WorkerDeps) => TaskList[string];

export function taskList(deps: WorkerDeps, factories: Record<string, TaskFactory>): TaskList {
  const list: TaskList = {};
  for (const [identifier, factory] of Object.entries(factories)) list[identifier] = factory(deps);
  return list;
}
