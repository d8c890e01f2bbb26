// API access tokens (docs/API.md, Authentication): EdDSA JWTs signed by the service's own key, which lives in the
// database and never leaves the process. Revocation is checked on every request.
import crypto, { type KeyObject } from 'node:crypto';
import { errors as joseErrors, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import { authInvalid, FormProblem } from '../errors.ts';
import { prepared, sql, z, type Db, type FragmentSqlToken } from '../db/pool.ts';
import { isUuid } from '../uuid.ts';
import { isTokenScope, type TokenScope } from './scopes.ts';

/** The only JWS algorithms accepted: EdDSA and its RFC 9864 name. Never "none", never HMAC. */
const ACCEPTED_ALGORITHMS = ['EdDSA', 'Ed25519'];

interface TokenKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** Tokens whose signature this key already verified (see `verifySignature`). */
  verified: Map<string, VerifiedClaims>;
  /**
   * The jtis the database refused for good (revoked, unknown: facts about the jti that never change
   * back), so that their next requests are refused from memory, before they can spend
   * anything (a store's rate limit, a database round trip). Bounded like `verified`.
   */
  refused: Set<string>;
}

interface VerifiedClaims {
  sub: string;
  jti: string;
  /** Seconds since the epoch, from the token's own claims. */
  exp?: number;
  nbf?: number;
  /** The `scope` claim; `full` for tokens issued before scopes, which carry none. */
  scope: TokenScope;
}

/** At most this many verified tokens are remembered per key; the oldest goes first. */
const MAX_VERIFIED_TOKENS = 10_000;

const keyCache = new WeakMap<object, Promise<TokenKey>>();

async function loadTokenKey(db: Db): Promise<TokenKey> {
  const generated = crypto.generateKeyPairSync('ed25519').privateKey.export({ format: 'der', type: 'pkcs8' });
  await db.query(sql.typeAlias('void')`
    insert into service_secrets (name, secret) values ('api_token_signing_key', ${sql.binary(generated)})
    on conflict (name) do nothing
  `);
  const der = await db.oneFirst(sql.type(z.object({ secret: z.instanceof(Buffer) }))`
    select secret from service_secrets where name = 'api_token_signing_key'
  `);
  const privateKey = crypto.createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  return { privateKey, publicKey: crypto.createPublicKey(privateKey), verified: new Map(), refused: new Set() };
}

/** The token key, loaded once per pool. */
function tokenKey(db: Db): Promise<TokenKey> {
  let key = keyCache.get(db);
  if (!key) {
    key = loadTokenKey(db);
    key.catch(() => keyCache.delete(db));
    keyCache.set(db, key);
  }
  return key;
}

const DURATION = /^(\d+)([smhdw])$/;
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/** Parses "30d", "12h", "90m", "3600s", "2w"; null for "never". Throws on anything else. */
export function parseDuration(text: string): number | null {
  if (text === 'never') return null;
  const match = DURATION.exec(text);
  if (!match || Number(match[1]) <= 0) throw new Error(`invalid duration "${text}" (use e.g. 30d, 12h, 90m, 3600s or never)`);
  return Number(match[1]) * UNIT_SECONDS[match[2] as string]!;
}

export interface IssuedToken {
  token: string;
  jti: string;
  expiresAt: string | null;
  scope: TokenScope;
  /** What the merchant called it (api_tokens.name); null: no name. */
  name: string | null;
}

/** The longest token name (api_tokens_name_is_short). */
export const TOKEN_NAME_MAX = 100;

/**
 * A token's name as given (trimmed; "" is no name): at most TOKEN_NAME_MAX characters, no control
 * characters. Returns null for no name; throws FormProblem (about `name`) for a name the database would refuse.
 */
export function tokenName(raw: string | undefined | null): string | null {
  const name = (raw ?? '').trim();
  if (name === '') return null;
  if ([...name].length > TOKEN_NAME_MAX || /\p{Cc}/u.test(name)) {
    throw new FormProblem(`a token's name is at most ${TOKEN_NAME_MAX} characters, without control characters`, 'name');
  }
  return name;
}

/**
 * Issues a token of the store. Its scope is a signed claim of the token (what the API enforces,
 * src/auth/scopes.ts) and is recorded in api_tokens.scope (what `kassa token list` and the
 * dashboard show); a scope never changes: a narrower one is a new token.
 */
export async function issueToken(
  db: Db,
  storeId: string,
  expiresInSeconds: number | null,
  now: Date,
  scope: TokenScope = 'full',
  name: string | null = null,
): Promise<IssuedToken> {
  const exists = isUuid(storeId) ? await db.exists(sql.unsafe`select 1 from stores where id = ${storeId}`) : false;
  if (!exists) throw new FormProblem(`unknown store "${storeId}"`, 'store');
  const { privateKey } = await tokenKey(db);
  const jti = crypto.randomUUID();
  const issuedAt = Math.floor(now.getTime() / 1000);
  const expiresAt = expiresInSeconds === null ? null : new Date((issuedAt + expiresInSeconds) * 1000);
  let jwt = new SignJWT({ scope }).setProtectedHeader({ alg: 'EdDSA', typ: 'JWT' }).setSubject(storeId).setJti(jti).setIssuedAt(issuedAt);
  if (expiresAt) jwt = jwt.setExpirationTime(Math.floor(expiresAt.getTime() / 1000));
  const token = await jwt.sign(privateKey);
  await db.query(sql.typeAlias('void')`
    insert into api_tokens (jti, store_id, issued_at, expires_at, scope, name)
    values (${jti}, ${storeId}, ${sql.timestamp(new Date(issuedAt * 1000))}, ${expiresAt ? sql.timestamp(expiresAt) : null}, ${scope}, ${name})
  `);
  return { token, jti, expiresAt: expiresAt ? expiresAt.toISOString() : null, scope, name };
}

