// rates__refresh: fetch prices from the configured provider and the confirming source, and rewrite exchange_rates. Scheduled
// every minute by cron; its payload (the cron's, or anything older code enqueued) is ignored.
// Safe to run twice: refreshRates serializes runs and never lets an older fetch win.
import { confirmationFor, providerFor, refreshRates } from '../src/rates/rates.ts';
import type { WorkerDeps } from '../src/worker/deps.ts';
import type { TaskFactory } from '../src/worker/tasks.ts';

export default ((deps: WorkerDeps) => {
  const provider = providerFor(deps.config);
  const confirmation = confirmationFor(deps.config, { now: deps.now });
  const log = deps.log.child({ task: 'rates__refresh' });
  return async (_payload, helpers) => {
    await refreshRates(deps.pool, provider, deps.config.tonNetwork, deps.now(), log.child({ jobId: helpers.job.id }), confirmation);
  };
}) satisfies TaskFactory;
