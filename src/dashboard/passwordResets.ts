// Forgotten password by email (issue 47 item 1): a person who forgot their password asks, on the
// sign-in page, for a reset link at their address. The answer is the same whether an account has the
// address or not, and it is given before anything is looked up (the work runs after the answer, so
// its time tells nothing either). The link is a password reset as an owner's or the operator's
// (invitations.ts createInvitation with resetsPassword): valid 1 hour, used once, dead when a newer link
// supersedes it, checked again against the person's memberships when used (stillGiven); made by no
// one (invited_by null, as the operator's), its audit row's actor is the address that asked. A
// person without a membership gets nothing (a reset link belongs to a store). Limited per address:
// none within a minute of the last, at most RESETS_PER_HOUR an hour (the dashboard's per-client limit
// counts the requests too).
import type { Config } from '../config.ts';
import { sql, z, type DatabasePool } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { canSendMail, sendMail } from '../net/mail.ts';
import { normalizeEmail } from './forms.ts';
import { createInvitation, RESET_LIFETIME_MS } from './invitations.ts';

/** At most this many emailed reset links per address an hour. */
const RESETS_PER_HOUR = 3;
/** No new link within this long of the last one for the address. */
const RESET_SPACING_MS = 60_000;

interface ResetRequest {
  email: string;
  baseUrl: string;
  client: { clientAddress: string | null; userAgent: string | null };
  now: Date;
}

/**
 * Makes and emails a reset link for `email` when an account with a membership has it and its limit
 * allows; otherwise does nothing. Never throws (a failure is logged without the link).
 */
export async function sendPasswordReset(
  deps: { pool: DatabasePool; config: Pick<Config, 'smtpUrl' | 'smtpFrom'>; log: Logger },
  request: ResetRequest,
): Promise<'sent' | 'unknown' | 'limited' | 'no_email'> {
  const { pool, config, log } = deps;
  const email = normalizeEmail(request.email);
  if (email === null) return 'unknown';
  if (!canSendMail(config)) return 'no_email';
  try {
    const found = await pool.maybeOne(sql.type(z.object({ store_id: z.string(), recent: z.number(), last: z.date().nullable() }))`
      select m.store_id,
        (select count(*)::int from dashboard_invitations i where i.email = u.email and i.resets_password and i.invited_by is null
           and i.created_at > ${sql.timestamp(new Date(request.now.getTime() - 3600_000))}) as recent,
        (select max(i.created_at) from dashboard_invitations i where i.email = u.email and i.resets_password and i.invited_by is null) as last
      from dashboard_users u join store_members m on m.user_id = u.id
      where u.email = ${email}
      order by m.created_at, m.store_id limit 1
    `);
    if (found === null) return 'unknown';
    if (found.recent >= RESETS_PER_HOUR || (found.last !== null && request.now.getTime() - found.last.getTime() < RESET_SPACING_MS)) {
      log.info('password reset by email not sent: its address asked too often');
      return 'limited';
    }
    const link = await createInvitation(pool, {
      storeId: found.store_id,
      email,
      role: 'viewer',
      baseUrl: request.baseUrl,
      actor: { userId: null, name: email, ...request.client },
      now: request.now,
      resetsPassword: true,
    });
    await sendMail(config, {
      to: email,
      subject: 'Reset your Kassa password',
      text: [
        'Someone, hopefully you, asked to reset the password of your Kassa dashboard account.',
        '',
        `This link sets a new one. It works once, for ${RESET_LIFETIME_MS / 60_000} minutes, and signs you out everywhere else:`,
        link.url,
        '',
        'If you did not ask, ignore this email: your password stays as it is.',
      ].join('\n'),
    });
    return 'sent';
  } catch (error) {
    log.warn({ error: error instanceof Error ? error.message : String(error) }, 'password reset by email failed');
    return 'unknown';
  }
}
