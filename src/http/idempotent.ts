// The idempotency step of a route line: `idempotent('POST /v1/payments/:id/cancel', cancel)` reads
// X-Idempotency-Key (400 invalid_idempotency_key when it is not a UUID) and runs the command inside
// the transaction of src/idempotency.ts, which replays the first answer to the same key and body
// for 24 hours (Idempotent-Replayed: true) and refuses another body (idempotency_key_reused).
// The command is the route's last step and gets the transaction itself: slonik re-runs a whole
// transaction callback after a deadlock, which a Koa `next()` could not be called for twice.
import type { ParameterizedContext } from 'koa';
import type { DatabaseTransactionConnection } from '../db/pool.ts';
import { idempotencyKey, idempotent as inIdempotencyTransaction, type Outcome } from '../idempotency.ts';
import type { AppDeps, Authenticated } from './context.ts';

/** What a command answers: the status, the body (serialised once, replayed byte for byte), the payment it concerns. */
export interface CommandResult {
  status: number;
  body: unknown;
  paymentId?: string;
  /** What a replay answers instead of `body`, when `body` carries a secret shown once (kept nowhere): a subscription's portalURL. */
  replayBody?: unknown;
}

type Command<State extends Authenticated> = (tx: DatabaseTransactionConnection, ctx: ParameterizedContext<State>, now: Date) => Promise<CommandResult>;

/**
 * The app's `idempotent(endpoint, command)`. The endpoint scopes the key (with the store); a `:name`
 * in it is the validated path parameter (`POST /v1/payments/:id/cancel` is the payment's own).
 * The body hashed is the validated one (ctx.state.body); `now` is the request's one clock reading.
 */
export function idempotency({ pool, now: clock }: Pick<AppDeps, 'pool' | 'now'>) {
  return <State extends Authenticated>(endpoint: string, command: Command<State>) => {
    // 'POST /v1/payments/:id/cancel' → ['POST /v1/payments/', 'id', '/cancel']: names at odd indexes.
    const parts = endpoint.split(/:(\w+)/);
    const scopeOf = (params: Record<string, string> | undefined): string =>
      parts.length === 1 ? endpoint : parts.map((part, index) => (index % 2 === 1 ? params![part]! : part)).join('');
    return async (ctx: ParameterizedContext<State>): Promise<void> => {
      const key = idempotencyKey(ctx.get('X-Idempotency-Key'));
      ctx.state.now ??= clock();
      const now = ctx.state.now;
      const scope = {
        storeId: ctx.state.merchant.storeId,
        endpoint: scopeOf(ctx.state.params as Record<string, string> | undefined),
        key,
        body: ctx.state.body,
        now,
      };
      answer(ctx, await inIdempotencyTransaction(pool, scope, (tx) => command(tx, ctx, now)));
    };
  };
}

/** Answers with an outcome of src/idempotency.ts: its status and exact body, `Idempotent-Replayed: true` for a replay. */
export function answer(ctx: ParameterizedContext, outcome: Outcome): void {
  ctx.status = outcome.status;
  ctx.type = 'application/json';
  if (outcome.replayed) ctx.set('Idempotent-Replayed', 'true');
  ctx.body = outcome.body;
}
