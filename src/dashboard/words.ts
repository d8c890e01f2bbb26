// How the dashboard writes money, addresses and the books' terms for a shop owner (issue 32): an
// amount rounded for reading with its exact value on hover and in the element's `value` (so a
// test or a copy reads the figure the books hold); fiat beside a coin amount where the payment was
// priced in fiat; one address form (user-friendly for the network, chain/addresses.ts) with a copy
// button; and a plain word that links to the glossary entry naming the precise term. Pure: Html in,
// Html out.
import { friendlyAddress, parseAddress, type TonNetwork } from '../chain/addresses.ts';
import { priceShare, readableDecimal, shownTicker } from '../money.ts';
import type { Anomaly } from '../payments/anomalies.ts';
import type { TransferEffect } from '../payments/transfers.ts';
import type { AsOf } from '../db/reporting.ts';
import { isFiatCurrency } from '../rates/fiat.ts';
import { html, type Html } from '../web/html.ts';
import { AUDIT_WORDS, EVENT_WORDS, GLOSSARY, type Term } from './glossary.ts';
import type { OutgoingState } from '../treasury/transitions.ts';
import type { UnmatchedReason, UnmatchedState } from '../payments/treasuryTransfers.ts';
import type { EventType } from '../webhooks/events.ts';

/** Decimals a coin amount is rounded to for reading (the exact value stays on hover). */
const COIN_READING_DECIMALS = 4;

/** A figure rounded for reading: fiat to cents, a coin to COIN_READING_DECIMALS. */
export const readable = (value: string, currency: string): string =>
  isFiatCurrency(currency) ? readableDecimal(value, 2, true) : readableDecimal(value, COIN_READING_DECIMALS);

/**
 * `value currency`, rounded for reading, the coin by the ticker people know (TON is GRAM: money.ts
 * shownTicker); the exact figure is the element's `value` and, when the rounding changed it, its
 * title (shown on hover). `id` for a figure a page names.
 */
export function amount(value: string, currency: string, id?: string): Html {
  const shown = readable(value, currency);
  const ticker = shownTicker(currency);
  return html`<data class="amount"${id ? html` id="${id}"` : ''} value="${value}"${shown === value ? '' : html` title="Exactly ${value} ${ticker}"`}>${shown} ${ticker}</data>`;
}

/** A coin amount of a payment priced in fiat, with what it was worth at the payment's rate beside it ("1.3 GRAM · about 4.20 USD"). */
export function coinWithFiat(
  value: string,
  coin: string,
  payment: { amount: string; currency: string; coin_amount: string | null; coin_symbol: string | null },
): Html {
  const priced = isFiatCurrency(payment.currency) && payment.coin_symbol === coin && payment.coin_amount !== null && payment.coin_amount !== '0';
  if (!priced || value === '0') return amount(value, coin);
  return html`${amount(value, coin)} <span class="muted fiat">· about ${priceShare(value, payment.amount, payment.coin_amount!, 2)} ${payment.currency}</span>`;
}

/** An address in the network's user-friendly form (any form in; kept as given when it does not parse). */
export function addressText(value: string, network: TonNetwork): string {
  const parsed = parseAddress(value);
  return parsed ? friendlyAddress(parsed, network) : value;
}

/**
 * An address, user-friendly for the network, with a copy button (shown where the dashboard's script
 * runs; without it the address stays selectable). `what` names it for the button ("the deposit address").
 */
export function address(value: string, network: TonNetwork, what = 'the address'): Html {
  const text = addressText(value, network);
  return html`<span class="mono address">${text}</span> <button type="button" class="quiet copy" data-copy-text="${text}" aria-label="Copy ${what}" hidden>Copy</button>`;
}

/** A plain word for a term of the books, linked to its glossary entry (where the precise term is). */
export function term(glossaryPath: string, key: Term, text?: string): Html {
  return html`<a class="term" href="${glossaryPath}#${key}">${text ?? GLOSSARY[key].word}</a>`;
}

/** What a transfer in did, for the shop owner (payments/transfers.ts TRANSFER_EFFECTS). */
export const EFFECT_WORDS: Record<TransferEffect, string> = {
  partial: 'part of the price',
  completed: 'paid the price',
  overpaid: 'paid more than the price (the extra can be refunded)',
  wrong_coin: 'another coin than asked (can be refunded)',
  after_expiry: 'after the payment expired (can be refunded)',
  after_cancel: 'after the payment was cancelled (can be refunded)',
  after_completion: 'after the payment was complete (can be refunded)',
  not_credited: 'bounced or failed on the network (not received)',
  unknown_token: 'a token Kassa does not accept, or a look-alike (not counted)',
  not_counted: "Kassa's fee money, or money that is not a payment (not counted)",
};

