// The fee figures of money out: what is set aside from a deposit for a transfer's fee until the
// chain says the real one. Constants and pure functions (no I/O): read by the books (outgoing.ts),
// the planners (sweeps.ts, refunds.ts), the pure whatToSend and `kassa doctor`.
import { JETTON_TRANSFER_TON } from '../chain/jettonTransfer.ts';

/**
 * 0.01 TON, the one figure for "a TON transfer's fee at most": set aside from the deposit's TON for
 * a TON transfer's fee until the chain says the real one; so also the least worth moving (less is
 * dust: it stays, and is reported) and the smallest TON refund (coins.refund_minimum_base_units of
 * TON, migration 000014, holds the same figure).
 */
export const TON_FEE_RESERVE_BASE_UNITS = 10_000_000n;

/** nanoTON set aside for a transfer of `coin` out of a deposit: its fee, and for a jetton the TON its message carries. */
export function feeReserveFor(coin: string): bigint {
  return coin === 'TON' ? TON_FEE_RESERVE_BASE_UNITS : JETTON_TRANSFER_TON + TON_FEE_RESERVE_BASE_UNITS;
}

/**
 * A sweep's: a TON sweep's fee is inside its amount (the message carries the amount less
 * TON_FEE_RESERVE, or the whole balance with the fee taken from it), so nothing more is set aside;
 * a jetton sweep's TON is Kassa's gas, like a jetton refund's.
 */
export function sweepFeeReserve(coin: string): bigint {
  return coin === 'TON' ? 0n : feeReserveFor(coin);
}
