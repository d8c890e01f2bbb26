// A member's notifications (issue 47 item 7), as the dashboard's Notifications page manages them:
// what they are told (NOTIFICATION_TOPICS) and how (email at their sign-in address, Telegram through
// the store's notifications bot), their chat linked with a one-time code they send the bot, their recent
// notifications; and, for an owner, the store's bot token (a secret: stored, never shown back,
// audited as store.update without it). The messages themselves are made by webhooks/events.ts and sent
// by webhooks/notify.ts.
import crypto from 'node:crypto';
import type { Config } from '../config.ts';
import { sql, z, type DatabasePool, type Db } from '../db/pool.ts';
import { compareDecimal, isPositiveDecimalString } from '../money.ts';
import { BOT_TOKEN, botStarts, sendBotMessage } from '../net/telegramBot.ts';
import { NOTIFICATION_TOPICS, type NotificationTopic } from '../webhooks/events.ts';
import { type Actor, recordAudit } from './audit.ts';
import { FormProblem } from '../errors.ts';

/** A linking code is refused this long after it was made. */
const TELEGRAM_CODE_TTL_MS = 15 * 60 * 1000;

/** How many of a member's notifications the page lists, newest first. */
const NOTIFICATIONS_SHOWN = 20;

const choicesRow = z.object({
  events: z.array(z.string()),
  sale_at_least: z.string().nullable(),
  sale_currency: z.string().nullable(),
  by_email: z.boolean(),
  by_telegram: z.boolean(),
  telegram_linked: z.boolean(),
  code_waiting: z.boolean(),
});

interface NotificationChoices {
  events: NotificationTopic[];
  saleAtLeast: string | null;
  saleCurrency: string | null;
  byEmail: boolean;
  byTelegram: boolean;
  telegramLinked: boolean;
  /** A linking code was made and is not used or expired yet. */
  codeWaiting: boolean;
}

const recentRow = z.object({
  id: z.string(),
  channel: z.enum(['email', 'telegram']),
  event: z.string(),
  payment_id: z.string().nullable(),
  status: z.enum(['pending', 'sent', 'failed']),
  attempts: z.number(),
  created_at: z.date(),
  last_error: z.string().nullable(),
});
export type RecentNotification = z.infer<typeof recentRow>;

export interface NotificationsView {
  choices: NotificationChoices;
  recent: readonly RecentNotification[];
  /** The store has a notifications bot. */
  hasBot: boolean;
}

/** A member's choices (nothing chosen when they never saved any), their recent notifications, and whether the store has a bot. */
export async function notificationsOf(pool: DatabasePool, storeId: string, userId: string, now: Date): Promise<NotificationsView> {
  const [choices, recent, hasBot] = await Promise.all([
    pool.maybeOne(sql.type(choicesRow)`
      select events, sale_at_least::text, sale_currency, by_email, by_telegram, telegram_chat_id is not null as telegram_linked,
             coalesce(telegram_code_expires_at > ${sql.timestamp(now)}, false) as code_waiting
      from notification_choices where store_id = ${storeId} and user_id = ${userId}
    `),
    pool.any(sql.type(recentRow)`
      select n.id, n.channel, n.event, n.payment_id, n.status, n.attempts, n.created_at,
             (select a.error from notification_attempts a where a.notification_id = n.id order by a.attempt desc limit 1) as last_error
      from notifications n where n.store_id = ${storeId} and n.user_id = ${userId}
      order by n.created_at desc, n.id limit ${NOTIFICATIONS_SHOWN}
    `),
    pool.oneFirst(sql.type(z.object({ has: z.boolean() }))`select notifications_bot_token is not null as has from stores where id = ${storeId}`),
  ]);
  return {
    choices: {
      events: NOTIFICATION_TOPICS.filter((topic) => choices?.events.includes(topic)),
      saleAtLeast: choices?.sale_at_least ?? null,
      saleCurrency: choices?.sale_currency ?? null,
      byEmail: choices?.by_email ?? false,
      byTelegram: choices?.by_telegram ?? false,
      telegramLinked: choices?.telegram_linked ?? false,
      codeWaiting: choices?.code_waiting ?? false,
    },
    recent,
    hasBot,
  };
}

interface ChoicesInput {
  events: NotificationTopic[];
  saleAtLeast: string | null;
  saleCurrency: string | null;
  byEmail: boolean;
  byTelegram: boolean;
}

/** The choices form as posted (unknown topics dropped; a comma decimal read as a point). */
export function readChoicesForm(body: unknown): ChoicesInput {
  const fields = (body ?? {}) as Record<string, unknown>;
  const list = (value: unknown) => (Array.isArray(value) ? value : typeof value === 'string' ? [value] : []);
  const checked = list(fields.events);
  const ways = list(fields.by);
  const at = typeof fields.saleAtLeast === 'string' ? fields.saleAtLeast.trim().replace(',', '.') : '';
  const currency = typeof fields.saleCurrency === 'string' ? fields.saleCurrency.trim().toUpperCase() : '';
  return {
    events: NOTIFICATION_TOPICS.filter((topic) => checked.includes(topic)),
    saleAtLeast: at === '' ? null : at,
    saleCurrency: at === '' ? null : currency === 'GRAM' ? 'TON' : currency,
    byEmail: ways.includes('email'),
    byTelegram: ways.includes('telegram'),
  };
}

