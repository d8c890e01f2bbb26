// The refund object (POST/GET /v1/payments/{paymentID}/refunds): its JSON Schema and its presenter,
// the one place that decides its shape. The treasury plans refunds and answers their rows.
import type { FromSchema } from 'json-schema-to-ts';
import type { TonNetwork } from '../chain/addresses.ts';
import { shownState, type OutgoingRow } from '../treasury/outgoing.ts';
import { refundFigures } from '../treasury/refunds.ts';
import { heldUntil, treasuryRequest } from '../treasury/treasuryRefunds.ts';

export const refundSchema = {
  type: 'object',
  required: ['id', 'coin', 'amount', 'receives', 'fee', 'address', 'status', 'createdAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    paymentID: {
      type: 'string',
      format: 'uuid',
      description: 'The payment whose money it refunds; absent on a refund of unmatched money (`unmatchedTransferID`).',
    },
    unmatchedTransferID: {
      type: 'string',
      format: 'uuid',
      description: 'A refund of unmatched money (POST /v1/unmatched-transfers/{id}/refund): the transfer into the treasury it sends back, whole.',
    },
    coin: { type: 'string' },
    amount: {
      type: 'string',
      description:
        'In the coin: as given, or converted from `requested` — what the refund takes from the refundable money of its coin (a TON refund takes its fee besides).',
    },
    receives: {
      type: 'string',
      description:
        "What the destination receives, in the coin: the amount; for the refund of everything refundable (fee taken from it), the amount less the 0.01 TON fee reserve until confirmed, then what arrived (more when it emptied the deposit — it held only this money, or besides it only the merchant's change and Kassa's gas, paid in the same message: the amount less the real fee).",
    },
    address: { type: 'string', description: 'As given.' },
    from: {
      type: 'string',
      enum: ['deposit', 'treasury'],
      description:
        "deposit: paid from the payment's deposit wallet, signed by Kassa; treasury: paid from the store's treasury, signed by the merchant's wallet (`tonconnect`, `link`).",
    },
    status: {
      type: 'string',
      enum: ['pending', 'sent', 'confirmed', 'failed', 'awaiting_signature', 'expired'],
      description:
        "pending: on the books, not signed yet; sent: signed and broadcast (a jetton refund: until the customer's jetton wallet took it); confirmed: the chain reader saw it leave (a jetton refund: saw the customer's jetton wallet take it); failed: it did not leave (the amount is refundable again). From the treasury: awaiting_signature: waiting for the merchant's wallet to sign `tonconnect` (or `link`) before `validUntil`; expired: nobody signed it in time (the amount may be asked again); confirmed: the chain reader saw the transfer carrying its reference leave the treasury.",
    },
    waitingFor: {
      type: 'object',
      description:
        "pending: why it is not signed yet, when it waits for something (absent: it is signed at the signer's next turn, within seconds). another_transfer: a wallet signs one message at a time, each with the next seqno — another transfer of the same deposit wallet (e.g. this payment's earlier refund) is in flight or queued before it; it is signed as soon as the chain confirms that one (not after the in-flight message's validity runs out). network_fee: a jetton refund waits for the TON of its network fee, on its way from Kassa's gas wallet.",
      required: ['reason', 'transferID'],
      properties: {
        reason: { type: 'string', enum: ['another_transfer', 'network_fee'] },
        transferID: {
          type: 'string',
          format: 'uuid',
          description: "The transfer it waits for: another refund's id (GET …/refunds lists it), a sweep's, or the gas top-up's.",
        },
      },
    },
    validUntil: { type: 'string', format: 'date-time', description: 'From the treasury: the last moment its request can be signed.' },
    heldUntil: {
      type: 'string',
      format: 'date-time',
      description:
        "From the treasury, while awaiting_signature: until when a signed request can still land — validUntil + 600 s (the longest lifetime a wallet gives the message it signs: Tonkeeper signs with its own time + 300 s whatever validUntil asks, MyTonWallet with the request's) + 60 s (a late-committed shard block). The amount stays taken until then; then, unseen, the refund is expired and its amount may be asked again.",
    },
    tonconnect: {
      type: 'object',
      description:
        "From the treasury, while awaiting_signature: a TON Connect `sendTransaction` request for the treasury's wallet (`from`). TON: one message to the customer, its payload a text comment (the refund's reference). A jetton: one message to the treasury's jetton wallet whose payload is a TEP-74 transfer of `amount` to the customer (forward_payload: the same comment); the excess TON returns to the treasury.",
      required: ['validUntil', 'from', 'messages'],
      properties: {
        validUntil: { type: 'integer', description: 'Unix seconds.' },
        network: { type: 'string', description: 'TON Connect chain id (-239 mainnet, -3 testnet); absent in the sandbox.' },
        from: { type: 'string', description: 'The treasury (raw): a wallet that is not the treasury refuses the request.' },
        messages: {
          type: 'array',
          items: {
            type: 'object',
            required: ['address', 'amount', 'payload'],
            properties: {
              address: { type: 'string', description: 'User-friendly: bounceable to a jetton wallet, non-bounceable to the customer.' },
              amount: { type: 'string', description: 'nanoTON.' },
              payload: { type: 'string', description: 'The message body, a base64 BoC.' },
            },
          },
        },
      },
    },
    link: {
      type: 'string',
      description:
        "From the treasury, while awaiting_signature: the same transfer as a ton://transfer/… link (amount, bin: the payload in base64url, exp: validUntil). A link names no sender: TON paid through it from any account is seen reaching the customer with the refund's reference (`paidFrom`); a jetton refund's link works only from the treasury (another account's transfer is refused, nothing moves).",
    },
    paidAgain: {
      type: 'array',
      description:
        "From the treasury: transfers with this refund's reference that left the treasury after the one that confirmed it (the merchant's wallet signed the request twice). Kassa holds no key of the treasury and cannot stop them; it books them here.",
      items: {
        type: 'object',
        required: ['transactionHash', 'amount'],
        properties: { transactionHash: { type: 'string' }, amount: { type: 'string', description: 'In the coin.' } },
      },
    },
    paidAfterExpiry: {
      type: 'object',
      description:
        'From the treasury: the chain shows this refund paid after Kassa had found it expired (a wallet that ignored validUntil signed it anyway). Its amount had been freed meanwhile and may have been refunded again — within the sale too, where beyondSale says nothing. `expiredAt`: when it had been found expired.',
      required: ['expiredAt'],
      properties: { expiredAt: { type: 'string', format: 'date-time' } },
    },
    askedAmount: {
      type: 'string',
      description:
        "From the treasury, confirmed: the merchant's wallet signed another amount than the refund asked. `amount` (and `receives`, and refund.confirmed's `amount`) is what moved on the chain; this is what the refund asked. Logged as an error.",
    },
    beyondSale: {
      type: 'string',
      description:
        "From the treasury, confirmed: what left the treasury for this sale (its confirmed treasury refunds and their repeats) exceeds what was swept to the treasury by this much, since this refund's transfer — the same money was refunded twice (e.g. a refund that expired, asked again, and then signed anyway by a wallet ignoring validUntil). Kassa holds no key of the treasury and cannot stop it; it books and logs it (kassa_treasury_refunds_paid_twice_total).",
    },
    paidFrom: {
      type: 'string',
      description:
        "From the treasury, confirmed: paid from another account than the treasury (raw) — the `link` carries no sender, so any account of a wallet app can pay it; Kassa saw it arrive at the customer with the refund's reference. The treasury paid no fee of it.",
    },
    transactionHash: {
      type: 'string',
      description:
        "Hex hash of the deposit wallet's transaction that sent it (confirmed, or failed on chain); from the treasury, of the treasury's transaction (its jetton wallet's for a jetton).",
    },
    fee: {
      type: 'string',
      description:
        "TON the refund costs: once confirmed, what the deposit wallet paid for its transaction (a jetton refund: with the TON its message carried); before, what is set aside for it. A TON refund's fee comes out of the refundable TON; a jetton refund's from Kassa's gas wallet.",
    },
    failureReason: {
      type: 'string',
      description: 'failed: why it did not leave (one sentence; a refund that failed is not tried again: its amount is refundable again).',
    },
    requested: {
      type: 'object',
      description: "A refund asked in the payment's currency: what was asked and the rate that made `amount` (coins per one unit of `currency`).",
      required: ['amount', 'currency', 'rate', 'rateSource'],
      properties: {
        amount: { type: 'string' },
        currency: { type: 'string' },
        rate: { type: 'string' },
        rateSource: { type: 'string', description: "payment: the payment's own rate; else today's rate source (e.g. tonapi+coingecko, fixed)." },
      },
    },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;
type Refund = FromSchema<typeof refundSchema>;

/** The refund object (the presenter: the one place that decides its shape). `network` forms a treasury refund's request. */
export function presentRefund(row: OutgoingRow, network: TonNetwork): Refund {
  const request = row.state === 'awaiting_signature' ? treasuryRequest(row, network) : null;
  return {
    id: row.id,
    ...(row.payment_id !== null ? { paymentID: row.payment_id } : {}),
    ...(row.unmatched_transfer_id !== null ? { unmatchedTransferID: row.unmatched_transfer_id } : {}),
    coin: row.coin_symbol,
    amount: row.amount,
    address: row.to_address_given ?? row.to_address,
    from: row.source,
    status: shownState(row),
    ...(row.waiting_for !== null ? { waitingFor: { reason: row.waiting_for.reason, transferID: row.waiting_for.transferID } } : {}),
    ...(row.source === 'treasury' && row.valid_until !== null ? { validUntil: row.valid_until.toISOString() } : {}),
    ...(row.state === 'awaiting_signature' && row.valid_until !== null ? { heldUntil: heldUntil(row.valid_until).toISOString() } : {}),
    ...(request ? { tonconnect: request.tonconnect, link: request.link } : {}),
    ...(row.transaction_hash !== null ? { transactionHash: row.transaction_hash } : {}),
    ...refundFigures(row),
    ...(row.state === 'failed' && row.failure_reason !== null ? { failureReason: row.failure_reason } : {}),
    ...(row.requested_amount !== null && row.requested_currency !== null && row.exchange_rate !== null
      ? {
          requested: {
            amount: row.requested_amount,
            currency: row.requested_currency,
            rate: row.exchange_rate,
            rateSource: row.exchange_rate_source ?? 'payment',
          },
        }
      : {}),
    ...(row.asked_amount !== null ? { askedAmount: row.asked_amount } : {}),
    ...(row.beyond_sale !== null ? { beyondSale: row.beyond_sale } : {}),
    ...(row.expired_before_paid_at !== null ? { paidAfterExpiry: { expiredAt: row.expired_before_paid_at.toISOString() } } : {}),
    ...(row.paid_from !== null ? { paidFrom: row.paid_from } : {}),
    ...(row.paid_again.length > 0 ? { paidAgain: row.paid_again.map((repeat) => ({ transactionHash: repeat.transactionHash, amount: repeat.amount })) } : {}),
    createdAt: row.created_at.toISOString(),
  };
}
