// The merchant payment endpoints. Each route reads as a pipeline: guards (auth, rate limit) →
// validate → command → presenter.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { TokenCheck } from '../../auth/tokens.ts';
import { KassaError, paymentNotFound } from '../../errors.ts';
import { idempotencyKey, idempotent, type Outcome } from '../../idempotency.ts';
import { checkWebhookUrl } from '../../net/addresses.ts';
import { isUuid } from '../../uuid.ts';
import { awaitChainBeforeCancel } from '../../payments/cancel.ts';
import { cancelPayment, createPayment } from '../../payments/commands.ts';
import { draftFromInvoice, draftFromPayment } from '../../payments/drafts.ts';
import { listPayments } from '../../payments/list.ts';
import { findPaymentView, findPaymentViewChecked, presentPayment } from '../../payments/present.ts';
import { listTransfers, presentTransfer } from '../../payments/transfers.ts';
import type { AppDeps, KassaContext, KassaState } from '../context.ts';
import type { Guards } from '../middleware.ts';
import {
  cancelPaymentSchema,
  createInvoiceSchema,
  createPaymentSchema,
  type CreateInvoiceBody,
  type CreatePaymentBody,
  type ListPaymentsQuery,
  listPaymentsQuery,
} from '../schemas/payments.schema.ts';
import { validateBody, validateQuery } from '../validate.ts';

export function paymentIdParam(value: string | undefined): string {
  if (value === undefined || !isUuid(value)) throw new KassaError('invalid_payment_id', 'paymentID must be a UUID.', { param: 'paymentID' });
  return value.toLowerCase();
}

function checkUrls(body: { webhookURL?: string; returnURL?: string }, allowInsecure: boolean): void {
  for (const [name, code] of [
    ['webhookURL', 'invalid_webhook_url'],
    ['returnURL', 'invalid_return_url'],
  ] as const) {
    const value = body[name];
    if (value === undefined) continue;
    const check = checkWebhookUrl(value, { allowInsecure, name });
    if (!check.ok) throw new KassaError(code, check.reason, { param: name });
  }
}

function send(ctx: KassaContext, outcome: Outcome): void {
  ctx.status = outcome.status;
  ctx.type = 'application/json';
  if (outcome.replayed) ctx.set('Idempotent-Replayed', 'true');
  ctx.body = outcome.body;
}

export interface CreateRequest<Body> {
  storeId: string;
  /** Validated against the operation's schema. */
  body: Body;
  /** X-Idempotency-Key, already checked (undefined when absent). */
  key: string | undefined;
  now: Date;
  /** Behind `guards.merchantInline`: the token, checked by the create's first read. */
  tokenCheck?: TokenCheck | undefined;
}

/**
 * The two create operations after validation: draft, create and answer inside `idempotent`. The
 * routes below run them; bench/api records the statements of `payment` to replay them.
 */
export function createOperations({ pool, config }: Pick<AppDeps, 'pool' | 'config'>) {
  return {
    payment: ({ storeId, body, key, now, tokenCheck }: CreateRequest<CreatePaymentBody>): Promise<Outcome> =>
      idempotent(pool, { storeId, endpoint: 'POST /v1/payments', key, body, now }, async (tx) => {
        // The catalogue in one read, with the token's check (before anything of the create commits).
        const draft = await draftFromPayment(tx, storeId, body, { network: config.tonNetwork, ...(tokenCheck ? { tokenCheck } : {}) });
        const view = await createPayment(tx, config, storeId, draft, now);
        return { status: 201, body: presentPayment(view, config), paymentId: view.id };
      }),
    invoice: ({ storeId, body, key, now }: CreateRequest<CreateInvoiceBody>): Promise<Outcome> =>
      idempotent(pool, { storeId, endpoint: 'POST /v1/payments/create', key, body, now }, async (tx) => {
        const view = await createPayment(tx, config, storeId, await draftFromInvoice(tx, storeId, body, { network: config.tonNetwork }), now);
        return { status: 201, body: { paymentID: view.id, checkoutURL: presentPayment(view, config).checkoutURL }, paymentId: view.id };
      }),
  };
}

