// What a password change or reset takes away from everyone but the person making it (issue 48
// items 3 and 5), in the transaction that sets the new password: the person's session generation
// is raised (sessions.ts: a session of an older generation is closed on its next request, also one
// whose sign-in checked the old password while this ran), every passkey but the one kept is
// removed (a thief who knew the password may have added one), and the person's open reset links
// die. A change keeps the session that made it and the passkey it was signed in with; a reset keeps
// nothing.
import { sql, z, type Db } from '../db/pool.ts';

interface AccessEnded {
  /** The person's new session generation: the session the change keeps (or the reset opens) carries it. */
  generation: number;
  /** Open sessions ended (the kept one not counted). */
  sessions: number;
  /** The passkeys removed, by id and name (for the audit row and the page). */
  passkeysRemoved: readonly { id: string; name: string }[];
}

export async function endOtherAccess(
  tx: Db,
  input: { userId: string; email: string; keepSessionId?: string | null; keepPasskeyId?: string | null; now: Date },
): Promise<AccessEnded> {
  const { userId, now } = input;
  const keepSession = input.keepSessionId ?? null;
  const keepPasskey = input.keepPasskeyId ?? null;
  const generation = await tx.oneFirst(sql.type(z.object({ session_generation: z.number() }))`
    update dashboard_users set session_generation = session_generation + 1 where id = ${userId} returning session_generation
  `);
  if (keepSession !== null) {
    await tx.query(sql.unsafe`
      update dashboard_sessions set session_generation = ${generation} where id = ${keepSession} and user_id = ${userId} and revoked_at is null
    `);
  }
  const ended = await tx.query(sql.unsafe`
    update dashboard_sessions set revoked_at = ${sql.timestamp(now)}
    where user_id = ${userId} and revoked_at is null and id is distinct from ${keepSession}
  `);
  const passkeysRemoved = await tx.any(sql.type(z.object({ id: z.string(), name: z.string() }))`
    delete from dashboard_passkeys where user_id = ${userId} and id is distinct from ${keepPasskey} returning id, name
  `);
  await revokeOpenLinks(tx, { email: input.email, resetsOnly: true, because: 'password_changed', now });
  return { generation, sessions: ended.rowCount, passkeysRemoved };
}

type RevokedBecause = 'superseded' | 'password_changed' | 'maker_left' | 'member_changed' | 'rights_changed' | 'revoked_by_owner';

/**
 * Revokes open (unused, unrevoked) links: for `email` (in `storeId`, or any store; only reset links
 * with `resetsOnly`), or made by `madeBy` in `storeId`. Returns how many.
 */
export async function revokeOpenLinks(
  tx: Db,
  input: ({ email: string; storeId?: string; resetsOnly?: boolean } | { madeBy: string; storeId: string }) & { because: RevokedBecause; now: Date },
): Promise<number> {
  const who =
    'madeBy' in input
      ? sql.fragment`invited_by = ${input.madeBy} and store_id = ${input.storeId}`
      : sql.fragment`email = ${input.email} ${input.storeId === undefined ? sql.fragment`` : sql.fragment`and store_id = ${input.storeId}`} ${input.resetsOnly ? sql.fragment`and resets_password` : sql.fragment``}`;
  const revoked = await tx.query(sql.unsafe`
    update dashboard_invitations set revoked_at = ${sql.timestamp(input.now)}, revoked_because = ${input.because}
    where ${who} and accepted_at is null and revoked_at is null
  `);
  return revoked.rowCount;
}
