import type Router from '@koa/router';
import { sql } from '../../db/pool.ts';
import { serviceUnavailable } from '../../errors.ts';
import type { AppDeps, KassaState } from '../context.ts';

/** How long /healthz waits for the database: a load balancer's check must get an answer (503) it can act on. */
export const HEALTH_TIMEOUT_MS = 1_500;

/**
 * GET /healthz: 200 {"ok": true} once the database answers, 503 otherwise — also when it does not
 * answer within HEALTH_TIMEOUT_MS (a frozen server, a silent partition; the pool's own bounds are longer). No auth.
 */
export function healthRoutes(router: Router<KassaState>, deps: AppDeps): void {
  router.get('/healthz', async (ctx) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        deps.pool.oneFirst(sql.unsafe`select 1`),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`the database did not answer within ${HEALTH_TIMEOUT_MS} ms`)), HEALTH_TIMEOUT_MS);
        }),
      ]);
    } catch (error) {
      ctx.state.log.warn({ err: error }, 'health check: database unreachable');
      throw serviceUnavailable();
    } finally {
      clearTimeout(timer);
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { ok: true };
  });
}
