// First-run setup in the browser (issue 47 item 1), as self-hosted products do it: a Kassa whose
// database has no store and no dashboard account makes a one-time setup code at each start of an API
// process (a new code each time, the older one dead: only its SHA-256 is kept, in the one row of
// first_run_setup) and prints it on the start line. The dashboard's "Set up Kassa" page takes the
// code, the first store's name and essentials, and the first owner's email and password; it makes the
// store and the owner, signs them in and spends the code, in one transaction that holds the row's
// lock: of two browsers racing with the right code, one sets Kassa up and the other is told so.
// Once a store exists (from the setup or from `kassa store create`) there is no setup any more: the
// page is gone and the code refused forever. An owner makes further stores from the dashboard
// (createOwnedStore, audited as store.create).
import crypto from 'node:crypto';
import { sql, z, type Db, type DatabasePool } from '../db/pool.ts';
import { createStore, type MethodRef, storeName } from '../stores/stores.ts';
import { type Actor, recordAudit } from './audit.ts';
import { normalizeEmail } from './forms.ts';
import { setMembership } from './memberships.ts';
import { FormProblem } from '../errors.ts';
import { hashPassword, passwordProblem } from './passwords.ts';
import { can } from './policy.ts';
import { openSession } from './sessions.ts';

/** A setup code is refused this long after the start that printed it (the next start prints a new one). */
const SETUP_CODE_LIFETIME_MS = 24 * 3600_000;
/** Crockford's base32 (no I, L, O, U): what a person reads off a terminal and types without confusion. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const CODE_LENGTH = 12;

/** A new code: 12 characters of Crockford base32 (60 random bits), shown as XXXX-XXXX-XXXX. */
export function newSetupCode(): string {
  const bytes = crypto.randomBytes(CODE_LENGTH);
  const chars = Array.from(bytes, (byte) => ALPHABET[byte & 31]!).join('');
  return `${chars.slice(0, 4)}-${chars.slice(4, 8)}-${chars.slice(8)}`;
}

/** A code as typed, as it is hashed: upper case, without spaces and dashes, O read as 0, I and L as 1. */
export const normalizeSetupCode = (typed: string): string => typed.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');

const codeHash = (code: string): Buffer => crypto.createHash('sha256').update(normalizeSetupCode(code), 'utf8').digest();

/** Whether the database holds any store or any dashboard account (then Kassa is set up, whoever did it). */
async function anyoneHere(db: Db): Promise<boolean> {
  return db.exists(sql.unsafe`select 1 where exists (select 1 from stores) or exists (select 1 from dashboard_users)`);
}

/**
 * At the start of an API process: when Kassa is not set up (no store, no dashboard account, no code
 * spent), a new setup code replacing any older one; null otherwise. The code is returned once, to be
 * printed; only its hash is kept.
 */
export async function offerSetup(pool: DatabasePool, now: Date): Promise<{ code: string; expiresAt: Date } | null> {
  return pool.transaction(async (tx) => {
    // Serialised with a setup being completed (its row lock) and with other starts.
    await tx.query(sql.unsafe`select pg_advisory_xact_lock(hashtext('kassa first_run_setup'))`);
    const spent = await tx.exists(sql.unsafe`select 1 from first_run_setup where spent_at is not null`);
    if (spent || (await anyoneHere(tx))) return null;
    const code = newSetupCode();
    const expiresAt = new Date(now.getTime() + SETUP_CODE_LIFETIME_MS);
    await tx.query(sql.unsafe`
      insert into first_run_setup (singleton, code_hash, created_at, expires_at) values (true, ${sql.binary(codeHash(code))}, ${sql.timestamp(now)}, ${sql.timestamp(expiresAt)})
      on conflict (singleton) do update set code_hash = excluded.code_hash, created_at = excluded.created_at, expires_at = excluded.expires_at
        where first_run_setup.spent_at is null
    `);
    return { code, expiresAt };
  });
}

/** Whether the "Set up Kassa" page is offered: a code was printed, is not spent, and no store or account exists. */
export async function setupOpen(db: Db): Promise<boolean> {
  return db.exists(sql.unsafe`
    select 1 from first_run_setup where spent_at is null
      and not exists (select 1 from stores) and not exists (select 1 from dashboard_users)
  `);
}

/** Kassa was set up already (by another browser a moment ago, or by the command line): there is nothing to set up. */
export class SetupClosed extends Error {
  override name = 'SetupClosed';
}

export interface SetupInput {
  code: string;
  storeName: string;
  methods: MethodRef[];
  refundWindowDays: number;
  email: string;
  password: string;
  actor: Pick<Actor, 'clientAddress' | 'userAgent'>;
  now: Date;
}

