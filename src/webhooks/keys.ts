// Webhook signing keys: one active key signs; a retired key stays published for 24 hours so that
// receivers with a cached key set refetch on the new kid and still verify in-flight retries.
// Key material and kid format come from sign.ts (generateSigningKey); this module only stores them.
// A rotation's rule lives here, in the one command that `kassa keys rotate` and the dashboard's
// Webhooks page (an owner's rotation, dashboard/webhookKeys.ts) both run: at most one per
// ROTATION_MIN_INTERVAL_MS, which keeps the published key set small (the key set is the
// deployment's: it signs every store's webhooks; a rotation is harmless to receivers, who refetch
// on an unknown kid while the retired key stays published RETIRED_KEY_PUBLISHED_MS).
import { sql, z, type DatabasePool, type DatabaseTransactionConnection, type Db } from '../db/pool.ts';
import { generateSigningKey, type SigningKey } from './sign.ts';

export const RETIRED_KEY_PUBLISHED_MS = 24 * 60 * 60 * 1000;

/** The youngest an active key may be when it is rotated (by the CLI or the dashboard alike). */
export const ROTATION_MIN_INTERVAL_MS = 10 * 60_000;

/** A rotation refused: the active key is younger than ROTATION_MIN_INTERVAL_MS (nothing changed). */
export class RotationTooSoon extends Error {
  override name = 'RotationTooSoon';
  readonly retryAt: Date;
  constructor(retryAt: Date, now: Date) {
    const minutes = Math.ceil((retryAt.getTime() - now.getTime()) / 60_000);
    super(`The active key was made less than ${ROTATION_MIN_INTERVAL_MS / 60_000} minutes ago. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`);
    this.retryAt = retryAt;
  }
}

/**
 * Makes a new key the active one and retires the previous active key (in the caller's transaction,
 * if given). Returns the new kid. RotationTooSoon when the active key is younger than ROTATION_MIN_INTERVAL_MS.
 */
export async function rotateSigningKey(pool: DatabasePool | DatabaseTransactionConnection, now: Date): Promise<string> {
  const { kid, publicKey, secretKey } = generateSigningKey(now);
  await pool.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`lock table webhook_signing_keys in share row exclusive mode`);
    const active = await tx.maybeOneFirst(sql.type(z.object({ created_at: z.date() }))`
      select created_at from webhook_signing_keys where retired_at is null
    `);
    const retryAt = active === null ? null : new Date(active.getTime() + ROTATION_MIN_INTERVAL_MS);
    if (retryAt !== null && now < retryAt) throw new RotationTooSoon(retryAt, now);
    await tx.query(sql.typeAlias('void')`update webhook_signing_keys set retired_at = ${sql.timestamp(now)} where retired_at is null`);
    await tx.query(sql.typeAlias('void')`
      insert into webhook_signing_keys (kid, public_key, secret_key, created_at)
      values (${kid}, ${sql.binary(Buffer.from(publicKey))}, ${sql.binary(Buffer.from(secretKey))}, ${sql.timestamp(now)})
    `);
  });
  return kid;
}

const keyRow = z.object({ kid: z.string(), public_key: z.instanceof(Buffer), secret_key: z.instanceof(Buffer) });

/** The active signing key, created on first use. */
export async function activeSigningKey(pool: DatabasePool, now: Date): Promise<SigningKey> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const row = await pool.maybeOne(sql.type(keyRow)`select kid, public_key, secret_key from webhook_signing_keys where retired_at is null`);
    if (row) return { kid: row.kid, publicKey: new Uint8Array(row.public_key), secretKey: new Uint8Array(row.secret_key) };
    try {
      await rotateSigningKey(pool, now);
    } catch {
      // Another process created the first key at the same moment (RotationTooSoon, or the unique kid); read it.
    }
  }
  throw new Error('no active webhook signing key could be created');
}

/** Keys to publish: the active one and those retired less than 24 hours ago, newest first (also the dashboard's key list). */
export async function publishedKeys(db: Db, now: Date): Promise<Array<{ kid: string; publicKey: Uint8Array; createdAt: Date; retiredAt: Date | null }>> {
  const rows = await db.any(sql.type(z.object({ kid: z.string(), public_key: z.instanceof(Buffer), created_at: z.date(), retired_at: z.date().nullable() }))`
    select kid, public_key, created_at, retired_at from webhook_signing_keys
    where retired_at is null or retired_at > ${sql.timestamp(new Date(now.getTime() - RETIRED_KEY_PUBLISHED_MS))}
    order by created_at desc
  `);
  return rows.map((row) => ({ kid: row.kid, publicKey: new Uint8Array(row.public_key), createdAt: row.created_at, retiredAt: row.retired_at }));
}
