// The dashboard's Notifications page (issue 47 item 7): what the signed-in member is told of this
// store and how (email, Telegram), linking their Telegram chat with a one-time code, their recent
// notifications (sent, trying again, failed), and, for owners, the store's notifications bot.
import { html, raw } from '../web/html.ts';
import type { NotificationTopic } from '../webhooks/events.ts';
import { NOTIFICATION_TOPICS } from '../webhooks/events.ts';
import type { NotificationsView, RecentNotification } from './notifications.ts';
import { copyableId, dateTime, describedBy, problemFor, shell, type StoreContext, type Viewer } from './pages.ts';
import { dashboardPaths } from './paths.ts';
import { can } from './policy.ts';

const TOPIC_WORDS: Record<NotificationTopic, string> = {
  sale: 'A sale (a payment paid in full)',
  refund_done: 'A refund reached the customer',
  refund_failed: 'A refund could not be sent',
  late_money: 'Money that came after a payment ended, or that matches no payment',
  transfer_failed: 'Moving sales to your wallet failed',
  subscription_past_due: "A subscriber's credit did not cover their next period (the subscription is waiting for a payment)",
};

/** What a notification was about, in the page's words (the store event's type). */
const EVENT_WORDS: Record<string, string> = {
  'payment.completed': 'Sale',
  'refund.confirmed': 'Refund sent',
  'refund.failed': 'Refund failed',
  'payment.money_received': 'Money after the payment ended',
  'money.unmatched': 'Money that matches no payment',
  'sweep.failed': 'Transfer to your wallet failed',
  'subscription.past_due': 'Subscription waiting for a payment',
};

const STATUS_WORDS: Record<RecentNotification['status'], string> = { pending: 'Trying', sent: 'Sent', failed: 'Not sent' };

export const NOTIFICATION_NOTICES = {
  saved: 'Saved: you are told of what you ticked.',
  linked: 'Telegram is linked: a message from the bot confirms it.',
  not_linked: 'The bot has not received your code yet. Send it, then press the button again.',
  unlinked: 'Telegram is unlinked: no more messages there.',
  bot_set: 'The notifications bot is saved.',
  bot_removed: 'The notifications bot is removed: no more Telegram messages.',
} as const;
export type NotificationNotice = keyof typeof NOTIFICATION_NOTICES;

