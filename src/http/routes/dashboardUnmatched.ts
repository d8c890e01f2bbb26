// The dashboard's Unmatched money page (issue 43, CONTRACT §12): every member sees the store's
// unmatched transfers (open first); owners assign one to a payment or keep it with a note — the API's
// own commands and checks (POST /v1/unmatched-transfers/{id}/assign and /keep: the form's fields are
// the API's, dashboard.schema.ts), audited in the same transaction (dashboard/unmatched.ts). A refusal
// shows the page again with the reason on that transfer. Owners give it back too (POST
// /v1/unmatched-transfers/{id}/refund's command), then sign the refund with their wallet through TON
// Connect as a payment's treasury refund: the page records handing its request to a wallet (one at a
// time across browsers) and the wallet's refusal. The pipeline is the dashboard router's
// (dashboardSteps.ts).
import crypto from 'node:crypto';
import { createJettonWalletLookup, ownApiUrl } from '../../checkout/jettonWallets.ts';
import { TON_CONNECT_BRIDGE_ORIGINS } from '../../checkout/tonconnect.ts';
import { recordAudit } from '../../dashboard/audit.ts';
import { assignFromDashboard, keepFromDashboard, refundFromDashboard, unmatchedMoney } from '../../dashboard/unmatched.ts';
import { UNMATCHED_NOTICES, type UnmatchedNotice, type UnmatchedProblem, unmatchedPage, unmatchedSigning } from '../../dashboard/unmatchedPage.ts';
import { recordRequestSent, releaseRequest } from '../../treasury/treasuryRefunds.ts';
import { strictCsp } from '../../web/csp.ts';
import type { ParamsDefinition } from '../validate.ts';
import { answerRequestSent } from './dashboardTreasuryRequests.ts';
import { dashboardPaths } from '../../dashboard/paths.ts';
import { KassaError, statusOf } from '../../errors.ts';
import type { AppDeps } from '../context.ts';
import {
  type AssignUnmatchedForm,
  assignUnmatchedForm,
  emptyForm,
  type KeepUnmatchedForm,
  keepUnmatchedForm,
  type RefundUnmatchedForm,
  refundUnmatchedForm,
} from './dashboard.schema.ts';
import { type DashboardCtx, type DashboardRouter, type OfStore, uuidParams } from './dashboardSteps.ts';

type Ctx = DashboardCtx & { state: OfStore };

