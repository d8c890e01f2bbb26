// GET /metrics (Prometheus). With METRICS_TOKEN set it needs `Authorization: Bearer <token>`;
// without, it answers only clients on loopback (scrape from the same host or through a sidecar)
// whose request was not forwarded by a proxy: a reverse proxy on the same host connects from
// loopback too. With TRUST_PROXY on, METRICS_TOKEN is required (config.ts).
import crypto from 'node:crypto';
import type Router from '@koa/router';
import { routeNotFound } from '../../errors.ts';
import { registry, useDatabaseForMetrics } from '../../metrics.ts';
import type { AppDeps, KassaState } from '../context.ts';
import type { Guards } from '../guards.ts';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);
/** Headers a proxy adds: a request that carries one came from elsewhere, whatever the socket says. */
const FORWARDED = ['x-forwarded-for', 'forwarded', 'x-real-ip', 'via'];

function sameSecret(given: string, expected: string): boolean {
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}

export function metricsRoutes(router: Router<KassaState>, deps: AppDeps, _guards: Guards): void {
  router.get('/metrics', async (ctx) => {
    const token = deps.config.metricsToken;
    const allowed = token
      ? sameSecret(ctx.get('Authorization'), `Bearer ${token}`)
      : LOOPBACK.has(ctx.req.socket.remoteAddress ?? '') && !FORWARDED.some((name) => ctx.req.headers[name] !== undefined);
    // Unauthorised scrapers see nothing there, as for any unknown route.
    if (!allowed) throw routeNotFound('GET', ctx.path);
    useDatabaseForMetrics(deps.pool);
    ctx.set('Content-Type', registry.contentType);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await registry.metrics();
  });
}
