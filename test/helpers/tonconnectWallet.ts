// A TON wallet injected into a page through TON Connect's injected-wallet protocol
// (window.<key>.tonconnect: walletInfo, deviceInfo, connect, restoreConnection, send, listen,
// disconnect), as a browser-extension wallet does. It takes the JS bridge key of a wallet in the
// page's list (Tonkeeper's `tonkeeper`, as the Tonkeeper extension does: this SDK version shows
// injected wallets missing from the list only in its QA mode). The page's real @tonconnect/ui
// finds it and talks to it. The wallet is the sandbox's customer (a @ton/sandbox treasury, whose external
// messages are authorised by its subwallet id): it turns each sendTransaction request into that
// wallet's external message and sends it to the sandbox chain through the JSON-RPC `sendBoc`, as a
// real wallet sends to toncenter. It can be told to refuse instead, or to hold a request until the
// test approves or declines it — as a person does in the wallet app, also after the page's
// "confirm in your wallet" dialog was closed — and to sign as the real wallets do (issue 44):
// Tonkeeper with its own lifetime (its time + 300 s, whatever validUntil asked), MyTonWallet with
// the request's validUntil (600 s when none); and its signed message can land later (the test says
// when), refused then if past the lifetime signed, as a wallet contract refuses it. Times are the
// sandbox chain's. The account it connects as can be changed (a wallet other than the treasury).
import { Address, beginCell, Cell, external, internal, storeMessage, storeStateInit } from '@ton/core';
import type { Page } from 'playwright-core';
import { SANDBOX_JSON_RPC_PATH } from '../../src/chain/sandbox/path.ts';
import type { ChainTestApp } from './chain.ts';

export const TEST_WALLET_KEY = 'tonkeeper';
/** The name the page's wallet list gives it. */
export const TEST_WALLET_NAME = 'Tonkeeper';

export interface TestWallet {
  /** Every sendTransaction request the page made (the parsed params[0]). */
  requests: any[];
  /** 'sign' (default): sign and send; 'reject': answer as a wallet whose user declined; 'hold': wait for approve() or decline(). */
  mode: 'sign' | 'reject' | 'hold';
  /**
   * The valid_until it signs: 'request' (MyTonWallet: the request's validUntil, now + 600 s when
   * none) or { ownSeconds } (Tonkeeper: its own time + 300 s, whatever the request asked).
   */
  lifetime: 'request' | { ownSeconds: number };
  /** Signs a request whose validUntil passed (default: refuses it, "Request expired"). */
  ignoresValidUntil: boolean;
  /** Requests held ('hold'), oldest first. */
  held(): number;
  /** The user approves the oldest held request: signed now; sent now, or kept for land() with `landLater`. */
  approve(options?: { landLater?: boolean }): Promise<void>;
  /** The user declines the oldest held request (the page hears UserRejectsError, if it still listens). */
  decline(): void;
  /** Sends the message approve({ landLater }) kept; refused (throws) past the valid_until it was signed with. */
  land(): Promise<void>;
  /** The account the wallet connects as from now on (a wallet of POST /sandbox/v1/wallets). */
  connectAs(address: string): Promise<void>;
}

interface SendTransactionParams {
  valid_until?: number;
  from?: string;
  network?: string;
  messages: { address: string; amount: string; payload?: string; stateInit?: string }[];
}

/**
 * Installs the wallet into every document `page` opens (before its scripts run). `embedded`: as
 * the browser inside a wallet app (isWalletBrowser), where TON Connect connects without a list.
 * `address`: a wallet of POST /sandbox/v1/wallets (e.g. a store's treasury) instead of the customer.
 */
