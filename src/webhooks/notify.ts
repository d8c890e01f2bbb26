// One run of the notification__send job: one attempt to send one notification (issue 47 item 7) — an
// email through the operator's SMTP server, or a Telegram message through the store's bot. The
// notifications themselves are made with the store's events (events.ts), in the change's transaction.
//
// As a webhook delivery (deliver.ts): the attempt row is written and committed before the message is
// sent and completed after (a worker killed meanwhile leaves it unfinished: the next run marks it
// interrupted); a failure throws and Graphile Worker retries with its backoff; when Graphile will run
// the job no more (attempts = max_attempts) the notification is marked failed. A message no longer
// wanted (the member turned the channel off, unlinked their chat, left the store, or the store removed
// its bot) is marked failed without an attempt. The message is written afresh from the event's payload;
// no secret is ever in it, and no error text repeats the bot token or the SMTP password.
import type { Config } from '../config.ts';
import { sql, z, type DatabasePool } from '../db/pool.ts';
import { ExternalFailure } from '../errors.ts';
import type { Logger } from '../log.ts';
import { sendMail } from '../net/mail.ts';
import { sendBotMessage } from '../net/telegramBot.ts';
import { notificationMessage } from './messages.ts';

const NOTIFICATION_INTERRUPTED = 'interrupted: the worker stopped before this attempt finished; its outcome is unknown';

interface NotifyDeps {
  config: Pick<Config, 'smtpUrl' | 'smtpFrom' | 'telegramApiUrl'>;
  pool: DatabasePool;
  log: Logger;
  now: () => Date;
  /** The dashboard page of a store's payment, for the message (null: none). */
  paymentLink?: (storeId: string, paymentId: string) => string;
}

interface NotifyHelpers {
  job: { attempts: number; max_attempts: number };
}

type NotifyOutcome = { result: 'sent'; attempt: number } | { result: 'failed'; attempt: number | null } | { result: 'skipped' };

class NotificationAttemptFailed extends ExternalFailure {
  override name = 'NotificationAttemptFailed';
}

const row = z.object({
  id: z.string(),
  store_id: z.string(),
  status: z.enum(['pending', 'sent', 'failed']),
  channel: z.enum(['email', 'telegram']),
  event: z.string(),
  payment_id: z.string().nullable(),
  payload: z.record(z.string(), z.unknown()),
  attempts: z.number(),
  store_name: z.string(),
  email: z.string(),
  by_email: z.boolean().nullable(),
  by_telegram: z.boolean().nullable(),
  chat_id: z.string().nullable(),
  bot_token: z.string().nullable(),
});

type Target = { channel: 'email'; to: string } | { channel: 'telegram'; chatId: string; token: string };

/** Makes one attempt at sending `notificationId` (see the top of this file). */
export async function sendNotification(deps: NotifyDeps, notificationId: string, helpers: NotifyHelpers): Promise<NotifyOutcome> {
  const log = deps.log.child({ notificationId });
  const startedAt = deps.now();
  const start = await deps.pool.transaction(async (tx) => {
    const n = await tx.maybeOne(sql.type(row)`
      select n.id, n.store_id, n.status, n.channel, n.event, n.payment_id, n.payload, n.attempts,
             coalesce(s.display_name, s.name) as store_name, u.email, c.by_email, c.by_telegram, c.telegram_chat_id::text as chat_id,
             s.notifications_bot_token as bot_token
      from notifications n join stores s on s.id = n.store_id join dashboard_users u on u.id = n.user_id
        left join notification_choices c on c.store_id = n.store_id and c.user_id = n.user_id
      where n.id = ${notificationId}
      for update of n
    `);
    if (n === null || n.status !== 'pending') return { kind: 'done' as const, outcome: { result: 'skipped' } as NotifyOutcome };
    const markInterrupted = sql.fragment`
      update notification_attempts set error = ${NOTIFICATION_INTERRUPTED}, finished_at = ${sql.timestamp(startedAt)}
      where notification_id = ${notificationId} and finished_at is null
    `;
    let target: Target | null = null;
    if (n.channel === 'email' && n.by_email === true) target = { channel: 'email', to: n.email };
    if (n.channel === 'telegram' && n.by_telegram === true && n.chat_id !== null && n.bot_token !== null) {
      target = { channel: 'telegram', chatId: n.chat_id, token: n.bot_token };
    }
    if (target === null) {
      await tx.query(sql.typeAlias('void')`
        with interrupted as (${markInterrupted})
        update notifications set status = 'failed', failed_at = ${sql.timestamp(startedAt)} where id = ${notificationId}
      `);
      log.info({ channel: n.channel }, 'notification not sent: the member no longer chose this channel (or the store removed its bot)');
      return { kind: 'done' as const, outcome: { result: 'failed', attempt: null } as NotifyOutcome };
    }
    const attempt = n.attempts + 1;
    await tx.query(sql.typeAlias('void')`
      with interrupted as (${markInterrupted}),
      recorded as (insert into notification_attempts (notification_id, attempt, started_at) values (${notificationId}, ${attempt}, ${sql.timestamp(startedAt)}))
      update notifications set attempts = ${attempt} where id = ${notificationId}
    `);
    const link = n.payment_id !== null && deps.paymentLink ? deps.paymentLink(n.store_id, n.payment_id) : null;
    return { kind: 'attempt' as const, attempt, target, message: notificationMessage(n.event, n.payload, n.store_name, link) };
  });
  if (start.kind === 'done') return start.outcome;

  const { attempt, target, message } = start;
  let error: string | null = null;
  try {
    if (target.channel === 'email') await sendMail(deps.config, { to: target.to, subject: message.subject, text: message.text });
    else await sendBotMessage(deps.config, target.token, target.chatId, `${message.subject}\n\n${message.text}`);
  } catch (failure) {
    error = (failure instanceof Error ? failure.message : String(failure)).slice(0, 500);
  }
  const retried = error !== null && helpers.job.attempts < helpers.job.max_attempts;
  const at = sql.timestamp(deps.now());
  const finish = sql.fragment`update notification_attempts set finished_at = ${at}, error = ${error} where notification_id = ${notificationId} and attempt = ${attempt}`;
  const status = error === null ? sql.fragment`status = 'sent', sent_at = ${at}` : retried ? null : sql.fragment`status = 'failed', failed_at = ${at}`;
  await deps.pool.query(
    status === null
      ? sql.typeAlias('void')`${finish}`
      : sql.typeAlias('void')`with finished as (${finish}) update notifications set ${status} where id = ${notificationId} and status = 'pending'`,
  );
  if (error === null) {
    log.info({ channel: target.channel, attempt }, 'notification sent');
    return { result: 'sent', attempt };
  }
  if (!retried) {
    log.warn({ channel: target.channel, attempt, error }, 'notification failed: no more attempts');
    return { result: 'failed', attempt };
  }
  log.warn({ channel: target.channel, attempt, error }, `notification attempt ${attempt} failed (${error}); Graphile Worker retries it`);
  throw new NotificationAttemptFailed(`notification ${notificationId} attempt ${attempt} failed: ${error}`);
}
