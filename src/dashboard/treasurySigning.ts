// "Sign with your wallet": refunds from the store's treasury awaiting the owner's signature, one
// section that a payment's page (a sale's treasury refunds) and the Unmatched money page (money sent
// back whole) both show, and that static/treasury.js drives — TON Connect asks the treasury's wallet
// to sign each request Kassa built (treasuryRefunds.ts treasuryRequest), one request in a wallet at a
// time across every browser (the server records the hand-over: `record`; the wallet's refusal frees
// it: `declined`).
import { Address } from '@ton/core';
import { friendlyAddress, type TonNetwork } from '../chain/addresses.ts';
import type { OutgoingRow } from '../treasury/outgoing.ts';
import { heldUntil, requestHeld, treasuryRequest, type TreasuryRequest } from '../treasury/treasuryRefunds.ts';
import { html, type Html } from '../web/html.ts';
import { dateTime, type StoreContext } from './pages.ts';
import { dashboardPaths } from './paths.ts';
import { can } from './policy.ts';
import { addressText, amount } from './words.ts';

/** A treasury refund whose request a page handed to a wallet, which can still pay it until `held`: what every page says instead of "Sign". */
const requestInWalletWords = (held: Date) =>
  `The request is already in a wallet, which can still pay it until ${dateTime(held)}: approve or decline it there. ` +
  'Do not send it again — a second request would pay the customer twice. ' +
  'If it was declined in the wallet, the refund is marked expired at that time and can then be asked again.';

/** The treasury refunds of `outgoing` awaiting a signature, with their requests, when `role` may refund (else none): the page then runs TON Connect. */
export function treasurySigning(
  page: { outgoing: readonly OutgoingRow[]; network: TonNetwork },
  role: StoreContext['role'],
): Array<{ row: OutgoingRow; request: TreasuryRequest }> {
  if (!can(role, 'refund.create')) return [];
  return page.outgoing.flatMap((row) => {
    const request = row.state === 'awaiting_signature' ? treasuryRequest(row, page.network) : null;
    return request ? [{ row, request }] : [];
  });
}

/** The section treasury.js runs: each refund to sign, its button (or why none), and its ton:// link. Empty when there is none. */
export function treasurySigningSection(input: {
  root: string;
  network: TonNetwork;
  now: Date;
  awaiting: ReadonlyArray<{ row: OutgoingRow; request: TreasuryRequest }>;
  heading: string;
  /** Where the page records handing refund `refundId`'s request to a wallet, and the wallet's refusal of it. */
  record: (refundId: string) => string;
  declined: (refundId: string) => string;
}): Html | '' {
  const { awaiting, network, now } = input;
  if (awaiting.length === 0) return '';
  const paths = dashboardPaths(input.root);
  return html`<section class="card" id="treasury-refunds" aria-labelledby="treasury-heading" data-manifest="${paths.tonConnectManifest()}" data-wallets="${paths.tonConnectWallets()}">
<h2 id="treasury-heading">${input.heading}</h2>
<p>Paid from the store's treasury wallet, which Kassa holds no key of: sign each with that wallet before it expires. Sign once — a second signature pays the customer again.</p>
<ul class="treasury-list">${awaiting.map(({ row, request }) => {
    const treasuryWallet = friendlyAddress(Address.parse(row.from_address), network);
    const held = heldUntil(row.valid_until!);
    const open = row.valid_until! > now;
    // Handed to a wallet by some page (this browser or another): no second request while it can land (issue 44 §1).
    const inWallet = requestHeld(row, now);
    return html`<li class="treasury-refund" id="treasury-${row.id}" data-refund="${row.id}" data-held-until="${held.toISOString()}" data-treasury="${treasuryWallet}"
 data-request-sent="${inWallet ? 'yes' : 'no'}" data-record="${input.record(row.id)}" data-declined="${input.declined(row.id)}">
<p><strong>${amount(row.amount, row.coin_symbol)}</strong> to <span class="mono">${addressText(row.to_address_given ?? row.to_address, network)}</span>; sign before ${dateTime(row.valid_until!)}.</p>
${
  open
    ? inWallet
      ? html`<p class="sign-status info" role="status">${requestInWalletWords(held)}</p>`
      : html`<p><button type="button" class="sign-treasury" data-request="${JSON.stringify(request.tonconnect)}">Sign with your wallet</button></p>
<p class="sign-status" role="status"></p>
<details class="treasury-link"><summary>No TON Connect? Use a link</summary>
<p>${
          row.coin_symbol === 'TON'
            ? html`Any account of your wallet app can pay it (best the treasury, <span class="mono">${treasuryWallet}</span>): Kassa sees it reach the customer. Pay it once, and not besides signing above — paid twice, the customer is paid twice.`
            : html`Only from the treasury <span class="mono">${treasuryWallet}</span>: from any other account the transfer is refused and nothing is paid.`
        }</p>
<p><a href="${request.link}">Open in a wallet app</a></p></details>`
    : html`<p class="sign-status info" role="status">The time to sign has passed. A request your wallet signed in time can still arrive until ${dateTime(held)}: the amount stays taken until then, and the refund is then marked expired, so it can be asked again.</p>`
}
</li>`;
  })}</ul></section>`;
}