export function paymentRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards): void {
  const { pool, config } = deps;
  const present = (view: Parameters<typeof presentPayment>[0]) => presentPayment(view, config);
  const operations = createOperations(deps);

  const createRoute =
    <Body extends { webhookURL?: string; returnURL?: string }>(
      schema: object,
      run: (request: CreateRequest<Body>) => Promise<Outcome>,
    ): Middleware<KassaState> =>
    async (ctx) => {
      const body = validateBody<Body>(schema, ctx.request.body);
      checkUrls(body, config.webhookAllowInsecure);
      send(
        ctx,
        await run({ storeId: ctx.state.storeId!, body, key: idempotencyKey(ctx.get('X-Idempotency-Key')), now: deps.now(), tokenCheck: ctx.state.tokenCheck }),
      );
    };
  const create = createRoute<CreatePaymentBody>(createPaymentSchema, operations.payment);
  const createInvoice = createRoute<CreateInvoiceBody>(createInvoiceSchema, operations.invoice);

  const list: Middleware<KassaState> = async (ctx) => {
    const { status, created_after: createdAfter, limit = '20', starting_after: startingAfter } = validateQuery<ListPaymentsQuery>(listPaymentsQuery, ctx.query);
    const page = await listPayments(pool, ctx.state.storeId!, {
      ...(status ? { status } : {}),
      ...(createdAfter ? { createdAfter: new Date(createdAfter) } : {}),
      limit: Number(limit),
      ...(startingAfter ? { startingAfter: startingAfter.toLowerCase() } : {}),
    });
    if (!page) throw new KassaError('invalid_starting_after', 'starting_after is not a payment of this store.', { param: 'starting_after' });
    ctx.body = { data: page.data.map(present), has_more: page.hasMore };
  };

  // Behind guards.merchantInline: the token is checked by the payment's read itself (one round trip).
  const retrieve: Middleware<KassaState> = async (ctx) => {
    const view = await findPaymentViewChecked(pool, paymentIdParam(ctx.params.id), ctx.state.tokenCheck!);
    if (!view) throw paymentNotFound();
    ctx.body = present(view);
  };

  const status: Middleware<KassaState> = async (ctx) => {
    const view = await findPaymentViewChecked(pool, paymentIdParam(ctx.params.id), ctx.state.tokenCheck!);
    if (!view) throw paymentNotFound();
    ctx.body = { id: view.id, status: view.status };
  };

  const transfers: Middleware<KassaState> = async (ctx) => {
    const view = await findPaymentView(pool, paymentIdParam(ctx.params.id), { storeId: ctx.state.storeId! });
    if (!view) throw paymentNotFound();
    ctx.body = { data: (await listTransfers(pool, view.id)).map(presentTransfer) };
  };

  const cancel: Middleware<KassaState> = async (ctx) => {
    const paymentId = paymentIdParam(ctx.params.id);
    const body = validateBody<Record<string, never>>(cancelPaymentSchema, ctx.request.body);
    const storeId = ctx.state.storeId!;
    const now = deps.now();
    await awaitChainBeforeCancel(pool, deps.config, storeId, paymentId, now);
    const outcome = await idempotent(
      pool,
      { storeId, endpoint: `POST /v1/payments/${paymentId}/cancel`, key: idempotencyKey(ctx.get('X-Idempotency-Key')), body, now },
      async (tx) => {
        const view = await cancelPayment(tx, storeId, paymentId, now);
        return { status: 200, body: present(view), paymentId: view.id };
      },
    );
    send(ctx, outcome);
  };

  router.post('/v1/payments', guards.merchantInline, create);
  router.post('/v1/payments/create', guards.merchant, createInvoice);
  router.get('/v1/payments', guards.merchant, list);
  router.get('/v1/payments/:id', guards.merchantInline, retrieve);
  router.get('/v1/payments/:id/status', guards.merchantInline, status);
  router.get('/v1/payments/:id/transfers', guards.merchant, transfers);
  router.post('/v1/payments/:id/cancel', guards.merchant, cancel);
}
