// A payment's money (GET /v1/payments/{paymentID}/balance): per coin, what reached its deposit and
// where it went, and the sweeps to the treasury beside the refunds. Its JSON Schema and presenter.
import type { FromSchema } from 'json-schema-to-ts';
import { fromBaseUnits } from '../money.ts';
import type { StoreRefundGas } from '../treasury/gas.ts';
import { shownState, type DepositMoney, type OutgoingRow } from '../treasury/outgoing.ts';
import type { RefundBalance } from '../treasury/refunds.ts';

const amount = (description: string) => ({ type: 'string', description }) as const;

const sweepSchema = {
  type: 'object',
  required: ['id', 'reason', 'coin', 'amount', 'status', 'createdAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    reason: {
      type: 'string',
      enum: ['payment', 'held_money', 'leftover'],
      description:
        "payment: the completed payment's counted amount; held_money: refundable money after REFUND_HOLD_DAYS, or the customer's money a closing message's carry-all took to the treasury (what the refund's fee reserve did not use, money that arrived since the signer looked); leftover: what the sweep's fee did not use, paid to the treasury with the deposit's last movement out (the refund of everything).",
    },
    coin: { type: 'string' },
    amount: amount('What the books move to the treasury (its fee comes out of it for TON).'),
    sent: amount('Confirmed: what reached the treasury, in the coin.'),
    status: {
      type: 'string',
      enum: ['pending', 'sent', 'confirmed', 'failed'],
      description: "confirmed: the chain reader saw it leave (a jetton sweep: saw the treasury's jetton wallet take it; sent until then).",
    },
    transactionHash: { type: 'string' },
    fee: amount('TON the sweep cost (confirmed).'),
    failureReason: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

export const balanceSchema = {
  type: 'object',
  required: ['paymentID', 'coins', 'sweeps', 'refundGas'],
  properties: {
    paymentID: { type: 'string', format: 'uuid' },
    refundableUntil: {
      type: 'string',
      format: 'date-time',
      description:
        "A completed sale of a store with a refund window: until when its counted amount stays in the deposit and is refundable (paidAt + the store's refundWindowDays at completion); then the sweep takes what is left. Absent: no window (swept at completion) or not completed.",
    },
    coins: {
      type: 'array',
      items: {
        type: 'object',
        required: ['coin', 'received', 'held', 'counted', 'refunded', 'swept', 'fees', 'merchantUnswept', 'refundable', 'largestRefund'],
        properties: {
          coin: { type: 'string' },
          received: amount('Every transfer of this coin that stayed in the deposit and is a payment (not a gas top-up, not a look-alike).'),
          held: amount('Counted toward the payment while it is open: not refundable yet.'),
          counted: amount("A completed payment's coinAmount: the merchant's."),
          refunded: amount('Refunds not failed (planned and in flight included).'),
          swept: amount('Sweeps to the treasury not failed.'),
          fees: amount('TON paid (or set aside while in flight) for receiving this coin and moving it out.'),
          merchantUnswept: amount('Counted money still in the deposit.'),
          refundable: amount(
            "What refunds may take now: the customer's money, and inside the sale's refund window what is left of the sale (its merchantUnswept) too. A TON refund takes its fee besides its amount while other money is in the deposit.",
          ),
          largestRefund: amount(
            'The largest `amount` POST …/refunds accepts now in this coin: in TON all that is refundable, its fee taken from it (more than the 0.01 TON fee reserve; a smaller amount pays its fee on top, so at most `refundable` − 0.01); 0: none (less than the smallest refund).',
          ),
        },
      },
    },
    sweeps: { type: 'array', items: sweepSchema },
    refundGas: {
      type: 'object',
      description:
        "The store's refund gas account, in TON: a jetton refund's TON comes from Kassa's shared gas wallet and is charged here; one is accepted only when `available` covers its 0.06 TON (else 409 refund_gas_unpaid). The operator records what the store paid (`kassa gas paid`).",
      required: ['paid', 'spent', 'available'],
      properties: {
        paid: amount('What the store paid for its jetton refunds’ gas.'),
        spent: amount('What its jetton refunds cost (the reserve while planned or in flight) and their top-ups’ fees.'),
        available: amount('paid less spent.'),
      },
    },
  },
} as const;
type Balance = FromSchema<typeof balanceSchema>;
type Sweep = FromSchema<typeof sweepSchema>;

function presentSweep(row: OutgoingRow): Sweep {
  return {
    id: row.id,
    reason: row.reason === 'held_money' || row.reason === 'leftover' ? row.reason : 'payment',
    coin: row.coin_symbol,
    amount: row.amount,
    ...(row.state === 'confirmed' && row.sent_amount_base_units !== null
      ? { sent: row.coin_symbol === 'TON' ? fromBaseUnits(BigInt(row.sent_amount_base_units), 9) : row.amount }
      : {}),
    // A sweep leaves a deposit (source deposit): never awaiting a signature nor expired.
    // A jetton sweep confirmed when it left is `sent` until the treasury's jetton wallet has it.
    status: shownState(row) as 'pending' | 'sent' | 'confirmed' | 'failed',
    ...(row.transaction_hash !== null ? { transactionHash: row.transaction_hash } : {}),
    ...(row.fee !== null ? { fee: row.fee } : {}),
    ...(row.state === 'failed' && row.failure_reason !== null ? { failureReason: row.failure_reason } : {}),
    createdAt: row.created_at.toISOString(),
  };
}

export function presentBalance(
  paymentId: string,
  money: readonly DepositMoney[],
  sweeps: readonly OutgoingRow[],
  refundGas: StoreRefundGas,
  refunds: RefundBalance,
): Balance {
  return {
    paymentID: paymentId,
    ...(refunds.refundableUntil !== null ? { refundableUntil: refunds.refundableUntil.toISOString() } : {}),
    refundGas: {
      paid: fromBaseUnits(refundGas.paid, 9),
      spent: fromBaseUnits(refundGas.spent, 9),
      available: fromBaseUnits(refundGas.available, 9),
    },
    coins: money
      .filter((m) => m.coin_symbol === 'TON' || BigInt(m.received) > 0n || BigInt(m.counted) > 0n)
      .map((m) => {
        const coin = (units: string) => fromBaseUnits(BigInt(units), m.decimals);
        return {
          coin: m.coin_symbol,
          received: coin(m.received),
          held: coin(m.held),
          counted: coin(m.counted),
          refunded: coin(m.refunded),
          swept: coin(m.swept),
          fees: fromBaseUnits(BigInt(m.fees), 9),
          merchantUnswept: coin(m.merchant_unswept),
          refundable: coin((refunds.coins.get(m.coin_symbol)?.refundable ?? BigInt(m.refundable)).toString()),
          largestRefund: coin((refunds.coins.get(m.coin_symbol)?.largest ?? 0n).toString()),
        };
      }),
    // Kassa's gas going back to its gas wallet is no sweep to the merchant's treasury.
    sweeps: sweeps.filter((row) => row.reason !== 'gas_return').map(presentSweep),
  };
}
