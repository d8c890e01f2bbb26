// The Webhooks page's endpoint actions (issue 29), owners only: add an endpoint, send it a test event,
// redeliver one of its deliveries, delete it — each a command of dashboard/webhookEndpoints.ts (the
// API's own, audited), then a redirect back to the page with a notice; a refused form shows the page
// again with its problem. The pipeline is the dashboard router's (dashboardSteps.ts): the path's ids
// (a malformed one names nothing: the not-found page) and the add form (dashboard.schema.ts
// endpointForm: an unknown event type is refused as the API refuses it) are checked before the handler.
import { FormProblem } from '../../errors.ts';
import { addEndpoint, redeliverEndpointDelivery, removeEndpoint, testEndpoint } from '../../dashboard/webhookEndpoints.ts';
import type { EndpointForm, EndpointNotice } from '../../dashboard/webhooksPage.ts';
import { dashboardPaths } from '../../dashboard/paths.ts';
import type { AppDeps } from '../context.ts';
import { type EndpointAddForm, emptyForm, endpointForm } from './dashboard.schema.ts';
import { type DashboardCtx, type DashboardRouter, type OfStore, type Problems, uuidParams } from './dashboardSteps.ts';

type Ctx = DashboardCtx & { state: OfStore };
export type ShowWebhooks = (ctx: Ctx, status: number, extra?: { notice?: string; problem?: string; endpointForm?: EndpointForm }) => Promise<void>;

/** The add form's fields: a problem of any other (an unknown field, say) is the form's own line. */
const ENDPOINT_FIELDS = ['url', 'events'];

export function dashboardEndpointRoutes(dash: DashboardRouter, deps: AppDeps, showWebhooks: ShowWebhooks): void {
  const { pool, config } = deps;
  const { redirect } = dash.steps;
  const paths = dashboardPaths(dash.steps.root);
  const manage = { can: 'webhook_endpoints.manage' } as const;
  const back = (ctx: Ctx, notice: EndpointNotice) => redirect(ctx, paths.store(ctx.state.store.id).webhooks(`notice=${notice}`));
  /** The add form as typed, to show it again with its problems (the page checks only the types it lists). */
  const typed = (ctx: DashboardCtx, problems: Problems): EndpointForm => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const events = [body.events].flat().filter((value): value is string => typeof value === 'string');
    const keyed = Object.entries(problems).map(([field, text]) => [ENDPOINT_FIELDS.includes(field) ? field : 'form', text]);
    return { url: typeof body.url === 'string' ? body.url.trim() : '', events, problems: Object.fromEntries(keyed) };
  };
  /** A command's refusal: the page again with its problem (beside the add form's field when it names one). */
  const refused = (ctx: Ctx, error: unknown, adding = false) => {
    if (!(error instanceof FormProblem)) throw error;
    if (adding) return showWebhooks(ctx, 400, { endpointForm: typed(ctx, { [error.field ?? 'form']: error.message }) });
    return showWebhooks(ctx, 400, { problem: error.message });
  };

  dash.store.post<{ form: EndpointAddForm }>(
    '/webhooks/endpoints',
    { ...manage, form: endpointForm, refused: (ctx, problems) => showWebhooks(ctx, 400, { endpointForm: typed(ctx, problems) }) },
    async (ctx) => {
      const { url = '', events = [] } = ctx.state.form;
      try {
        await addEndpoint(pool, ctx.state.actor, ctx.state.store.id, { url, events: [events].flat() }, config.webhookAllowInsecure, deps.now());
      } catch (error) {
        return refused(ctx, error, true);
      }
      back(ctx, 'endpoint_added');
    },
  );
  const endpointParams = { params: uuidParams('endpointId'), form: emptyForm };
  dash.store.post<{ params: { endpointId: string } }>('/webhooks/endpoints/:endpointId/test', { ...manage, ...endpointParams }, async (ctx) => {
    try {
      await testEndpoint(pool, ctx.state.actor, ctx.state.store.id, ctx.state.params.endpointId, deps.now());
    } catch (error) {
      return refused(ctx, error);
    }
    back(ctx, 'test_sent');
  });
  dash.store.post<{ params: { endpointId: string; deliveryId: string } }>(
    '/webhooks/endpoints/:endpointId/deliveries/:deliveryId/redeliver',
    { ...manage, params: uuidParams('endpointId', 'deliveryId'), form: emptyForm },
    async (ctx) => {
      try {
        await redeliverEndpointDelivery(pool, ctx.state.actor, ctx.state.store.id, ctx.state.params, deps.now());
      } catch (error) {
        return refused(ctx, error);
      }
      back(ctx, 'redelivered');
    },
  );
  dash.store.post<{ params: { endpointId: string } }>('/webhooks/endpoints/:endpointId/delete', { ...manage, ...endpointParams }, async (ctx) => {
    try {
      await removeEndpoint(pool, ctx.state.actor, ctx.state.store.id, ctx.state.params.endpointId, deps.now());
    } catch (error) {
      return refused(ctx, error);
    }
    back(ctx, 'endpoint_deleted');
  });
}
