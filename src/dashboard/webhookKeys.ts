// The webhook signing keys as the dashboard's Webhooks page shows them (kid, created, retired) and
// their rotation by a store's owner: the command `kassa keys rotate` runs (webhooks/keys.ts
// rotateSigningKey, whose rule — at most one per ROTATION_MIN_INTERVAL_MS — the CLI meets too), with
// the audit row in the same transaction. The key set is the deployment's: it signs every store's
// webhooks; a rotation is harmless to receivers (the old key stays published
// RETIRED_KEY_PUBLISHED_MS and receivers refetch on an unknown kid).
import type { DatabasePool, Db } from '../db/pool.ts';
import { publishedKeys, RETIRED_KEY_PUBLISHED_MS, RotationTooSoon, rotateSigningKey } from '../webhooks/keys.ts';
import { type Actor, recordAudit } from './audit.ts';
import { FormProblem } from '../errors.ts';

export interface WebhookKeyRow {
  kid: string;
  created_at: Date;
  retired_at: Date | null;
}

/** The signing keys still published (the active one and those retired less than 24 hours ago), newest first. */
export async function listWebhookKeys(db: Db, now: Date): Promise<readonly WebhookKeyRow[]> {
  return (await publishedKeys(db, now)).map((key) => ({ kid: key.kid, created_at: key.createdAt, retired_at: key.retiredAt }));
}

/** When a retired key leaves the published key set. */
export const publishedUntil = (retiredAt: Date): Date => new Date(retiredAt.getTime() + RETIRED_KEY_PUBLISHED_MS);

/**
 * Rotates the signing key for an owner of `storeId`, audited (webhook_key.rotate) in the same
 * transaction. FormProblem when the command refuses (RotationTooSoon: nothing changes).
 */
export async function rotateWebhookKey(pool: DatabasePool, actor: Actor, storeId: string, now: Date): Promise<string> {
  try {
    return await pool.transaction(async (tx) => {
      const kid = await rotateSigningKey(tx, now);
      await recordAudit(tx, actor, { storeId, action: 'webhook_key.rotate', subject: kid, detail: {} }, now);
      return kid;
    });
  } catch (error) {
    if (error instanceof RotationTooSoon) throw new FormProblem(error.message);
    throw error;
  }
}
