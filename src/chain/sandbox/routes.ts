// The sandbox network's HTTP face (CONTRACT §7), mounted only when TON_NETWORK=sandbox:
// - POST /sandbox/toncenter/api/v2/jsonRPC: the emulated chain as a toncenter v2 endpoint, which
//   the watcher reads over HTTP with the unmodified TonClient, as it reads toncenter;
// - POST /sandbox/v1/transfers: a customer wallet sends a transfer;
// - POST /sandbox/v1/payments/{id}/expire: runs the payment's expiry now, as when its TTL ends
//   (the payment's store token, as on /v1).
import type { DatabasePool } from '../../db/pool.ts';
import { sql } from '../../db/pool.ts';
import { ApiError, invalidRequest } from '../../errors.ts';
import type { RouteInstaller } from '../../http/app.ts';
import { validateBody } from '../../http/validate.ts';
import { paymentIdParam } from '../../http/routes/payments.ts';
import type { Logger } from '../../log.ts';
import { expirePayment, paymentNotFound } from '../../payments/commands.ts';
import { findPaymentView, presentPayment } from '../../payments/present.ts';
import type { ChainWatcher } from '../watcher.ts';
import { SandboxChain, SandboxTransferError } from './chain.ts';

import { SANDBOX_JSON_RPC_PATH } from './path.ts';

const transferSchema = {
  $id: 'SandboxTransferRequest',
  type: 'object',
  additionalProperties: false,
  required: ['to', 'coin', 'amount'],
  properties: {
    to: { type: 'string', maxLength: 100 },
    coin: { type: 'string', maxLength: 16 },
    amount: { type: 'string', maxLength: 40 },
    bounce: { type: 'boolean' },
    comment: { type: 'string', maxLength: 1000 },
    fromLookalike: { type: 'boolean' },
  },
} as const;

export interface Sandbox {
  chain: SandboxChain;
  routes: RouteInstaller;
}

/** Starts the emulated chain, registers its jetton masters, and returns its routes. */
export async function startSandbox(pool: DatabasePool, log: Logger, watcher: () => ChainWatcher | null): Promise<Sandbox> {
  const chain = await SandboxChain.create();
  chain.useWallClock();
  for (const [coin, master] of Object.entries(chain.jettonMasters())) {
    await pool.query(sql.typeAlias('void')`
      insert into jetton_masters (coin_symbol, network, master_address) values (${coin}, 'sandbox', ${master})
      on conflict (coin_symbol, network) do update set master_address = excluded.master_address
    `);
  }
  log.info({ customer: chain.customerAddress }, 'sandbox TON chain started');

  const routes: RouteInstaller = (router, deps, guards) => {
    router.post(SANDBOX_JSON_RPC_PATH, async (ctx) => {
      const reply = await chain.handleJsonRpc(ctx.request.body);
      ctx.status = reply.status;
      ctx.body = reply.json;
    });

    router.post('/sandbox/v1/transfers', async (ctx) => {
      const body = validateBody<{ to: string; coin: string; amount: string; bounce?: boolean; comment?: string; fromLookalike?: boolean }>(transferSchema, ctx.request.body);
      try {
        const result = await chain.transfer(body);
        ctx.status = 201;
        ctx.body = result;
      } catch (error) {
        if (error instanceof SandboxTransferError && error.status === 400) {
          if (error.code === 'unknown_coin') throw new ApiError('not_found_error', 'currency_not_found', error.message, { param: 'coin' });
          const code = error.code === 'invalid_amount' || error.code === 'invalid_address' || error.code === 'insufficient_funds' ? error.code : 'invalid_request';
          throw invalidRequest(code, error.message, error.param ?? undefined);
        }
        throw error;
      }
    });

    // The merchant's own payments only (it answers the merchant view): the store's bearer token.
    router.post('/sandbox/v1/payments/:id/expire', guards.merchant, async (ctx) => {
      const paymentId = paymentIdParam(ctx.params.id);
      const payment = await findPaymentView(deps.pool, paymentId, { storeId: ctx.state.storeId! });
      if (!payment) throw paymentNotFound();
      const current = watcher();
      // As when the TTL ends: the clock reads expiresAt (or later), and the chain is asked once more.
      const at = new Date(Math.max(deps.now().getTime(), payment.expires_at.getTime()));
      await expirePayment(deps.pool, paymentId, at, current ? { beforeExpiringPending: (id) => current.scanPayment(id) } : {});
      ctx.body = presentPayment((await findPaymentView(deps.pool, paymentId))!, deps.config);
    });
  };
  return { chain, routes };
}
