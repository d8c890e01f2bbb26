// Bearer authentication of the merchant API (docs/API.md, Authentication).
import type { Middleware } from 'koa';
import { authenticate, checkTokenRow, noteTokenUse, verifyToken, type TokenCheck } from '../auth/tokens.ts';
import { authInvalid, rateLimited } from '../errors.ts';
import type { AppDeps, KassaState } from './context.ts';
import { createRateLimiter, type RateLimiter } from './rateLimit.ts';

// The scheme name is case-insensitive (RFC 9110 §11.1); the token is taken as sent.
const BEARER = /^Bearer +([A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*)$/i;

/**
 * Bearer JWT authentication; every failure is the same 401 auth_invalid. Each signature
 * verification takes a token from the client address's failure budget (RATE_LIMIT_PER_CLIENT per
 * second, bursts of twice that) and a successful one gives it back: a client whose tokens keep
 * failing is answered 429 before any further verification, so a flood of forged tokens cannot make
 * the API spend its CPU on Ed25519 — taken before verifying, the budget also holds for requests
 * that arrive at once. Tokens this process has verified before need no verification and pass.
 *
 * `inline`: the token's database check (revoked? expired? docs/API.md, Authentication: "refused at once") is left
 * to the route, which makes it in its own first statement (`tokenValidSql`) and marks
 * `ctx.state.tokenCheck.checked`; a route that writes must make it before its first write commits.
 * Whatever answer the route did not check the token for — a replay, any error, a 429 of the store's
 * rate limit — is preceded by the ordinary check here, so a refused token is still refused first.
 */
export function requireStore(deps: AppDeps, options: { inline?: boolean; failures?: RateLimiter | null } = {}): Middleware<KassaState> {
  const failures =
    options.failures !== undefined ? options.failures : deps.config.rateLimitPerClient > 0 ? createRateLimiter(deps.config.rateLimitPerClient) : null;
  return async (ctx, next) => {
    const match = BEARER.exec(ctx.get('Authorization'));
    if (!match) throw authInvalid();
    const client = `auth-failures:${ctx.ip}`;
    const now = deps.now();
    const hooks = {
      beforeVerifying: async () => {
        const budget = await failures?.take(client, deps.now().getTime());
        if (budget && !budget.allowed) throw rateLimited(budget.retryAfterSeconds);
      },
      verified: async () => {
        await failures?.refund(client);
      },
    };
    if (!options.inline) {
      const { storeId, jti } = await authenticate(deps.pool, match[1]!, now, hooks);
      ctx.state.storeId = storeId;
      await noteTokenUse(deps.pool, jti, now);
      await next();
      return;
    }
    const token = await verifyToken(deps.pool, match[1]!, now, hooks);
    const check: TokenCheck = { token, now, checked: false };
    ctx.state.storeId = token.storeId;
    ctx.state.tokenCheck = check;
    try {
      await next();
    } catch (error) {
      if (!check.checked) await checkTokenRow(deps.pool, token, now);
      await noteTokenUse(deps.pool, token.jti, now);
      throw error;
    }
    if (!check.checked) {
      try {
        await checkTokenRow(deps.pool, token, now);
      } catch (error) {
        ctx.remove('Idempotent-Replayed');
        throw error;
      }
    }
    await noteTokenUse(deps.pool, token.jti, now);
  };
}
