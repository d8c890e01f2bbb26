// The words of a notification (issue 47 item 7): short, in the shop's words, written from the store
// event's payload when it is sent. Amounts name the coin as people read it (Gram (GRAM) for TON, CONTRACT
// §12); no secret is ever in one (no token, no key, no link that signs anyone in).
import { shownCoinName } from '../money.ts';

interface NotificationMessage {
  /** An email's subject; Telegram's first line. */
  subject: string;
  text: string;
}

const str = (value: unknown): string => (typeof value === 'string' || typeof value === 'number' ? String(value) : '');
const money = (amount: unknown, currency: unknown): string => `${str(amount)} ${shownCoinName(str(currency))}`;

/** The message of `event` (its type and payload) for a member of `storeName`; `link`: the payment's page in the dashboard. */
export function notificationMessage(event: string, payload: Record<string, unknown>, storeName: string, link: string | null): NotificationMessage {
  const lines: string[] = [];
  let subject: string;
  const transfer = (payload.transfer ?? {}) as Record<string, unknown>;
  switch (event) {
    case 'payment.completed':
      subject = `Sale: ${money(payload.amount, payload.currency)}`;
      lines.push(`A payment of ${money(payload.amount, payload.currency)} to ${storeName} is paid in full.`);
      if (payload.order_id) lines.push(`Order: ${str(payload.order_id)}`);
      break;
    case 'refund.confirmed':
      subject = `Refund sent: ${money(payload.amount, payload.coin)}`;
      lines.push(`A refund of ${money(payload.amount, payload.coin)} from ${storeName} reached the customer's wallet.`);
      break;
    case 'refund.failed':
      subject = `Refund failed: ${money(payload.amount, payload.coin)}`;
      lines.push(`A refund of ${money(payload.amount, payload.coin)} from ${storeName} could not be sent.`);
      if (payload.failureReason) lines.push(`Why: ${str(payload.failureReason)}`);
      lines.push(payload.failureKind === 'transient' ? 'Kassa tries it again by itself.' : 'The money is still refundable: open the payment to try again.');
      break;
    case 'payment.money_received':
      subject = `Money after the payment ended: ${money(transfer.amount, transfer.coin)}`;
      lines.push(
        `${money(transfer.amount, transfer.coin)} reached ${storeName} for a payment that had ${transfer.effect === 'after_cancel' ? 'been cancelled' : 'expired'}. It can be refunded from the payment's page.`,
      );
      break;
    case 'money.unmatched':
      subject = `Money that matches no payment: ${money(payload.amount, payload.coin)}`;
      lines.push(`${money(payload.amount, payload.coin)} reached ${storeName} without matching a payment. See Unmatched money in the dashboard.`);
      break;
    case 'sweep.failed':
      subject = `Transfer to your wallet failed: ${money(payload.amount, payload.coin)}`;
      lines.push(`Moving ${money(payload.amount, payload.coin)} of ${storeName}'s money to your wallet failed.`);
      if (payload.failureReason) lines.push(`Why: ${str(payload.failureReason)}`);
      break;
    case 'subscription.past_due': {
      // The subscription as the API shows it; never its portal or checkout link (the portal's is a secret).
      const subscription = (payload.subscription ?? {}) as Record<string, unknown>;
      const customer = (subscription.customer ?? {}) as Record<string, unknown>;
      subject = `Subscription waiting for a payment: ${str(customer.reference)}`;
      lines.push(
        `The subscription of ${str(customer.reference)} at ${storeName} is past due: its credit (${str(subscription.credit)}) did not cover the next period. A payment for what is missing is open; the subscription ends if it is not paid within the plan's grace days.`,
      );
      if (subscription.id) lines.push(`Subscription: ${str(subscription.id)}`);
      break;
    }
    default:
      subject = `News from ${storeName}`;
      lines.push(`Something happened at ${storeName}.`);
  }
  if (payload.paymentID) lines.push(`Payment: ${str(payload.paymentID)}`);
  if (link) lines.push(link);
  return { subject: `${storeName} · ${subject}`, text: lines.join('\n') };
}
