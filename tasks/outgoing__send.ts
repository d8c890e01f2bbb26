// outgoing__send: signs and sends one deposit wallet's next planned transfer (job_key
// outgoing__send:<wallet> and queue outgoing:<wallet>, src/worker/jobs.ts: a wallet's transfers go
// one at a time). Added in the transaction that plans a transfer, by the chain reader when it
// confirms one, and by itself to look again after a message's valid_until. Safe to run twice: see src/treasury/signer.ts.
import { sendFromWallet } from '../src/treasury/signer.ts';
import type { WorkerDeps } from '../src/worker/deps.ts';
import { rawAddressField } from '../src/worker/payloads.ts';
import type { TaskFactory } from '../src/worker/tasks.ts';

export default ((deps: WorkerDeps) => async (payload, helpers) => {
  const wallet = rawAddressField(payload, 'wallet');
  if (wallet === null) {
    helpers.logger.error(`outgoing__send: payload without a wallet address, dropped: ${JSON.stringify(payload)}`);
    return;
  }
  if (!deps.chain) throw new Error('outgoing__send needs the chain API client');
  const log = deps.log.child({ task: 'outgoing__send', jobId: helpers.job.id, wallet });
  await sendFromWallet({ pool: deps.pool, config: deps.config, client: deps.chain, log, now: deps.now }, wallet);
}) satisfies TaskFactory;
