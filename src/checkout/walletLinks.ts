// Wallet links for a pending payment (TON-NOTES "Links"): the ton://transfer link, the same link under
// Tonkeeper's and MyTonWallet's universal hosts; and a QR code rendered here as SVG — of the ton://
// link on the checkout, of a payment link's URL on the dashboard's payment-link pages.
import QRCode from 'qrcode';
import type { TonNetwork } from '../config.ts';
import { formatReference } from '../payments/reference.ts';
import { amounts, friendlyMaster, type CheckoutRow } from './view.ts';

export interface TransferLinks {
  ton: string;
  tonkeeper: string;
  mytonwallet: string;
}

/**
 * Links that pay what is still due: nanoTON for TON, or `jetton=<master>` with base units for a
 * jetton. The address is the non-bounceable form (an undeployed deposit wallet would bounce a
 * bounceable transfer). `exp` lets wallets refuse to send once the payment has expired. A payment
 * settled to the store's treasury carries its reference as `text` (the comment the wallet sends).
 * Null when the payment has no address, nothing is due, or a jetton has no master on this network.
 */
export function transferLinks(row: CheckoutRow, network: TonNetwork): TransferLinks | null {
  const parts = amounts(row);
  if (!parts || row.address_friendly === null || parts.remaining <= 0n) return null;
  const params = new URLSearchParams();
  if (row.coin_kind === 'jetton') {
    if (row.jetton_master === null) return null;
    params.set('jetton', friendlyMaster(row.jetton_master, network));
  }
  params.set('amount', parts.remaining.toString());
  params.set('exp', String(Math.floor(row.expires_at.getTime() / 1000)));
  // Paid to the store's treasury: the comment that tells the payment apart (CONTRACT §12).
  if (row.reference !== null) params.set('text', formatReference(row.reference));
  const path = `transfer/${encodeURIComponent(row.address_friendly)}?${params.toString()}`;
  return {
    ton: `ton://${path}`,
    tonkeeper: `https://app.tonkeeper.com/${path}`,
    mytonwallet: `https://my.tt/${path}`,
  };
}

/** An accessible inline SVG QR code of `text` (presentation attributes only: allowed by the CSP). */
export async function qrSvg(text: string, label: string): Promise<string> {
  const svg = await QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2, color: { dark: '#000000', light: '#ffffff' } });
  const escaped = label.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return svg.replace('<svg ', `<svg class="qr" role="img" aria-label="${escaped}" focusable="false" `).trim();
}
