// Dashboard sessions (table dashboard_sessions) and sign-in with a password. The cookie carries a
// random token; the database keeps its SHA-256. A session lives while it is used at least every
// SESSION_IDLE_MS, at most SESSION_MAX_MS, until signed out. The password check and its limits
// (SIGN_IN_LIMITS) are signInLimits.ts's.
import { sql, z, type Db, type DatabasePool } from '../db/pool.ts';
import { type Actor, recordAudit } from './audit.ts';
import { normalizeEmail } from './people.ts';
import { checkAccountPassword } from './signInLimits.ts';
import { isSecret, newSecret, secretHash } from './secrets.ts';

export const SESSION_IDLE_MS = 12 * 3600_000;
export const SESSION_MAX_MS = 7 * 24 * 3600_000;
/** last_seen_at is written at most this often per session (a page view is then a read only). */
const SEEN_RESOLUTION_MS = 60_000;

export interface Session {
  id: string;
  userId: string;
  email: string;
  /** When the person signed in (password, passkey or invitation) to open this session. */
  signedInAt: Date;
}

/**
 * Adding a passkey needs a sign-in this recent: a session taken over later (a stolen cookie) cannot
 * give itself a way in that outlives it.
 */
export const RECENT_SIGN_IN_MS = 10 * 60_000;
export const signedInRecently = (session: Session, now: Date): boolean => now.getTime() - session.signedInAt.getTime() <= RECENT_SIGN_IN_MS;

/**
 * Opens a session (issue 33: the one command for it) and writes its audit row, session.sign_in with
 * how the person signed in: a password, a passkey or an invitation's link. Run it in the transaction
 * that decided the sign-in; returns the cookie's token.
 */
export async function openSession(
  db: Db,
  input: {
    userId: string;
    email: string;
    actor: Pick<Actor, 'clientAddress' | 'userAgent'>;
    method: 'password' | 'passkey' | 'invitation';
    detail?: Record<string, unknown>;
    now: Date;
  },
): Promise<string> {
  const { actor, now } = input;
  const token = newSecret();
  await db.query(sql.unsafe`
    insert into dashboard_sessions (user_id, token_hash, created_at, last_seen_at, expires_at, client_address, user_agent)
    values (${input.userId}, ${sql.binary(secretHash(token))}, ${sql.timestamp(now)}, ${sql.timestamp(now)},
            ${sql.timestamp(new Date(now.getTime() + SESSION_MAX_MS))}, ${actor.clientAddress}, ${actor.userAgent?.slice(0, 300) ?? null})
  `);
  await recordAudit(
    db,
    { ...actor, userId: input.userId, name: input.email },
    { storeId: null, action: 'session.sign_in', subject: input.email, detail: { method: input.method, ...input.detail } },
    now,
  );
  return token;
}

/** The session of a cookie's token, when it is open, unexpired and not idle too long; null otherwise. */
export async function findSession(db: Db, token: string, now: Date): Promise<Session | null> {
  if (!isSecret(token)) return null;
  const row = await db.maybeOne(sql.type(z.object({ id: z.string(), user_id: z.string(), email: z.string(), created_at: z.date(), last_seen_at: z.date() }))`
    select s.id, s.user_id, u.email, s.created_at, s.last_seen_at from dashboard_sessions s join dashboard_users u on u.id = s.user_id
    where s.token_hash = ${sql.binary(secretHash(token))} and s.revoked_at is null and s.expires_at > ${sql.timestamp(now)}
      and s.last_seen_at > ${sql.timestamp(new Date(now.getTime() - SESSION_IDLE_MS))}
  `);
  if (!row) return null;
  if (now.getTime() - row.last_seen_at.getTime() >= SEEN_RESOLUTION_MS) {
    await db.query(sql.unsafe`update dashboard_sessions set last_seen_at = ${sql.timestamp(now)} where id = ${row.id}`);
  }
  return { id: row.id, userId: row.user_id, email: row.email, signedInAt: row.created_at };
}

/** Signs one session out (audited). */
export async function signOut(pool: DatabasePool, session: Session, actor: Actor, now: Date): Promise<void> {
  await pool.transaction(async (tx) => {
    await tx.query(sql.unsafe`update dashboard_sessions set revoked_at = ${sql.timestamp(now)} where id = ${session.id} and revoked_at is null`);
    await recordAudit(tx, actor, { storeId: null, action: 'session.sign_out', subject: session.email }, now);
  });
}

/** Signs every session of the user out, this one included (audited); returns how many were open. */
export async function signOutEverywhere(pool: DatabasePool, session: Session, actor: Actor, now: Date): Promise<number> {
  return pool.transaction(async (tx) => {
    const ended = await tx.query(sql.unsafe`
      update dashboard_sessions set revoked_at = ${sql.timestamp(now)} where user_id = ${session.userId} and revoked_at is null
    `);
    await recordAudit(tx, actor, { storeId: null, action: 'session.sign_out_everywhere', subject: session.email, detail: { sessions: ended.rowCount } }, now);
    return ended.rowCount;
  });
}

export type SignInResult = { outcome: 'signed_in'; token: string; userId: string } | { outcome: 'refused' } | { outcome: 'limited'; retryAfterSeconds: number };

/**
 * Email and password → a new session. A wrong password and an unknown email are refused alike
 * (same message, same scrypt work). Past SIGN_IN_LIMITS, nothing is checked until the window lets
 * a failure go: the answer is `limited` with the seconds to wait.
 */
export async function signIn(
  pool: DatabasePool,
  input: { email: string; password: string; actor: Pick<Actor, 'clientAddress' | 'userAgent'>; now: Date },
): Promise<SignInResult> {
  const email = normalizeEmail(input.email) ?? input.email.trim().toLowerCase().slice(0, 254);
  const checked = await checkAccountPassword(pool, { email, password: input.password, clientAddress: input.actor.clientAddress, now: input.now });
  if (checked.outcome !== 'ok') return checked;
  const userId = checked.userId;
  const token = await pool.transaction((tx) => openSession(tx, { userId, email, actor: input.actor, method: 'password', now: input.now }));
  return { outcome: 'signed_in', token, userId };
}
