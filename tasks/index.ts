// Every Graphile Worker task, by identifier (`entity__verb`). Each file is thin: it checks its
// payload and calls one function in src/.
import type { TaskFactory } from '../src/worker/tasks.ts';
import chainWatch from './chain__watch.ts';
import idempotencyPurge from './idempotency__purge.ts';
import paymentExpire from './payment__expire.ts';
import ratesRefresh from './rates__refresh.ts';

export const TASKS: Record<string, TaskFactory> = {
  chain__watch: chainWatch,
  idempotency__purge: idempotencyPurge,
  payment__expire: paymentExpire,
  rates__refresh: ratesRefresh,
};

/** Recurring tasks (Graphile Worker crontab syntax). */
export const CRONTAB = [
  '* * * * * rates__refresh',
  '17 * * * * idempotency__purge',
  // Keeps the self-scheduling watcher alive should a worker die holding its job.
  '* * * * * chain__watch',
].join('\n');
