// An app with the sandbox chain mounted and a chain reader following it over HTTP (toncenter v3),
// as in production: blocks are sealed every 400 ms and the reader runs its real loop in the
// background; settle() seals at once and waits for the reader.
import assert from 'node:assert/strict';
import { Address } from '@ton/core';
import { keyPairFromSeed } from '@ton/crypto';
import { WalletContractV5R1 } from '@ton/ton';
import { pino, type Logger } from 'pino';
import { sql, z } from '../../src/db/pool.ts';
import { createRequestBudget, type RequestBudget } from '../../src/chain/budget.ts';
import { createChainClient } from '../../src/chain/client.ts';
import { createChainReader, type ChainReader } from '../../src/reader/reader.ts';
import { blockBooker, type BlockBooker } from '../../src/reader/book.ts';
import { toncenterV3Source, type ChainSource } from '../../src/chain/source.ts';
import { SANDBOX_JSON_RPC_PATH, SANDBOX_TONCENTER_PATH } from '../../src/chain/sandbox/path.ts';
import { startSandbox, type Sandbox } from '../../src/http/routes/sandbox.ts';
import { ensureGasWallet, gasWalletAddress } from '../../src/treasury/gas.ts';
import { sendFromWallet, type SignerDeps } from '../../src/treasury/signer.ts';
import { depositMoney } from '../../src/treasury/outgoing.ts';
import { toBaseUnits } from '../../src/money.ts';
import type { TestApp, TestAppOptions } from './app.ts';
import { startPaymentsApp } from './payments.ts';

export interface ChainTestApp extends TestApp {
  sandbox: Sandbox;
  /** The reader running in the background (stopReader() stops it). */
  reader: ChainReader;
  /** A new reader (as another process, or after a restart), reading the same chain. */
  newReader(options?: ReaderOptions): ChainReader;
  /** The reader's booking of a block alone, as the deposits__reconcile task builds it (no cursor, no block source). */
  newBooker(): BlockBooker;
  /** The v3 source over HTTP, as the reader uses it. */
  source(options?: { pageSize?: number; budget?: RequestBudget }): ChainSource;
  /** Stops the background reader (and releases its lease). */
  stopReader(): Promise<void>;
  /** POST /sandbox/v1/transfers. */
  pay(to: string, coin: string, amount: string, extra?: Record<string, unknown>): Promise<{ hash: string; lt: string }>;
  /**
   * Seals a block with what was sent, and one more (so the chain is settled past it), then waits
   * until the reader has booked them. Returns how many transfers were recorded meanwhile.
   */
  settle(): Promise<number>;
  /**
   * Time passes on chain without waiting for it: the sandbox chain's clock moves `seconds` on
   * (pinned from then on, see SandboxChain.advance), then settle().
   */
  advanceChain(seconds: number): Promise<number>;
  /** The reader's cursor. */
  cursor(): Promise<{ last: number; settledUntil: Date } | null>;
  /** nanoTON that arrived at `to` from `from` on the sandbox chain (message values, before the receiver's own fees). */
  arrived(to: string, from: string): bigint;
  /** The signer's dependencies as the worker gives them (the sandbox's JSON-RPC; the wall clock, or the chain's where a test moved it ahead). */
  signer(): SignerDeps;
  /**
   * Runs the signers of `wallets` and of the gas wallet, the reader confirming each message (as the
   * worker does), until none of them has a transfer planned or in flight.
   */
  drain(...wallets: string[]): Promise<void>;
}

/** A test's reader: its page size, budget, lease id, clock, log, masterchainInfo interval and `run`'s sleep. */
type ReaderOptions = {
  pageSize?: number;
  budget?: RequestBudget;
  id?: string;
  now?: () => Date;
  log?: Logger;
  infoEveryMs?: number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
};

