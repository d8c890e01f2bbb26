// The webhook signing keys as the dashboard's Webhooks page shows them (kid, created, retired) and
// their rotation by a store's owner: the command `kassa keys rotate` runs (webhooks/keys.ts
// rotateSigningKey), with the audit row in the same transaction. The key set is the service's: it
// signs every store's webhooks; a rotation is harmless to receivers (the old key stays published
// RETIRED_KEY_PUBLISHED_MS and receivers refetch on an unknown kid), and at most one per
// ROTATION_MIN_INTERVAL_MS keeps the published set small.
import { sql, z, type DatabasePool, type Db } from '../db/pool.ts';
import { publishedKeys, RETIRED_KEY_PUBLISHED_MS, rotateSigningKey } from '../webhooks/keys.ts';
import { type Actor, recordAudit } from './audit.ts';
import { FormProblem } from './people.ts';

/** The youngest an active key may be when the dashboard rotates it. */
export const ROTATION_MIN_INTERVAL_MS = 10 * 60_000;

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
 * transaction. FormProblem when the active key is younger than ROTATION_MIN_INTERVAL_MS (nothing changes).
 */
export async function rotateWebhookKey(pool: DatabasePool, actor: Actor, storeId: string, now: Date): Promise<string> {
  return pool.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`lock table webhook_signing_keys in share row exclusive mode`);
    const active = await tx.maybeOneFirst(sql.type(z.object({ created_at: z.date() }))`
      select created_at from webhook_signing_keys where retired_at is null
    `);
    if (active && now.getTime() - active.getTime() < ROTATION_MIN_INTERVAL_MS) {
      const minutes = Math.ceil((ROTATION_MIN_INTERVAL_MS - (now.getTime() - active.getTime())) / 60_000);
      throw new FormProblem(
        `The active key was made less than ${ROTATION_MIN_INTERVAL_MS / 60_000} minutes ago. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
      );
    }
    const kid = await rotateSigningKey(tx, now);
    await recordAudit(tx, actor, { storeId, action: 'webhook_key.rotate', subject: kid, detail: {} }, now);
    return kid;
  });
}
