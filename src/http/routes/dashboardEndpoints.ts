// The Webhooks page's endpoint actions (issue 29), owners only: add an endpoint, send it a test event,
// redeliver one of its deliveries, delete it — each a command of dashboard/webhookEndpoints.ts (the
// API's own, audited), then a redirect back to the page with a notice; a refused form shows the page
// again with its problem. The pipeline is the dashboard router's (dashboardSteps.ts).
import { FormProblem } from '../../errors.ts';
import { addEndpoint, readEndpointForm, redeliverEndpointDelivery, removeEndpoint, testEndpoint } from '../../dashboard/webhookEndpoints.ts';
import type { EndpointForm, EndpointNotice } from '../../dashboard/webhooksPage.ts';
import { dashboardPaths } from '../../dashboard/paths.ts';
import { isUuid } from '../../uuid.ts';
import type { AppDeps } from '../context.ts';
import { emptyForm } from './dashboard.schema.ts';
import type { DashboardCtx, DashboardRouter, OfStore } from './dashboardSteps.ts';

type Ctx = DashboardCtx & { state: OfStore };
export type ShowWebhooks = (ctx: Ctx, status: number, extra?: { notice?: string; problem?: string; endpointForm?: EndpointForm }) => Promise<void>;

export function dashboardEndpointRoutes(dash: DashboardRouter, deps: AppDeps, showWebhooks: ShowWebhooks): void {
  const { pool, config } = deps;
  const { redirect } = dash.steps;
  const paths = dashboardPaths(dash.steps.root);
  const manage = { can: 'webhook_endpoints.manage' } as const;
  const back = (ctx: Ctx, notice: EndpointNotice) => redirect(ctx, paths.store(ctx.state.store.id).webhooks(`notice=${notice}`));
  /** The path's ids, checked before any query; a FormProblem shows the page again with it. */
  const ids = (ctx: DashboardCtx) => {
    const { endpointId = '', deliveryId = '' } = ctx.params as { endpointId?: string; deliveryId?: string };
    if (!isUuid(endpointId) || (deliveryId !== '' && !isUuid(deliveryId))) throw new FormProblem('That endpoint no longer exists.');
    return { endpointId: endpointId.toLowerCase(), deliveryId: deliveryId.toLowerCase() };
  };
  const refused = (ctx: Ctx, error: unknown, endpointForm?: Omit<EndpointForm, 'problems'>) => {
    if (!(error instanceof FormProblem)) throw error;
    if (endpointForm) return showWebhooks(ctx, 400, { endpointForm: { ...endpointForm, problems: { [error.field ?? 'form']: error.message } } });
    return showWebhooks(ctx, 400, { problem: error.message });
  };

  dash.store.post('/webhooks/endpoints', manage, async (ctx) => {
    const input = readEndpointForm(ctx.request.body);
    try {
      await addEndpoint(pool, ctx.state.actor, ctx.state.store.id, input, config.webhookAllowInsecure, deps.now());
    } catch (error) {
      return refused(ctx, error, input);
    }
    back(ctx, 'endpoint_added');
  });
  dash.store.post('/webhooks/endpoints/:endpointId/test', { ...manage, form: emptyForm }, async (ctx) => {
    try {
      await testEndpoint(pool, ctx.state.actor, ctx.state.store.id, ids(ctx).endpointId, deps.now());
    } catch (error) {
      return refused(ctx, error);
    }
    back(ctx, 'test_sent');
  });
  dash.store.post('/webhooks/endpoints/:endpointId/deliveries/:deliveryId/redeliver', { ...manage, form: emptyForm }, async (ctx) => {
    try {
      await redeliverEndpointDelivery(pool, ctx.state.actor, ctx.state.store.id, ids(ctx), deps.now());
    } catch (error) {
      return refused(ctx, error);
    }
    back(ctx, 'redelivered');
  });
  dash.store.post('/webhooks/endpoints/:endpointId/delete', { ...manage, form: emptyForm }, async (ctx) => {
    try {
      await removeEndpoint(pool, ctx.state.actor, ctx.state.store.id, ids(ctx).endpointId, deps.now());
    } catch (error) {
      return refused(ctx, error);
    }
    back(ctx, 'endpoint_deleted');
  });
}