export function notificationsPage(input: {
  root: string;
  viewer: Viewer;
  store: StoreContext;
  view: NotificationsView;
  canEmail: boolean;
  /** A linking code just made (shown once). */
  code?: string | null;
  notice?: string | null;
  problems?: Record<string, string>;
}): string {
  const { root, store, view } = input;
  const at = dashboardPaths(root).store(store.id);
  const problems = input.problems ?? {};
  const c = view.choices;
  const box = (name: string, value: string, id: string, label: string, checked: boolean, disabled = false) =>
    html`<label class="check" for="${id}"><input type="checkbox" id="${id}" name="${name}" value="${value}"${checked ? raw(' checked') : ''}${disabled ? raw(' disabled') : ''}> ${label}</label>`;
  const choices = html`<form method="post" action="${at.notificationChoices()}" id="notification-choices">
${problems.form ? html`<p class="problem" role="alert">${problems.form}</p>` : ''}
<fieldset><legend>Tell me when</legend>
${NOTIFICATION_TOPICS.map((topic) => box('events', topic, `topic-${topic}`, TOPIC_WORDS[topic], c.events.includes(topic)))}
</fieldset>
<label for="sale-at-least">Only sales of at least (empty: every sale)</label>
<input id="sale-at-least" name="saleAtLeast" inputmode="decimal" autocomplete="off" value="${c.saleAtLeast ?? ''}"${describedBy(problems, 'saleAtLeast')}>
<label for="sale-currency">In the currency</label>
<input id="sale-currency" name="saleCurrency" size="6" autocomplete="off" value="${c.saleCurrency === 'TON' ? 'GRAM' : (c.saleCurrency ?? '')}" placeholder="USD"${describedBy(problems, 'saleCurrency')}>
${problemFor(problems, 'saleAtLeast')}${problemFor(problems, 'saleCurrency')}
<p class="muted">The amount is in the currency a payment is priced in (USD, EUR, GRAM…); a sale priced in another currency is always told.</p>
<fieldset${problems.by ? raw(' aria-describedby="by-problem"') : ''}><legend>How</legend>
${box('by', 'email', 'by-email', `By email, to ${input.viewer.email}`, c.byEmail)}
${box('by', 'telegram', 'by-telegram', c.telegramLinked ? 'By Telegram' : 'By Telegram (link your chat below first)', c.byTelegram, !c.telegramLinked)}
</fieldset>
${problemFor(problems, 'by')}
${input.canEmail ? '' : html`<p class="muted">This Kassa cannot send email yet: the person who runs your Kassa sets up an email server for it first (their guide, OPERATIONS, says how under Email).</p>`}
<button type="submit">Save</button>
</form>`;

  const telegram = !view.hasBot
    ? html`<p id="telegram-state">Telegram messages need the store's own notifications bot. ${can(store.role, 'settings.change') ? 'Add its token below.' : 'An owner of the store adds it.'}</p>`
    : c.telegramLinked
      ? html`<p id="telegram-state">Your Telegram chat is linked.</p>
<form method="post" action="${at.telegramUnlink()}"><button type="submit" class="secondary">Unlink Telegram</button></form>`
      : html`<p id="telegram-state">Your Telegram chat is not linked yet.</p>
${
  input.code
    ? html`<p>Open the store's notifications bot in Telegram and send it this message within 15 minutes:</p>
<p><code id="telegram-code" class="mono">/start ${input.code}</code> <button type="button" class="copy quiet" data-copy-text="/start ${input.code}" aria-label="Copy the message for the bot" hidden>Copy</button></p>`
    : ''
}
<div class="actions"><form method="post" action="${at.telegramCode()}"><button type="submit"${input.code ? raw(' class="secondary"') : ''}>${input.code || c.codeWaiting ? 'Get a new code' : 'Get a code to link Telegram'}</button></form>
${input.code || c.codeWaiting ? html`<form method="post" action="${at.telegramCheck()}"><button type="submit">I have sent it</button></form>` : ''}</div>`;

  const bot = can(store.role, 'settings.change')
    ? html`<section class="card" aria-labelledby="bot-heading"><h2 id="bot-heading">The store's notifications bot</h2>
<p>Make a bot with Telegram's @BotFather and paste its token here. Kassa only sends messages with it (and reads the codes members send it), so use a bot that does nothing else. The token stays secret: it is never shown again.</p>
<p id="bot-state">${view.hasBot ? 'A bot is set.' : 'No bot yet.'}</p>
<form method="post" action="${at.notificationsBot()}">
<label for="bot-token">Bot token</label>
<input id="bot-token" name="botToken" type="password" class="mono" autocomplete="off" spellcheck="false"${describedBy(problems, 'botToken')}>
${problemFor(problems, 'botToken')}
<div class="actions"><button type="submit" name="action" value="set">Save the token</button>${view.hasBot ? html` <button type="submit" name="action" value="remove" class="secondary">Remove the bot</button>` : ''}</div>
</form></section>`
    : '';

  const recent = view.recent.length
    ? html`<div class="table-wrap" tabindex="0"><table id="recent-notifications"><caption class="muted">Your latest ${view.recent.length}, newest first</caption>
<thead><tr><th scope="col">About</th><th scope="col">By</th><th scope="col">State</th><th scope="col">Attempts</th><th scope="col">When</th></tr></thead>
<tbody>${view.recent.map(
        (
          n,
        ) => html`<tr class="notification-${n.status}" data-channel="${n.channel}"><td>${EVENT_WORDS[n.event] ?? 'Store news'}${n.payment_id ? html`<br>${copyableId(n.payment_id, 'payment id', at.payment(n.payment_id))}` : ''}</td>
<td>${n.channel === 'email' ? 'Email' : 'Telegram'}</td><td>${STATUS_WORDS[n.status]}${n.status !== 'sent' && n.last_error ? html`<br><span class="muted">${n.last_error}</span>` : ''}</td><td class="num">${n.attempts}</td><td class="num">${dateTime(n.created_at)}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p id="recent-notifications">Nothing sent to you yet.</p>`;

  const body = html`<h1>Notifications</h1>
${input.notice ? html`<p class="success" role="status">${input.notice}</p>` : ''}
<section class="card" aria-labelledby="choices-heading"><h2 id="choices-heading">What you are told</h2>
<p class="muted">Your own choices for ${store.name}; each member of the store makes theirs. Messages never hold a password, a token or a sign-in link. One that fails is tried again for a few hours.</p>
${choices}</section>
<section class="card" aria-labelledby="telegram-heading"><h2 id="telegram-heading">Telegram</h2>${problemFor(problems, 'telegram')}${telegram}</section>
${bot}
<section class="card" aria-labelledby="recent-heading"><h2 id="recent-heading">Recently sent to you</h2>${recent}</section>`;
  return shell({ root, title: 'Notifications', body, viewer: input.viewer, store, current: 'notifications' });
}
