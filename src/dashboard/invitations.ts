// Invitations (the Team page, `kassa dashboard invite`): a one-time link, valid 24 h, that makes
// (or finds) the user by email, gives them the role in the store, and signs them in. An invitation is
// bound to its email: to a person without a password, its link sets it (their first sign-in); to a
// person who has one, only that person, signed in, takes it — the link is no way to their account nor
// to guess their password. A reset (an owner's new link for a member, resets_password, valid 1 h)
// sets a new password, ends the person's sessions and removes their passkeys, and changes no role.
// A link is checked again when it is used (issue 48 items 2, 4, 7): its maker must still be an owner
// of the store — for a reset, of every store the person belongs to at that moment; the operator's
// (no maker) always may. It dies before its expiry when superseded: a newer link for the person in
// the store (a newer reset: anywhere), a password change, the person's role changing or their
// removal, its maker leaving the store or no longer owning it, or an owner revoking it on the Team
// page. Every role change, an invitation's too, goes through setMembership (memberships.ts), which
// keeps the rule "a store always has an owner".
import { sql, z, type Db, type DatabasePool } from '../db/pool.ts';
import { FormProblem } from '../errors.ts';
import { isUuid } from '../uuid.ts';
import { endOtherAccess, revokeOpenLinks } from './accountAccess.ts';
import { type Actor, recordAudit } from './audit.ts';
import { normalizeEmail } from './forms.ts';
import { roleIn, setMembership } from './memberships.ts';
import { hashPassword, passwordProblem } from './passwords.ts';
import { DASHBOARD_PATH, dashboardPaths } from './paths.ts';
import { ROLES, roleColumn, type Role } from './roles.ts';
import { isSecret, newSecret, secretHash } from './secrets.ts';

const INVITATION_LIFETIME_MS = 24 * 3600_000;
/** A password reset's link lives this long: it hands over an account, so it is used at once or made again. */
export const RESET_LIFETIME_MS = 3600_000;

interface Invitation {
  url: string;
  storeId: string;
  email: string;
  role: Role;
  expiresAt: Date;
  resetsPassword: boolean;
}

/** Makes an invitation (and writes it to the audit log, in one transaction); its link is shown once. */
export async function createInvitation(
  pool: DatabasePool,
  input: { storeId: string; email: string; role: Role; baseUrl: string; actor: Actor; now: Date; resetsPassword?: boolean },
): Promise<Invitation> {
  const resetsPassword = input.resetsPassword ?? false;
  const email = normalizeEmail(input.email);
  if (email === null) throw new FormProblem(`"${input.email}" is not an email address.`, 'email');
  if (!ROLES.includes(input.role)) throw new FormProblem('The role is owner or viewer.', 'role');
  if (!isUuid(input.storeId)) throw new FormProblem(`no store with id "${input.storeId}"`, 'store');
  const storeId = input.storeId.toLowerCase();
  const token = newSecret();
  const expiresAt = new Date(input.now.getTime() + (resetsPassword ? RESET_LIFETIME_MS : INVITATION_LIFETIME_MS));
  const role = await pool.transaction(async (tx) => {
    const store = await tx.exists(sql.unsafe`select 1 from stores where id = ${storeId}`);
    if (!store) throw new FormProblem(`no store with id "${input.storeId}"`, 'store');
    // A reset keeps the person's role in the store (whatever `role` says).
    const role = resetsPassword ? await mayReset(tx, { storeId, email, by: input.actor.userId }) : input.role;
    // The newest link for a person is the only one that works: in this store, and a reset anywhere.
    await revokeOpenLinks(tx, { email, storeId, because: 'superseded', now: input.now });
    if (resetsPassword) await revokeOpenLinks(tx, { email, resetsOnly: true, because: 'superseded', now: input.now });
    await tx.query(sql.unsafe`
      insert into dashboard_invitations (store_id, email, role, token_hash, invited_by, created_at, expires_at, resets_password)
      values (${storeId}, ${email}, ${role}, ${sql.binary(secretHash(token))}, ${input.actor.userId},
              ${sql.timestamp(input.now)}, ${sql.timestamp(expiresAt)}, ${resetsPassword})
    `);
    await recordAudit(
      tx,
      input.actor,
      { storeId, action: 'invitation.create', subject: email, detail: { role, ...(resetsPassword ? { resetsPassword } : {}) } },
      input.now,
    );
    return role;
  });
  const base = input.baseUrl.replace(/\/+$/, '');
  return { url: dashboardPaths(`${base}${DASHBOARD_PATH}`).invitation(token), storeId, email, role, expiresAt, resetsPassword };
}

/**
 * A password reset's rule: the person is a member of the store, and whoever resets it (a dashboard
 * user; the operator's command line may always) is an owner of every store the person belongs to —
 * an owner of one store cannot take over the account that also opens another.
 */
