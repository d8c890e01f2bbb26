// The Webhooks page's endpoint actions (issue 29), owners only: add an endpoint, send it a test event,
// redeliver one of its deliveries, delete it — each a command of dashboard/webhookEndpoints.ts (the
// API's own, audited), then a redirect back to the page with a notice; a refused form shows the page
// again with its problem. Steps as everywhere in the dashboard (dashboardSteps.ts).
import type Router from '@koa/router';
import { FormProblem } from '../../dashboard/people.ts';
import { addEndpoint, readEndpointForm, redeliverEndpointDelivery, removeEndpoint, testEndpoint } from '../../dashboard/webhookEndpoints.ts';
import type { EndpointForm, EndpointNotice } from '../../dashboard/webhooksPage.ts';
import { isUuid } from '../../uuid.ts';
import type { AppDeps, KassaState } from '../context.ts';
import type { DashboardCtx, DashboardSteps } from './dashboardSteps.ts';

export type ShowWebhooks = (ctx: DashboardCtx, status: number, extra?: { notice?: string; problem?: string; endpointForm?: EndpointForm }) => Promise<void>;

export function dashboardEndpointRoutes(router: Router<KassaState>, deps: AppDeps, steps: DashboardSteps, showWebhooks: ShowWebhooks): void {
  const { pool, config } = deps;
  const { root, S, redirect, htmlErrors, form, sameOrigin, signedIn, member, owner } = steps;
  const before = [htmlErrors, sameOrigin, form, signedIn, member, owner(null)] as const;
  const back = (ctx: DashboardCtx, notice: EndpointNotice) => redirect(ctx, `${root}/stores/${ctx.state.store!.id}/webhooks?notice=${notice}`);
  /** The path's ids, checked before any query; a FormProblem shows the page again with it. */
  const ids = (ctx: DashboardCtx) => {
    const { endpointId = '', deliveryId = '' } = ctx.params as { endpointId?: string; deliveryId?: string };
    if (!isUuid(endpointId) || (deliveryId !== '' && !isUuid(deliveryId))) throw new FormProblem('That endpoint no longer exists.');
    return { endpointId: endpointId.toLowerCase(), deliveryId: deliveryId.toLowerCase() };
  };
  const refused = (ctx: DashboardCtx, error: unknown, endpointForm?: Omit<EndpointForm, 'problems'>) => {
    if (!(error instanceof FormProblem)) throw error;
    if (endpointForm) return showWebhooks(ctx, 400, { endpointForm: { ...endpointForm, problems: { [error.field ?? 'form']: error.message } } });
    return showWebhooks(ctx, 400, { problem: error.message });
  };

  router.post(`${S}/webhooks/endpoints`, ...before, async (ctx: DashboardCtx) => {
    const input = readEndpointForm(ctx.request.body);
    try {
      await addEndpoint(pool, ctx.state.actor!, ctx.state.store!.id, input, config.webhookAllowInsecure, deps.now());
    } catch (error) {
      return refused(ctx, error, input);
    }
    back(ctx, 'endpoint_added');
  });
  router.post(`${S}/webhooks/endpoints/:endpointId/test`, ...before, async (ctx: DashboardCtx) => {
    try {
      await testEndpoint(pool, ctx.state.actor!, ctx.state.store!.id, ids(ctx).endpointId, deps.now());
    } catch (error) {
      return refused(ctx, error);
    }
    back(ctx, 'test_sent');
  });
  router.post(`${S}/webhooks/endpoints/:endpointId/deliveries/:deliveryId/redeliver`, ...before, async (ctx: DashboardCtx) => {
    try {
      await redeliverEndpointDelivery(pool, ctx.state.actor!, ctx.state.store!.id, ids(ctx), deps.now());
    } catch (error) {
      return refused(ctx, error);
    }
    back(ctx, 'redelivered');
  });
  router.post(`${S}/webhooks/endpoints/:endpointId/delete`, ...before, async (ctx: DashboardCtx) => {
    try {
      await removeEndpoint(pool, ctx.state.actor!, ctx.state.store!.id, ids(ctx).endpointId, deps.now());
    } catch (error) {
      return refused(ctx, error);
    }
    back(ctx, 'endpoint_deleted');
  });
}