export function dashboardUnmatchedRoutes(dash: DashboardRouter, deps: AppDeps): void {
  const { pool, config } = deps;
  const { root, page, redirect, notFound } = dash.steps;
  const paths = dashboardPaths(root);
  const jettonWallets = createJettonWalletLookup(config, pool);

  const show = async (ctx: Ctx, status: number, extra: { notice?: string; problem?: UnmatchedProblem } = {}) => {
    const store = ctx.state.store;
    const money = await unmatchedMoney(pool, store.id);
    // A refund to sign: TON Connect's UI (its styles under this response's nonce, its wallets' bridges), as on a payment's page.
    const signing = unmatchedSigning({ outgoing: money.outgoing, network: config.tonNetwork }, store.role).length > 0;
    const styleNonce = signing ? crypto.randomBytes(16).toString('base64') : undefined;
    page(
      ctx,
      status,
      unmatchedPage({
        root,
        viewer: ctx.state.viewer,
        store,
        network: config.tonNetwork,
        now: deps.now(),
        ...money,
        ...extra,
        ...(styleNonce ? { styleNonce } : {}),
      }),
    );
    if (styleNonce) ctx.set('Content-Security-Policy', strictCsp({ styleNonce, connectOrigins: TON_CONNECT_BRIDGE_ORIGINS }));
  };
  /** What was typed, to show the form again. */
  const typed = (ctx: DashboardCtx): Record<string, string> =>
    Object.fromEntries(Object.entries((ctx.request.body ?? {}) as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'));
  const FIELDS = ['paymentID', 'note', 'address'];
  const problemOf = (ctx: Ctx, id: string, problems: Record<string, string>): UnmatchedProblem => ({
    id,
    values: typed(ctx),
    problems: Object.fromEntries(Object.entries(problems).map(([name, text]) => [FIELDS.includes(name) ? name : 'form', text])),
  });
  /** The API's refusal, on the transfer (its `id` param is the transfer: the form's own line). */
  const refusal = (ctx: Ctx, id: string, error: KassaError, field: string) => {
    return show(ctx, statusOf(error.code), { problem: problemOf(ctx, id, { [error.param === field ? field : 'form']: error.message }) });
  };

  dash.store.get('/unmatched', async (ctx) => {
    const notice =
      typeof ctx.query.notice === 'string' && Object.hasOwn(UNMATCHED_NOTICES, ctx.query.notice)
        ? UNMATCHED_NOTICES[ctx.query.notice as UnmatchedNotice]
        : undefined;
    await show(ctx, 200, notice ? { notice } : {});
  });

  const resolve = { can: 'unmatched.resolve', params: uuidParams('unmatchedId') } as const;
  dash.store.post<{ params: { unmatchedId: string }; form: AssignUnmatchedForm }>(
    '/unmatched/:unmatchedId/assign',
    {
      ...resolve,
      form: assignUnmatchedForm,
      refused: (ctx, problems) => show(ctx, 400, { problem: problemOf(ctx, ctx.state.params.unmatchedId, problems) }),
    },
    async (ctx) => {
      const id = ctx.state.params.unmatchedId.toLowerCase();
      try {
        await assignFromDashboard(pool, ctx.state.actor, ctx.state.store.id, id, ctx.state.form.paymentID.toLowerCase(), deps.now(), deps.config.tonNetwork);
      } catch (error) {
        if (!(error instanceof KassaError)) throw error;
        return refusal(ctx, id, error, 'paymentID');
      }
      redirect(ctx, paths.store(ctx.state.store.id).unmatched('notice=assigned'));
    },
  );

  dash.store.post<{ params: { unmatchedId: string }; form: KeepUnmatchedForm }>(
    '/unmatched/:unmatchedId/keep',
    {
      ...resolve,
      form: keepUnmatchedForm,
      refused: (ctx, problems) => show(ctx, 400, { problem: problemOf(ctx, ctx.state.params.unmatchedId, problems) }),
    },
    async (ctx) => {
      const id = ctx.state.params.unmatchedId.toLowerCase();
      try {
        await keepFromDashboard(pool, ctx.state.actor, ctx.state.store.id, id, ctx.state.form.note, deps.now());
      } catch (error) {
        if (!(error instanceof KassaError)) throw error;
        return refusal(ctx, id, error, 'note');
      }
      redirect(ctx, paths.store(ctx.state.store.id).unmatched('notice=kept'));
    },
  );

  dash.store.post<{ params: { unmatchedId: string }; form: RefundUnmatchedForm }>(
    '/unmatched/:unmatchedId/refund',
    {
      ...resolve,
      form: refundUnmatchedForm,
      refused: (ctx, problems) => show(ctx, 400, { problem: problemOf(ctx, ctx.state.params.unmatchedId, problems) }),
    },
    async (ctx) => {
      const id = ctx.state.params.unmatchedId.toLowerCase();
      const origin = ownApiUrl(ctx.req.socket);
      try {
        await refundFromDashboard(
          pool,
          ctx.state.actor,
          {
            storeId: ctx.state.store.id,
            unmatchedId: id,
            address: ctx.state.form.address,
            network: config.tonNetwork,
            walletOf: (master, owner) => jettonWallets.walletOf(master, owner, origin),
          },
          deps.now(),
        );
      } catch (error) {
        if (!(error instanceof KassaError)) throw error;
        return refusal(ctx, id, error, 'address');
      }
      redirect(ctx, `${paths.store(ctx.state.store.id).unmatched('notice=refund_asked')}#treasury-refunds`);
    },
  );

  // One request in a wallet at a time for a refund of unmatched money, as for a sale's (dashboard.ts):
  // recorded before the page hands it over (the first recording wins), freed by the wallet's refusal.
  const refundParams: ParamsDefinition = {
    schema: {
      type: 'object',
      additionalProperties: false,
      required: ['unmatchedId', 'refundId'],
      properties: {
        unmatchedId: { type: 'string', format: 'uuid', errorCode: 'invalid_request' },
        refundId: { type: 'string', format: 'uuid', errorCode: 'invalid_request' },
      },
    },
  };
  const signer = { can: 'refund.create', params: refundParams, form: emptyForm } as const;
  dash.store.post<{ params: { unmatchedId: string; refundId: string } }>('/unmatched/:unmatchedId/refunds/:refundId/request-sent', signer, async (ctx) => {
    const { store } = ctx.state;
    const unmatchedId = ctx.state.params.unmatchedId.toLowerCase();
    const refundId = ctx.state.params.refundId.toLowerCase();
    const now = deps.now();
    const recorded = await pool.transaction(async (tx) => {
      const result = await recordRequestSent(tx, { unmatchedId, storeId: store.id }, refundId, now);
      if (result.outcome === 'recorded')
        await recordAudit(
          tx,
          ctx.state.actor,
          { storeId: store.id, action: 'unmatched.refund_request_sent', subject: unmatchedId, detail: { refund: refundId } },
          now,
        );
      return result;
    });
    if (!answerRequestSent(ctx, recorded, refundId)) return notFound(ctx);
  });
  dash.store.post<{ params: { unmatchedId: string; refundId: string } }>('/unmatched/:unmatchedId/refunds/:refundId/request-declined', signer, async (ctx) => {
    const { store } = ctx.state;
    const unmatchedId = ctx.state.params.unmatchedId.toLowerCase();
    const refundId = ctx.state.params.refundId.toLowerCase();
    const now = deps.now();
    const released = await pool.transaction(async (tx) => {
      const done = await releaseRequest(tx, { unmatchedId, storeId: store.id }, refundId);
      if (done)
        await recordAudit(
          tx,
          ctx.state.actor,
          { storeId: store.id, action: 'unmatched.refund_request_declined', subject: unmatchedId, detail: { refund: refundId } },
          now,
        );
      return done;
    });
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 200;
    ctx.body = { refund: refundId, requestSent: false, released };
  });
}