/**
 * Sets Kassa up: checks the code (constant-time, under the row's lock), makes the store and its
 * owner, writes the audit rows, opens the owner's session and spends the code — all or nothing.
 * FormProblem (beside its field) when something typed is wrong; SetupClosed when there is nothing
 * to set up any more.
 */
export async function completeSetup(pool: DatabasePool, input: SetupInput): Promise<{ storeId: string; userId: string; token: string }> {
  const email = normalizeEmail(input.email);
  if (email === null) throw new FormProblem(`"${input.email}" is not an email address.`, 'email');
  const weak = passwordProblem(input.password);
  if (weak) throw new FormProblem(weak, 'password');
  const name = wordedStoreName(input.storeName);
  // The slow part (scrypt) before the lock is taken.
  const passwordHash = await hashPassword(input.password);
  const typed = codeHash(input.code);
  return pool.transaction(async (tx) => {
    const row = await tx.maybeOne(sql.type(z.object({ code_hash: z.instanceof(Buffer), expires_at: z.date(), spent_at: z.date().nullable() }))`
      select code_hash, expires_at, spent_at from first_run_setup where singleton for update
    `);
    if (!row || row.spent_at !== null || (await anyoneHere(tx))) throw new SetupClosed('Kassa is set up already');
    const matches = row.code_hash.length === typed.length && crypto.timingSafeEqual(row.code_hash, typed);
    if (!matches) throw new FormProblem('That setup code is not right. Copy it from the newest "kassa started" line.', 'code');
    if (row.expires_at.getTime() <= input.now.getTime()) {
      throw new FormProblem('That setup code has expired. Restart Kassa: its start line shows a new one.', 'code');
    }
    const store = await createStore(tx, name, input.methods, { refundWindowDays: input.refundWindowDays });
    const userId = await tx.oneFirst(sql.type(z.object({ id: z.string() }))`
      insert into dashboard_users (email, password_hash, created_at, password_changed_at)
      values (${email}, ${passwordHash}, ${sql.timestamp(input.now)}, ${sql.timestamp(input.now)}) returning id
    `);
    const actor: Actor = { ...input.actor, userId, name: email };
    await setMembership(tx, { storeId: store.id, userId, role: 'owner', join: true, actor, now: input.now });
    await tx.query(sql.unsafe`
      update first_run_setup set spent_at = ${sql.timestamp(input.now)}, store_id = ${store.id}, owner_user_id = ${userId} where singleton
    `);
    await recordAudit(
      tx,
      actor,
      {
        storeId: store.id,
        action: 'setup.complete',
        subject: email,
        detail: { store: store.name, methods: store.methods.map((m) => `${m.coin}/${m.chain}`), refundWindowDays: store.refundWindowDays },
      },
      input.now,
    );
    const token = await openSession(tx, { userId, email, actor: input.actor, method: 'setup', now: input.now });
    return { storeId: store.id, userId, token };
  });
}

/** Whether a person may make a store of their own: they own at least one store. */
export const mayCreateStore = (memberships: readonly { role: Parameters<typeof can>[0] }[]): boolean =>
  memberships.some((membership) => can(membership.role, 'store.create'));

/**
 * An owner makes a further store from the dashboard: they become its owner; audited (store.create)
 * in the same transaction. The right is read again in the database: an owner of some store.
 */
export async function createOwnedStore(
  pool: DatabasePool,
  input: { userId: string; name: string; methods: MethodRef[]; refundWindowDays: number; actor: Actor; now: Date },
): Promise<{ storeId: string }> {
  const name = wordedStoreName(input.name);
  return pool.transaction(async (tx) => {
    const roles = await tx.anyFirst(sql.type(z.object({ role: z.enum(['owner', 'viewer']) }))`
      select role from store_members where user_id = ${input.userId} for share
    `);
    if (!mayCreateStore(roles.map((role) => ({ role })))) throw new FormProblem('Only an owner of a store can make another store.', 'form');
    const store = await createStore(tx, name, input.methods, { refundWindowDays: input.refundWindowDays });
    await setMembership(tx, { storeId: store.id, userId: input.userId, role: 'owner', join: true, actor: input.actor, now: input.now });
    await recordAudit(
      tx,
      input.actor,
      {
        storeId: store.id,
        action: 'store.create',
        subject: store.name,
        detail: { methods: store.methods.map((m) => `${m.coin}/${m.chain}`), refundWindowDays: store.refundWindowDays },
      },
      input.now,
    );
    return { storeId: store.id };
  });
}

/** The store's name as the form's field refuses it (the command line's words name its flag). */
function wordedStoreName(value: string): string {
  try {
    return storeName(value);
  } catch (error) {
    if (error instanceof FormProblem) throw new FormProblem('The store needs a name of 1 to 200 characters.', 'name');
    throw error;
  }
}
