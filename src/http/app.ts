// The Koa application: one pipeline for the merchant API, the public checkout endpoints and,
// in sandbox, the emulated chain.
import Koa from 'koa';
import Router from '@koa/router';
import { ApiError } from '../errors.ts';
import type { AppDeps, KassaState } from './context.ts';
import { createGuards, errorEnvelope, jsonBody, requestLogging, type Guards } from './middleware.ts';
import { healthRoutes } from './routes/health.ts';
import { paymentMethodRoutes } from './routes/paymentMethods.ts';
import { paymentRoutes } from './routes/payments.ts';
import { openApiRoutes } from './openapi.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { checkoutRoutes } from '../checkout/routes.ts';

export type RouteInstaller = (router: Router<KassaState>, deps: AppDeps, guards: Guards) => void;

/** Route groups, in order. Each later capability adds its installer here. */
const ROUTES: RouteInstaller[] = [healthRoutes, metricsRoutes, openApiRoutes, paymentMethodRoutes, paymentRoutes, checkoutRoutes];

export function createApp(deps: AppDeps, extraRoutes: RouteInstaller[] = []): Koa<KassaState> {
  const app = new Koa<KassaState>();
  app.silent = true;
  // Behind a reverse proxy, the client address (per-client rate limits) comes from X-Forwarded-For.
  app.proxy = deps.config.trustProxy;
  const router = new Router<KassaState>();
  const guards = createGuards(deps);
  for (const install of [...ROUTES, ...extraRoutes]) install(router, deps, guards);

  app.use(requestLogging(deps));
  app.use(errorEnvelope());
  app.use(async (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    await next();
  });
  app.use(jsonBody());
  app.use(router.routes());
  app.use(
    router.allowedMethods({
      throw: true,
      methodNotAllowed: () => new ApiError('invalid_request_error', 'method_not_allowed', 'This route does not accept that HTTP method.'),
      notImplemented: () => new ApiError('invalid_request_error', 'method_not_allowed', 'This HTTP method is not supported.'),
    }),
  );
  return app;
}
