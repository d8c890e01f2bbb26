// The dashboard's Password page (issue 35): a signed-in person changes their password. The rules
// (current password or a recent passkey sign-in, the password rule, other sessions ended, the audit
// row) are src/dashboard/sessions.ts changePassword's.
import type Router from '@koa/router';
import { passwordPage } from '../../dashboard/passwordPage.ts';
import { FormProblem } from '../../dashboard/people.ts';
import { changePassword, needsCurrentPassword } from '../../dashboard/sessions.ts';
import type { AppDeps, KassaState } from '../context.ts';
import type { DashboardCtx as Ctx, DashboardSteps } from './dashboardSteps.ts';

export function dashboardPasswordRoutes(router: Router<KassaState>, deps: AppDeps, steps: DashboardSteps): void {
  const { pool } = deps;
  const { root, R, page, htmlErrors, form, sameOrigin, signedIn, redirect, field } = steps;
  const show = (ctx: Ctx, status: number, extra: { notice?: string | null; problems?: Record<string, string> } = {}) =>
    page(ctx, status, passwordPage({ root, viewer: ctx.state.viewer!, askCurrent: needsCurrentPassword(ctx.state.session!, deps.now()), ...extra }));

  router.get(`${R}/password`, htmlErrors, signedIn, async (ctx: Ctx) => {
    show(ctx, 200, { notice: ctx.query.notice === 'changed' ? 'Password changed. Every other browser is signed out.' : null });
  });
  router.post(`${R}/password`, htmlErrors, sameOrigin, form, signedIn, async (ctx: Ctx) => {
    const next = field(ctx, 'next').slice(0, 1024);
    if (next !== field(ctx, 'confirm')) return show(ctx, 400, { problems: { confirm: 'The two new passwords differ.' } });
    try {
      const current = field(ctx, 'current').slice(0, 1024);
      await changePassword(pool, { session: ctx.state.session!, current, next, actor: ctx.state.actor!, now: deps.now() });
    } catch (error) {
      if (!(error instanceof FormProblem)) throw error;
      return show(ctx, 400, { problems: { [error.field ?? 'form']: error.message } });
    }
    redirect(ctx, `${root}/password?notice=changed`);
  });
}