async function mayReset(db: Db, input: { storeId: string; email: string; by: string | null }): Promise<Role> {
  const stores = await db.any(sql.type(z.object({ store_id: z.string(), role: roleColumn, resetter_role: roleColumn.nullable() }))`
    select m.store_id, m.role, (select r.role from store_members r where r.store_id = m.store_id and r.user_id = ${input.by}) as resetter_role
    from store_members m join dashboard_users u on u.id = m.user_id where u.email = ${input.email}
  `);
  const here = stores.find((s) => s.store_id === input.storeId);
  if (!here) throw new FormProblem(`${input.email} is not a member of this store.`, 'member');
  if (input.by !== null && stores.some((s) => s.resetter_role !== 'owner')) {
    throw new FormProblem(
      `${input.email} also belongs to a store you do not own, so only they or the person who runs your Kassa can reset this password (they with “Forgot your password?” on the sign-in page, where this Kassa sends email).`,
      'member',
    );
  }
  return here.role;
}

const openInvitation = z.object({
  id: z.string(),
  store_id: z.string(),
  store_name: z.string(),
  email: z.string(),
  role: roleColumn,
  user_id: z.string().nullable(),
  has_password: z.boolean(),
  resets_password: z.boolean(),
  invited_by: z.string().nullable(),
});
export type OpenInvitation = z.infer<typeof openInvitation>;

/** The invitation of a link, while it is unused and unexpired; null otherwise (the page says so, whichever it is). */
export async function findOpenInvitation(db: Db, token: string, now: Date): Promise<OpenInvitation | null> {
  if (!isSecret(token)) return null;
  return db.maybeOne(sql.type(openInvitation)`
    select i.id, i.store_id, s.name as store_name, i.email, i.role, u.id as user_id, u.password_hash is not null as has_password, i.resets_password,
           i.invited_by
    from dashboard_invitations i join stores s on s.id = i.store_id left join dashboard_users u on u.email = i.email
    where i.token_hash = ${sql.binary(secretHash(token))} and i.accepted_at is null and i.revoked_at is null and i.expires_at > ${sql.timestamp(now)}
  `);
}

/**
 * Who may take an invitation: `set_password` — its link sets the password (a person without one, or a
 * reset); `join` — the signed-in person of its email joins with a button; `sign_in_first` — the person
 * has a password and is not signed in; `other_account` — someone else is signed in.
 */
export type InvitationTaker = 'set_password' | 'join' | 'sign_in_first' | 'other_account';
export function invitationTaker(invitation: Pick<OpenInvitation, 'email' | 'has_password' | 'resets_password'>, signedInEmail: string | null): InvitationTaker {
  if (!invitation.has_password || invitation.resets_password) return 'set_password';
  if (signedInEmail === null) return 'sign_in_first';
  return signedInEmail === invitation.email ? 'join' : 'other_account';
}

/**
 * Whether the link may still give what it gives, checked when it is used (under a share lock of
 * the memberships it rests on, so that a removal or demotion made meanwhile waits or is seen): its
 * maker (none: the operator, who always may) still owns the store; for a reset, the person is still
 * a member of it and the maker owns every store the person belongs to now (mayReset).
 */
async function stillGiven(tx: Db, found: OpenInvitation): Promise<boolean> {
  const people = [found.invited_by, found.user_id].filter((id) => id !== null);
  if (people.length > 0) {
    await tx.query(sql.unsafe`select 1 from store_members where user_id = any(${sql.array(people, 'uuid')}) order by store_id, user_id for share`);
  }
  if (found.resets_password) {
    try {
      await mayReset(tx, { storeId: found.store_id, email: found.email, by: found.invited_by });
      return true;
    } catch (error) {
      if (error instanceof FormProblem) return false;
      throw error;
    }
  }
  return found.invited_by === null || (await roleIn(tx, found.invited_by, found.store_id)) === 'owner';
}

/**
 * Accepts an invitation (invitationTaker decides how), once it is checked again (stillGiven; a link
 * that no longer holds is revoked, rights_changed, and the answer is null): the user gets the
 * invitation's role in its store through setMembership (an existing membership takes the new role,
 * unless that leaves the store without an owner: FormProblem), and the invitation is used up. A new
 * password (first sign-in or reset) is set. A reset changes no role (the person keeps the one they
 * have now) and takes every other way in (accountAccess.ts endOtherAccess: every session, every
 * passkey, other reset links). Returns the user's id and session generation (the session the page
 * opens carries it), or null when the link is no longer valid.
 */
