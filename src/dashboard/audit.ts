// The audit log (table audit_log, view reporting.audit_log): every action that changes money or
// access, who did it, when, from where, and for which store. Written in the transaction of the
// action itself, so an action and its row commit together or not at all.
import { sql, z, type Db } from '../db/pool.ts';

export type AuditAction =
  | 'refund.create'
  | 'refund.refused'
  | 'refund.request_sent'
  | 'refund.request_declined'
  | 'webhook.redeliver'
  | 'webhook.refused'
  | 'token.issue'
  | 'token.revoke'
  | 'store.update'
  | 'treasury.change'
  | 'webhook_key.rotate'
  | 'webhook_endpoint.add'
  | 'webhook_endpoint.test'
  | 'webhook_endpoint.delete'
  | 'member.role_change'
  | 'member.remove'
  | 'invitation.create'
  | 'invitation.accept'
  | 'invitation.revoke'
  | 'session.sign_in'
  | 'session.sign_out'
  | 'session.sign_out_everywhere'
  | 'passkey.add'
  | 'passkey.remove'
  | 'password.change'
  | 'password.reset'
  | 'payment.create'
  | 'unmatched.assign'
  | 'unmatched.keep'
  | 'unmatched.refund'
  | 'unmatched.refund_request_sent'
  | 'unmatched.refund_request_declined'
  | 'payment_link.create'
  | 'payment_link.deactivate'
  | 'refund_fees.ask'
  | 'refund_fees.arrived'
  | 'setup.complete'
  | 'store.create'
  | 'plan.create'
  | 'plan.archive'
  | 'subscription.create'
  | 'plan.update'
  | 'subscription.cancel'
  | 'subscription.credit'
  | 'subscription.portal_reissue';

/** Who acts and from where: a dashboard user in a request, the operator's command line, or an API token. */
export interface Actor {
  userId: string | null;
  /** The user's email, "cli", or an API token's jti. */
  name: string;
  clientAddress: string | null;
  userAgent: string | null;
}

export const CLI_ACTOR: Actor = { userId: null, name: 'cli', clientAddress: null, userAgent: null };

/** A request of the merchant API: the actor is its bearer token's jti. */
export const tokenActor = (jti: string, clientAddress: string | null, userAgent: string | null): Actor => ({
  userId: null,
  name: jti,
  clientAddress,
  userAgent,
});

interface AuditEntry {
  storeId: string | null;
  action: AuditAction;
  subject?: string | null;
  detail?: Record<string, unknown>;
}

export async function recordAudit(db: Db, actor: Actor, entry: AuditEntry, now: Date): Promise<void> {
  await db.query(sql.unsafe`
    insert into audit_log (at, store_id, actor_user_id, actor, action, subject, detail, client_address, user_agent)
    values (${sql.timestamp(now)}, ${entry.storeId}, ${actor.userId}, ${actor.name}, ${entry.action}, ${entry.subject ?? null},
            ${sql.jsonb((entry.detail ?? {}) as never)}, ${actor.clientAddress}, ${actor.userAgent?.slice(0, 300) ?? null})
  `);
}

const auditRow = z.object({
  id: z.string(),
  at: z.date(),
  actor: z.string(),
  action: z.string(),
  subject: z.string().nullable(),
  detail: z.record(z.string(), z.unknown()),
  client_address: z.string().nullable(),
});
export type AuditRow = z.infer<typeof auditRow>;

/** A store's audit log by time, newest first, `limit` rows after the row `beforeId` in that order (keyset paging). */
export async function listAudit(
  db: Db,
  storeId: string,
  options: { limit: number; beforeId?: string },
): Promise<{ rows: readonly AuditRow[]; hasMore: boolean }> {
  // By time, newest first (an entry's id orders them only as they were written, not when they happened); keyset on (at, id).
  const before = options.beforeId
    ? sql.fragment`and (at, id) < (select b.at, b.id from audit_log b where b.id = ${options.beforeId} and b.store_id = ${storeId})`
    : sql.fragment``;
  const rows = await db.any(sql.type(auditRow)`
    select id::text, at, actor, action, subject, detail, client_address from audit_log
    where store_id = ${storeId} ${before}
    order by at desc, id desc limit ${options.limit + 1}
  `);
  return { rows: rows.slice(0, options.limit), hasMore: rows.length > options.limit };
}
