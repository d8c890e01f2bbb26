// The password check of a dashboard account, under the failed-sign-in limits (SIGN_IN_LIMITS),
// counted in the database so that every API process shares them. After OWASP's authentication
// guidance: failures lock out a pair (this account from this client address) and a client address
// (spraying many accounts), never the account itself — a stranger's wrong passwords from other
// addresses cannot keep its person out. Past the account's ceiling (many clients failing at it) each
// attempt on it is slowed (SIGN_IN_LIMITS.ceilingDelayMs before it is checked), not refused.
// Sign-in and the current-password check of a password change use it; an invitation never does
// (an invitation to an account that has a password is taken by its signed-in person, src/dashboard/invitations.ts).
// The count, the check and the failure's row are one transaction under advisory locks on the pair
// and the client, so requests sent at once cannot all pass on the same old count.
import { setTimeout as sleep } from 'node:timers/promises';
import { sql, z, type Db, type DatabasePool } from '../db/pool.ts';
import { decoyHash, verifyPassword } from './passwords.ts';

/**
 * Failed sign-ins allowed in a window: per (account, client address) and per client address; past
 * `accountCeiling` failures of one account from any addresses, each attempt on it waits `ceilingDelayMs`.
 */
export const SIGN_IN_LIMITS = { windowMs: 15 * 60_000, perAccountClient: 5, perClient: 20, accountCeiling: 20, ceilingDelayMs: 1000 } as const;

/** `generation`: the account's session generation, read with the hash that matched (sessions.ts openSession). */
type PasswordCheck = { outcome: 'ok'; userId: string; generation: number } | { outcome: 'refused' } | { outcome: 'limited'; retryAfterSeconds: number };

/** The seconds until the oldest of `count` failures leaves the window, when `count` reached `limit`; null otherwise. */
const waitOf = (count: number, limit: number, oldest: Date | null, now: Date): number | null =>
  count >= limit && oldest !== null ? Math.max(1, Math.ceil((oldest.getTime() + SIGN_IN_LIMITS.windowMs - now.getTime()) / 1000)) : null;

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
  // The account's ceiling slows (outside the transaction: no connection or lock is held meanwhile).
  const accountFailures = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
    select count(*)::int as n from dashboard_sign_in_failures where email = ${email} and failed_at > ${sql.timestamp(since)}
  `);
  if (accountFailures >= SIGN_IN_LIMITS.accountCeiling) await sleep(SIGN_IN_LIMITS.ceilingDelayMs);
  return pool.transaction(async (tx) => {
    // Always in this order (pair, then client): two checks never wait on each other in a cycle.
    await tx.query(sql.unsafe`select pg_advisory_xact_lock(hashtext(${`dashboard-sign-in:pair:${email}:${client}`}))`);
    await tx.query(sql.unsafe`select pg_advisory_xact_lock(hashtext(${`dashboard-sign-in:client:${client}`}))`);
    const counts = await tx.one(sql.type(
      z.object({ pair: z.number(), client: z.number(), pair_oldest: z.date().nullable(), client_oldest: z.date().nullable() }),
    )`
      select count(*) filter (where email = ${email})::int as pair, count(*)::int as client,
             min(failed_at) filter (where email = ${email}) as pair_oldest, min(failed_at) as client_oldest
      from dashboard_sign_in_failures
      where client_address = ${client} and failed_at > ${sql.timestamp(since)}
    `);
    const waits = [
      waitOf(counts.pair, SIGN_IN_LIMITS.perAccountClient, counts.pair_oldest, now),
      waitOf(counts.client, SIGN_IN_LIMITS.perClient, counts.client_oldest, now),
    ].filter((wait) => wait !== null);
    if (waits.length > 0) return { outcome: 'limited', retryAfterSeconds: Math.max(...waits) } as const;
    const user = await tx.maybeOne(sql.type(z.object({ id: z.string(), password_hash: z.string().nullable(), session_generation: z.number() }))`
      select id, password_hash, session_generation from dashboard_users where email = ${email}
    `);
    const matches = await verifyPassword(input.password, user?.password_hash ?? (await decoyHash()));
    if (user && user.password_hash !== null && matches) return { outcome: 'ok', userId: user.id, generation: user.session_generation } as const;
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
  return waitOf(counts.n, SIGN_IN_LIMITS.perClient, counts.oldest, input.now);
}

/** Counts a failed sign-in that was not a password's (a refused passkey) for the client and, when known, the account. */
export async function recordSignInFailure(db: Db, input: { email: string | null; clientAddress: string | null; now: Date }): Promise<void> {
  await db.query(sql.unsafe`
    insert into dashboard_sign_in_failures (email, client_address, failed_at)
    values (${input.email ?? ''}, ${input.clientAddress ?? 'unknown'}, ${sql.timestamp(input.now)})
  `);
}
