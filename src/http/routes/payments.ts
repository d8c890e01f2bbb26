// The merchant payment endpoints. Each route reads as a pipeline: guards (auth, what it needs of the
// token's scope, then the store's rate limit) → validate (path, query, body: payments.schema.ts) →
// the path's payment is the store's (`guards.storePayment`) → further checks → the command, inside
// `idempotent` where the route takes X-Idempotency-Key → presenter.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { sql, type DatabaseTransactionConnection, type Db } from '../../db/pool.ts';
import { idempotencyKey, type KeyScope, type Outcome, priorAnswerSql, priorOutcome, requestHash, takeKeySql } from '../../idempotency.ts';
import { type TokenCheck, tokenValidSql } from '../../auth/tokens.ts';
import { KassaError, unusableUrl } from '../../errors.ts';
import { checkWebhookUrl } from '../../net/addresses.ts';
import { awaitChainBeforeCancel } from '../../payments/cancel.ts';
import { cancelPayment, createPayment, createPaymentOnce } from '../../payments/commands.ts';
import { draftFromCatalogue, draftFromInvoice, draftFromPayment, readPaymentCatalogue } from '../../payments/drafts.ts';
import { listPayments } from '../../payments/list.ts';
import { listTransfers } from '../../payments/transfers.ts';
import { presentPage, presentList } from '../../presenters/list.ts';
import { presentCreatedInvoice, presentPayment, presentPaymentStatus } from '../../presenters/payment.ts';
import { presentTransfer } from '../../presenters/transfer.ts';
import { CREDIT_PART_PAID } from '../../subscriptions/engine.ts';
import type { AppDeps, Authenticated, KassaState, OfStorePayment, Validated } from '../context.ts';
import { answer, type CommandResult, idempotency } from '../idempotent.ts';
import type { Guards } from '../guards.ts';
import { needs } from '../scope.ts';
import { parseRfc3339, validate } from '../validate.ts';
import {
  type CancelPaymentBody,
  cancelPaymentSchema,
  type CreateInvoiceBody,
  type CreatePaymentBody,
  createInvoiceSchema,
  createPaymentSchema,
  type ListPaymentsQuery,
  listPaymentsQuery,
  type PaymentParams,
  paymentParams,
} from './payments.schema.ts';

/** webhookURL and returnURL must be public HTTPS URLs (beyond what JSON Schema can say). */
export function publicUrls(allowInsecure: boolean): Middleware<Validated<{ body: { webhookURL?: string; returnURL?: string } }>> {
  return async (ctx, next) => {
    for (const [name, code] of [
      ['webhookURL', 'invalid_webhook_url'],
      ['returnURL', 'invalid_return_url'],
    ] as const) {
      const value = ctx.state.body[name];
      if (value === undefined) continue;
      const check = checkWebhookUrl(value, { allowInsecure, name });
      if (!check.ok) throw unusableUrl(code, name, check.reason);
    }
    await next();
  };
}

interface CreateRequest<Body> {
  storeId: string;
  /** Validated against the operation's schema. */
  body: Body;
  now: Date;
  /** Behind `guards.merchantInline`: the token, checked by the create's first read. */
  tokenCheck?: TokenCheck | undefined;
}

/**
 * The two create operations after validation, in the transaction `idempotent` opens: draft,
 * create and present. The routes below run them; bench/api records the statements of `payment`
 * (inside src/idempotency.ts's `idempotent`, as the route's step runs it) to replay them.
 */
export function createOperations({ config }: Pick<AppDeps, 'config'>) {
  return {
    payment: async (tx: DatabaseTransactionConnection, { storeId, body, now, tokenCheck }: CreateRequest<CreatePaymentBody>): Promise<CommandResult> => {
      // The catalogue in one read, with the token's check (before anything of the create commits).
      const draft = await draftFromPayment(tx, storeId, body, { network: config.tonNetwork, ...(tokenCheck ? { tokenCheck } : {}) });
      const view = await createPayment(tx, config, storeId, draft, now);
      return { status: 201, body: presentPayment(view, config), paymentId: view.id };
    },
    /**
     * POST /v1/payments in two round trips (`createPaymentOnce`): one read (the token's check, the
     * key's earlier answer, the catalogue, a derivation index), one write that commits by itself.
     * Null when the write's gate let nothing through (the key taken meanwhile, the token refused):
     * then `payment` inside `idempotent`'s transaction answers, as every create did before.
     */
    paymentOnce: async (
      pool: Db,
      { storeId, body, now, tokenCheck, key }: CreateRequest<CreatePaymentBody> & { key: string | undefined },
    ): Promise<Outcome | null> => {
      const scope: KeyScope | null = key === undefined ? null : { storeId, endpoint: 'POST /v1/payments', key, hash: requestHash(body), now };
      const catalogue = await readPaymentCatalogue(pool, storeId, body, {
        network: config.tonNetwork,
        ...(tokenCheck ? { tokenCheck } : {}),
        once: { prior: scope ? priorAnswerSql(scope) : null },
      });
      if (scope) {
        const prior = priorOutcome(catalogue.priorAnswer, scope);
        if (prior === 'transaction') return null;
        if (prior !== 'free') return prior;
      }
      const draft = await draftFromCatalogue(pool, body, catalogue);
      // The token is checked again by the write itself: a token revoked since the read writes nothing.
      const tokenValid = tokenCheck ? tokenValidSql(tokenCheck.token, tokenCheck.now) : sql.fragment`true`;
      let text = '';
      const view = await createPaymentOnce(pool, config, storeId, draft, now, catalogue.stored!, (made) => {
        text = JSON.stringify(presentPayment(made, config));
        return scope ? takeKeySql(scope, { status: 201, body: text, paymentId: made.id }, tokenValid) : sql.fragment`select 1 where ${tokenValid}`;
      });
      return view ? { status: 201, body: text, replayed: false } : null;
    },
    invoice: async (tx: DatabaseTransactionConnection, { storeId, body, now }: CreateRequest<CreateInvoiceBody>): Promise<CommandResult> => {
      const view = await createPayment(tx, config, storeId, await draftFromInvoice(tx, storeId, body, { network: config.tonNetwork }), now);
      return { status: 201, body: presentCreatedInvoice(view, config), paymentId: view.id };
    },
  };
}

