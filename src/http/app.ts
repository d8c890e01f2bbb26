// The Koa application: one pipeline for the merchant API, the public checkout endpoints (a payment
// link's page and a subscription's portal among them), the merchant dashboard and, in sandbox, the
// emulated chain.
import Koa from 'koa';
import Router from '@koa/router';
import { methodNotAllowed, missingHost, routeNotFound } from '../errors.ts';
import type { AppDeps, KassaState } from './context.ts';
import { errorEnvelope } from './errorEnvelope.ts';
import { createGuards, type Guards } from './guards.ts';
import { jsonBody } from './jsonBody.ts';
import { plainText } from './plainText.ts';
import { requestLogging } from './requestLog.ts';
import { healthRoutes } from './routes/health.ts';
import { paymentMethodRoutes } from './routes/paymentMethods.ts';
import { paymentRoutes } from './routes/payments.ts';
import { refundRoutes } from './routes/refunds.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { webhookEndpointRoutes } from './routes/webhookEndpoints.ts';
import { paymentLinkRoutes } from './routes/paymentLinks.ts';
import { subscriptionRoutes } from './routes/subscriptions.ts';
import { sandboxClockRoutes } from './routes/sandboxClock.ts';
import { unmatchedTransferRoutes } from './routes/unmatchedTransfers.ts';
import { openApiRoutes } from './openapi.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { checkoutRoutes } from './routes/checkout.ts';
import { isLinkPagePath } from './routes/checkoutLinks.ts';
import { isPortalPath } from './routes/checkoutPortal.ts';
import { checkoutPrefix } from './routes/checkoutSteps.ts';
import { embedRoutes } from './routes/embed.ts';
import { dashboardRoutes, isDashboardPath } from './routes/dashboard.ts';
import { bodySchemaOf } from './validate.ts';

export type RouteInstaller = (router: Router<KassaState>, deps: AppDeps, guards: Guards) => void;

/** Route groups, in order. Each later capability adds its installer here (tests walk the router they make). */
export const ROUTES: RouteInstaller[] = [
  healthRoutes,
  metricsRoutes,
  openApiRoutes,
  paymentMethodRoutes,
  paymentRoutes,
  refundRoutes,
  webhookRoutes,
  webhookEndpointRoutes,
  paymentLinkRoutes,
  subscriptionRoutes,
  sandboxClockRoutes,
  unmatchedTransferRoutes,
  embedRoutes,
  checkoutRoutes,
  dashboardRoutes,
];

export function createApp(deps: AppDeps, extraRoutes: RouteInstaller[] = []): Koa<KassaState> {
  const app = new Koa<KassaState>();
  app.silent = true;
  // Behind TRUST_PROXY reverse proxies, the client address (per-client rate limits, stream caps)
  // is the one the outermost trusted proxy saw: that many X-Forwarded-For entries from the right.
  // Entries further left were sent by the client and are never read.
  app.proxy = deps.config.trustProxyHops > 0;
  app.maxIpsCount = deps.config.trustProxyHops;
  // Strict: `/v1/payments/` is not `/v1/payments` (404 route_not_found, as the OpenAPI document lists no such path).
  const router = new Router<KassaState>({ strict: true });
  const guards = createGuards(deps);
  for (const install of [...ROUTES, ...extraRoutes]) install(router, deps, guards);

  app.use(requestLogging(deps));
  app.use(errorEnvelope());
  app.use(async (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    // HTTP/1.1 needs a Host header (RFC 9112 §3.2). The server lets such requests through
    // (requireHostHeader: false) so that the refusal is the envelope, not Node's bare 400.
    if (ctx.req.httpVersion === '1.1' && ctx.get('Host') === '') throw missingHost();
    await next();
  });
  // The dashboard's pages, a payment link's page and a subscription's portal post forms, which their own routes parse (koa-body); everything else is the JSON API.
  const linkPrefix = checkoutPrefix(deps.config.checkoutBaseUrl);
  app.use(jsonBody({ except: (path) => isDashboardPath(path) || isLinkPagePath(linkPrefix, path) || isPortalPath(linkPrefix, path) }));
  // A body field's refusal takes the code of the body schema its route validates against.
  app.use(plainText({ bodySchema: (ctx) => bodySchemaOf(router.match(ctx.path, ctx.method).pathAndMethod.flatMap((layer) => layer.stack)) }));
  app.use(router.routes());
  // The router answers 405 (501 for a method it does not know at all) with `Allow`; Kassa answers
  // both as the envelope's 405 method_not_allowed and keeps `Allow` (docs/API.md).
  const allowedMethods = router.allowedMethods();
  app.use(async (ctx, next) => {
    await allowedMethods(ctx as never, next);
    if (ctx.status === 405 || ctx.status === 501) {
      const allow = ctx.response.get('Allow');
      ctx.remove('Allow');
      // No route at this path at all: route_not_found, whatever the method.
      if (allow === '') throw routeNotFound(ctx.method, ctx.path);
      throw methodNotAllowed(allow);
    }
  });
  return app;
}
