// Issuing and revoking API tokens with their audit row, for the dashboard's API tokens page and for
// `kassa token issue` / `kassa token revoke` (actor "cli"): auth/tokens.ts's issueToken and
// revokeToken and the audit row in one transaction. A store's tokens are listed by listTokens, as
// by `kassa token list` (never their secret: Kassa keeps only the jti; scope and last use included).
import { issueToken, revokeToken, type IssuedToken } from '../auth/tokens.ts';
import type { TokenScope } from '../auth/scopes.ts';
import { sql, z, type DatabasePool } from '../db/pool.ts';
import { isUuid } from '../uuid.ts';
import { type Actor, recordAudit } from './audit.ts';

/** The lifetimes the page offers (seconds; null: never expires). */
export const TOKEN_LIFETIMES: Readonly<Record<TokenLifetime, { label: string; seconds: number | null }>> = {
  never: { label: 'never expires', seconds: null },
  '30d': { label: '30 days', seconds: 30 * 86_400 },
  '90d': { label: '90 days', seconds: 90 * 86_400 },
  '365d': { label: '1 year', seconds: 365 * 86_400 },
};

/** The lifetimes' names, as the form's schema lists them. */
export const TOKEN_LIFETIME_NAMES = ['never', '30d', '90d', '365d'] as const;
type TokenLifetime = (typeof TOKEN_LIFETIME_NAMES)[number];

/** Issues a token of the store (audited: token.issue, with its expiry, scope and name). */
export async function issueAuditedToken(
  pool: DatabasePool,
  input: { storeId: string; expiresInSeconds: number | null; scope: TokenScope; name?: string | null },
  actor: Actor,
  now: Date,
): Promise<IssuedToken> {
  return pool.transaction(async (tx) => {
    const issued = await issueToken(tx, input.storeId, input.expiresInSeconds, now, input.scope, input.name ?? null);
    await recordAudit(
      tx,
      actor,
      {
        storeId: input.storeId,
        action: 'token.issue',
        subject: issued.jti,
        detail: { expiresAt: issued.expiresAt, scope: issued.scope, ...(issued.name === null ? {} : { name: issued.name }) },
      },
      now,
    );
    return issued;
  });
}

/** The dashboard's form: a lifetime of TOKEN_LIFETIMES (its schema refuses any other name) and a name (checked: auth/tokens.ts tokenName). */
export async function issueStoreToken(
  pool: DatabasePool,
  storeId: string,
  form: { lifetime: TokenLifetime; scope: TokenScope; name: string | null },
  actor: Actor,
  now: Date,
): Promise<IssuedToken> {
  const seconds = TOKEN_LIFETIMES[form.lifetime].seconds;
  return issueAuditedToken(pool, { storeId, expiresInSeconds: seconds, scope: form.scope, name: form.name }, actor, now);
}

/**
 * Revokes a token (audited: token.revoke, under the token's store). With `storeId`, only a token of
 * that store (the dashboard's page). False when there is no such token.
 */
export async function revokeAuditedToken(pool: DatabasePool, jti: string, actor: Actor, now: Date, options: { storeId?: string } = {}): Promise<boolean> {
  if (!isUuid(jti)) return false;
  const id = jti.toLowerCase();
  return pool.transaction(async (tx) => {
    const storeId = await tx.maybeOneFirst(sql.type(z.object({ store_id: z.string() }))`select store_id from api_tokens where jti = ${id} for update`);
    if (storeId === null || (options.storeId !== undefined && storeId !== options.storeId)) return false;
    await revokeToken(tx, id, now);
    await recordAudit(tx, actor, { storeId, action: 'token.revoke', subject: id }, now);
    return true;
  });
}

/** Revokes the store's token (audited); false when the store has no such token. */
export const revokeStoreToken = (pool: DatabasePool, storeId: string, jti: string, actor: Actor, now: Date): Promise<boolean> =>
  revokeAuditedToken(pool, jti, actor, now, { storeId });
