// Passkeys (WebAuthn) for the dashboard, with @simplewebauthn/server: a signed-in person adds a
// passkey (registration), and signs in with it instead of the password (a discoverable credential
// with user verification: the authenticator asks for its PIN or biometric, so the passkey alone is
// two factors). The relying party is BASE_URL: its host name is the RP ID and its origin the only
// origin accepted. Challenges are random, kept in dashboard_passkey_challenges for 5 minutes and
// used once (deleted when an answer names them, whatever the answer's fate). Each sign-in's
// signature counter must grow when the authenticator counts (a clone would repeat one). Added and
// removed passkeys and passkey sign-ins are written to the audit log.
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import { sql, z, type Db, type DatabasePool } from '../db/pool.ts';
import { type Actor, recordAudit } from './audit.ts';
import { FormProblem } from '../errors.ts';
import { openSession, requireCurrentPassword, type Session } from './sessions.ts';
import { clientWait, recordSignInFailure } from './signInLimits.ts';
import { isUuid } from '../uuid.ts';

/** How long a ceremony's challenge may be answered. */
export const PASSKEY_CHALLENGE_MS = 5 * 60_000;
/** Passkeys one person may have. */
const PASSKEYS_PER_USER = 10;
export const PASSKEY_NAME_MAX = 64;
/** Unanswered sign-in challenges one client address may hold (each is a row for 5 minutes). */
export const SIGN_IN_CHALLENGES_PER_CLIENT = 20;
/**
 * The COSE algorithms a passkey may use: EdDSA, ES256, RS256 (what authenticators make). Named
 * here rather than left to the library, whose default probes the runtime for post-quantum ones
 * (an experimental Web Crypto call that warns on every process's first passkey).
 */
const ALGORITHMS = [-8, -7, -257];

/** The relying party: Kassa's dashboard at BASE_URL. */
interface RelyingParty {
  /** BASE_URL's host name (a domain: browsers refuse an IP address as RP ID). */
  id: string;
  /** BASE_URL's origin, the only one a passkey answer may come from. */
  origin: string;
  name: string;
}

export const relyingParty = (baseUrl: string): RelyingParty => {
  const url = new URL(baseUrl);
  return { id: url.hostname, origin: url.origin, name: 'Kassa dashboard' };
};

/** The user handle a passkey carries: the user's id as its 16 bytes (no email, nothing personal). */
const userHandle = (userId: string): Uint8Array<ArrayBuffer> => new Uint8Array(Buffer.from(userId.replaceAll('-', ''), 'hex'));

type Purpose = 'registration' | 'sign_in';

async function keepChallenge(db: Db, challenge: string, purpose: Purpose, userId: string | null, clientAddress: string | null, now: Date): Promise<void> {
  await db.query(sql.unsafe`
    with expired as (delete from dashboard_passkey_challenges where expires_at <= ${sql.timestamp(now)})
    insert into dashboard_passkey_challenges (challenge, purpose, user_id, client_address, created_at, expires_at)
    values (${challenge}, ${purpose}, ${userId}, ${clientAddress ?? 'unknown'}, ${sql.timestamp(now)}, ${sql.timestamp(new Date(now.getTime() + PASSKEY_CHALLENGE_MS))})
  `);
}

/**
 * The answer's challenge, taken (deleted) when it is one Kassa gave for this purpose (and user),
 * unexpired: true once, false ever after. Used as @simplewebauthn's `expectedChallenge`.
 */
const takeChallenge =
  (db: Db, purpose: Purpose, userId: string | null, now: Date) =>
  async (challenge: string): Promise<boolean> => {
    if (!/^[A-Za-z0-9_-]{16,128}$/.test(challenge)) return false;
    const taken = await db.maybeOne(sql.unsafe`
      delete from dashboard_passkey_challenges
      where challenge = ${challenge} and purpose = ${purpose} and user_id is not distinct from ${userId} and expires_at > ${sql.timestamp(now)}
      returning 1
    `);
    return taken !== null;
  };

