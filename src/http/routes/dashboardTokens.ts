// The dashboard's API tokens page (issue 24), owners only: issue a token (its secret shown once, in
// the answer itself), list them (never the secret), revoke one — through dashboard/tokens.ts, audited.
// The pipeline is the dashboard router's (dashboardSteps.ts).
import type { TokenScope } from '../../auth/scopes.ts';
import { listTokens, tokenName } from '../../auth/tokens.ts';
import { FormProblem } from '../../errors.ts';
import { tokensPage } from '../../dashboard/pages.ts';
import { issueStoreToken, revokeStoreToken } from '../../dashboard/tokens.ts';
import type { AppDeps } from '../context.ts';
import { emptyForm, type TokenForm, tokenForm } from './dashboard.schema.ts';
import { type DashboardCtx, type DashboardRouter, type OfStore, uuidParams } from './dashboardSteps.ts';

export function dashboardTokenRoutes(dash: DashboardRouter, deps: AppDeps): void {
  const { pool } = deps;
  const { root, page, notFound } = dash.steps;

  // ---- API tokens (owners): issue (shown once), list (never the secret), revoke.
  const showTokens = async (
    ctx: DashboardCtx & { state: OfStore },
    status: number,
    extra: { issued?: { token: string; jti: string; scope: TokenScope; name: string | null }; notice?: string; problems?: Record<string, string> } = {},
  ) => {
    const store = ctx.state.store;
    page(ctx, status, tokensPage({ root, viewer: ctx.state.viewer, store, tokens: await listTokens(pool, store.id, deps.now()), ...extra }));
  };
  dash.store.get('/tokens', { can: 'tokens.manage' }, async (ctx) => showTokens(ctx, 200));
  dash.store.post<{ form: TokenForm }>(
    '/tokens',
    { can: 'tokens.manage', form: tokenForm, refused: (ctx, problems) => showTokens(ctx, 400, { problems }) },
    async (ctx) => {
      const { scope = 'full', lifetime = 'never' } = ctx.state.form;
      let name: string | null;
      try {
        name = tokenName(ctx.state.form.name);
      } catch (error) {
        if (!(error instanceof FormProblem)) throw error;
        return showTokens(ctx, 400, { problems: { name: `The name is too long or has control characters: ${error.message}.` } });
      }
      const issued = await issueStoreToken(pool, ctx.state.store.id, { lifetime, scope, name }, ctx.state.actor, deps.now());
      // Answered with the page itself, never a redirect: the token is in this one answer only.
      await showTokens(ctx, 201, { issued: { token: issued.token, jti: issued.jti, scope: issued.scope, name: issued.name } });
    },
  );
  dash.store.post<{ params: { jti: string } }>('/tokens/:jti/revoke', { can: 'tokens.manage', params: uuidParams('jti'), form: emptyForm }, async (ctx) => {
    const jti = ctx.state.params.jti;
    if (!(await revokeStoreToken(pool, ctx.state.store.id, jti, ctx.state.actor, deps.now()))) return notFound(ctx);
    await showTokens(ctx, 200, { notice: `Token ${jti} revoked: requests with it are refused from now on.` });
  });
}
