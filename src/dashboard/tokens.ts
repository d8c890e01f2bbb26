// The API tokens page: a store's tokens (never their secret: Kassa keeps only the jti), issue and
// revoke through the same functions as `kassa token issue` and `kassa token revoke`, each written
// to the audit log in the same transaction.
import { issueToken, revokeToken, type IssuedToken } from '../auth/tokens.ts';
import { sql, z, type Db, type DatabasePool } from '../db/pool.ts';
import { isUuid } from '../uuid.ts';
import { type Actor, recordAudit } from './audit.ts';

export const tokenRow = z.object({ jti: z.string(), issued_at: z.date(), expires_at: z.date().nullable(), revoked_at: z.date().nullable() });
export type TokenRow = z.infer<typeof tokenRow>;

/** The lifetimes the page offers (seconds; null: never expires). */
export const TOKEN_LIFETIMES: Readonly<Record<string, { label: string; seconds: number | null }>> = {
  never: { label: 'never expires', seconds: null },
  '30d': { label: '30 days', seconds: 30 * 86_400 },
  '90d': { label: '90 days', seconds: 90 * 86_400 },
  '365d': { label: '1 year', seconds: 365 * 86_400 },
};

export async function tokensOf(db: Db, storeId: string): Promise<readonly TokenRow[]> {
  return db.any(sql.type(tokenRow)`
    select jti, issued_at, expires_at, revoked_at from api_tokens where store_id = ${storeId} order by issued_at desc, jti
  `);
}

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
