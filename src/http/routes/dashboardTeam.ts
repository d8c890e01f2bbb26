// The dashboard's Team page (issue 24), owners only: the store's members and open invitations; invite
// someone (a one-time link, shown once), revoke an invitation, reset a member's password (a new
// invitation that sets one: invitations.ts mayReset says for whom), change a member's role or remove them —
// each through dashboard/invitations.ts and memberships.ts, audited. The pipeline is the dashboard router's (dashboardSteps.ts).
import { teamPage } from '../../dashboard/pages.ts';
import { dashboardPaths } from '../../dashboard/paths.ts';
import { FormProblem } from '../../errors.ts';
import { createInvitation, invitationsOf, revokeInvitation } from '../../dashboard/invitations.ts';
import { changeMembership, membersOf, roleIn } from '../../dashboard/memberships.ts';
import { can } from '../../dashboard/policy.ts';
import type { AppDeps } from '../context.ts';
import { emptyForm, type InvitationCreateForm, invitationCreateForm, type RoleForm, roleForm } from './dashboard.schema.ts';
import { type DashboardCtx, type DashboardRouter, type OfStore, uuidParams } from './dashboardSteps.ts';

export function dashboardTeamRoutes(dash: DashboardRouter, deps: AppDeps): void {
  const { pool, config } = deps;
  const { root, page, notFound, redirect } = dash.steps;
  const paths = dashboardPaths(root);

  const showTeam = async (
    ctx: DashboardCtx & { state: OfStore },
    status: number,
    extra: Pick<Parameters<typeof teamPage>[0], 'created' | 'form' | 'memberProblem' | 'notice'> = {},
  ) => {
    const store = ctx.state.store;
    const [members, invitations] = await Promise.all([membersOf(pool, store.id), invitationsOf(pool, store.id)]);
    page(ctx, status, teamPage({ root, viewer: ctx.state.viewer, store, members, invitations, now: deps.now(), ...extra }));
  };
  dash.store.get('/team', { can: 'team.manage' }, async (ctx) => showTeam(ctx, 200));
  dash.store.post<{ form: InvitationCreateForm }>(
    '/team/invitations',
    {
      can: 'team.manage',
      form: invitationCreateForm,
      refused: (ctx, problems) => {
        const body = (ctx.request.body ?? {}) as Record<string, unknown>;
        const email = typeof body.email === 'string' ? body.email : '';
        return showTeam(ctx, 400, { form: { email, role: body.role === 'owner' ? 'owner' : 'viewer', problems: invitationProblems(problems) } });
      },
    },
    async (ctx) => {
      const { email, role = 'viewer' } = ctx.state.form;
      try {
        const made = await createInvitation(pool, {
          storeId: ctx.state.store.id,
          email,
          role,
          baseUrl: config.baseUrl,
          actor: ctx.state.actor,
          now: deps.now(),
        });
        await showTeam(ctx, 201, { created: { url: made.url, email: made.email } });
      } catch (error) {
        if (!(error instanceof FormProblem)) throw error;
        await showTeam(ctx, 400, { form: { email, role, problems: { [error.field ?? 'email']: error.message } } });
      }
    },
  );

  const memberChange = (remove: boolean) => async (ctx: DashboardCtx & { state: OfStore<{ params: { userId: string }; form: Partial<RoleForm> }> }) => {
    const store = ctx.state.store;
    const userId = ctx.state.params.userId;
    const role = remove ? null : (ctx.state.form.role ?? 'viewer');
    try {
      const changed = await changeMembership(pool, { storeId: store.id, userId, role, actor: ctx.state.actor, now: deps.now() });
      if (!changed) return notFound(ctx);
    } catch (error) {
      if (!(error instanceof FormProblem)) throw error;
      return showTeam(ctx, 400, { memberProblem: error.message });
    }
    // Someone who removed or demoted themselves has no Team page any more.
    if (!can(await roleIn(pool, ctx.state.session.userId, store.id), 'team.manage')) return redirect(ctx, paths.home);
    await showTeam(ctx, 200, { notice: remove ? 'Member removed.' : 'Role changed.' });
  };
  const memberParams = uuidParams('userId');
  dash.store.post<{ params: { invitationId: string } }>(
    '/team/invitations/:invitationId/revoke',
    { can: 'team.manage', params: uuidParams('invitationId'), form: emptyForm },
    async (ctx) => {
      const revoked = await revokeInvitation(pool, {
        storeId: ctx.state.store.id,
        invitationId: ctx.state.params.invitationId,
        actor: ctx.state.actor,
        now: deps.now(),
      });
      if (!revoked) return notFound(ctx);
      await showTeam(ctx, 200, { notice: 'Link revoked: it opens nothing any more.' });
    },
  );
  // A password reset: a new invitation that sets a new password (invitations.ts mayReset says for whom).
  dash.store.post<{ params: { userId: string } }>(
    '/team/members/:userId/reset-password',
    { can: 'team.manage', params: memberParams, form: emptyForm },
    async (ctx) => {
      const store = ctx.state.store;
      const userId = ctx.state.params.userId;
      const target = (await membersOf(pool, store.id)).find((m) => m.user_id === userId);
      if (!target) return notFound(ctx);
      try {
        const made = await createInvitation(pool, {
          storeId: store.id,
          email: target.email,
          role: target.role,
          resetsPassword: true,
          baseUrl: config.baseUrl,
          actor: ctx.state.actor,
          now: deps.now(),
        });
        await showTeam(ctx, 201, { created: { url: made.url, email: made.email, resetsPassword: true } });
      } catch (error) {
        if (!(error instanceof FormProblem)) throw error;
        await showTeam(ctx, 400, { memberProblem: error.message });
      }
    },
  );
  dash.store.post<{ params: { userId: string }; form: RoleForm }>(
    '/team/members/:userId/role',
    { can: 'team.manage', params: memberParams, form: roleForm },
    memberChange(false),
  );
  dash.store.post<{ params: { userId: string }; form: Partial<RoleForm> }>(
    '/team/members/:userId/remove',
    { can: 'team.manage', params: memberParams, form: emptyForm },
    memberChange(true),
  );
}

/** The invitation form's problems by its fields (email, role). */
const invitationProblems = (problems: Record<string, string>) =>
  Object.fromEntries(Object.entries(problems).map(([field, text]) => [field === 'role' ? 'role' : 'email', text]));
