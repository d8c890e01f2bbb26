// Who is in a store and with which role: a person's stores, their role in one, a store's members, and
// the one command that changes a membership (setMembership, an invitation's too), which keeps the
// rule "a store always has an owner"; a role change or removal ends the person's open links in the
// store, and those they made there when they stop owning it (accountAccess.ts revokeOpenLinks).
import { sql, z, type Db, type DatabasePool } from '../db/pool.ts';
import { isUuid } from '../uuid.ts';
import { revokeOpenLinks } from './accountAccess.ts';
import { type Actor, recordAudit } from './audit.ts';
import { FormProblem } from '../errors.ts';
import { roleColumn, type Role } from './roles.ts';

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

const memberRow = z.object({ user_id: z.string(), email: z.string(), role: roleColumn, created_at: z.date() });
export type MemberRow = z.infer<typeof memberRow>;

export async function membersOf(db: Db, storeId: string): Promise<readonly MemberRow[]> {
  return db.any(sql.type(memberRow)`
    select m.user_id, u.email, m.role, m.created_at from store_members m join dashboard_users u on u.id = m.user_id
    where m.store_id = ${storeId} order by u.email
  `);
}

/**
 * The one command that changes who is in a store and with which role: `role` for a member (or a
 * newcomer, with `join`, from an invitation), `null` removes them. A store keeps at least one owner:
 * the change that would leave none is refused (FormProblem). Audited (member.role_change,
 * member.remove); a newcomer's joining is the invitation's own audit row. Returns false when the user
 * is not a member of the store (and does not join).
 */
export async function setMembership(
  tx: Db,
  input: { storeId: string; userId: string; role: Role | null; join?: boolean; actor: Actor; now: Date },
): Promise<boolean> {
  const { storeId, userId } = input;
  // The store's members, locked: two owners demoting each other at once cannot both succeed.
  const members = await tx.any(sql.type(z.object({ user_id: z.string(), email: z.string(), role: roleColumn }))`
    select m.user_id, u.email, m.role from store_members m join dashboard_users u on u.id = m.user_id
    where m.store_id = ${storeId} order by m.user_id for update of m
  `);
  const target = members.find((m) => m.user_id === userId);
  if (!target) {
    if (!input.join || input.role === null) return false;
    await tx.query(sql.unsafe`
      insert into store_members (store_id, user_id, role, created_at) values (${storeId}, ${userId}, ${input.role}, ${sql.timestamp(input.now)})
    `);
    return true;
  }
  const owners = members.filter((m) => m.role === 'owner').length;
  if (target.role === 'owner' && input.role !== 'owner' && owners <= 1) {
    throw new FormProblem('A store keeps at least one owner: make someone else owner first.', 'member');
  }
  if (input.role === target.role) return true;
  // The person's open links in this store rest on what they were (a reset keeps a role, an
  // invitation gives one): they die; so do the links they made here when they leave or stop owning it.
  const linksFor = await revokeOpenLinks(tx, { email: target.email, storeId, because: 'member_changed', now: input.now });
  const linksMade = input.role !== 'owner' ? await revokeOpenLinks(tx, { madeBy: userId, storeId, because: 'maker_left', now: input.now }) : 0;
  const revoked = linksFor + linksMade > 0 ? { linksRevoked: linksFor + linksMade } : {};
  if (input.role === null) {
    await tx.query(sql.unsafe`delete from store_members where store_id = ${storeId} and user_id = ${userId}`);
    await recordAudit(tx, input.actor, { storeId, action: 'member.remove', subject: target.email, detail: { role: target.role, ...revoked } }, input.now);
  } else {
    await tx.query(sql.unsafe`update store_members set role = ${input.role} where store_id = ${storeId} and user_id = ${userId}`);
    await recordAudit(
      tx,
      input.actor,
      { storeId, action: 'member.role_change', subject: target.email, detail: { from: target.role, to: input.role, ...revoked } },
      input.now,
    );
  }
  return true;
}

/** Changes a member's role or removes them (`null`), from the Team page: setMembership in its own transaction. */
export async function changeMembership(
  pool: DatabasePool,
  input: { storeId: string; userId: string; role: Role | null; actor: Actor; now: Date },
): Promise<boolean> {
  if (!isUuid(input.userId)) return false;
  const userId = input.userId.toLowerCase();
  return pool.transaction(async (tx) => setMembership(tx, { ...input, userId }));
}
