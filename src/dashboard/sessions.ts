// Dashboard sessions (table dashboard_sessions) and sign-in with a password. The cookie carries a
// random token; the database keeps its SHA-256. A session lives while it is used at least every
// SESSION_IDLE_MS, at most SESSION_MAX_MS, until signed out (one, or everywhere), until its
// person changes the password elsewhere or has it reset, or until the passkey that opened it is
// removed. A password change or reset raises the person's session generation in its own
// transaction and a session counts only while it carries its person's generation (checked on every
// request): a sign-in that checked the old password while the change ran stays closed, whenever it
// commits (issue 48 item 5). The password check and its limits (SIGN_IN_LIMITS) are signInLimits.ts's.
import { sql, z, type Db, type DatabasePool } from '../db/pool.ts';
import { endOtherAccess } from './accountAccess.ts';
import { type Actor, recordAudit } from './audit.ts';
import { normalizeEmail } from './forms.ts';
import { FormProblem } from '../errors.ts';
import { hashPassword, passwordProblem } from './passwords.ts';
import { checkAccountPassword } from './signInLimits.ts';
import { isSecret, newSecret, secretHash } from './secrets.ts';

const SESSION_IDLE_MS = 12 * 3600_000;
export const SESSION_MAX_MS = 7 * 24 * 3600_000;
/** last_seen_at is written at most this often per session (a page view is then a read only). */
const SEEN_RESOLUTION_MS = 60_000;

