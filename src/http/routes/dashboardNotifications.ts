// The dashboard's Notifications page (issue 47 item 7): every member chooses what they are told of the
// store and how, and links their Telegram chat (a one-time code sent to the store's bot, then "I have
// sent it" reads the bot's messages); owners set the store's notifications bot token. Each form
// redirects back with a notice, or shows the page again with its problem. The pipeline is the
// dashboard router's (dashboardSteps.ts).
import { canSendMail } from '../../net/mail.ts';
import { BotApiFailure } from '../../net/telegramBot.ts';
import {
  linkTelegramChats,
  newTelegramCode,
  notificationsOf,
  readChoicesForm,
  saveChoices,
  setNotificationsBot,
  unlinkTelegram,
} from '../../dashboard/notifications.ts';
import { NOTIFICATION_NOTICES, type NotificationNotice, notificationsPage } from '../../dashboard/notificationsPage.ts';
import { FormProblem } from '../../errors.ts';
import { dashboardPaths } from '../../dashboard/paths.ts';
import type { AppDeps } from '../context.ts';
import { emptyForm } from './dashboard.schema.ts';
import type { DashboardCtx, DashboardRouter, OfStore } from './dashboardSteps.ts';

type Ctx = DashboardCtx & { state: OfStore };

export function dashboardNotificationRoutes(dash: DashboardRouter, deps: AppDeps): void {
  const { pool, config } = deps;
  const { root, page, redirect } = dash.steps;
  const paths = dashboardPaths(root);
  const userOf = (ctx: Ctx): string => {
    if (ctx.state.actor.userId === null) throw new Error('a dashboard request without a user');
    return ctx.state.actor.userId;
  };
  const show = async (ctx: Ctx, status: number, extra: { notice?: string; code?: string; problems?: Record<string, string> } = {}) => {
    const store = ctx.state.store;
    const view = await notificationsOf(pool, store.id, userOf(ctx), deps.now());
    page(ctx, status, notificationsPage({ root, viewer: ctx.state.viewer, store, view, canEmail: canSendMail(config), ...extra }));
  };
  const back = (ctx: Ctx, notice: NotificationNotice) => redirect(ctx, paths.store(ctx.state.store.id).notifications(`notice=${notice}`));
  const refused = (ctx: Ctx, error: unknown, field = 'form') => {
    if (error instanceof BotApiFailure) return show(ctx, 502, { problems: { telegram: `Telegram did not answer as expected: ${error.message}` } });
    if (!(error instanceof FormProblem)) throw error;
    return show(ctx, 400, { problems: { [error.field ?? field]: error.message } });
  };

  dash.store.get('/notifications', async (ctx) => {
    const notice =
      typeof ctx.query.notice === 'string' && Object.hasOwn(NOTIFICATION_NOTICES, ctx.query.notice)
        ? NOTIFICATION_NOTICES[ctx.query.notice as NotificationNotice]
        : undefined;
    await show(ctx, 200, notice ? { notice } : {});
  });
  dash.store.post('/notifications/choices', { can: 'notifications.own' }, async (ctx) => {
    try {
      await saveChoices(pool, config, ctx.state.store.id, userOf(ctx), readChoicesForm(ctx.request.body), deps.now());
    } catch (error) {
      return refused(ctx, error);
    }
    back(ctx, 'saved');
  });
  dash.store.post('/notifications/telegram/code', { can: 'notifications.own', form: emptyForm }, async (ctx) => {
    const code = await newTelegramCode(pool, ctx.state.store.id, userOf(ctx), deps.now());
    // Shown once, on this answer (not in a redirect's URL): only its hash is kept.
    await show(ctx, 200, { code });
  });
  dash.store.post('/notifications/telegram/check', { can: 'notifications.own', form: emptyForm }, async (ctx) => {
    let linked: string[];
    try {
      linked = await linkTelegramChats(pool, config, ctx.state.store.id, deps.now());
    } catch (error) {
      return refused(ctx, error, 'telegram');
    }
    back(ctx, linked.includes(userOf(ctx)) ? 'linked' : 'not_linked');
  });
  dash.store.post('/notifications/telegram/unlink', { can: 'notifications.own', form: emptyForm }, async (ctx) => {
    await unlinkTelegram(pool, ctx.state.store.id, userOf(ctx), deps.now());
    back(ctx, 'unlinked');
  });
  dash.store.post('/notifications/bot', { can: 'settings.change' }, async (ctx) => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const remove = body.action === 'remove';
    const token = typeof body.botToken === 'string' ? body.botToken.trim() : '';
    try {
      if (!remove && token === '') throw new FormProblem('Paste the bot token BotFather gave you.', 'botToken');
      await setNotificationsBot(pool, ctx.state.actor, ctx.state.store.id, remove ? null : token, deps.now());
    } catch (error) {
      return refused(ctx, error, 'botToken');
    }
    back(ctx, remove ? 'bot_removed' : 'bot_set');
  });
}
