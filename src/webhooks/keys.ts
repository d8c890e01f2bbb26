// Webhook signing keys: one active key signs; a retired key stays published for 24 hours so that
// receivers with a cached key set refetch on the new kid and still verify in-flight retries.
// Key material and kid format come from sign.ts (generateSigningKey); this module only stores them.
import { sql, z, type DatabasePool, type DatabaseTransactionConnection, type Db } from '../db/pool.ts';
import { generateSigningKey, type SigningKey } from './sign.ts';

export type { SigningKey };

export const RETIRED_KEY_PUBLISHED_MS = 24 * 60 * 60 * 1000;

/** Makes a new key the active one and retires the previous active key (in the caller's transaction, if given). Returns the new kid. */
export async function rotateSigningKey(pool: DatabasePool | DatabaseTransactionConnection, now: Date): Promise<string> {
  const { kid, publicKey, secretKey } = generateSigningKey(now);
  await pool.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`lock table webhook_signing_keys in share row exclusive mode`);
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
      // Another process created the first key at the same moment; read it.
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
