// Which bot opened the Mini App (issue 47 item 9). Every store's Mini App has one URL at BotFather,
// {checkout_base_url}/tg, and the payment id is only the launch's start parameter: anyone can send
// t.me/<store A's bot>/<app>?startapp=<store B's payment>. The page of a payment is shown inside
// Telegram only when the launch's init data is signed by Telegram for the payment's own store's bot
// and names that payment; otherwise nothing of it is (docs/API.md, Telegram Mini App).
import { sql, z, type Db } from '../db/pool.ts';
import { PORTAL_START_PREFIX } from '../subscriptions/portal.ts';
import { subscriptionByPortalToken } from '../subscriptions/records.ts';
import { checkInitData } from './initData.ts';

/**
 * How old a launch may be for its page to show (the page, not the payer: recordTelegramPayer keeps
 * an hour). The check is of the bot, not of the person; a payment made in the dashboard stays
 * payable up to a week, and a day more covers a Mini App left open.
 */
const TELEGRAM_LAUNCH_MAX_AGE_SECONDS = 8 * 86_400;

type LaunchCheck = 'ok' | 'not_found' | 'other_bot';

/** Whether `initData` launched the payment's page from its own store's bot ('other_bot': another bot, a forgery, or a store with no bot). */
export async function checkLaunch(
  db: Db,
  paymentId: string,
  initData: string,
  { publicKeyHex, now }: { publicKeyHex: string; now: Date },
): Promise<LaunchCheck> {
  const store = await db.maybeOne(sql.type(z.object({ telegram_bot_id: z.string().nullable(), subscription_id: z.string().nullable() }))`
    select s.telegram_bot_id::text as telegram_bot_id, p.subscription_id from payments p join stores s on s.id = p.store_id where p.id = ${paymentId}
  `);
  if (!store) return 'not_found';
  if (store.telegram_bot_id === null) return 'other_bot';
  const check = checkInitData(initData, { botId: Number(store.telegram_bot_id), publicKeyHex, now, maxAgeSeconds: TELEGRAM_LAUNCH_MAX_AGE_SECONDS });
  if (!check.ok) return 'other_bot';
  if (check.startParam === paymentId) return 'ok';
  // Launched for a subscription's portal (startapp=s_<token>), which sent the customer on to a payment of that subscription.
  if (store.subscription_id !== null && check.startParam?.startsWith(PORTAL_START_PREFIX)) {
    const subscription = await subscriptionByPortalToken(db, check.startParam.slice(PORTAL_START_PREFIX.length), now);
    if (subscription?.id === store.subscription_id) return 'ok';
  }
  return 'other_bot';
}

/**
 * Whether `initData` launched the portal of `token` (startapp=s_<token>; the caller found
 * `subscription` by it) from the subscription's own store's bot: signed by Telegram for that bot,
 * naming that portal ('other_bot' otherwise).
 */
export async function checkPortalLaunch(
  db: Db,
  subscription: { store_id: string },
  token: string,
  initData: string,
  { publicKeyHex, now }: { publicKeyHex: string; now: Date },
): Promise<'ok' | 'other_bot'> {
  const botId = await db.maybeOneFirst(sql.type(z.object({ id: z.string().nullable() }))`
    select telegram_bot_id::text as id from stores where id = ${subscription.store_id}
  `);
  if (botId === null) return 'other_bot';
  const check = checkInitData(initData, { botId: Number(botId), publicKeyHex, now, maxAgeSeconds: TELEGRAM_LAUNCH_MAX_AGE_SECONDS });
  return check.ok && check.startParam === `${PORTAL_START_PREFIX}${token}` ? 'ok' : 'other_bot';
}
