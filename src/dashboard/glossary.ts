// The dashboard's glossary (issue 32): each plain word the pages use for money, with what it means
// for the shop and the precise term the books, the API and the operators' docs use for it. Pages
// link their words here (words.ts term); the glossary page (glossaryPage.ts) lists them all.
import { fromBaseUnits } from '../money.ts';
import { feeReserveFor, TON_FEE_RESERVE_BASE_UNITS } from '../treasury/fees.ts';
import { EVENT_TYPES, type EventType } from '../webhooks/events.ts';
import type { AuditAction } from './audit.ts';

export interface GlossaryEntry {
  /** The plain word the pages show. */
  word: string;
  /** What it means, for a shop owner. */
  meaning: string;
  /** The precise term(s): the books' column, the API's field. */
  precise: string;
}

/** TON a token refund needs of the store's refund fee balance (its network fee and the TON its message carries). */
const JETTON_REFUND_RESERVE = fromBaseUnits(feeReserveFor('USDT'), 9);
const TON_FEE_RESERVE = fromBaseUnits(TON_FEE_RESERVE_BASE_UNITS, 9);

/** What a webhook event tells, for the shop owner (webhooks/events.ts); the exact names are the glossary's `webhook_events`. */
export const EVENT_WORDS: Record<EventType | 'ping', string> = {
  'payment.pending': 'A customer chose how to pay',
  'payment.completed': 'A payment is complete',
  'payment.expired': 'A payment expired',
  'payment.cancelled': 'A payment was cancelled',
  'payment.money_received': 'Money arrived for a payment',
  'refund.confirmed': 'A refund is done',
  'refund.failed': 'A refund failed',
  'sweep.confirmed': 'Money moved to your wallet',
  'sweep.failed': 'A move to your wallet failed',
  'money.unmatched': 'Money arrived that matches no payment',
  'money.assigned': 'Unmatched money was assigned to a payment',
  'subscription.created': 'A subscription began',
  'subscription.renewed': 'A subscription was renewed',
  'subscription.renewal_upcoming': 'A subscription renews soon and its credit will not cover it',
  'subscription.payment_due': 'A subscription needs a payment',
  'subscription.past_due': 'A subscription is past due',
  'subscription.expired': 'A subscription ended unpaid',
  'subscription.cancelled': 'A subscription was cancelled',
  ping: 'Test event',
};

/**
 * What an audit log entry records, for the shop owner (the "What" column, after "Who"); the exact
 * name (audit_log.action) is the entry's title and the glossary's `audit_actions`. A Record over
 * every AuditAction: a new action does not compile until it has words here.
 */
export const AUDIT_WORDS: Record<AuditAction, string> = {
  'refund.create': 'Made a refund',
  'refund.refused': 'Tried to make a refund without the right to',
  'refund.request_sent': 'Sent a refund to their wallet to sign',
  'refund.request_declined': 'Declined a refund in their wallet',
  'webhook.redeliver': 'Sent a webhook again',
  'webhook.refused': 'Tried to send a webhook again without the right to',
  'token.issue': 'Made an API token',
  'token.revoke': 'Revoked an API token',
  'store.update': "Changed the store's settings",
  'treasury.change': "Changed the store's wallet",
  'webhook_key.rotate': 'Replaced the webhook signing key',
  'webhook_endpoint.add': 'Added a webhook address',
  'webhook_endpoint.test': 'Sent a test webhook',
  'webhook_endpoint.delete': 'Removed a webhook address',
  'member.role_change': "Changed a member's role",
  'member.remove': 'Removed a member from the store',
  'invitation.create': 'Invited someone to the store',
  'invitation.accept': 'Accepted an invitation and joined',
  'invitation.revoke': 'Withdrew an invitation',
  'session.sign_in': 'Signed in',
  'session.sign_out': 'Signed out',
  'session.sign_out_everywhere': 'Signed out on every device',
  'passkey.add': 'Added a passkey',
  'passkey.remove': 'Removed a passkey',
  'password.change': 'Changed their password',
  'password.reset': 'Set a new password from an email link',
  'payment.create': 'Made a one-off payment',
  'unmatched.assign': 'Assigned unmatched money to a payment',
  'unmatched.keep': 'Kept unmatched money with a note',
  'unmatched.refund': 'Asked to give unmatched money back',
  'unmatched.refund_request_sent': 'Sent the giving back of unmatched money to their wallet to sign',
  'unmatched.refund_request_declined': 'Declined the giving back of unmatched money in their wallet',
  'payment_link.create': 'Made a payment link',
  'payment_link.deactivate': 'Switched off a payment link',
  'refund_fees.ask': 'Asked their wallet to add money for refund fees',
  'refund_fees.arrived': 'Money for refund fees arrived',
  'setup.complete': 'Set up Kassa and this store (first run)',
  'store.create': 'Made a new store',
  'plan.create': 'Made a subscription plan',
  'plan.archive': 'Archived a subscription plan',
  'plan.update': "Changed a subscription plan's price (from the next period)",
  'subscription.create': 'Subscribed a customer',
  'subscription.cancel': 'Cancelled a subscription',
  'subscription.credit': 'Added credit to a subscription',
  'subscription.portal_reissue': 'Gave a subscriber a new portal link (the old one stopped working)',
};

