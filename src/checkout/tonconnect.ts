// TON Connect for the hosted checkout: the manifest wallets read, the short list of wallets the page
// offers (with the bridges the page's connect-src must allow, and no others), and the transfer the
// customer's wallet is asked to sign, built here from the payment (never by the page):
// - TON: the amount still due, in nanoTON, to the deposit address (non-bounceable);
// - a jetton: a TEP-74 `transfer` to the customer's own jetton wallet, moving the amount still due
//   in base units to the deposit address (its owner), the excess TON back to the customer.
// A payment settled to the store's treasury (CONTRACT §12) goes to the treasury instead, carrying
// paymentDetails.payload — the reference as a text comment: the TON message's body, or the jetton
// transfer's forward_payload (with a notification, forward_ton_amount > 0).
import { Address } from '@ton/core';
import type { TonNetwork } from '../config.ts';
import { JETTON_TRANSFER_TON, jettonTransferBody } from '../chain/jettonTransfer.ts';
import { referenceCommentCell } from '../payments/reference.ts';
import { amounts, type CheckoutRow } from './view.ts';

/** TON the deposit owner receives with the jetton transfer_notification (> 0, so it is sent). */
const JETTON_FORWARD_TON = 1n;

/** TON Connect chain ids (CHAIN.MAINNET / CHAIN.TESTNET); the sandbox has none. */
const CHAIN_ID: Record<TonNetwork, string | null> = { mainnet: '-239', testnet: '-3', sandbox: null };

export const tonConnectManifestPath = (prefix: string): string => `${prefix}/tonconnect-manifest.json`;
export const tonConnectWalletsPath = (prefix: string): string => `${prefix}/assets/tonconnect-wallets.json`;

/** The dApp manifest (https://docs.ton.org/.../manifest): what a wallet shows when asked to connect. */
export function tonConnectManifest(checkoutBaseUrl: string) {
  return {
    url: new URL(checkoutBaseUrl).origin,
    name: 'Kassa',
    iconUrl: `${checkoutBaseUrl}/assets/kassa-icon.png`,
  };
}

interface OfferedWallet {
  app_name: string;
  name: string;
  about_url: string;
  universal_url: string;
  deepLink?: string;
  bridgeUrl: string;
  jsKey?: string;
  platforms: string[];
  maxMessages: number;
}

/** The wallets the checkout offers (TON Connect's own list, trimmed to four widely used ones). */
const OFFERED_WALLETS: readonly OfferedWallet[] = [
  {
    app_name: 'telegram-wallet',
    name: 'Wallet',
    about_url: 'https://wallet.tg/',
    universal_url: 'https://t.me/wallet?attach=wallet',
    bridgeUrl: 'https://walletbot.me/tonconnect-bridge/bridge',
    platforms: ['ios', 'android', 'macos', 'windows', 'linux'],
    maxMessages: 255,
  },
  {
    app_name: 'tonkeeper',
    name: 'Tonkeeper',
    about_url: 'https://tonkeeper.com',
    universal_url: 'https://app.tonkeeper.com/ton-connect',
    deepLink: 'tonkeeper-tc://',
    bridgeUrl: 'https://bridge.tonapi.io/bridge',
    jsKey: 'tonkeeper',
    platforms: ['ios', 'android', 'chrome', 'firefox', 'macos'],
    maxMessages: 255,
  },
  {
    app_name: 'mytonwallet',
    name: 'MyTonWallet',
    about_url: 'https://mytonwallet.io',
    universal_url: 'https://connect.mytonwallet.org',
    deepLink: 'mytonwallet-tc://',
    bridgeUrl: 'https://tonconnectbridge.mytonwallet.org/bridge/',
    jsKey: 'mytonwallet',
    platforms: ['chrome', 'windows', 'macos', 'linux', 'ios', 'android', 'firefox'],
    maxMessages: 255,
  },
  {
    app_name: 'tonhub',
    name: 'Tonhub',
    about_url: 'https://tonhub.com',
    universal_url: 'https://tonhub.com/ton-connect',
    bridgeUrl: 'https://connect.tonhubapi.com/tonconnect',
    jsKey: 'tonhub',
    platforms: ['ios', 'android'],
    maxMessages: 255,
  },
];

