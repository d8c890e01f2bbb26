// Cancel, decided against the chain's clock: a pending payment may have been paid a moment before
// the merchant's cancel, in a block the chain reader has not booked yet. So the cancel waits (a
// bounded few seconds) until every transaction made before it is booked; paid in time means the
// payment completed and the cancel answers 409 payment_not_cancellable.
import type { Config } from '../config.ts';
import type { Db } from '../db/pool.ts';
import { chainBehind } from '../errors.ts';
import { waitForChain } from '../chain/clock.ts';
import type { StorePayment } from './view.ts';

/** How long a cancel of a pending payment waits for the chain reader before answering 503. */
const CANCEL_CHAIN_WAIT_MS = 10_000;

/** Waits until the chain is booked up to `now` when the store's payment is pending; throws chainBehind() past the wait. */
export async function awaitChainBeforeCancel(db: Db, config: Pick<Config, 'tonNetwork'>, payment: Pick<StorePayment, 'status'>, now: Date): Promise<void> {
  if (payment.status !== 'pending') return;
  if (!(await waitForChain(db, config.tonNetwork, now, CANCEL_CHAIN_WAIT_MS))) throw chainBehind();
}
