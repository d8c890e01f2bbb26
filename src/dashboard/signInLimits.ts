// The password check of a dashboard account, under the failed-sign-in limits (SIGN_IN_LIMITS): per
// account and per client address, counted in the database so that every API process shares them.
// Both ways in go through it — signing in, and accepting an invitation as a person who already has
// an account (who confirms that account's password) — so neither can be used to guess a password.
// The count, the check and the failure's row are one transaction under advisory locks on the
// account and the client, so requests sent at once cannot all pass on the same old count.
import { sql, z, type Db, type DatabasePool } from '../db/pool.ts';
import { decoyHash, verifyPassword } from './passwords.ts';

/** Failed sign-ins allowed in a window: per account and per client address. */
export const SIGN_IN_LIMITS = { windowMs: 15 * 60_000, perAccount: 5, perClient: 20 } as const;

export type PasswordCheck = { outcome: 'ok'; userId: string } | { outcome: 'refused' } | { outcome: 'limited'; retryAfterSeconds: number };

/**
 * Whether `password` is the one of the account `email` (normalized), unless the limits refuse to
 * look. A wrong password and an unknown email cost the same scrypt work and count alike.
 */
export async function checkAccountPassword(
  pool: DatabasePool,
  input: { email: string; password: string; clientAddress: string | null; now: Date },
): Promise<PasswordCheck> {
  const { email, now } = input;
  const client = input.clientAddress ?? 'unknown';
  const since = new Date(now.getTime() - SIGN_IN_LIMITS.windowMs);
  return pool.transaction(async (tx) => {
    // Always in this order (account, then client): two checks never wait on each other in a cycle.
    await tx.query(sql.unsafe`select pg_advisory_xact_lock(hashtext(${`dashboard-sign-in:account:${email}`}))`);
    await tx.query(sql.unsafe`select pg_advisory_xact_lock(hashtext(${`dashboard-sign-in:client:${client}`}))`);
    const counts = await tx.one(sql.type(
      z.object({ account: z.number(), client: z.number(), account_oldest: z.date().nullable(), client_oldest: z.date().nullable() }),
    )`
      select count(*) filter (where email = ${email})::int as account, count(*) filter (where client_address = ${client})::int as client,
             min(failed_at) filter (where email = ${email}) as account_oldest, min(failed_at) filter (where client_address = ${client}) as client_oldest
      from dashboard_sign_in_failures
      where (email = ${email} or client_address = ${client}) and failed_at > ${sql.timestamp(since)}
    `);
    const waits: number[] = [];
    if (counts.account >= SIGN_IN_LIMITS.perAccount && counts.account_oldest) waits.push(counts.account_oldest.getTime());
    if (counts.client >= SIGN_IN_LIMITS.perClient && counts.client_oldest) waits.push(counts.client_oldest.getTime());
    if (waits.length > 0) {
      const until = Math.max(...waits) + SIGN_IN_LIMITS.windowMs;
      return { outcome: 'limited', retryAfterSeconds: Math.max(1, Math.ceil((until - now.getTime()) / 1000)) } as const;
    }
    const user = await tx.maybeOne(sql.type(z.object({ id: z.string(), password_hash: z.string().nullable() }))`
      select id, password_hash from dashboard_users where email = ${email}
    `);
    const matches = await verifyPassword(input.password, user?.password_hash ?? (await decoyHash()));
    if (user && user.password_hash !== null && matches) return { outcome: 'ok', userId: user.id } as const;
    await tx.query(sql.unsafe`
      with old as (delete from dashboard_sign_in_failures where failed_at < ${sql.timestamp(new Date(since.getTime() - SIGN_IN_LIMITS.windowMs))})
      insert into dashboard_sign_in_failures (email, client_address, failed_at) values (${email}, ${client}, ${sql.timestamp(now)})
    `);
    return { outcome: 'refused' } as const;
  });
}

/**
 * A sign-in without a password (a passkey's, src/dashboard/passkeys.ts) under the per-client limit:
 * the seconds to wait when the client address has SIGN_IN_LIMITS.perClient failures in the window,
 * null when it may try. (A passkey names no account before it is checked, so only the client's
 * limit can apply before; its failures count for the account too, as a wrong password's.)
 */
export async function clientWait(db: Db, input: { clientAddress: string | null; now: Date }): Promise<number | null> {
  const client = input.clientAddress ?? 'unknown';
  const since = new Date(input.now.getTime() - SIGN_IN_LIMITS.windowMs);
  const counts = await db.one(sql.type(z.object({ n: z.number(), oldest: z.date().nullable() }))`
    select count(*)::int as n, min(failed_at) as oldest from dashboard_sign_in_failures
    where client_address = ${client} and failed_at > ${sql.timestamp(since)}
  `);
  if (counts.n < SIGN_IN_LIMITS.perClient || counts.oldest === null) return null;
  return Math.max(1, Math.ceil((counts.oldest.getTime() + SIGN_IN_LIMITS.windowMs - input.now.getTime()) / 1000));
}

/** Counts a failed sign-in that was not a password's (a refused passkey) for the client and, when known, the account. */
export async function recordSignInFailure(db: Db, input: { email: string | null; clientAddress: string | null; now: Date }): Promise<void> {
  await db.query(sql.unsafe`
    insert into dashboard_sign_in_failures (email, client_address, failed_at)
    values (${input.email ?? ''}, ${input.clientAddress ?? 'unknown'}, ${sql.timestamp(input.now)})
  `);
}
