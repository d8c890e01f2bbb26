// The TEP-74 jetton `transfer` message body, built in one place: sent by an owner to its own jetton
// wallet (the checkout's TON Connect request, the signer's sweeps and refunds, the sandbox's test
// customer).
import { type Address, beginCell, type Cell } from '@ton/core';
import { OP_JETTON_TRANSFER } from './detect.ts';

/** TON attached to a jetton transfer for the network fees (TEP-74 wallets need ~0.03 on mainnet; the excess comes back). */
export const JETTON_TRANSFER_TON = 50_000_000n; // 0.05 TON

/**
 * `transfer#0f8a7ea5`: `amount` base units to `destination` (an owner; its jetton wallet receives
 * them), the TON left over to `responseDestination`; `forwardTonAmount` > 0 sends `destination` a
 * transfer_notification carrying `forwardPayload`.
 */
export function jettonTransferBody(args: {
  queryId?: bigint;
  amount: bigint;
  destination: Address;
  responseDestination: Address | null;
  forwardTonAmount?: bigint;
  forwardPayload?: Cell | null;
}): Cell {
  return beginCell()
    .storeUint(OP_JETTON_TRANSFER, 32)
    .storeUint(args.queryId ?? 0n, 64)
    .storeCoins(args.amount)
    .storeAddress(args.destination)
    .storeAddress(args.responseDestination)
    .storeMaybeRef(null) // no custom_payload
    .storeCoins(args.forwardTonAmount ?? 0n)
    .storeMaybeRef(args.forwardPayload ?? null) // forward_payload: empty inline, or a ref
    .endCell();
}

/**
 * The TEP-74 query id of a transfer Kassa makes: the first 64 bits of its id (a UUID), so unique per
 * transfer. The receiving jetton wallet's internal_transfer, its excesses and a bounce carry it back.
 */
export function transferQueryId(id: string): bigint {
  const hex = id.replaceAll('-', '').slice(0, 16);
  if (!/^[0-9a-f]{16}$/i.test(hex)) throw new Error(`not a transfer id: ${id}`);
  return BigInt(`0x${hex}`);
}
