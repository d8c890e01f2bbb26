// deposits__reconcile: every five minutes, compares deposits' books with their on-chain balances
// (src/treasury/reconcile.ts). Safe to run twice: it only reads the chain and rewrites its rows.
import { reconcileDeposits } from '../src/treasury/reconcile.ts';
import type { WorkerDeps } from '../src/worker/deps.ts';
import type { TaskFactory } from '../src/worker/tasks.ts';

export default ((deps: WorkerDeps) => async (_payload, helpers) => {
  if (!deps.chain) throw new Error('deposits__reconcile needs the chain API client');
  const log = deps.log.child({ task: 'deposits__reconcile', jobId: helpers.job.id });
  const differences = await reconcileDeposits({ pool: deps.pool, client: deps.chain, log, now: deps.now });
  if (differences.length > 0) log.warn({ differences: differences.length }, 'deposits differ from their books (reporting.deposit_differences)');
}) satisfies TaskFactory;