export function paymentRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards): void {
  const { pool, config } = deps;
  const present = (view: Parameters<typeof presentPayment>[0]) => presentPayment(view, config);
  const operations = createOperations(deps);
  const idempotent = idempotency(deps);
  const checkUrls = publicUrls(config.webhookAllowInsecure);

  type Create<Body> = Authenticated<{ body: Body }>;
  const createInTransaction = idempotent<Create<CreatePaymentBody>>('POST /v1/payments', (tx, ctx, now) =>
    operations.payment(tx, { storeId: ctx.state.merchant.storeId, body: ctx.state.body, now, tokenCheck: ctx.state.tokenCheck }),
  );
  // Two round trips (`paymentOnce`); the transaction's way when its write's gate let nothing through.
  const create: Middleware<Create<CreatePaymentBody>> = async (ctx) => {
    const key = idempotencyKey(ctx.get('X-Idempotency-Key'));
    ctx.state.now ??= deps.now();
    const storeId = ctx.state.merchant.storeId;
    const outcome = await operations.paymentOnce(pool, { storeId, body: ctx.state.body, now: ctx.state.now, tokenCheck: ctx.state.tokenCheck, key });
    if (!outcome) {
      await createInTransaction(ctx);
      return;
    }
    answer(ctx, outcome);
  };
  const createInvoice = idempotent<Create<CreateInvoiceBody>>('POST /v1/payments/create', (tx, ctx, now) =>
    operations.invoice(tx, { storeId: ctx.state.merchant.storeId, body: ctx.state.body, now }),
  );

  const list: Middleware<Authenticated<{ query: ListPaymentsQuery }>> = async (ctx) => {
    const {
      status,
      created_after: createdAfter,
      limit = '20',
      starting_after: startingAfter,
      order_id: orderId,
      payment_link: paymentLinkId,
    } = ctx.state.query;
    const page = await listPayments(pool, ctx.state.merchant.storeId, {
      ...(status ? { status } : {}),
      ...(orderId !== undefined ? { orderId } : {}),
      ...(paymentLinkId !== undefined ? { paymentLinkId: paymentLinkId.toLowerCase() } : {}),
      ...(createdAfter ? { createdAfter: parseRfc3339(createdAfter)! } : {}),
      limit: Number(limit),
      ...(startingAfter ? { startingAfter: startingAfter.toLowerCase() } : {}),
    });
    if (!page) throw new KassaError('invalid_starting_after', { param: 'starting_after' });
    ctx.body = presentPage(page.data.map(present), page.hasMore);
  };

  type Payment = OfStorePayment<{ params: PaymentParams }>;
  const retrieve: Middleware<Payment> = async (ctx) => {
    ctx.body = present(ctx.state.payment);
  };

  const status: Middleware<Payment> = async (ctx) => {
    ctx.body = presentPaymentStatus(ctx.state.payment);
  };

  const transfers: Middleware<Payment> = async (ctx) => {
    ctx.body = presentList((await listTransfers(pool, ctx.state.payment.id)).map(presentTransfer));
  };

  // A pending payment is cancelled only once the chain reader has booked the chain up to now.
  const chainBooked: Middleware<Payment> = async (ctx, next) => {
    ctx.state.now = deps.now();
    await awaitChainBeforeCancel(pool, config, ctx.state.payment, ctx.state.now);
    await next();
  };
  const cancel = idempotent<OfStorePayment<{ params: PaymentParams; body: CancelPaymentBody }>>('POST /v1/payments/:id/cancel', async (tx, ctx, now) => {
    // A subscription's payment cancelled with money on it: that money is credited at once (subscriptions__credit), as at expiry.
    const view = await cancelPayment(tx, ctx.state.payment, now, CREDIT_PART_PAID);
    return { status: 200, body: present(view), paymentId: view.id };
  });

  const byId = validate({ params: paymentParams });
  router.post('/v1/payments', guards.merchantInline, needs('create_payment'), guards.storeLimit, validate({ body: createPaymentSchema }), checkUrls, create);
  router.post(
    '/v1/payments/create',
    guards.merchant,
    needs('create_payment'),
    guards.storeLimit,
    validate({ body: createInvoiceSchema }),
    checkUrls,
    createInvoice,
  );
  router.get('/v1/payments', guards.merchant, needs('read'), guards.storeLimit, validate({ query: listPaymentsQuery }), list);
  router.get('/v1/payments/:id', guards.merchantInline, needs('read'), guards.storeLimit, byId, guards.storePayment, retrieve);
  router.get('/v1/payments/:id/status', guards.merchantInline, needs('read'), guards.storeLimit, byId, guards.storePayment, status);
  router.get('/v1/payments/:id/transfers', guards.merchant, needs('read'), guards.storeLimit, byId, guards.storePayment, transfers);
  router.post(
    '/v1/payments/:id/cancel',
    guards.merchant,
    needs('change'),
    guards.storeLimit,
    validate({ params: paymentParams, body: cancelPaymentSchema }),
    guards.storePayment,
    chainBooked,
    cancel,
  );
}