export async function injectTestWallet(page: Page, app: ChainTestApp, options: { embedded?: boolean; address?: string } = {}): Promise<TestWallet> {
  type SandboxWallet = {
    address: Address;
    init: { code: Cell; data: Cell };
    createTransfer(args: { messages: ReturnType<typeof internal>[]; sendMode?: number }): Cell;
  };
  const walletOf = (address?: string) => (address ? app.sandbox.chain.walletAt(address) : app.sandbox.chain.customer) as unknown as SandboxWallet;
  const stateInitOf = (w: SandboxWallet) => beginCell().store(storeStateInit(w.init)).endCell().toBoc().toString('base64');
  let treasury = walletOf(options.address);
  const chainNow = () => app.sandbox.chain.now;
  const waiting: Array<{ params: SendTransactionParams; id: string; answer(reply: string): void }> = [];
  let kept: { boc: string; validUntil: number } | null = null;

  /** The signed message (an external to the wallet) and the valid_until the wallet gave it. */
  const signed = (params: SendTransactionParams) => {
    const validUntil = wallet.lifetime === 'request' ? (params.valid_until ?? chainNow() + 600) : chainNow() + wallet.lifetime.ownSeconds;
    // As a wallet does: bounceable or not as the user-friendly address says.
    const messages = params.messages.map((message) => {
      const parsed = Address.parseFriendly(message.address);
      return internal({
        to: parsed.address,
        bounce: parsed.isBounceable,
        value: BigInt(message.amount),
        ...(message.payload ? { body: Cell.fromBase64(message.payload) } : {}),
      });
    });
    const body = treasury.createTransfer({ messages });
    const boc = beginCell()
      .store(storeMessage(external({ to: treasury.address, body })))
      .endCell()
      .toBoc()
      .toString('base64');
    return { boc, validUntil };
  };
  const broadcast = async (boc: string): Promise<string | null> => {
    const response = await fetch(`${app.url}${SANDBOX_JSON_RPC_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sendBoc', params: { boc } }),
    });
    const reply = (await response.json()) as { ok?: boolean; error?: string };
    return !response.ok || reply.ok === false ? `sendBoc failed: ${JSON.stringify(reply)}` : null;
  };
  const expired = (params: SendTransactionParams) => !wallet.ignoresValidUntil && params.valid_until !== undefined && params.valid_until < chainNow();

  const wallet: TestWallet = {
    requests: [],
    mode: 'sign',
    lifetime: 'request',
    ignoresValidUntil: false,
    held: () => waiting.length,
    async approve(approval = {}) {
      const next = waiting.shift();
      if (!next) throw new Error('the test wallet holds no request');
      if (expired(next.params)) return next.answer(JSON.stringify({ error: { code: 1, message: 'Request expired' }, id: next.id }));
      const message = signed(next.params);
      if (approval.landLater) {
        kept = message;
        return next.answer(JSON.stringify({ result: message.boc, id: next.id }));
      }
      const failed = await broadcast(message.boc);
      next.answer(JSON.stringify(failed ? { error: { code: 0, message: failed }, id: next.id } : { result: message.boc, id: next.id }));
    },
    decline() {
      const next = waiting.shift();
      if (!next) throw new Error('the test wallet holds no request');
      next.answer(JSON.stringify({ error: { code: 300, message: 'User declined the transaction' }, id: next.id }));
    },
    async land() {
      if (!kept) throw new Error('the test wallet keeps no signed message');
      const message = kept;
      kept = null;
      if (message.validUntil < chainNow()) throw new Error(`the wallet refuses the message: valid until ${message.validUntil}, the chain is at ${chainNow()}`);
      const failed = await broadcast(message.boc);
      if (failed) throw new Error(failed);
    },
    async connectAs(address) {
      treasury = walletOf(address);
    },
  };

  await page.exposeFunction('kassaTestWalletSend', async (json: string): Promise<string> => {
    const request = JSON.parse(json) as { method: string; params: string[]; id: string };
    if (request.method !== 'sendTransaction') return JSON.stringify({ error: { code: 400, message: `unsupported method ${request.method}` }, id: request.id });
    const params = JSON.parse(request.params[0]!) as SendTransactionParams;
    wallet.requests.push(params);
    if (wallet.mode === 'reject') return JSON.stringify({ error: { code: 300, message: 'User declined the transaction' }, id: request.id });
    if (wallet.mode === 'hold') return new Promise<string>((answer) => waiting.push({ params, id: request.id, answer }));
    if (expired(params)) return JSON.stringify({ error: { code: 1, message: 'Request expired' }, id: request.id });
    const message = signed(params);
    const failed = await broadcast(message.boc);
    if (failed) return JSON.stringify({ error: { code: 0, message: failed }, id: request.id });
    return JSON.stringify({ result: message.boc, id: request.id });
  });
  // The account it connects as, asked at each connect (connectAs changes it, also across reloads).
  await page.exposeFunction('kassaTestWalletAccount', () => ({ address: treasury.address.toRawString(), stateInit: stateInitOf(treasury) }));

  await page.addInitScript(
    ({ key, name, embedded }) => {
      const device = {
        platform: 'linux',
        appName: key,
        appVersion: '1.0.0',
        maxProtocolVersion: 2,
        features: ['SendTransaction', { name: 'SendTransaction', maxMessages: 4 }],
      };
      const account = () => (window as unknown as { kassaTestWalletAccount(): Promise<{ address: string; stateInit: string }> }).kassaTestWalletAccount();
      const connectEvent = async (id: number) => {
        const { address, stateInit } = await account();
        return {
          event: 'connect',
          id,
          payload: { items: [{ name: 'ton_addr', address, network: '-3', publicKey: '00'.repeat(32), walletStateInit: stateInit }], device },
        };
      };
      let connected = false;
      let nextId = 1;
      const listeners: ((event: unknown) => void)[] = [];
      (window as unknown as Record<string, unknown>)[key] = {
        tonconnect: {
          deviceInfo: device,
          walletInfo: {
            name,
            app_name: key,
            image:
              'data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 viewBox=%220 0 10 10%22%3E%3Crect width=%2210%22 height=%2210%22 fill=%22%23333%22/%3E%3C/svg%3E',
            about_url: 'https://example.com/test-wallet',
            platforms: ['chrome', 'firefox', 'linux', 'macos', 'windows', 'ios', 'android'],
            features: [{ name: 'SendTransaction', maxMessages: 4, extraCurrencySupported: false }],
          },
          protocolVersion: 2,
          isWalletBrowser: embedded,
          connect: async () => {
            connected = true;
            return connectEvent(nextId++);
          },
          restoreConnection: async () =>
            connected ? connectEvent(nextId++) : { event: 'connect_error', id: nextId++, payload: { code: 0, message: 'not connected' } },
          send: async (request: unknown) =>
            JSON.parse(await (window as unknown as { kassaTestWalletSend(json: string): Promise<string> }).kassaTestWalletSend(JSON.stringify(request))),
          listen: (callback: (event: unknown) => void) => {
            listeners.push(callback);
            return () => listeners.splice(listeners.indexOf(callback), 1);
          },
          disconnect: () => {
            connected = false;
          },
        },
      };
    },
    { key: TEST_WALLET_KEY, name: TEST_WALLET_NAME, embedded: options.embedded ?? false },
  );
  return wallet;
}