const passkeyRow = z.object({
  id: z.string(),
  name: z.string(),
  credential_id: z.string(),
  transports: z.array(z.string()),
  backed_up: z.boolean(),
  created_at: z.date(),
  last_used_at: z.date().nullable(),
});
export type PasskeyRow = z.infer<typeof passkeyRow>;

/** A user's passkeys, oldest first (never their keys). */
export async function passkeysOf(db: Db, userId: string): Promise<readonly PasskeyRow[]> {
  return db.any(sql.type(passkeyRow)`
    select id, name, credential_id, transports, backed_up, created_at, last_used_at from dashboard_passkeys
    where user_id = ${userId} order by created_at, id
  `);
}

/** Options for navigator.credentials.create(): a discoverable credential with user verification. */
export async function registrationOptions(
  db: Db,
  input: { userId: string; email: string; party: RelyingParty; clientAddress: string | null; now: Date },
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const existing = await passkeysOf(db, input.userId);
  const options = await generateRegistrationOptions({
    rpName: input.party.name,
    rpID: input.party.id,
    userName: input.email,
    userID: userHandle(input.userId),
    timeout: PASSKEY_CHALLENGE_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((passkey) => ({ id: passkey.credential_id, transports: passkey.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    supportedAlgorithmIDs: ALGORITHMS,
  });
  await keepChallenge(db, options.challenge, 'registration', input.userId, input.clientAddress, input.now);
  return options;
}

/** The browser's answer, as the form carried it (JSON text), or null when it is not one. */
function parseAnswer<T>(text: string): T | null {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && typeof (value as { id?: unknown }).id === 'string' ? (value as T) : null;
  } catch {
    return null;
  }
}

/**
 * Checks a registration answer against its challenge (taken once), the person's proof (their
 * current password, or a passkey sign-in of the last minutes: sessions.ts requireCurrentPassword —
 * a session alone, a stolen cookie, adds none), the origin and RP ID, and user verification; stores
 * the passkey (audited: passkey.add, which the Passkeys page says). FormProblem when it is refused.
 */
export async function addPasskey(
  pool: DatabasePool,
  input: { session: Session; current: string; answer: string; name: string; party: RelyingParty; actor: Actor; now: Date },
): Promise<PasskeyRow> {
  const { userId, email } = input.session;
  const name = input.name.trim() || 'Passkey';
  if (name.length > PASSKEY_NAME_MAX) throw new FormProblem(`Give the passkey a name of at most ${PASSKEY_NAME_MAX} characters.`, 'name');
  const response = parseAnswer<RegistrationResponseJSON>(input.answer);
  if (!response) throw new FormProblem('Adding a passkey needs JavaScript and a browser that supports passkeys; nothing was added.');
  // The challenge the answer names is spent first, whatever refuses the answer after.
  const challenge = challengeOf(response);
  const fresh = challenge !== null && (await takeChallenge(pool, 'registration', userId, input.now)(challenge));
  let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verified = await verifyRegistrationResponse({
      response,
      expectedChallenge: (given: string) => fresh && given === challenge,
      expectedOrigin: input.party.origin,
      expectedRPID: input.party.id,
      requireUserVerification: true,
      supportedAlgorithmIDs: ALGORITHMS,
    });
  } catch (error) {
    throw new FormProblem(`The passkey could not be checked (${(error as Error).message}); nothing was added. Try again.`);
  }
  if (!verified.verified) throw new FormProblem('The passkey could not be checked; nothing was added. Try again.');
  await requireCurrentPassword(pool, { session: input.session, current: input.current, clientAddress: input.actor.clientAddress, now: input.now });
  const { credential, credentialBackedUp } = verified.registrationInfo;
  return pool.transaction(async (tx) => {
    await tx.query(sql.unsafe`select 1 from dashboard_users where id = ${userId} for update`);
    const count = await tx.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from dashboard_passkeys where user_id = ${userId}`);
    if (count >= PASSKEYS_PER_USER) throw new FormProblem(`An account may have at most ${PASSKEYS_PER_USER} passkeys; remove one first.`);
    const row = await tx.maybeOne(sql.type(passkeyRow)`
      insert into dashboard_passkeys (user_id, credential_id, public_key, sign_count, transports, backed_up, name, created_at)
      values (${userId}, ${credential.id}, ${sql.binary(Buffer.from(credential.publicKey))}, ${credential.counter},
              ${sql.array(credential.transports ?? [], 'text')}, ${credentialBackedUp}, ${name}, ${sql.timestamp(input.now)})
      on conflict (credential_id) do nothing
      returning id, name, credential_id, transports, backed_up, created_at, last_used_at
    `);
    if (!row) throw new FormProblem('This passkey is registered already.');
    await recordAudit(tx, input.actor, { storeId: null, action: 'passkey.add', subject: email, detail: { passkey: row.id, name } }, input.now);
    return row;
  });
}

/**
 * Removes one of the user's passkeys and ends the sessions it opened (audited: passkey.remove with
 * detail.sessions); false when they have no such passkey.
 */
export async function removePasskey(
  pool: DatabasePool,
  input: { userId: string; email: string; passkeyId: string; actor: Actor; now: Date },
): Promise<boolean> {
  if (!isUuid(input.passkeyId)) return false;
  const passkeyId = input.passkeyId.toLowerCase();
  return pool.transaction(async (tx) => {
    // The sessions it opened end first: deleting it sets their passkey_id null (the foreign key's on delete).
    const ended = await tx.query(sql.unsafe`
      update dashboard_sessions set revoked_at = ${sql.timestamp(input.now)}
      where passkey_id = ${passkeyId} and user_id = ${input.userId} and revoked_at is null
    `);
    const removed = await tx.maybeOne(sql.type(z.object({ name: z.string() }))`
      delete from dashboard_passkeys where id = ${passkeyId} and user_id = ${input.userId} returning name
    `);
    if (!removed) return false;
    await recordAudit(
      tx,
      input.actor,
      {
        storeId: null,
        action: 'passkey.remove',
        subject: input.email,
        detail: { passkey: passkeyId, name: removed.name, sessions: ended.rowCount },
      },
      input.now,
    );
    return true;
  });
}

/**
 * Options for navigator.credentials.get(): any of this site's passkeys (the authenticator offers
 * them), user verification required. Null when the client holds SIGN_IN_CHALLENGES_PER_CLIENT
 * unanswered ones already (nobody needs more; a flood would only fill the table).
 */
export async function signInOptions(
  db: Db,
  input: { party: RelyingParty; clientAddress: string | null; now: Date },
): Promise<PublicKeyCredentialRequestOptionsJSON | null> {
  const held = await db.oneFirst(sql.type(z.object({ n: z.number() }))`
    select count(*)::int as n from dashboard_passkey_challenges
    where client_address = ${input.clientAddress ?? 'unknown'} and purpose = 'sign_in' and expires_at > ${sql.timestamp(input.now)}
  `);
  if (held >= SIGN_IN_CHALLENGES_PER_CLIENT) return null;
  const options = await generateAuthenticationOptions({ rpID: input.party.id, timeout: PASSKEY_CHALLENGE_MS, userVerification: 'required' });
  await keepChallenge(db, options.challenge, 'sign_in', null, input.clientAddress, input.now);
  return options;
}

const storedPasskey = z.object({
  id: z.string(),
  user_id: z.string(),
  email: z.string(),
  public_key: z.instanceof(Buffer),
  sign_count: z.string(),
  transports: z.array(z.string()),
});

type PasskeySignIn =
  | { outcome: 'signed_in'; token: string; userId: string }
  | { outcome: 'refused'; reason: string }
  | { outcome: 'limited'; retryAfterSeconds: number };

/**
 * A sign-in answer → a new session (audited: session.sign_in, method passkey). Refused when the
 * passkey is unknown, the challenge is not one given (or was used), the origin, RP ID, signature or
 * user verification is wrong, or the signature counter did not grow. Each refusal counts as a
 * failed sign-in (SIGN_IN_LIMITS); past the client's limit nothing is checked (`limited`).
 */
export async function signInWithPasskey(
  pool: DatabasePool,
  input: { answer: string; party: RelyingParty; actor: Pick<Actor, 'clientAddress' | 'userAgent'>; now: Date },
): Promise<PasskeySignIn> {
  const wait = await clientWait(pool, { clientAddress: input.actor.clientAddress, now: input.now });
  if (wait !== null) return { outcome: 'limited', retryAfterSeconds: wait };
  const result = await checkPasskeyAnswer(pool, input);
  if (result.outcome === 'refused') await recordSignInFailure(pool, { email: result.email, clientAddress: input.actor.clientAddress, now: input.now });
  return result.outcome === 'refused' ? { outcome: 'refused', reason: result.reason } : result;
}

async function checkPasskeyAnswer(
  pool: DatabasePool,
  input: { answer: string; party: RelyingParty; actor: Pick<Actor, 'clientAddress' | 'userAgent'>; now: Date },
): Promise<{ outcome: 'signed_in'; token: string; userId: string } | { outcome: 'refused'; reason: string; email: string | null }> {
  const response = parseAnswer<AuthenticationResponseJSON>(input.answer);
  if (!response) return { outcome: 'refused', reason: 'no passkey answer', email: null };
  // The challenge the answer names is spent first, whatever refuses the answer after (an unknown
  // passkey, another user's handle, a check the library makes before it asks for the challenge).
  const challenge = challengeOf(response);
  const fresh = challenge !== null && (await takeChallenge(pool, 'sign_in', null, input.now)(challenge));
  if (!/^[A-Za-z0-9_-]{16,1366}$/.test(response.id)) return { outcome: 'refused', reason: 'no passkey answer', email: null };
  const passkey = await pool.maybeOne(sql.type(storedPasskey)`
    select p.id, p.user_id, u.email, p.public_key, p.sign_count::text, p.transports
    from dashboard_passkeys p join dashboard_users u on u.id = p.user_id where p.credential_id = ${response.id}
  `);
  if (!passkey) return { outcome: 'refused', reason: 'unknown passkey', email: null };
  const handle = response.response?.userHandle;
  if (handle !== undefined && handle !== Buffer.from(userHandle(passkey.user_id)).toString('base64url')) {
    return { outcome: 'refused', reason: 'user handle of another user', email: passkey.email };
  }
  let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verified = await verifyAuthenticationResponse({
      response,
      // Taken above: accepted only when it was fresh and is the one the library reads.
      expectedChallenge: (given: string) => fresh && given === challenge,
      expectedOrigin: input.party.origin,
      expectedRPID: input.party.id,
      credential: { id: response.id, publicKey: new Uint8Array(passkey.public_key), counter: Number(passkey.sign_count), transports: passkey.transports },
      requireUserVerification: true,
    });
  } catch (error) {
    return { outcome: 'refused', reason: (error as Error).message, email: passkey.email };
  }
  if (!verified.verified) return { outcome: 'refused', reason: 'signature not verified', email: passkey.email };
  const counter = verified.authenticationInfo.newCounter;
  return pool.transaction(async (tx) => {
    // The counter read above must still be the stored one: two answers with one counter value sign in once.
    const updated = await tx.query(sql.unsafe`
      update dashboard_passkeys set sign_count = ${counter}, backed_up = ${verified.authenticationInfo.credentialBackedUp}, last_used_at = ${sql.timestamp(input.now)}
      where id = ${passkey.id} and sign_count = ${passkey.sign_count}
    `);
    if (updated.rowCount !== 1) return { outcome: 'refused', reason: 'signature counter already used', email: passkey.email } as const;
    const token = await openSession(tx, {
      userId: passkey.user_id,
      email: passkey.email,
      actor: input.actor,
      method: 'passkey',
      passkeyId: passkey.id,
      detail: { passkey: passkey.id },
      now: input.now,
    });
    return { outcome: 'signed_in', token, userId: passkey.user_id } as const;
  });
}

/** The challenge an answer says it signed (from its clientDataJSON), or null. */
function challengeOf(response: AuthenticationResponseJSON | RegistrationResponseJSON): string | null {
  try {
    const data = JSON.parse(Buffer.from(response.response.clientDataJSON, 'base64url').toString('utf8')) as { challenge?: unknown };
    return typeof data.challenge === 'string' ? data.challenge : null;
  } catch {
    return null;
  }
}
