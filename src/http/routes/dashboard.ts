// The merchant dashboard at {base_url}/dashboard (issue 24): server-rendered pages for the people of
// a store, signed in with a session cookie (never a bearer token in a page). Routes are registered
// through the dashboard's router (dashboardSteps.ts), which installs the pipeline once: error
// pages, the per-client limit, the same-origin check and the form parser on every non-GET, the
// stage (anyone, signedIn, store, payment), the policy's `can`, and the forms' and query strings'
// schemas (dashboard.schema.ts, the API's own where the API has the field). Each area has its own
// file, registered here in order (dashboardSignIn.ts, dashboardPayments.ts, dashboardTeam.ts,
// dashboardTokens.ts, dashboardMoney.ts, …); this one keeps the stores page, the audit log, the
// assets and the not-found page, registered last. The area files' actions call the very commands the
// API calls (dashboardPayments.ts: createRefund, redeliverWebhook) in a transaction that also writes
// the audit log.
import type Router from '@koa/router';
import { listAudit } from '../../dashboard/audit.ts';
import { auditPage, storesPage } from '../../dashboard/pages.ts';
import { dashboardPaths } from '../../dashboard/paths.ts';
import { DASHBOARD_ASSETS } from '../../dashboard/static.ts';
import { serveAssets } from '../../web/assets.ts';
import type { AppDeps, KassaState } from '../context.ts';
import type { Guards } from '../guards.ts';
import { type AuditQuery, auditQuery } from './dashboard.schema.ts';
import { DASHBOARD_PATH, dashboardRouter } from './dashboardSteps.ts';
import { dashboardLinkRoutes } from './dashboardLinks.ts';
import { dashboardMoneyRoutes } from './dashboardMoney.ts';
import { dashboardNotificationRoutes } from './dashboardNotifications.ts';
import { dashboardPasskeysRoutes } from './dashboardPasskeys.ts';
import { dashboardPasswordRoutes } from './dashboardPassword.ts';
import { dashboardPaymentRoutes } from './dashboardPayments.ts';
import { dashboardSettingsRoutes } from './dashboardSettings.ts';
import { dashboardSetupRoutes } from './dashboardSetup.ts';
import { dashboardSignInRoutes } from './dashboardSignIn.ts';
import { dashboardSubscriptionRoutes } from './dashboardSubscriptions.ts';
import { dashboardTeamRoutes } from './dashboardTeam.ts';
import { dashboardTokenRoutes } from './dashboardTokens.ts';
import { dashboardUnmatchedRoutes } from './dashboardUnmatched.ts';

export const isDashboardPath = (path: string): boolean => path === DASHBOARD_PATH || path.startsWith(`${DASHBOARD_PATH}/`);

export function dashboardRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards): void {
  const { pool } = deps;
  const dash = dashboardRouter(router, deps, guards);
  const { root, page, notFound, redirect } = dash.steps;
  const paths = dashboardPaths(root);

  // ---- Assets.
  dash.anyone.get('/assets/:file', serveAssets(DASHBOARD_ASSETS) as never);

  // ---- First-run setup and an owner's new store (before sign-in and the stores page: while Kassa is not set up, they lead to it).
  dashboardSetupRoutes(dash, deps);

  // ---- Sign-in, a forgotten password, sign-out, invitations.
  dashboardSignInRoutes(dash, deps);

  // ---- The stores the person may open.
  // The app's router is strict: /dashboard (the address README gives) goes to /dashboard/.
  dash.anyone.get('', async (ctx) => redirect(ctx, paths.home));
  dash.signedIn.get('/', async (ctx) => {
    const memberships = ctx.state.viewer.memberships;
    if (memberships.length === 1) return redirect(ctx, paths.store(memberships[0]!.storeId).home());
    page(ctx, 200, storesPage({ root, viewer: ctx.state.viewer }));
  });

  // ---- Payments (the list, a payment's page and its actions), the team, API tokens.
  dashboardPaymentRoutes(dash, deps);
  dashboardTeamRoutes(dash, deps);
  dashboardTokenRoutes(dash, deps);

  // ---- Audit log (owners).
  dash.store.get<{ query: AuditQuery }>('/audit', { can: 'audit.read', query: auditQuery }, async (ctx) => {
    const { before } = ctx.state.query;
    const { rows, hasMore } = await listAudit(pool, ctx.state.store.id, { limit: 100, ...(before ? { beforeId: before } : {}) });
    page(ctx, 200, auditPage({ root, viewer: ctx.state.viewer, store: ctx.state.store, rows, hasMore }));
  });

  dashboardMoneyRoutes(dash, deps);
  dashboardLinkRoutes(dash, deps);
  dashboardSubscriptionRoutes(dash, deps);
  dashboardUnmatchedRoutes(dash, deps);
  dashboardNotificationRoutes(dash, deps);
  dashboardSettingsRoutes(dash, deps);
  dashboardPasskeysRoutes(dash, deps);
  dashboardPasswordRoutes(dash, deps);

  // Anything else under the dashboard: its own 404 page.
  dash.anyone.all('/{*rest}', { withoutOriginCheck: 'changes nothing: answers the not-found page' }, async (ctx) => notFound(ctx));
}