export interface Session {
  id: string;
  userId: string;
  email: string;
  /** When the person signed in (password, passkey or invitation) to open this session. */
  signedInAt: Date;
  /** The passkey it was signed in with (removing the passkey ends the session); null otherwise. */
  passkeyId: string | null;
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
    method: 'password' | 'passkey' | 'invitation' | 'setup';
    /** The passkey that signed in (its removal ends the session). */
    passkeyId?: string | null;
    /**
     * The person's session generation read with what signed them in (the password's hash); without
     * it, the generation now. A password change or reset since then leaves this session closed.
     */
    generation?: number;
    detail?: Record<string, unknown>;
    now: Date;
  },
): Promise<string> {
  const { actor, now } = input;
  const token = newSecret();
  await db.query(sql.unsafe`
    insert into dashboard_sessions (user_id, token_hash, created_at, last_seen_at, expires_at, client_address, user_agent, passkey_id, session_generation)
    values (${input.userId}, ${sql.binary(secretHash(token))}, ${sql.timestamp(now)}, ${sql.timestamp(now)},
            ${sql.timestamp(new Date(now.getTime() + SESSION_MAX_MS))}, ${actor.clientAddress}, ${actor.userAgent?.slice(0, 300) ?? null}, ${input.passkeyId ?? null},
            ${input.generation ?? sql.fragment`(select session_generation from dashboard_users where id = ${input.userId})`})
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
  const row = await db.maybeOne(sql.type(
    z.object({ id: z.string(), user_id: z.string(), email: z.string(), created_at: z.date(), last_seen_at: z.date(), passkey_id: z.string().nullable() }),
  )`
    select s.id, s.user_id, u.email, s.created_at, s.last_seen_at, s.passkey_id from dashboard_sessions s join dashboard_users u on u.id = s.user_id
    where s.token_hash = ${sql.binary(secretHash(token))} and s.revoked_at is null and s.expires_at > ${sql.timestamp(now)}
      and s.session_generation = u.session_generation
      and s.last_seen_at > ${sql.timestamp(new Date(now.getTime() - SESSION_IDLE_MS))}
  `);
  if (!row) return null;
  if (now.getTime() - row.last_seen_at.getTime() >= SEEN_RESOLUTION_MS) {
    await db.query(sql.unsafe`update dashboard_sessions set last_seen_at = ${sql.timestamp(now)} where id = ${row.id}`);
  }
  return { id: row.id, userId: row.user_id, email: row.email, signedInAt: row.created_at, passkeyId: row.passkey_id };
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

type SignInResult = { outcome: 'signed_in'; token: string; userId: string } | { outcome: 'refused' } | { outcome: 'limited'; retryAfterSeconds: number };

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
  const { userId, generation } = checked;
  const token = await pool.transaction((tx) => openSession(tx, { userId, email, actor: input.actor, method: 'password', generation, now: input.now }));
  return { outcome: 'signed_in', token, userId };
}

/**
 * Whether the session opened by `sessionId` still lets its person see `storeId`: open, unexpired,
 * not idle too long, and the person still a member of the store. For what outlives a request (a
 * live list's stream, src/http/routes/dashboardPayments.ts): `keys` are `<session id>/<store id>`, the answer
 * maps each to true or false, in one query.
 */
export async function grantsStillOpen(db: Db, keys: readonly string[], now: Date): Promise<Map<string, boolean>> {
  const pairs = keys.map((key) => key.split('/') as [string, string]);
  const open = await db.anyFirst(sql.type(z.object({ key: z.string() }))`
    select s.id || '/' || m.store_id as key
    from dashboard_sessions s join store_members m on m.user_id = s.user_id join dashboard_users u on u.id = s.user_id
    where s.id = any(${sql.array(
      pairs.map(([session]) => session),
      'uuid',
    )}) and (s.id::text || '/' || m.store_id::text) = any(${sql.array([...keys], 'text')})
      and s.revoked_at is null and s.expires_at > ${sql.timestamp(now)} and s.session_generation = u.session_generation
      and s.last_seen_at > ${sql.timestamp(new Date(now.getTime() - SESSION_IDLE_MS))}
  `);
  const still = new Set(open);
  return new Map(keys.map((key) => [key, still.has(key)]));
}

/** A password change, and adding a passkey, need the current password, or a passkey sign-in within RECENT_SIGN_IN_MS. */
export const needsCurrentPassword = (session: Session, now: Date): boolean => session.passkeyId === null || !signedInRecently(session, now);

/**
 * The proof a password change or a new passkey asks for: `current` is the person's password
 * (checked under the sign-in limits), unless needsCurrentPassword says a recent passkey sign-in
 * stands for it. A FormProblem on the field `current` otherwise.
 */
export async function requireCurrentPassword(
  pool: DatabasePool,
  input: { session: Session; current: string; clientAddress: string | null; now: Date },
): Promise<void> {
  const { session, now } = input;
  if (!needsCurrentPassword(session, now)) return;
  const checked = await checkAccountPassword(pool, { email: session.email, password: input.current, clientAddress: input.clientAddress, now });
  if (checked.outcome === 'limited') {
    const minutes = Math.ceil(checked.retryAfterSeconds / 60);
    throw new FormProblem(`Too many wrong passwords. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`, 'current');
  }
  if (checked.outcome === 'refused' || checked.userId !== session.userId) throw new FormProblem('That is not your current password.', 'current');
}

/**
 * Changes the signed-in person's password: `current` is checked under the sign-in limits unless
 * needsCurrentPassword says a recent passkey sign-in stands for it; `next` must pass the password
 * rule. In the transaction that sets it (accountAccess.ts endOtherAccess): every other session of
 * the person ends, those whose sign-in is still under way included (a leaked password's sessions
 * with it); every passkey but the one this session signed in with is removed (a thief who knew the
 * password may have added one); the person's open reset links die. This session stays. Audited
 * (password.change, detail.sessions and detail.passkeysRemoved). Refusals are FormProblems naming their field.
 */
export async function changePassword(
  pool: DatabasePool,
  input: { session: Session; current: string; next: string; actor: Actor; now: Date },
): Promise<{ sessionsEnded: number; passkeysRemoved: readonly { id: string; name: string }[] }> {
  const { session, now } = input;
  await requireCurrentPassword(pool, { session, current: input.current, clientAddress: input.actor.clientAddress, now });
  const problem = passwordProblem(input.next);
  if (problem) throw new FormProblem(problem, 'next');
  const hash = await hashPassword(input.next);
  return pool.transaction(async (tx) => {
    await tx.query(sql.unsafe`
      update dashboard_users set password_hash = ${hash}, password_changed_at = ${sql.timestamp(now)} where id = ${session.userId}
    `);
    const ended = await endOtherAccess(tx, { userId: session.userId, email: session.email, keepSessionId: session.id, keepPasskeyId: session.passkeyId, now });
    await recordAudit(
      tx,
      input.actor,
      {
        storeId: null,
        action: 'password.change',
        subject: session.email,
        detail: { sessions: ended.sessions, passkeysRemoved: ended.passkeysRemoved.map((p) => p.name) },
      },
      now,
    );
    return { sessionsEnded: ended.sessions, passkeysRemoved: ended.passkeysRemoved };
  });
}
