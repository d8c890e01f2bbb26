// The dashboard's Unmatched money page (issue 43, CONTRACT §12): every member sees the store's
// unmatched transfers (open first); owners assign one to a payment or keep it with a note — the API's
// own commands and checks (POST /v1/unmatched-transfers/{id}/assign and /keep: the form's fields are
// the API's, dashboard.schema.ts), audited in the same transaction (dashboard/unmatched.ts). A refusal
// shows the page again with the reason on that transfer. The pipeline is the dashboard router's
// (dashboardSteps.ts).
import { assignFromDashboard, keepFromDashboard, unmatchedMoney } from '../../dashboard/unmatched.ts';
import { UNMATCHED_NOTICES, type UnmatchedNotice, type UnmatchedProblem, unmatchedPage } from '../../dashboard/unmatchedPage.ts';
import { dashboardPaths } from '../../dashboard/paths.ts';
import { KassaError, statusOf } from '../../errors.ts';
import type { AppDeps } from '../context.ts';
import { type AssignUnmatchedForm, assignUnmatchedForm, type KeepUnmatchedForm, keepUnmatchedForm } from './dashboard.schema.ts';
import { type DashboardCtx, type DashboardRouter, type OfStore, uuidParams } from './dashboardSteps.ts';

type Ctx = DashboardCtx & { state: OfStore };

export function dashboardUnmatchedRoutes(dash: DashboardRouter, deps: AppDeps): void {
  const { pool, config } = deps;
  const { root, page, redirect } = dash.steps;
  const paths = dashboardPaths(root);

  const show = async (ctx: Ctx, status: number, extra: { notice?: string; problem?: UnmatchedProblem } = {}) => {
    const store = ctx.state.store;
    const money = await unmatchedMoney(pool, store.id);
    page(ctx, status, unmatchedPage({ root, viewer: ctx.state.viewer, store, network: config.tonNetwork, ...money, ...extra }));
  };
  /** What was typed, to show the form again. */
  const typed = (ctx: DashboardCtx): Record<string, string> =>
    Object.fromEntries(Object.entries((ctx.request.body ?? {}) as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'));
  const FIELDS = ['paymentID', 'note'];
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
}
