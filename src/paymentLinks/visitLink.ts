// A customer at a payment link's page ({checkout_base_url}/l/{id}; docs/API.md, Payment links): what
// a visit finds and what a press of its button makes — the domain's rule in one command, the route
// (http/routes/checkoutLinks.ts) only mapping the request to it and its outcome to a page, a redirect
// or a cookie. A visit (no `pay`: a person, a chat app's link preview, a crawler) makes nothing; a
// press (`pay`) makes one payment through createLinkPayment (the API's create command, under a lock
// on the link). Either goes back to the visitor's own payment while it is open (`heldPaymentId`, the
// id their cookie held, checked against the link: reusablePayment), so a reload or a second press
// never makes another.
import type { DatabasePool } from '../db/pool.ts';
import { KassaError } from '../errors.ts';
import type { CommandConfig } from '../payments/methodChoice.ts';
import { isUuid } from '../uuid.ts';
import {
  createLinkPayment,
  findPaymentLink,
  type LinkState,
  linkState,
  openAmountProblem,
  openLinkPayments,
  type PaymentLinkRow,
  placeState,
  readTypedAmount,
  reusablePayment,
} from './links.ts';

/** Why an open amount the customer typed was not taken ('decimals': more than the link's coin has). */
type TypedAmountProblem = NonNullable<ReturnType<typeof openAmountProblem>> | 'decimals';

type LinkVisit =
  /** The link takes no payment now: why (`full`: every place is held by payments being paid, try later). */
  | { outcome: 'closed'; link: PaymentLinkRow; state: Exclude<LinkState, 'open'> | 'full' }
  /** The visitor's payment of this link is still open: back to it. */
  | { outcome: 'reused'; link: PaymentLinkRow; paymentId: string }
  /** A visit: the link's page, its button ready. */
  | { outcome: 'shown'; link: PaymentLinkRow }
  /** A press with an open amount the link does not take: the page again, with what was typed and why. */
  | { outcome: 'refused'; link: PaymentLinkRow; typed: string; problem: TypedAmountProblem }
  /** A press: the payment made (the visitor's from now on, until it expires). */
  | { outcome: 'created'; link: PaymentLinkRow; paymentId: string; expiresAt: Date };

interface LinkVisitInput {
  /** The link's id (the path's, validated). */
  linkId: string;
  /** The payment id the visitor's cookie held, if any (as sent: checked here). */
  heldPaymentId: string | null;
  /** A press of the page's button: the amount as typed (an open amount's form) and the page's language, which reads it. */
  pay: { typed: string; lang: string } | null;
}

/** A visit or a press of the link's page at `now`. Throws payment_link_not_found for no such link. */
export async function visitLink(pool: DatabasePool, config: CommandConfig, input: LinkVisitInput, now: Date): Promise<LinkVisit> {
  const link = await findPaymentLink(pool, input.linkId);
  if (!link) throw new KassaError('payment_link_not_found');
  const state = linkState(link, now);
  if (state !== 'open') return { outcome: 'closed', link, state };
  const held = input.heldPaymentId !== null && isUuid(input.heldPaymentId) ? input.heldPaymentId.toLowerCase() : null;
  if (held !== null && (await reusablePayment(pool, link, held, now))) return { outcome: 'reused', link, paymentId: held };
  if (input.pay === null) {
    // Every place held by payments being paid: said now rather than after the press.
    if (placeState(link, await openLinkPayments(pool, link.id, now), now) === 'full') return { outcome: 'closed', link, state: 'full' };
    return { outcome: 'shown', link };
  }
  let amount = link.amount;
  if (amount === null) {
    const { typed, lang } = input.pay;
    const read = readTypedAmount(typed, lang);
    const problem = read === null ? 'invalid' : openAmountProblem(link, read);
    if (problem !== null) return { outcome: 'refused', link, typed, problem };
    amount = read!;
  }
  let payment: Awaited<ReturnType<typeof createLinkPayment>>;
  try {
    payment = await pool.transaction((tx) => createLinkPayment(tx, config, link.id, amount, now));
  } catch (caught) {
    // An open amount with more decimals than the link's coin has (the create's own check).
    if (caught instanceof KassaError && caught.code === 'invalid_amount' && link.amount === null) {
      return { outcome: 'refused', link, typed: amount, problem: 'decimals' };
    }
    throw caught;
  }
  if ('refused' in payment) return { outcome: 'closed', link, state: payment.refused };
  return { outcome: 'created', link, paymentId: payment.id, expiresAt: payment.expiresAt };
}
