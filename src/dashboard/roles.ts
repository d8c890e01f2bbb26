// A person's role in a store (docs/OPERATIONS.md, The dashboard): the one list of roles, read from the
// database and from what a person types. What each role may do is dashboard/policy.ts's.
import { z } from '../db/pool.ts';

/** A person's role in a store: owner (everything) or viewer (read-only). The one list of them. */
export const ROLES = ['owner', 'viewer'] as const;
export type Role = (typeof ROLES)[number];
/** A role read from the database (store_members.role, dashboard_invitations.role). */
export const roleColumn = z.enum(ROLES);
/** A role typed by a person (a form, `--role`), or null when it is none. */
export const roleOf = (value: unknown): Role | null => ((ROLES as readonly unknown[]).includes(value) ? (value as Role) : null);