/** Revokes a token at once. Returns false when no token has that jti. */
export async function revokeToken(db: Db, jti: string, now: Date): Promise<boolean> {
  if (!isUuid(jti)) return false;
  const row = await db.maybeOne(sql.type(z.object({ jti: z.string() }))`
    update api_tokens set revoked_at = coalesce(revoked_at, ${sql.timestamp(now)})
    where jti = ${jti.toLowerCase()} returning jti
  `);
  return row !== null;
}

/** A token's last use is written at most this often per token and process (api_tokens.last_used_at). */
const LAST_USE_RESOLUTION_MS = 60_000;
const lastUseWritten = new WeakMap<object, Map<string, number>>();

/**
 * Records that a valid token authenticated a request (`kassa token list` shows it): one small
 * update per token and process per minute at most, so an API process under load writes almost
 * nothing. Not waited for, and a failure is ignored: the last use is a hint, never a reason to
 * refuse or hold up a request.
 */
export function noteTokenUse(db: Db, jti: string, now: Date): void {
  let written = lastUseWritten.get(db);
  if (!written) {
    written = new Map();
    lastUseWritten.set(db, written);
  }
  const last = written.get(jti);
  if (last !== undefined && now.getTime() - last < LAST_USE_RESOLUTION_MS) return;
  if (written.size >= MAX_VERIFIED_TOKENS) written.delete(written.keys().next().value!);
  written.set(jti, now.getTime());
  // Not waited for: a request never waits on a hint (nor on a database that stopped answering).
  void db
    .query(sql.typeAlias('void')`
      update api_tokens set last_used_at = ${sql.timestamp(now)}
      where jti = ${jti} and (last_used_at is null or last_used_at < ${sql.timestamp(now)})
    `)
    .catch(() => written.delete(jti));
}

export interface TokenListing {
  jti: string;
  /** What the merchant called it; null: no name. */
  name: string | null;
  issuedAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
  /** full, read_only or create_payments (src/auth/scopes.ts). */
  scope: TokenScope;
  /** active, expired or revoked, at the time of listing. */
  state: 'active' | 'expired' | 'revoked';
}

const listedToken = z.object({
  jti: z.string(),
  name: z.string().nullable(),
  issued_at: z.date(),
  expires_at: z.date().nullable(),
  revoked_at: z.date().nullable(),
  last_used_at: z.date().nullable(),
  scope: z.enum(['full', 'read_only', 'create_payments']),
});

/** A store's tokens, newest first, without any secret (the JWT itself is never stored). */
export async function listTokens(db: Db, storeId: string, now: Date): Promise<TokenListing[]> {
  const exists = isUuid(storeId) ? await db.exists(sql.unsafe`select 1 from stores where id = ${storeId}`) : false;
  if (!exists) throw new FormProblem(`unknown store "${storeId}"`, 'store');
  const rows = await db.any(sql.type(listedToken)`
    select jti, name, issued_at, expires_at, revoked_at, last_used_at, scope from api_tokens where store_id = ${storeId} order by issued_at desc, jti
  `);
  const iso = (date: Date | null) => (date ? date.toISOString() : null);
  return rows.map((row) => ({
    jti: row.jti,
    name: row.name,
    issuedAt: row.issued_at.toISOString(),
    expiresAt: iso(row.expires_at),
    revokedAt: iso(row.revoked_at),
    lastUsedAt: iso(row.last_used_at),
    scope: row.scope,
    state: row.revoked_at !== null ? 'revoked' : row.expires_at !== null && row.expires_at.getTime() <= now.getTime() ? 'expired' : 'active',
  }));
}

interface AuthenticateHooks {
  /**
   * Runs before a signature is verified, that is for a token this process has not verified
   * before; throwing refuses the request without spending the verification.
   */
  beforeVerifying?: () => void | Promise<void>;
  /** Runs when that verification succeeded. */
  verified?: () => void | Promise<void>;
}

const tokenRow = z.object({ store_id: z.string(), revoked_at: z.date().nullable(), expires_at: z.date().nullable(), scope: z.string() });

/** A token whose signature and claims are verified; its database row is still to be checked. */
export interface VerifiedToken {
  storeId: string;
  jti: string;
  /** What the token may do (its signed `scope` claim; `full` when it has none). */
  scope: TokenScope;
}

