// The dashboard's Password page (issue 35): a signed-in person changes their password. The rules
// (current password or a recent passkey sign-in, the password rule, other sessions and passkeys
// ended, the audit row) are src/dashboard/sessions.ts changePassword's; the page lists the passkeys it removes. The pipeline is the dashboard router's (dashboardSteps.ts).
import { dashboardPaths } from '../../dashboard/paths.ts';
import { passkeysOf } from '../../dashboard/passkeys.ts';
import { passwordPage } from '../../dashboard/passwordPage.ts';
import { FormProblem } from '../../errors.ts';
import { changePassword, needsCurrentPassword } from '../../dashboard/sessions.ts';
import type { AppDeps } from '../context.ts';
import { type PasswordForm, passwordForm } from './dashboard.schema.ts';
import type { DashboardCtx, DashboardRouter, SignedIn } from './dashboardSteps.ts';

type Ctx = DashboardCtx & { state: SignedIn };

export function dashboardPasswordRoutes(dash: DashboardRouter, deps: AppDeps): void {
  const { pool } = deps;
  const { root, page, redirect } = dash.steps;
  const paths = dashboardPaths(root);
  const show = async (ctx: Ctx, status: number, extra: { notice?: string | null; problems?: Record<string, string> } = {}) => {
    const session = ctx.state.session;
    // The passkeys the change removes: all but the one this session signed in with.
    const removed = (await passkeysOf(pool, session.userId)).filter((p) => p.id !== session.passkeyId);
    page(
      ctx,
      status,
      passwordPage({ root, viewer: ctx.state.viewer, askCurrent: needsCurrentPassword(session, deps.now()), passkeysRemoved: removed, ...extra }),
    );
  };

  dash.signedIn.get('/password', async (ctx) => {
    await show(ctx, 200, {
      notice:
        ctx.query.notice === 'changed'
          ? 'Password changed. Every other browser is signed out, and every passkey but the one you signed in with is removed.'
          : null,
    });
  });
  dash.signedIn.post<{ form: PasswordForm }>('/password', { form: passwordForm, refused: (ctx, problems) => show(ctx, 400, { problems }) }, async (ctx) => {
    const { next = '', confirm = '', current = '' } = ctx.state.form;
    if (next !== confirm) return show(ctx, 400, { problems: { confirm: 'The two new passwords differ.' } });
    try {
      await changePassword(pool, { session: ctx.state.session, current, next, actor: ctx.state.actor, now: deps.now() });
    } catch (error) {
      if (!(error instanceof FormProblem)) throw error;
      return show(ctx, 400, { problems: { [error.field ?? 'form']: error.message } });
    }
    redirect(ctx, paths.passwordPage('notice=changed'));
  });
}
