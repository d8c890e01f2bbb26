// Dashboard users, their role per store, and invitations: a one-time link, valid 24 h, that makes
// (or finds) the user by email, gives them the role in the store, and signs them in.
import { sql, z, type Db, type DatabasePool } from '../db/pool.ts';
import { type Actor, recordAudit } from './audit.ts';
import { hashPassword, passwordProblem } from './passwords.ts';
import { checkAccountPassword } from './signInLimits.ts';
import { isSecret, newSecret, secretHash } from './secrets.ts';
import { isUuid } from '../uuid.ts';

/** A person's role in a store: owner (everything) or viewer (read-only). The one list of them. */
export const ROLES = ['owner', 'viewer'] as const;
export type Role = (typeof ROLES)[number];
/** A role read from the database (store_members.role, dashboard_invitations.role). */
export const roleColumn = z.enum(ROLES);
/** A role typed by a person (a form, `--role`), or null when it is none. */
export const roleOf = (value: unknown): Role | null => ((ROLES as readonly unknown[]).includes(value) ? (value as Role) : null);
export const INVITATION_LIFETIME_MS = 24 * 3600_000;

/** A problem with what someone typed, shown beside the field it is about; nothing was changed. */
export class FormProblem extends Error {
  override name = 'FormProblem';
  readonly field: string | null;
  constructor(message: string, field: string | null = null) {
    super(message);
    this.field = field;
  }
}

/** "Ann@Example.com " → "ann@example.com", or null when it is not an email address. */
export function normalizeEmail(raw: string): string | null {
  const email = raw.trim().toLowerCase();
  return email.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) ? email : null;
}

export interface Membership {
  storeId: string;
  storeName: string;
  role: Role;
}

export async function membershipsOf(db: Db, userId: string): Promise<readonly Membership[]> {
  const rows = await db.any(sql.type(z.object({ store_id: z.string(), store_name: z.string(), role: roleColumn }))`
    select m.store_id, s.name as store_name, m.role from store_members m join stores s on s.id = m.store_id
    where m.user_id = ${userId} order by s.name, s.id
  `);
  return rows.map((row) => ({ storeId: row.store_id, storeName: row.store_name, role: row.role }));
}

/** The user's role in the store, or null when they are not a member (the store is then "not found" to them). */
export async function roleIn(db: Db, userId: string, storeId: string): Promise<Role | null> {
  return db.maybeOneFirst(sql.type(z.object({ role: roleColumn }))`
    select role from store_members where user_id = ${userId} and store_id = ${storeId}
  `);
}

export interface Invitation {
  url: string;
  storeId: string;
  email: string;
  role: Role;
  expiresAt: Date;
}

export class UnknownStoreForInvitation extends Error {
  override name = 'UnknownStoreForInvitation';
}

/** Makes an invitation (and writes it to the audit log, in one transaction); its link is shown once. */
export async function createInvitation(
  pool: DatabasePool,
  input: { storeId: string; email: string; role: Role; baseUrl: string; actor: Actor; now: Date },
): Promise<Invitation> {
  const email = normalizeEmail(input.email);
  if (email === null) throw new FormProblem(`"${input.email}" is not an email address.`, 'email');
  if (!ROLES.includes(input.role)) throw new FormProblem('The role is owner or viewer.', 'role');
  if (!isUuid(input.storeId)) throw new UnknownStoreForInvitation(`no store with id "${input.storeId}"`);
  const storeId = input.storeId.toLowerCase();
  const token = newSecret();
  const expiresAt = new Date(input.now.getTime() + INVITATION_LIFETIME_MS);
  await pool.transaction(async (tx) => {
    const store = await tx.exists(sql.unsafe`select 1 from stores where id = ${storeId}`);
    if (!store) throw new UnknownStoreForInvitation(`no store with id "${input.storeId}"`);
    await tx.query(sql.unsafe`
      insert into dashboard_invitations (store_id, email, role, token_hash, invited_by, created_at, expires_at)
      values (${storeId}, ${email}, ${input.role}, ${sql.binary(secretHash(token))}, ${input.actor.userId},
              ${sql.timestamp(input.now)}, ${sql.timestamp(expiresAt)})
    `);
    await recordAudit(tx, input.actor, { storeId, action: 'invitation.create', subject: email, detail: { role: input.role } }, input.now);
  });
  const base = input.baseUrl.replace(/\/+$/, '');
  return { url: `${base}/dashboard/invite/${token}`, storeId, email, role: input.role, expiresAt };
}

const openInvitation = z.object({
  id: z.string(),
  store_id: z.string(),
  store_name: z.string(),
  email: z.string(),
  role: roleColumn,
  user_id: z.string().nullable(),
  has_password: z.boolean(),
});
export type OpenInvitation = z.infer<typeof openInvitation>;

/** The invitation of a link, while it is unused and unexpired; null otherwise (the page says so, whichever it is). */
export async function findOpenInvitation(db: Db, token: string, now: Date): Promise<OpenInvitation | null> {
  if (!isSecret(token)) return null;
  return db.maybeOne(sql.type(openInvitation)`
    select i.id, i.store_id, s.name as store_name, i.email, i.role, u.id as user_id, u.password_hash is not null as has_password
    from dashboard_invitations i join stores s on s.id = i.store_id left join dashboard_users u on u.email = i.email
    where i.token_hash = ${sql.binary(secretHash(token))} and i.accepted_at is null and i.expires_at > ${sql.timestamp(now)}
  `);
}

/**
 * Accepts an invitation: a new user sets their password; a user who has one already confirms it.
 * The user gets the invitation's role in its store (an existing membership takes the new role), and
 * the invitation is used up. Returns the user's id, or null when the link is no longer valid.
 */
