// Bearer authentication of the merchant API (docs/API.md, Authentication).
import type { Middleware } from 'koa';
import { checkTokenRow, noteTokenUse, type TokenCheck, verifyToken } from '../auth/tokens.ts';
import { isDatabaseUnavailable } from '../db/pool.ts';
import { authInvalid, KassaError, rateLimited } from '../errors.ts';
import type { AppDeps, KassaState } from './context.ts';
import { createRateLimiter, type RateLimiter } from './rateLimit.ts';

// The scheme name is case-insensitive (RFC 9110 §11.1); the token is taken as sent.
const BEARER = /^Bearer +([A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*)$/i;

/**
 * Bearer JWT authentication; every failure is the same 401 auth_invalid. The token's signature and
 * claims, then its database row (known, of its store, not revoked, not expired: refused at once);
 * `ctx.state.merchant` says who called. Each signature verification takes a token from the client
 * address's failure budget (RATE_LIMIT_PER_CLIENT per second, bursts of twice that) and a
 * successful one gives it back: a client whose tokens keep failing is answered 429 before any
 * further verification, so a flood of forged tokens cannot make the API spend its CPU on Ed25519 —
 * taken before verifying, the budget also holds for requests that arrive at once. Tokens this
 * process has verified before need no verification and pass. What a route requires of the token
 * beyond it (a scope) is a step after it that reads `ctx.state.merchant.token`.
 *
 * `inline` (`Guards.merchantInline`, for create, retrieve and status): the token's database check is
 * left to the route's first statement — the store's payment (`findStorePayment`) or the create's
 * catalogue read (`draftFromPayment`) — which makes it in the same round trip and marks
 * `ctx.state.tokenCheck.checked`; a route that writes must make it before its first write commits.
 * A shortcut kept for what it buys: one round trip of a retrieve's two and of a create's seven; with
 * one mode only (and the view parsed by zod) Kassa spent a median 36 % more CPU per retrieve and 33 %
 * per create in the same bench/api runs (docs/PERFORMANCE.md, issue 23), past the 10 % allowed. Whatever answer the route did not check the token for — a replay, any error,
 * a 429 of the store's rate limit — is preceded by the ordinary check here, so a refused token is
 * still refused first. A token the database refused gives back what its request took of the store's
 * rate limit (`giveBackLimit`, set by the limit's step), and this process refuses it from memory
 * from then on (`verifyToken`): a leaked, revoked token cannot keep its store at 429.
 */
export function requireStore(deps: AppDeps, options: { inline?: boolean; failures?: RateLimiter | null } = {}): Middleware<KassaState> {
  const failures =
    options.failures !== undefined ? options.failures : deps.config.rateLimitPerClient > 0 ? createRateLimiter(deps.config.rateLimitPerClient) : null;
  return async (ctx, next) => {
    const match = BEARER.exec(ctx.get('Authorization'));
    if (!match) throw authInvalid();
    const client = `auth-failures:${ctx.ip}`;
    const now = deps.now();
    const token = await verifyToken(deps.pool, match[1]!, now, {
      beforeVerifying: async () => {
        const budget = await failures?.take(client, deps.now().getTime());
        if (budget && !budget.allowed) throw rateLimited(budget.retryAfterSeconds);
      },
      verified: async () => {
        await failures?.refund(client);
      },
    });
    ctx.state.merchant = { storeId: token.storeId, token };
    if (!options.inline) {
      // Checked before the rate limit: a refused token spends nothing of its store's.
      await checkTokenRow(deps.pool, token, now);
      noteTokenUse(deps.pool, token.jti, now);
      await next();
      return;
    }
    const check: TokenCheck = { token, now, checked: false };
    ctx.state.tokenCheck = check;
    // The route's steps ran before its token was checked: a refusal gives back what the request
    // took of the store's rate limit (docs/API.md, Rate limits: a refused token does not count).
    const refuse = async (refusal: unknown): Promise<never> => {
      await ctx.state.giveBackLimit?.();
      throw refusal;
    };
    try {
      await next();
    } catch (error) {
      // The database did not answer: the request answers 503 now, not after a second wait for the
      // token's row (docs/OPERATIONS.md: every request answers within one statement bound).
      if (!check.checked && !isDatabaseUnavailable(error)) await checkTokenRow(deps.pool, token, now).catch(refuse);
      if (error instanceof KassaError && error.code === 'auth_invalid') await refuse(error);
      noteTokenUse(deps.pool, token.jti, now);
      throw error;
    }
    if (!check.checked) {
      try {
        await checkTokenRow(deps.pool, token, now);
      } catch (error) {
        ctx.remove('Idempotent-Replayed');
        await refuse(error);
      }
    }
    noteTokenUse(deps.pool, token.jti, now);
  };
}