/** Transfers out, for the shop owner (treasury/outgoing.ts kinds). */
export const OUTGOING_WORDS: Record<'refund' | 'sweep' | 'gas_top_up', string> = {
  refund: 'Refund',
  sweep: 'Move to your wallet',
  gas_top_up: "Kassa's fee money for a token transfer",
};

/**
 * Why a planned transfer out of a payment address waits (outgoing.ts waiting_for), for the shop owner:
 * an address sends one transfer at a time, each after the network confirmed the one before.
 */
export function waitingWords(waiting: { reason: 'network_fee' | 'another_transfer'; kind: string }): string {
  if (waiting.reason === 'network_fee') return 'Waiting for its network fee to reach the payment address; it is sent as soon as that arrives.';
  const other = waiting.kind === 'refund' ? 'another refund' : waiting.kind === 'sweep' ? 'a move to your wallet' : 'another transfer';
  return `Waiting its turn: ${other} from the same payment address is on its way, and an address sends one transfer at a time. This one is sent as soon as the network confirms that one.`;
}

/** The transfers that ride with the refund of everything, the deposit's last movement out (closing.ts), for the shop owner. */
export const CLOSING_SHARE_WORDS: Record<'leftover' | 'gas_return', string> = {
  leftover: 'Move of your change left in the deposit to your wallet',
  gas_return: "Kassa's unused fee money back to Kassa",
};

/** A transfer out's state, for the shop owner. */
export const OUTGOING_STATE_WORDS: Record<OutgoingState, string> = {
  planned: 'planned',
  sent: 'sent, waiting for the network',
  confirmed: 'done',
  failed: 'failed',
  awaiting_signature: "waiting for the merchant's wallet to sign",
  expired: 'not signed in time',
};

/** Why a transfer into the treasury matched no payment, for the shop owner (payments/treasuryTransfers.ts). */
export const UNMATCHED_REASON_WORDS: Record<UnmatchedReason, string> = {
  no_reference: 'It came without a payment’s reference: no comment, or a comment that is no reference.',
  unknown_reference: 'Its comment is a reference, but no payment of this store has it.',
  malformed_reference: 'Its comment looks like a reference with a typo: a character is wrong, missing or too many.',
  encrypted: 'Its comment is encrypted, so Kassa cannot read it.',
};

/** Why a payment is suggested for an unmatched transfer, for the shop owner. */
export const SUGGESTION_WORDS: Record<string, string> = {
  reference_one_character_away: 'its reference is one character away from what was sent',
  same_amount_open: 'it was waiting for this amount of this coin when the money arrived',
  same_sender: 'the same wallet paid it before',
};

/** An unmatched transfer's state, for the shop owner. */
export const UNMATCHED_STATE_WORDS: Record<UnmatchedState, string> = {
  open: 'waiting for you',
  refunding: 'being refunded: waiting for your wallet to approve it',
  assigned: 'assigned to a payment',
  refunded: 'refunded',
  kept: 'kept',
};

/** An event's words (EVENT_WORDS); an unknown name as it is. */
export const eventWords = (event: string): string => (Object.hasOwn(EVENT_WORDS, event) ? EVENT_WORDS[event as EventType] : event);

/** An audit log action's words (AUDIT_WORDS); a name Kassa no longer writes, as it is. */
export const auditWords = (action: string): string => (Object.hasOwn(AUDIT_WORDS, action) ? AUDIT_WORDS[action as keyof typeof AUDIT_WORDS] : action);

/** An anomaly, for the shop owner (payments/anomalies.ts). */
export const ANOMALY_WORDS: Record<Anomaly, string> = {
  partially_paid: 'paid only in part',
  overpaid: 'paid too much',
  paid_late: 'paid after it expired',
  paid_after_cancel: 'paid after it was cancelled',
  wrong_coin: 'paid with another coin',
};

/**
 * "Figures as of 2 seconds ago": how current a report read on a replica is, in a shop owner's words;
 * nothing on the primary (always current: nothing to say). The paragraph `#as-of`.
 */
export function asOfWords(asOf: AsOf | undefined): Html | string {
  if (!asOf?.replica) return '';
  const lag = asOf.lagSeconds;
  if (lag === null || lag < 1)
    return html`<p class="muted" id="as-of">Figures as of now: read from the reporting copy of the database, which is up to date.</p>`;
  const seconds = Math.round(lag);
  const span =
    seconds < 120
      ? `${seconds} second${seconds === 1 ? '' : 's'}`
      : seconds < 7_200
        ? `${Math.round(seconds / 60)} minutes`
        : `${Math.round(seconds / 3_600)} hours`;
  return html`<p class="muted" id="as-of">Figures as of ${span} ago: read from the reporting copy of the database, which is ${span} behind; newer payments are not counted yet.</p>`;
}