export const GLOSSARY = {
  sales: {
    word: 'Sales',
    meaning:
      'Payments that completed: the customer paid the full price. A sale is counted on the day it completed (UTC), at the price it was created with (fiat or coin).',
    precise: 'Payments in status `completed`, by `paidAt`; their `amount` in `currency` and their `coinAmount` in the coin.',
  },
  received: {
    word: 'Received',
    meaning: 'Everything customers sent to the payment address of this coin, including too much and late money.',
    precise: '`received` (deposit_money): every credited transfer of the coin.',
  },
  counted: {
    word: 'Your sale',
    meaning: "The part of what was received that pays for the order: the price in the coin. It is the shop's money.",
    precise: "`counted` (deposit_money): a completed payment's `coinAmount`.",
  },
  held: {
    word: 'Waiting for the payment',
    meaning: 'Money that arrived for a payment that is not complete yet (part paid). It becomes the sale when the rest arrives.',
    precise: '`held` (deposit_money): counted toward a payment still open.',
  },
  refundable: {
    word: 'Can be refunded',
    meaning:
      "What a refund may take back now: extra or late money of the customer, and — while the sale is inside the store's refund window — what is left of the sale.",
    precise: '`refundable` in GET /v1/payments/{id}/balance (inside the window it includes what is left of the sale; `refundableUntil` says until when).',
  },
  refund_window: {
    word: 'Refund window',
    meaning:
      'For how many days after a sale its money stays at the payment address so it can be refunded from there. When the window ends, the money moves to your wallet.',
    precise: "The store setting `refundWindowDays`; a payment's `refundableUntil`.",
  },
  swept: {
    word: 'Moved to your wallet',
    meaning: "Money Kassa sent from a payment address to the store's own wallet (the treasury).",
    precise: '`swept` (deposit_money): sweeps to the treasury, planned, sent or confirmed.',
  },
  treasury: {
    word: 'Your wallet',
    meaning: "The store's own wallet on the TON network, whose key only the shop holds. Sales move there by themselves.",
    precise: "The store's `treasury` address.",
  },
  deposit: {
    word: 'Payment address',
    meaning:
      'A wallet Kassa makes for each payment: the customer pays to it, and Kassa holds its key until the money moves to your wallet or back to the customer.',
    precise: "The payment's deposit wallet (`paymentDetails.address`).",
  },
  in_deposits: {
    word: 'Still at payment addresses',
    meaning:
      'Money not moved yet: sales waiting for the end of their refund window or for a wallet to move to, money that can be refunded, and money of open payments.',
    precise: '`in_deposits` (reporting.store_money): held + merchant_unswept + refundable.',
  },
  fees: {
    word: 'Network fees',
    meaning:
      'What the TON network charged, in Gram (GRAM, its own coin, formerly Toncoin), to move the money: to receive a token at a payment address, and to send money out (to your wallet or back to a customer). Kassa itself charges nothing.',
    precise: '`fees` (deposit_money): TON paid, or set aside while a transfer is in flight.',
  },
  gas: {
    word: "Kassa's fee money",
    meaning:
      "Gram that Kassa sends from its own wallet to a payment address so a token (such as USDT) can be moved: the network charges in Gram even for tokens. It is not the shop's money.",
    precise: '`gas` (deposit_money, reporting.store_money); transfers out of kind `gas_top_up`.',
  },
  refund_gas: {
    word: 'Money for refund fees',
    meaning: `Gram (GRAM) the store set aside for the network fees of refunds in tokens such as USDT (the network charges its fee in Gram even for tokens). A token refund uses about ${JETTON_REFUND_RESERVE} GRAM of it; when too little is left, token refunds are refused until an owner adds some from their wallet on the Money page (it counts once the network shows it).`,
    precise:
      'The store\'s refund gas account: `refundGas` in GET /v1/payments/{id}/balance, store_refund_gas(store) in SQL. A top-up from the dashboard is a TON transfer to Kassa\'s gas wallet with the comment "Kassa refund fees …" (refund_fee_top_ups, gas_wallet_arrivals); the operator can also record one with `kassa gas paid`.',
  },
  network_fee: {
    word: 'Network fee of a refund',
    meaning: `A Gram refund pays its network fee from the payment address: ${TON_FEE_RESERVE} GRAM is set aside for it, and the real fee (usually less) is known once the network confirms. A token refund's fee is taken from the refund fee balance instead.`,
    precise: "The refund's `fee` (confirmed) or `fee_reserved_base_units` (set aside).",
  },
  reconciliation: {
    word: 'Check against the network',
    meaning:
      'Kassa regularly compares what each payment address holds on the network with what its books say. A difference means money arrived or left that the books do not explain.',
    precise: 'deposit_reconciliations; reporting.deposit_differences (positive: the chain holds more).',
  },
  failed_transfer: {
    word: 'Failed transfer',
    meaning:
      'A refund or a move to your wallet that the network did not carry out. The money stays at the payment address; the guide for the person who runs your Kassa (OPERATIONS) says what to do.',
    precise: 'outgoing_transfers in state `failed` (kind `refund` or `sweep`), with `failure_reason`.',
  },
  anomaly: {
    word: 'Something unusual',
    meaning: 'The customer paid too little, too much, late, twice, or with a token that only looks like the real one.',
    precise: "The payment's `anomalies` (underpaid, overpaid, late, multiple, lookalike_token).",
  },
  unmatched: {
    word: 'Unmatched money',
    meaning:
      'Money that reached your treasury without a payment’s reference in its comment (none, a typo, an unknown or encrypted one), so Kassa could not tell which payment it was for. It stays in your wallet and is never lost: you assign it to the payment it was for, or keep it with a note.',
    precise: 'An unmatched transfer (unmatched_transfers; GET /v1/unmatched-transfers), `open` until assigned, refunded or kept.',
  },
  subscription_status: {
    word: 'Subscription status',
    meaning:
      'Free trial: the customer has free days before the first period. Paid: the current period is paid. Waiting for payment: a period is due and unpaid; the customer has a payment to pay it, and the grace days to do so. Ended unpaid: the grace days passed without payment. Cancelled: ended by the shop or the customer. The last two are final.',
    precise: 'The subscription’s `status`: `trialing`, `active`, `past_due`, `expired`, `cancelled`; `cancelAtPeriodEnd` when it ends at the period’s end.',
  },
  subscription_credit: {
    word: 'Credit',
    meaning:
      'Money of the customer that is not yet spent on a period, in the plan’s currency: payments (more than asked, and late money, included) and credit the shop added. Each period is charged from it when it is enough; otherwise the customer is asked for what is missing.',
    precise:
      'The subscription’s `credit`; its history is the append-only ledger (GET /v1/subscriptions/{id}/ledger: `credit`, `charge`, `adjustment`, `refund`, with `balanceAfter`).',
  },
  token_id: {
    word: 'Token id',
    meaning: 'The name of an API token in logs and in the audit log. It is not the secret: the token itself is shown once.',
    precise: "The token's `jti` (JWT ID).",
  },
  webhook: {
    word: 'Webhook',
    meaning: "A message Kassa sends to the shop's server when a payment changes, signed so the server knows it came from Kassa.",
    precise: 'A webhook delivery (webhook_deliveries), retried for 12 hours.',
  },
  webhook_events: {
    word: 'Events',
    meaning:
      "What a webhook tells the shop's server: a payment is complete, a refund failed, money arrived that matches no payment, and so on. The server is told only the events it asked for.",
    precise: `The event types, in the body's \`type\`: ${EVENT_TYPES.map((type) => `\`${type}\` (${EVENT_WORDS[type].toLowerCase()})`).join(', ')}; \`ping\` (a test event). The body is \`{"type", "eventID", "payload", "signAt"}\` (docs/API.md, Store webhook endpoints).`,
  },
  audit_actions: {
    word: 'What was done',
    meaning:
      'Each line of the audit log says who did what to the store, when and from where: a refund, a change of settings, a new member, a sign-in, and so on.',
    precise: `The audit log's \`action\` (audit_log, reporting.audit_log): ${Object.entries(AUDIT_WORDS)
      .map(([action, words]) => `\`${action}\` (${words.toLowerCase()})`)
      .join(', ')}.`,
  },
} as const satisfies Record<string, GlossaryEntry>;

export type Term = keyof typeof GLOSSARY;
