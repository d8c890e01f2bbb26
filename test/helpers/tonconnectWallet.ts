// A TON wallet injected into a page through TON Connect's injected-wallet protocol
// (window.<key>.tonconnect: walletInfo, deviceInfo, connect, restoreConnection, send, listen,
// disconnect), as a browser-extension wallet does. It takes the JS bridge key of a wallet in the
// page's list (Tonkeeper's `tonkeeper`, as the Tonkeeper extension does: this SDK version shows
// injected wallets missing from the list only in its QA mode). The page's real @tonconnect/ui
// finds it and talks to it. The wallet is the sandbox's customer (a @ton/sandbox treasury, whose external
// messages are authorised by its subwallet id): it turns each sendTransaction request into that
// wallet's external message and sends it to the sandbox chain through the JSON-RPC `sendBoc`, as a
// real wallet sends to toncenter. It can be told to refuse instead.
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
  /** 'sign' (default): sign and send; 'reject': answer as a wallet whose user declined. */
  mode: 'sign' | 'reject';
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
  const wallet: TestWallet = { requests: [], mode: 'sign' };
  const treasury = (options.address ? app.sandbox.chain.walletAt(options.address) : app.sandbox.chain.customer) as unknown as {
    address: Address;
    init: { code: Cell; data: Cell };
    createTransfer(args: { messages: ReturnType<typeof internal>[]; sendMode?: number }): Cell;
  };
  const stateInit = beginCell().store(storeStateInit(treasury.init)).endCell().toBoc().toString('base64');

  await page.exposeFunction('kassaTestWalletSend', async (json: string): Promise<string> => {
    const request = JSON.parse(json) as { method: string; params: string[]; id: string };
    if (request.method !== 'sendTransaction') return JSON.stringify({ error: { code: 400, message: `unsupported method ${request.method}` }, id: request.id });
    const params = JSON.parse(request.params[0]!) as SendTransactionParams;
    wallet.requests.push(params);
    if (wallet.mode === 'reject') return JSON.stringify({ error: { code: 300, message: 'User declined the transaction' }, id: request.id });
    if (params.valid_until !== undefined && params.valid_until < Math.floor(Date.now() / 1000)) {
      return JSON.stringify({ error: { code: 1, message: 'Request expired' }, id: request.id });
    }
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
    const response = await fetch(`${app.url}${SANDBOX_JSON_RPC_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sendBoc', params: { boc } }),
    });
    const reply = (await response.json()) as { ok?: boolean; error?: string };
    if (!response.ok || reply.ok === false) return JSON.stringify({ error: { code: 0, message: `sendBoc failed: ${JSON.stringify(reply)}` }, id: request.id });
    return JSON.stringify({ result: boc, id: request.id });
  });

  await page.addInitScript(
    ({ key, name, address, stateInit: init, embedded }) => {
      const device = {
        platform: 'linux',
        appName: key,
        appVersion: '1.0.0',
        maxProtocolVersion: 2,
        features: ['SendTransaction', { name: 'SendTransaction', maxMessages: 4 }],
      };
      const connectEvent = (id: number) => ({
        event: 'connect',
        id,
        payload: { items: [{ name: 'ton_addr', address, network: '-3', publicKey: '00'.repeat(32), walletStateInit: init }], device },
      });
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
    { key: TEST_WALLET_KEY, name: TEST_WALLET_NAME, address: treasury.address.toRawString(), stateInit, embedded: options.embedded ?? false },
  );
  return wallet;
}
