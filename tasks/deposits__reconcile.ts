// deposits__reconcile: every five minutes, compares deposits' books with their on-chain balances
// and books what the block stream missed (src/treasury/reconcile.ts, healing through the chain
// reader's booking path, src/reader/heal.ts with src/reader/book.ts's blockBooker). Safe to run
// twice: what is booked is keyed by its chain identity, and it rewrites its own rows.
import { blockBooker } from '../src/reader/book.ts';
import { accountHealer } from '../src/reader/heal.ts';
import { reconcileDeposits } from '../src/treasury/reconcile.ts';
import type { WorkerDeps } from '../src/worker/deps.ts';
import type { TaskFactory } from '../src/worker/tasks.ts';

export default ((deps: WorkerDeps) => async (_payload, helpers) => {
  if (!deps.chain) throw new Error('deposits__reconcile needs the chain API client');
  const log = deps.log.child({ task: 'deposits__reconcile', jobId: helpers.job.id });
  const { history } = deps;
  const network = deps.config.tonNetwork;
  // The reader's booking of a block, without the reader (no cursor, no block source).
  const heal = history
    ? accountHealer({ history, book: blockBooker({ pool: deps.pool, network, client: deps.chain, log, now: deps.now }).book, log })
    : undefined;
  const differences = await reconcileDeposits({
    pool: deps.pool,
    client: deps.chain,
    log,
    now: deps.now,
    network,
    ...(heal ? { heal } : {}),
    ...(history ? { jettonWallets: history.jettonWallets } : {}),
  });
  if (differences.length > 0) log.warn({ differences: differences.length }, 'deposits differ from their books (reporting.deposit_differences)');
}) satisfies TaskFactory;