/** Saves a member's choices; a FormProblem names the field it refuses. */
export async function saveChoices(
  pool: DatabasePool,
  config: Pick<Config, 'smtpUrl' | 'smtpFrom'>,
  storeId: string,
  userId: string,
  input: ChoicesInput,
  now: Date,
): Promise<void> {
  if (input.saleAtLeast !== null) {
    if (!isPositiveDecimalString(input.saleAtLeast) || compareDecimal(input.saleAtLeast, '1000000000000') > 0) {
      throw new FormProblem('Write the amount as a number, such as 50 or 12.5.', 'saleAtLeast');
    }
    if (!/^[A-Z]{3,10}$/.test(input.saleCurrency ?? '')) throw new FormProblem('Choose the currency of that amount.', 'saleCurrency');
  }
  if (input.byEmail && (config.smtpUrl === null || config.smtpFrom === null)) {
    throw new FormProblem('This Kassa cannot send email yet: the person who runs your Kassa has not set up an email server for it.', 'by');
  }
  await pool.query(sql.typeAlias('void')`
    insert into notification_choices (store_id, user_id, events, sale_at_least, sale_currency, by_email, by_telegram, updated_at)
    values (${storeId}, ${userId}, ${sql.array(input.events, 'text')}, ${input.saleAtLeast}::numeric, ${input.saleCurrency},
            ${input.byEmail}, ${input.byTelegram}, ${sql.timestamp(now)})
    on conflict (store_id, user_id) do update set events = excluded.events, sale_at_least = excluded.sale_at_least,
      sale_currency = excluded.sale_currency, by_email = excluded.by_email, by_telegram = excluded.by_telegram, updated_at = excluded.updated_at
  `);
}

const codeHash = (code: string): Buffer => crypto.createHash('sha256').update(code, 'utf8').digest();

/**
 * A new one-time code for the member to send the store's bot (`/start <code>`), replacing any earlier
 * one; only its hash is kept. Shown once.
 */
export async function newTelegramCode(pool: DatabasePool, storeId: string, userId: string, now: Date): Promise<string> {
  const code = crypto.randomBytes(12).toString('base64url');
  await pool.query(sql.typeAlias('void')`
    insert into notification_choices (store_id, user_id, telegram_code_hash, telegram_code_expires_at, updated_at)
    values (${storeId}, ${userId}, ${sql.binary(codeHash(code))}, ${sql.timestamp(new Date(now.getTime() + TELEGRAM_CODE_TTL_MS))}, ${sql.timestamp(now)})
    on conflict (store_id, user_id) do update set telegram_code_hash = excluded.telegram_code_hash,
      telegram_code_expires_at = excluded.telegram_code_expires_at, updated_at = excluded.updated_at
  `);
  return code;
}

/**
 * Reads the /start <code> messages the store's bot received and links each chat whose code is a
 * waiting one of a member of a store with this bot (the code then spent), telling the chat so; then
 * marks every update read. Returns the members of this store linked.
 */
export async function linkTelegramChats(pool: DatabasePool, config: Pick<Config, 'telegramApiUrl'>, storeId: string, now: Date): Promise<string[]> {
  const store = await pool.maybeOne(sql.type(z.object({ token: z.string().nullable() }))`
    select notifications_bot_token as token from stores where id = ${storeId}
  `);
  if (store?.token == null) throw new FormProblem('The store has no notifications bot yet: an owner adds its token below.');
  const { starts, next } = await botStarts(config, store.token);
  const linked: string[] = [];
  for (const start of starts) {
    // A code of any store this bot serves (an owner may give two stores one bot): every update is
    // marked read below, so none is left for the other store's page to find.
    const found = await pool.maybeOne(sql.type(z.object({ store_id: z.string(), user_id: z.string(), name: z.string() }))`
      update notification_choices c set telegram_chat_id = ${start.chatId}::bigint, telegram_code_hash = null, telegram_code_expires_at = null,
        by_telegram = true, updated_at = ${sql.timestamp(now)}
      from stores s
      where s.id = c.store_id and s.notifications_bot_token = ${store.token}
        and c.telegram_code_hash = ${sql.binary(codeHash(start.code))} and c.telegram_code_expires_at > ${sql.timestamp(now)}
      returning c.store_id, c.user_id, coalesce(s.display_name, s.name) as name
    `);
    if (found === null) continue;
    if (found.store_id === storeId) linked.push(found.user_id);
    await sendBotMessage(config, store.token, start.chatId, `${found.name} · Kassa will tell you here what you chose on the Notifications page.`);
  }
  if (next !== null) await botStarts(config, store.token, next);
  return linked;
}

/** Forgets the member's Telegram chat (Telegram messages stop). */
export async function unlinkTelegram(pool: DatabasePool, storeId: string, userId: string, now: Date): Promise<void> {
  await pool.query(sql.typeAlias('void')`
    update notification_choices set telegram_chat_id = null, by_telegram = false, updated_at = ${sql.timestamp(now)}
    where store_id = ${storeId} and user_id = ${userId}
  `);
}

/** An owner sets (or, with null, removes) the store's notifications bot token; audited without it. */
export async function setNotificationsBot(pool: DatabasePool, actor: Actor, storeId: string, token: string | null, now: Date): Promise<void> {
  if (token !== null && !BOT_TOKEN.test(token)) {
    throw new FormProblem('That is not a bot token: BotFather gives it as digits, a colon and a long code (123456:ABC…).', 'botToken');
  }
  await pool.transaction(async (tx: Db) => {
    await tx.query(sql.typeAlias('void')`update stores set notifications_bot_token = ${token} where id = ${storeId}`);
    await recordAudit(tx, actor, { storeId, action: 'store.update', detail: { notificationsBot: token === null ? 'removed' : 'set' } }, now);
  });
}
