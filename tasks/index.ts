// Every Graphile Worker task, by identifier (`entity__verb`). Each file is thin: it checks its
// payload and calls one function in src/.
import type { TaskFactory } from '../src/worker/tasks.ts';

export const TASKS: Record<string, TaskFactory> = {};