/**
 * The wallets list in TON Connect's wallets-v2.json format, for the page's own use. The icons are
 * Kassa's own (no third-party images), on the page's origin.
 */
export function tonConnectWallets(prefix: string) {
  return OFFERED_WALLETS.map((wallet) => ({
    app_name: wallet.app_name,
    name: wallet.name,
    image: `${prefix}/assets/wallets/${wallet.app_name}.svg`,
    about_url: wallet.about_url,
    universal_url: wallet.universal_url,
    ...(wallet.deepLink ? { deepLink: wallet.deepLink } : {}),
    bridge: [{ type: 'sse', url: wallet.bridgeUrl }, ...(wallet.jsKey ? [{ type: 'js', key: wallet.jsKey }] : [])],
    platforms: wallet.platforms,
    features: [{ name: 'SendTransaction', maxMessages: wallet.maxMessages, extraCurrencySupported: false }],
  }));
}

/** The origins of the offered wallets' bridges: all the page's connect-src needs beyond 'self'. */
export const TON_CONNECT_BRIDGE_ORIGINS: readonly string[] = [...new Set(OFFERED_WALLETS.map((wallet) => new URL(wallet.bridgeUrl).origin))];

/** The message of a TON Connect `sendTransaction` request (amounts in nanoTON, payload a base64 BOC). */
interface TonConnectMessage {
  address: string;
  amount: string;
  payload?: string;
}

interface TonConnectRequest {
  validUntil: number;
  network?: string;
  from: string;
  messages: TonConnectMessage[];
}

const friendly = (address: Address, network: TonNetwork, bounceable: boolean): string =>
  address.toString({ urlSafe: true, bounceable, testOnly: network === 'testnet' });

/**
 * The `sendTransaction` request paying what is still due on a pending payment from `customer`.
 * `customerJettonWallet` is required for a jetton (the customer's wallet of that jetton's master).
 * Null when nothing is due or there is no deposit address.
 */
export function tonConnectRequest(input: {
  row: CheckoutRow;
  network: TonNetwork;
  customer: Address;
  customerJettonWallet: Address | null;
  queryId: bigint;
}): TonConnectRequest | null {
  const { row, network, customer } = input;
  const parts = amounts(row);
  if (!parts || row.address_friendly === null || parts.remaining <= 0n) return null;
  // The deposit address, or the treasury for a payment settled there (told apart by its reference).
  const deposit = Address.parse(row.address_friendly);
  const comment = row.reference !== null ? referenceCommentCell(row.reference) : null;
  const chain = CHAIN_ID[network];
  const base = {
    validUntil: Math.floor(row.expires_at.getTime() / 1000),
    ...(chain !== null ? { network: chain } : {}),
    from: customer.toRawString(),
  };
  if (row.coin_kind !== 'jetton') {
    return {
      ...base,
      messages: [
        {
          address: friendly(deposit, network, false),
          amount: parts.remaining.toString(),
          ...(comment !== null ? { payload: comment.toBoc().toString('base64') } : {}),
        },
      ],
    };
  }
  if (input.customerJettonWallet === null) throw new Error('a jetton transfer needs the customer jetton wallet');
  const body = jettonTransferBody({
    queryId: input.queryId,
    amount: parts.remaining,
    destination: deposit,
    responseDestination: customer,
    forwardTonAmount: JETTON_FORWARD_TON,
    forwardPayload: comment,
  });
  return {
    ...base,
    messages: [
      { address: friendly(input.customerJettonWallet, network, true), amount: JETTON_TRANSFER_TON.toString(), payload: body.toBoc().toString('base64') },
    ],
  };
}
