// The API tokens page: a store's tokens are listed by auth/tokens.ts's listTokens, as by `kassa
// token list` (never their secret: Kassa keeps only the jti; last use included); issue and revoke
// through the same functions as `kassa token issue` and `kassa token revoke`, each written to the
// audit log in the same transaction.
import { issueToken, revokeToken, type IssuedToken } from '../auth/tokens.ts';
import { sql, type DatabasePool } from '../db/pool.ts';
import { isUuid } from '../uuid.ts';
import { type Actor, recordAudit } from './audit.ts';

/** The lifetimes the page offers (seconds; null: never expires). */
export const TOKEN_LIFETIMES: Readonly<Record<string, { label: string; seconds: number | null }>> = {
  never: { label: 'never expires', seconds: null },
  '30d': { label: '30 days', seconds: 30 * 86_400 },
  '90d': { label: '90 days', seconds: 90 * 86_400 },
  '365d': { label: '1 year', seconds: 365 * 86_400 },
};

export async function issueStoreToken(pool: DatabasePool, storeId: string, lifetime: string, actor: Actor, now: Date): Promise<IssuedToken> {
  const seconds = (TOKEN_LIFETIMES[lifetime] ?? TOKEN_LIFETIMES.never!).seconds;
  return pool.transaction(async (tx) => {
    const issued = await issueToken(tx, storeId, seconds, now);
    await recordAudit(tx, actor, { storeId, action: 'token.issue', subject: issued.jti, detail: { expiresAt: issued.expiresAt } }, now);
    return issued;
  });
}

/** Revokes the store's token (audited); false when the store has no such token. */
export async function revokeStoreToken(pool: DatabasePool, storeId: string, jti: string, actor: Actor, now: Date): Promise<boolean> {
  if (!isUuid(jti)) return false;
  return pool.transaction(async (tx) => {
    const ours = await tx.exists(sql.unsafe`select 1 from api_tokens where jti = ${jti.toLowerCase()} and store_id = ${storeId}`);
    if (!ours) return false;
    await revokeToken(tx, jti.toLowerCase(), now);
    await recordAudit(tx, actor, { storeId, action: 'token.revoke', subject: jti.toLowerCase() }, now);
    return true;
  });
}