/** The raw address of a wallet nobody has deployed (a treasury, or a refund address). */
export function freshAddress(): string {
  const key = keyPairFromSeed(Buffer.from(Array.from({ length: 32 }, () => Math.floor(Math.random() * 256)))).publicKey;
  return WalletContractV5R1.create({ publicKey: key, walletId: { networkGlobalId: -3, context: 0 } }).address.toRawString();
}

export async function startChainApp(
  env: Record<string, string> = {},
  options: Pick<TestAppOptions, 'openPool' | 'rateLimitStore' | 'baseUrlHost'> = {},
): Promise<ChainTestApp> {
  const log = pino({ level: process.env.LOG_LEVEL ?? 'silent' });
  // The sandbox registers its masters in the app's database, so it needs the pool first.
  let sandbox: Sandbox | null = null;
  const app = await startPaymentsApp({
    ...options,
    env,
    routes: [(router, deps, guards) => sandbox!.routes(router, deps, guards)],
    beforeListen: async (pool) => {
      // As kassa start does: the gas wallet is recorded and funded by the sandbox.
      const gas = await ensureGasWallet(pool, {
        masterKey: env.KASSA_MASTER_KEY ?? null,
        depositPublicKey: env.KASSA_DEPOSIT_PUBLIC_KEY ?? null,
        tonNetwork: 'sandbox',
      });
      sandbox = await startSandbox(pool, log, { blockClock: true, fund: [gas.raw] });
    },
  });
  await app.pool.query(sql.unsafe`delete from chain_reader`);
  const root = `${app.url}${SANDBOX_TONCENTER_PATH}`;
  const source = (options: { pageSize?: number; budget?: RequestBudget } = {}) =>
    toncenterV3Source({ baseUrl: root, budget: options.budget ?? null, ...(options.pageSize ? { pageSize: options.pageSize } : {}) });
  const newReader = (options: ReaderOptions = {}) =>
    createChainReader({
      pool: app.pool,
      config: app.config,
      source: source(options),
      client: createChainClient({ endpoint: `${app.url}${SANDBOX_JSON_RPC_PATH}`, budget: options.budget ?? createRequestBudget(0) }),
      log: options.log ?? log,
      ...(options.infoEveryMs ? { infoEveryMs: options.infoEveryMs } : {}),
      now: options.now ?? app.clock.now,
      ...(options.id ? { id: options.id } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
    });
  const newBooker = () =>
    blockBooker({
      pool: app.pool,
      network: app.config.tonNetwork,
      client: createChainClient({ endpoint: `${app.url}${SANDBOX_JSON_RPC_PATH}`, budget: createRequestBudget(0) }),
      log,
      now: app.clock.now,
    });
  const reader = newReader({ id: 'background' });
  const stop = new AbortController();
  const running = reader.run(stop.signal);
  const chain = sandbox!.chain;

  const cursor = async () => {
    const row = await app.pool.maybeOne(sql.type(z.object({ last: z.string(), settled_until: z.date() }))`
      select last_block_seqno::text as last, settled_until from chain_reader where network = 'sandbox'
    `);
    return row ? { last: Number(row.last), settledUntil: row.settled_until } : null;
  };
  const transfersCount = () => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from transfers`);

  const settle = async () => {
    const before = await transfersCount();
    chain.sealBlock();
    const target = chain.sealBlock();
    const deadline = Date.now() + 20_000;
    for (;;) {
      const at = await cursor();
      if (at !== null && at.last >= target) break;
      if (Date.now() > deadline) throw new Error(`the chain reader did not reach block ${target} (at ${at?.last})`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return (await transfersCount()) - before;
  };

  // Signs by the wall clock, or by the chain's where a test moved it ahead (advanceChain pins it there):
  // a message valid for 60 s of the wall clock would be expired on arrival on a chain 63 s ahead, and
  // stay in flight for good on a pinned clock (outgoing.test.ts's closing-message test, started within
  // 3 s of the test before it moved the chain 63 s ahead, never drained).
  const signer = (): SignerDeps => ({
    pool: app.pool,
    config: app.config,
    client: createChainClient({ endpoint: `${app.url}${SANDBOX_JSON_RPC_PATH}` }),
    log,
    now: () => new Date(Math.max(Date.now(), chain.now * 1000)),
  });

  return {
    ...app,
    sandbox: sandbox!,
    reader,
    newReader,
    newBooker,
    source,
    cursor,
    arrived(to, from) {
      return chain.transactionsOf(Address.parse(to)).reduce((sum, tx) => {
        const info = tx.inMessage?.info;
        return info?.type === 'internal' && info.src.toRawString() === Address.parse(from).toRawString() ? sum + info.value.coins : sum;
      }, 0n);
    },
    async stopReader() {
      stop.abort();
      await running;
    },
    async close() {
      stop.abort();
      await running;
      await sandbox!.stop();
      await app.close();
    },
    async pay(to, coin, amount, extra = {}) {
      const response = await app.request('POST', '/sandbox/v1/transfers', { body: { to, coin, amount, ...extra } });
      if (response.status !== 201) throw new Error(`sandbox transfer failed: ${response.status} ${response.text}`);
      return response.json;
    },
    settle,
    advanceChain(seconds) {
      chain.advance(seconds);
      return settle();
    },
    signer,
    async drain(...wallets) {
      const gas = (await gasWalletAddress(app.pool, 'sandbox'))!;
      const all = [...new Set([...wallets, gas])];
      const started = Date.now();
      let last = '';
      for (let round = 0; round < 60; round += 1) {
        const outcomes = [];
        for (const wallet of all) outcomes.push(await sendFromWallet(signer(), wallet));
        await settle();
        const busy = await app.pool.any(sql.unsafe`
          select id, kind, reason, state, from_address, valid_until, messages_signed from outgoing_transfers
          where (from_address = any(${sql.array(all, 'text')}) or to_address = any(${sql.array(all, 'text')})) and state in ('planned', 'sent')
        `);
        if (busy.length === 0 && outcomes.every((outcome) => outcome.outcome === 'idle')) return;
        last = `last outcomes ${JSON.stringify(outcomes)}; in flight ${JSON.stringify(busy)}`;
      }
      // What kept them busy, for a failure that shows only on a loaded machine.
      throw new Error(`the wallets never drained (60 rounds, ${Date.now() - started} ms): ${last}`);
    },
  };
}

/** What the sandbox's chain says an account holds, per coin (decimal strings). */
export async function sandboxBalances(app: TestApp, address: string): Promise<Record<string, string>> {
  return (await app.request('GET', `/sandbox/v1/accounts/${address}`)).json.balances as Record<string, string>;
}

/** What the books say the deposit holds (every owner's share) equals what the chain says, per coin, to the base unit. */
export async function assertBooksMatchChain(app: TestApp, paymentId: string, wallet: string): Promise<void> {
  const chain = await sandboxBalances(app, wallet);
  for (const row of await depositMoney(app.pool, paymentId)) {
    const held = BigInt(row.refundable) + BigInt(row.merchant_unswept) + BigInt(row.held) + (row.gas !== null && BigInt(row.gas) > 0n ? BigInt(row.gas) : 0n);
    assert.equal(held, toBaseUnits(chain[row.coin_symbol] ?? '0', row.decimals), `${row.coin_symbol}: ${JSON.stringify(row)}`);
  }
}

/**
 * A payment of 1 TON paid with 1.5 TON on the sandbox chain (0.5 refundable once the reader books it),
 * with a webhook URL nothing listens on (its delivery fails). `fields` adds to the create's body.
 */
export async function overpaidTonPayment(app: ChainTestApp, token: string, fields: Record<string, unknown>): Promise<any> {
  const created = await app.request('POST', '/v1/payments', {
    token,
    body: { amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] }, webhookURL: 'http://127.0.0.1:9/hook', ...fields },
  });
  assert.equal(created.status, 201, created.text);
  await app.pay(created.json.paymentDetails.address, 'TON', '1.5');
  return created.json;
}