export async function acceptInvitation(
  pool: DatabasePool,
  input: { token: string; password: string; signedInEmail: string | null; actor: Omit<Actor, 'userId' | 'name'>; now: Date },
): Promise<{ userId: string; storeId: string; email: string; generation: number } | null> {
  const found = await findOpenInvitation(pool, input.token, input.now);
  if (!found) return null;
  const taker = invitationTaker(found, input.signedInEmail);
  if (taker === 'sign_in_first') throw new FormProblem(`Sign in as ${found.email} to accept this invitation.`, 'form');
  if (taker === 'other_account') throw new FormProblem(`This invitation is for ${found.email}: sign out, then sign in as ${found.email}.`, 'form');
  let newHash: string | null = null;
  if (taker === 'set_password') {
    const problem = passwordProblem(input.password);
    if (problem) throw new FormProblem(problem, 'password');
    newHash = await hashPassword(input.password);
  }
  return pool.transaction(async (tx) => {
    // Used once: the first transaction to mark it wins; a second one finds nothing to mark.
    const used = await tx.maybeOne(sql.type(z.object({ id: z.string() }))`
      update dashboard_invitations set accepted_at = ${sql.timestamp(input.now)}
      where id = ${found.id} and accepted_at is null and revoked_at is null and expires_at > ${sql.timestamp(input.now)} returning id
    `);
    if (!used) return null;
    if (!(await stillGiven(tx, found))) {
      await tx.query(sql.unsafe`
        update dashboard_invitations set accepted_at = null, revoked_at = ${sql.timestamp(input.now)}, revoked_because = 'rights_changed' where id = ${found.id}
      `);
      return null;
    }
    const reset = found.resets_password && found.has_password;
    const user = await tx.one(sql.type(z.object({ id: z.string(), session_generation: z.number() }))`
      insert into dashboard_users (email, password_hash, created_at, password_changed_at)
      values (${found.email}, ${newHash}, ${sql.timestamp(input.now)}, ${newHash === null ? null : sql.timestamp(input.now)})
      on conflict (email) do update set
        password_hash = ${reset ? sql.fragment`excluded.password_hash` : sql.fragment`coalesce(dashboard_users.password_hash, excluded.password_hash)`},
        password_changed_at = ${reset ? sql.fragment`excluded.password_changed_at` : sql.fragment`coalesce(dashboard_users.password_changed_at, excluded.password_changed_at)`}
      returning id, session_generation
    `);
    const userId = user.id;
    let generation = user.session_generation;
    const actor = { ...input.actor, userId, name: found.email };
    await tx.query(sql.unsafe`update dashboard_invitations set accepted_by = ${userId} where id = ${found.id}`);
    // A reset keeps the role the person has now (stillGiven found them a member): an old link is no way back to an old role.
    if (!found.resets_password) await setMembership(tx, { storeId: found.store_id, userId, role: found.role, join: true, actor, now: input.now });
    await recordAudit(tx, actor, { storeId: found.store_id, action: 'invitation.accept', subject: found.email, detail: { role: found.role } }, input.now);
    if (reset) {
      const ended = await endOtherAccess(tx, { userId, email: found.email, now: input.now });
      generation = ended.generation;
      await recordAudit(
        tx,
        actor,
        {
          storeId: found.store_id,
          action: 'password.reset',
          subject: found.email,
          detail: { sessions: ended.sessions, passkeysRemoved: ended.passkeysRemoved.map((p) => p.name) },
        },
        input.now,
      );
    }
    return { userId, storeId: found.store_id, email: found.email, generation };
  });
}

const invitationRow = z.object({
  id: z.string(),
  email: z.string(),
  role: roleColumn,
  resets_password: z.boolean(),
  /** Who made it (null: the operator's command line). */
  invited_by_email: z.string().nullable(),
  created_at: z.date(),
  expires_at: z.date(),
  accepted_at: z.date().nullable(),
  revoked_at: z.date().nullable(),
  revoked_because: z.string().nullable(),
});
export type InvitationRow = z.infer<typeof invitationRow>;

/** The store's invitations and reset links, newest first (the Team page: the open ones can be revoked). */
export async function invitationsOf(db: Db, storeId: string, limit = 50): Promise<readonly InvitationRow[]> {
  return db.any(sql.type(invitationRow)`
    select i.id, i.email, i.role, i.resets_password, u.email as invited_by_email, i.created_at, i.expires_at, i.accepted_at, i.revoked_at, i.revoked_because
    from dashboard_invitations i left join dashboard_users u on u.id = i.invited_by
    where i.store_id = ${storeId} order by i.created_at desc limit ${limit}
  `);
}

/** An owner revokes an open link of the store (audited: invitation.revoke); false when the store has no such open link. */
export async function revokeInvitation(pool: DatabasePool, input: { storeId: string; invitationId: string; actor: Actor; now: Date }): Promise<boolean> {
  if (!isUuid(input.invitationId)) return false;
  return pool.transaction(async (tx) => {
    const revoked = await tx.maybeOne(sql.type(z.object({ email: z.string(), resets_password: z.boolean() }))`
      update dashboard_invitations set revoked_at = ${sql.timestamp(input.now)}, revoked_because = 'revoked_by_owner'
      where id = ${input.invitationId.toLowerCase()} and store_id = ${input.storeId} and accepted_at is null and revoked_at is null
      returning email, resets_password
    `);
    if (!revoked) return false;
    await recordAudit(
      tx,
      input.actor,
      {
        storeId: input.storeId,
        action: 'invitation.revoke',
        subject: revoked.email,
        detail: { invitation: input.invitationId.toLowerCase(), resetsPassword: revoked.resets_password },
      },
      input.now,
    );
    return true;
  });
}