export async function acceptInvitation(
  pool: DatabasePool,
  input: { token: string; password: string; actor: Omit<Actor, 'userId' | 'name'>; now: Date },
): Promise<{ userId: string; storeId: string; email: string } | null> {
  const found = await findOpenInvitation(pool, input.token, input.now);
  if (!found) return null;
  let newHash: string | null = null;
  if (found.has_password) {
    // Under the sign-in limits: an invitation to someone else's email must not be a way to guess their password.
    const checked = await checkAccountPassword(pool, {
      email: found.email,
      password: input.password,
      clientAddress: input.actor.clientAddress,
      now: input.now,
    });
    if (checked.outcome === 'limited')
      throw new FormProblem(`Too many failed attempts for this account; try again in ${checked.retryAfterSeconds} s.`, 'password');
    if (checked.outcome === 'refused') throw new FormProblem('That is not the password of this account.', 'password');
  } else {
    const problem = passwordProblem(input.password);
    if (problem) throw new FormProblem(problem, 'password');
    newHash = await hashPassword(input.password);
  }
  return pool.transaction(async (tx) => {
    // Used once: the first transaction to mark it wins; a second one finds nothing to mark.
    const used = await tx.maybeOne(sql.type(z.object({ id: z.string() }))`
      update dashboard_invitations set accepted_at = ${sql.timestamp(input.now)}
      where id = ${found.id} and accepted_at is null and expires_at > ${sql.timestamp(input.now)} returning id
    `);
    if (!used) return null;
    const userId = await tx.oneFirst(sql.type(z.object({ id: z.string() }))`
      insert into dashboard_users (email, password_hash, created_at, password_changed_at)
      values (${found.email}, ${newHash}, ${sql.timestamp(input.now)}, ${newHash === null ? null : sql.timestamp(input.now)})
      on conflict (email) do update set
        password_hash = coalesce(dashboard_users.password_hash, excluded.password_hash),
        password_changed_at = coalesce(dashboard_users.password_changed_at, excluded.password_changed_at)
      returning id
    `);
    await tx.query(sql.unsafe`update dashboard_invitations set accepted_by = ${userId} where id = ${found.id}`);
    await tx.query(sql.unsafe`
      insert into store_members (store_id, user_id, role, created_at) values (${found.store_id}, ${userId}, ${found.role}, ${sql.timestamp(input.now)})
      on conflict (store_id, user_id) do update set role = excluded.role
    `);
    await recordAudit(
      tx,
      { ...input.actor, userId, name: found.email },
      { storeId: found.store_id, action: 'invitation.accept', subject: found.email, detail: { role: found.role } },
      input.now,
    );
    return { userId, storeId: found.store_id, email: found.email };
  });
}

export const memberRow = z.object({ user_id: z.string(), email: z.string(), role: roleColumn, created_at: z.date() });
export type MemberRow = z.infer<typeof memberRow>;

export async function membersOf(db: Db, storeId: string): Promise<readonly MemberRow[]> {
  return db.any(sql.type(memberRow)`
    select m.user_id, u.email, m.role, m.created_at from store_members m join dashboard_users u on u.id = m.user_id
    where m.store_id = ${storeId} order by u.email
  `);
}

export const invitationRow = z.object({
  email: z.string(),
  role: roleColumn,
  created_at: z.date(),
  expires_at: z.date(),
  accepted_at: z.date().nullable(),
});
export type InvitationRow = z.infer<typeof invitationRow>;

export async function invitationsOf(db: Db, storeId: string, limit = 50): Promise<readonly InvitationRow[]> {
  return db.any(sql.type(invitationRow)`
    select email, role, created_at, expires_at, accepted_at from dashboard_invitations where store_id = ${storeId} order by created_at desc limit ${limit}
  `);
}

/**
 * Changes a member's role (`role`) or removes them (`null`), audited. A store keeps at least one
 * owner: the change that would leave none is refused (FormProblem). Returns false when the user is
 * not a member of the store.
 */
export async function changeMembership(
  pool: DatabasePool,
  input: { storeId: string; userId: string; role: Role | null; actor: Actor; now: Date },
): Promise<boolean> {
  if (!isUuid(input.userId)) return false;
  const userId = input.userId.toLowerCase();
  return pool.transaction(async (tx) => {
    // The store's members, locked: two owners demoting each other at once cannot both succeed.
    const members = await tx.any(sql.type(z.object({ user_id: z.string(), email: z.string(), role: roleColumn }))`
      select m.user_id, u.email, m.role from store_members m join dashboard_users u on u.id = m.user_id
      where m.store_id = ${input.storeId} order by m.user_id for update of m
    `);
    const target = members.find((m) => m.user_id === userId);
    if (!target) return false;
    const owners = members.filter((m) => m.role === 'owner').length;
    if (target.role === 'owner' && input.role !== 'owner' && owners <= 1) {
      throw new FormProblem('A store keeps at least one owner: make someone else owner first.', 'member');
    }
    if (input.role === null) {
      await tx.query(sql.unsafe`delete from store_members where store_id = ${input.storeId} and user_id = ${userId}`);
      await recordAudit(tx, input.actor, { storeId: input.storeId, action: 'member.remove', subject: target.email, detail: { role: target.role } }, input.now);
    } else if (input.role !== target.role) {
      await tx.query(sql.unsafe`update store_members set role = ${input.role} where store_id = ${input.storeId} and user_id = ${userId}`);
      await recordAudit(
        tx,
        input.actor,
        { storeId: input.storeId, action: 'member.role_change', subject: target.email, detail: { from: target.role, to: input.role } },
        input.now,
      );
    }
    return true;
  });
}
