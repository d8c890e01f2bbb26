// An unmatched transfer (CONTRACT §12): money that reached a treasury-settlement store's treasury and
// named no payment, as GET /v1/unmatched-transfers shows it and the money.unmatched event carries it.
// Its shape is made in SQL (payments/treasuryTransfers.ts UNMATCHED_JSON, which the event's payload
// shares); this is its JSON Schema, published in the OpenAPI document.
import { SUGGESTION_REASONS, UNMATCHED_REASONS, UNMATCHED_STATES } from '../payments/treasuryTransfers.ts';

export const unmatchedTransferSchema = {
  type: 'object',
  required: ['id', 'coin', 'amount', 'sender', 'reference', 'reason', 'suggestions', 'state', 'transactionHash', 'receivedAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    coin: { type: 'string', description: "The coin received: TON, or a jetton (USDT, …) that reached the treasury's jetton wallet." },
    amount: { type: 'string', description: 'In the coin, as every amount of the API.' },
    sender: { type: ['string', 'null'], description: 'Who sent it (raw address), when the chain says.' },
    reference: {
      type: ['string', 'null'],
      description: 'What its comment carried that looks like a reference (upper case; XXXX-XXXXX when 9 characters), or null.',
    },
    reason: {
      type: 'string',
      enum: UNMATCHED_REASONS,
      description:
        'no_reference: no comment, or one that is no reference (binary junk included); unknown_reference: a well-formed reference no payment of this treasury has; malformed_reference: a reference whose check character fails (a typo); encrypted: an encrypted comment, which Kassa cannot read.',
    },
    suggestions: {
      type: 'array',
      description: 'Payments it may belong to, best first; never applied by themselves.',
      items: {
        type: 'object',
        required: ['paymentID', 'why'],
        properties: {
          paymentID: { type: 'string', format: 'uuid' },
          why: {
            type: 'string',
            enum: SUGGESTION_REASONS,
            description:
              'reference_one_character_away: its reference is one character (or one swap of neighbours) from what was sent; same_amount_open: open when the transfer was made, for the same coin and amount; same_sender: the sender paid this payment before.',
          },
        },
      },
    },
    state: {
      type: 'string',
      enum: UNMATCHED_STATES,
      description:
        "open until a person assigns, refunds or keeps it; refunding while its refund (refundID) awaits the treasury's signature — open again if that refund expires unseen; refunded once the chain reader saw the refund leave the treasury.",
    },
    transactionHash: { type: 'string', description: "The treasury's transaction (hex); for a jetton, its jetton wallet's." },
    receivedAt: { type: 'string', format: 'date-time', description: 'Its on-chain time.' },
    paymentID: { type: 'string', format: 'uuid', description: 'assigned: the payment it was booked on (absent otherwise).' },
    note: { type: 'string', description: 'kept: why, as the person who kept it wrote (absent otherwise).' },
    refundID: {
      type: 'string',
      format: 'uuid',
      description: 'refunding or refunded: its refund from the treasury (GET /v1/unmatched-transfers/{id}/refunds; absent otherwise).',
    },
    dust: {
      type: 'boolean',
      enum: [true],
      description:
        "Present (true) when the amount was below the store's unmatchedDust when it arrived: listed as any other, but no money.unmatched event was sent.",
    },
  },
} as const;
