import type Router from '@koa/router';
import { sql } from '../../db/pool.ts';
import { serviceUnavailable } from '../../errors.ts';
import type { AppDeps, KassaState } from '../context.ts';

/** GET /healthz: 200 {"ok": true} once the database answers, 503 otherwise. No auth. */
export function healthRoutes(router: Router<KassaState>, deps: AppDeps): void {
  router.get('/healthz', async (ctx) => {
    try {
      await deps.pool.oneFirst(sql.unsafe`select 1`);
    } catch (error) {
      ctx.state.log.warn({ err: error }, 'health check: database unreachable');
      throw serviceUnavailable();
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { ok: true };
  });
}
