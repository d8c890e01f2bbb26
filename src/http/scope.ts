// The step that names what a merchant route does, on the route's own line after its guard:
// `router.post('/v1/payments/:id/refunds', guards.merchant, needs('change'), guards.storeLimit, …)`.
// The decision is src/auth/scopes.ts's; a token outside its scope is answered 403 insufficient_scope.
import type { Middleware } from 'koa';
import { checkScope, type ScopeNeed } from '../auth/scopes.ts';
import type { KassaState } from './context.ts';

/** Marks a route's `needs(…)` step: its value is the need (read by test/http/token-scopes.test.ts, which walks the router). */
export const SCOPE_NEED = Symbol('API scope need');

export function needs(need: ScopeNeed): Middleware<KassaState> {
  const step: Middleware<KassaState> = async (ctx, next) => {
    const scope = ctx.state.merchant?.token.scope;
    if (scope === undefined) throw new Error(`needs('${need}') runs behind a merchant guard, which sets ctx.state.merchant`);
    checkScope(scope, need);
    await next();
  };
  return Object.assign(step, { [SCOPE_NEED]: need });
}
