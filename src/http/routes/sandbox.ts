// The sandbox network's HTTP face (docs/API.md, Sandbox network), mounted only when TON_NETWORK=sandbox:
// - GET /sandbox/toncenter/api/v3/…: the emulated chain's blocks as toncenter API v3, which the
//   chain reader reads over HTTP as it reads toncenter; POST /sandbox/toncenter/api/v2/jsonRPC:
//   toncenter v2 JSON-RPC (get methods, account state, sendBoc) for the unmodified TonClient;
// - POST /sandbox/v1/transfers: a customer wallet (or, with `from`, a wallet of POST /sandbox/v1/wallets) sends a transfer;
// - POST /sandbox/v1/wallets: a new wallet the sandbox holds the key of, funded (a merchant's wallet, a treasury);
// - GET /sandbox/v1/accounts/{address}: what an address holds (TON and every sandbox jetton);
// - POST /sandbox/v1/payments/{id}/expire: expires the payment now, as when its TTL ends, once the
//   chain reader has booked everything sent until now (the payment's store token, as on /v1).
import type { ParameterizedContext } from 'koa';
import type { DatabasePool } from '../../db/pool.ts';
import { sql } from '../../db/pool.ts';
import { chainBehind, KassaError, sandboxRefusal } from '../../errors.ts';
import { waitForChain } from '../../chain/clock.ts';
import type { RouteInstaller } from '../app.ts';
import type { OfStorePayment, Validated } from '../context.ts';
import { needs } from '../scope.ts';
import { validate } from '../validate.ts';
import { type PaymentParams, paymentParams, type TransferBody, transferSchema } from './sandbox.schema.ts';
import type { Logger } from '../../log.ts';
import { expirePayment } from '../../payments/commands.ts';
import { CREDIT_PART_PAID } from '../../subscriptions/engine.ts';
import { findPaymentView } from '../../payments/view.ts';
import { presentPayment } from '../../presenters/payment.ts';
import { type SandboxChain, SandboxTransferError } from '../../chain/sandbox/chain.ts';
import { keepChain } from '../../chain/sandbox/keeper.ts';
import { jettonWalletCodeCell } from '../../chain/sandbox/jetton.ts';
import { parseAddress } from '../../chain/addresses.ts';
import { SANDBOX_JSON_RPC_PATH, SANDBOX_TONCENTER_PATH } from '../../chain/sandbox/path.ts';

export interface Sandbox {
  chain: SandboxChain;
  routes: RouteInstaller;
  /** Stops the block clock and saves the chain's state beside the books (kassa start's shutdown). */
  stop(): Promise<void>;
}

/** How long the sandbox's expire control waits for the chain reader. */
const EXPIRE_WAIT_MS = 5_000;

/**
 * Starts the emulated chain, registers its jetton masters (with their standard wallet code, so
 * deposits' jetton wallets are computed offline), and returns its routes. With `blockClock` a
 * block is sealed every 400 ms, as on mainnet; without, blocks are sealed by calling
 * `chain.sealBlock()` (tests).
 */