/**
 * Verifies a bearer token and returns its store id. Every failure is the same 401 auth_invalid,
 * with no hint of which check failed.
 */
export async function authenticate(db: Db, token: string, now: Date, hooks: AuthenticateHooks = {}): Promise<VerifiedToken> {
  const verified = await verifyToken(db, token, now, hooks);
  await checkTokenRow(db, verified, now);
  return verified;
}

/** The signature and claims only (`authenticate` without its database read). */
export async function verifyToken(db: Db, token: string, now: Date, hooks: AuthenticateHooks = {}): Promise<VerifiedToken> {
  const key = await tokenKey(db);
  const claims = await verifySignature(key, token, now, hooks);
  // Refused by the database before (revoked, unknown): refused again without asking it.
  if (key.refused.has(claims.jti)) throw authInvalid();
  return { storeId: claims.sub, jti: claims.jti, scope: claims.scope };
}

/**
 * The database's word on a verified token: known, of its store, not revoked, not expired (docs/API.md,
 * Authentication: refused at once), and its row's scope the token's own claim. The claim is what the
 * API enforces and the row what the lists show (`kassa token list`, the dashboard); a token whose row
 * says another scope (edited by hand: Kassa never changes a scope) is refused, so what a list shows
 * is always what the API allows. `tokenValidSql` is the same rule in SQL (test/auth/token-check.test.ts
 * pins the two together). A refusal of the jti itself (revoked, unknown) is remembered by this
 * process (`verifyToken` refuses any token with that jti from memory from then on).
 */
export async function checkTokenRow(db: Db, token: VerifiedToken, now: Date): Promise<void> {
  const row = await db.maybeOne(prepared(sql.type(tokenRow)`select store_id, revoked_at, expires_at, scope from api_tokens where jti = ${token.jti}`));
  if (!row || row.revoked_at !== null) {
    // Facts about the jti itself, whatever token carries it: remembered.
    rememberRefused(await tokenKey(db), token.jti);
    throw authInvalid();
  }
  // Facts about this token's claims (another token may carry the same jti with the right ones): not remembered.
  if (row.store_id !== token.storeId || row.scope !== token.scope) throw authInvalid();
  if (row.expires_at !== null && row.expires_at.getTime() <= now.getTime()) throw authInvalid();
}

function rememberRefused(key: TokenKey, jti: string): void {
  if (key.refused.size >= MAX_VERIFIED_TOKENS) key.refused.delete(key.refused.values().next().value!);
  key.refused.add(jti);
}

/**
 * A verified token whose database check a route makes inside its own first statement
 * (`tokenValidSql`); `checked` is set once the database said the token is valid.
 */
export interface TokenCheck {
  token: VerifiedToken;
  now: Date;
  checked: boolean;
}

/**
 * The same check as `checkTokenRow` (scope included) as a boolean SQL expression, for a statement that reads what
 * the request needs and checks its token in the same round trip (the caller refuses the request
 * with auth_invalid when it is false, before using anything else the statement read).
 */
export function tokenValidSql(token: VerifiedToken, now: Date): FragmentSqlToken {
  return sql.fragment`exists (select 1 from api_tokens where jti = ${token.jti} and store_id = ${token.storeId} and revoked_at is null and scope = ${token.scope} and (expires_at is null or expires_at > ${sql.timestamp(now)}))`;
}

/**
 * Checks the token's signature and claims. A token string this key has verified before is not
 * verified again (an Ed25519 verification is the largest CPU cost of a small request): only its
 * time claims are checked against `now` once more. The string is the cache key, so any other
 * token, a tampered one included, goes through the full verification. Revocation and the stored
 * expiry are checked by the caller, in the database, on every request.
 */
async function verifySignature(key: TokenKey, token: string, now: Date, hooks: AuthenticateHooks): Promise<VerifiedClaims> {
  const seconds = Math.floor(now.getTime() / 1000);
  const known = key.verified.get(token);
  if (known) {
    if ((known.exp !== undefined && seconds >= known.exp) || (known.nbf !== undefined && seconds < known.nbf)) throw authInvalid();
    return known;
  }
  await hooks.beforeVerifying?.();
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, key.publicKey, { algorithms: ACCEPTED_ALGORITHMS, currentDate: now, requiredClaims: ['sub', 'jti', 'iat'] }));
  } catch (error) {
    if (error instanceof joseErrors.JOSEError || error instanceof TypeError) throw authInvalid();
    throw error;
  }
  const { sub, jti, exp, nbf } = payload;
  // A token without a scope was issued before scopes: full access. A scope Kassa does not know is no token of its own.
  const scope = payload.scope ?? 'full';
  if (typeof sub !== 'string' || typeof jti !== 'string' || !isUuid(jti) || !isTokenScope(scope)) throw authInvalid();
  const claims: VerifiedClaims = { sub, jti, scope, ...(exp !== undefined ? { exp } : {}), ...(nbf !== undefined ? { nbf } : {}) };
  await hooks.verified?.();
  if (key.verified.size >= MAX_VERIFIED_TOKENS) key.verified.delete(key.verified.keys().next().value!);
  key.verified.set(token, claims);
  return claims;
}
