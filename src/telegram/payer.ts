// The payer's Telegram user, recorded on the payment when its checkout runs as the store's Mini App
// and sends Telegram's init data (POST {checkout_base_url}/v1/checkout/payments/{id}/telegram). The
// init data must be Telegram's (its Ed25519 signature for the store's bot), fresh, and launched for
// this payment (`start_param`, which t.me/<bot>/<app>?startapp=<id> sets; or its subscription's
// portal, startapp=s_<token>, from which the customer went on to it): a string taken from
// another payment's launch names nobody here. Every opening is kept (payment_telegram_openings): the
// payer is who had opened it when the paying transfer was made, not whoever opened it last.
import { sql, z, type DatabasePool, type Db } from '../db/pool.ts';
import { KassaError, paymentNotFound } from '../errors.ts';
import { isFinal } from '../payments/transitions.ts';
import { PAYMENT_STATUSES } from '../payments/transitions.ts';
import { PORTAL_START_PREFIX } from '../subscriptions/portal.ts';
import { subscriptionByPortalToken } from '../subscriptions/records.ts';
import { checkInitData, type TelegramUser } from './initData.ts';

/** A launch of the subscription's portal (startapp=s_<token>), from which the customer went on to this payment of it. */
async function launchedFromItsPortal(tx: Db, subscriptionId: string | null, startParam: string | null, now: Date): Promise<boolean> {
  if (subscriptionId === null || startParam === null || !startParam.startsWith(PORTAL_START_PREFIX)) return false;
  return (await subscriptionByPortalToken(tx, startParam.slice(PORTAL_START_PREFIX.length), now))?.id === subscriptionId;
}

const payerRow = z.object({ status: z.enum(PAYMENT_STATUSES), telegram_bot_id: z.string().nullable(), subscription_id: z.string().nullable() });

export async function recordTelegramPayer(
  pool: DatabasePool,
  paymentId: string,
  { initData, publicKeyHex, now }: { initData: string; publicKeyHex: string; now: Date },
): Promise<TelegramUser> {
  return pool.transaction(async (tx) => {
    const row = await tx.maybeOne(sql.type(payerRow)`
      select p.status, s.telegram_bot_id::text as telegram_bot_id, p.subscription_id from payments p join stores s on s.id = p.store_id where p.id = ${paymentId} for update of p
    `);
    if (!row) throw paymentNotFound();
    if (row.telegram_bot_id === null) throw new KassaError('telegram_not_configured');
    const check = checkInitData(initData, { botId: Number(row.telegram_bot_id), publicKeyHex, now });
    if (!check.ok) throw new KassaError(check.problem === 'stale' ? 'telegram_init_data_expired' : 'telegram_init_data_invalid', { param: 'initData' });
    if (check.startParam !== paymentId && !(await launchedFromItsPortal(tx, row.subscription_id, check.startParam, now))) {
      throw new KassaError('telegram_init_data_invalid', { param: 'initData' });
    }
    if (isFinal(row.status)) throw new KassaError('payment_not_open');
    // Every opening is kept; the payment names the last one so far, until it completes, when it names
    // the last one who opened it by the paying transfer's on-chain time (completePayment).
    await tx.query(sql.typeAlias('void')`
      with opening as (
        insert into payment_telegram_openings (payment_id, telegram_user_id, telegram_username, opened_at)
        values (${paymentId}, ${check.user.id}, ${check.user.username}, ${sql.timestamp(now)})
      )
      update payments set telegram_user_id = ${check.user.id}, telegram_username = ${check.user.username}, telegram_user_at = ${sql.timestamp(now)}
      where id = ${paymentId}
    `);
    return check.user;
  });
}