export async function startSandbox(
  pool: DatabasePool,
  log: Logger,
  options: { blockClock: boolean; fund?: string[] } = { blockClock: true },
): Promise<Sandbox> {
  const kept = await keepChain(pool, log);
  const { chain, fresh } = kept;
  chain.useWallClock();
  // Kassa's own wallets that need TON from the start (the gas wallet): 1,000 TON each, once per chain.
  if (fresh) for (const address of options.fund ?? []) await chain.transfer({ to: address, coin: 'TON', amount: '1000' });
  const walletCode = jettonWalletCodeCell().toBoc();
  for (const [coin, master] of Object.entries(chain.jettonMasters())) {
    await pool.query(sql.typeAlias('void')`
      insert into jetton_masters (coin_symbol, network, master_address, wallet_code) values (${coin}, 'sandbox', ${master}, ${sql.binary(walletCode)})
      on conflict (coin_symbol, network) do update set master_address = excluded.master_address, wallet_code = excluded.wallet_code
    `);
  }
  chain.sealBlock();
  if (options.blockClock) chain.startBlockClock();
  log.info({ customer: chain.customerAddress, epoch: kept.epoch, restored: !fresh }, fresh ? 'sandbox TON chain started' : 'sandbox TON chain loaded');
  // Kept beside the books from now on: saved while it changes and at stop.
  await kept.startSaving();
  const stop = async () => {
    chain.stopBlockClock();
    await kept.stop();
  };

  const routes: RouteInstaller = (router, deps, guards) => {
    router.get(`${SANDBOX_TONCENTER_PATH}/api/v3/:method`, async (ctx) => {
      const reply = await chain.handleV3(ctx.params.method ?? '', new URLSearchParams(ctx.querystring));
      ctx.status = reply.status;
      ctx.body = reply.json;
    });
    router.get(`${SANDBOX_TONCENTER_PATH}/api/v3/jetton/wallets`, async (ctx) => {
      const reply = await chain.handleV3('jetton/wallets', new URLSearchParams(ctx.querystring));
      ctx.status = reply.status;
      ctx.body = reply.json;
    });

    router.post(SANDBOX_JSON_RPC_PATH, async (ctx) => {
      const reply = await chain.handleJsonRpc(ctx.request.body);
      ctx.status = reply.status;
      ctx.body = reply.json;
    });

    router.post('/sandbox/v1/transfers', validate({ body: transferSchema }), async (ctx: ParameterizedContext<Validated<{ body: TransferBody }>>) => {
      const body = ctx.state.body;
      try {
        const result = await chain.transfer(body);
        ctx.status = 201;
        ctx.body = result;
      } catch (error) {
        if (error instanceof SandboxTransferError && error.invalidInput) {
          if (error.code === 'unknown_coin') throw new KassaError('currency_not_found', { param: 'coin' });
          const code =
            error.code === 'invalid_amount' || error.code === 'invalid_address' || error.code === 'insufficient_funds' ? error.code : 'invalid_request';
          throw sandboxRefusal(code, error.message, error.param ?? undefined);
        }
        throw error;
      }
    });

    router.post('/sandbox/v1/wallets', async (ctx) => {
      ctx.status = 201;
      ctx.body = { address: await chain.createWallet() };
    });

    router.get('/sandbox/v1/accounts/:address', async (ctx) => {
      const address = parseAddress(ctx.params.address ?? '');
      if (address === null) throw new KassaError('invalid_address', { param: 'address' });
      ctx.body = { address: address.toRawString(), balances: await chain.balancesOf(address) };
    });

    // The merchant's own payments only (it answers the merchant view): the store's bearer token.
    router.post(
      '/sandbox/v1/payments/:id/expire',
      guards.merchant,
      needs('change'),
      guards.storeLimit,
      validate({ params: paymentParams }),
      guards.storePayment,
      async (ctx: ParameterizedContext<OfStorePayment<{ params: PaymentParams }>>) => {
        const payment = ctx.state.payment;
        const paymentId = payment.id;
        // As when the TTL ends: everything sent until now is booked first (a payment made in time
        // completes instead), then the clock reads expiresAt (or later).
        // The sandbox owns its chain: it seals what was sent (and one more block) rather than wait.
        chain.sealBlock();
        chain.sealBlock();
        if (payment.status === 'pending' && !(await waitForChain(deps.pool, 'sandbox', deps.now(), EXPIRE_WAIT_MS))) throw chainBehind();
        const at = new Date(Math.max(deps.now().getTime(), payment.expires_at.getTime()));
        await expirePayment(deps.pool, paymentId, at, CREDIT_PART_PAID);
        ctx.body = presentPayment((await findPaymentView(deps.pool, paymentId))!, deps.config);
      },
    );
  };
  return { chain, routes, stop };
}
