// The Store settings page (issue 24): the store's face on the checkout (name, display name, logo,
// accent colour) beside a preview of the checkout, its payment methods, and its treasury. Owners get
// the forms; viewers the same facts read-only. Without JavaScript the preview shows the saved
// values, and "Preview" shows the typed ones (nothing saved); with it (dashboard.js) it follows the
// typing. Its colour comes from a stylesheet of this origin (settings/preview.css?accent=…): the
// dashboard's policy allows no inline style.
import { shownCoinName, shownTicker } from '../money.ts';

/** A method (`COIN/CHAIN`) as the owner reads it: "Gram (GRAM) on TON". */
const methodWords = (method: string): string => {
  const [coin = method, chain = 'TON'] = method.split('/');
  return `${shownCoinName(coin)} on ${chain}`;
};
import { html, raw, type Html } from '../web/html.ts';
import { isHostName } from '../net/addresses.ts';
import type { StoreView } from '../stores/stores.ts';
import { problemFor, shell, type StoreContext, type Viewer } from './pages.ts';
import { STORE_FIELDS, type StoreField, type TreasuryForms } from './settings.ts';
import type { TonNetwork } from '../chain/addresses.ts';
import { addressText } from './words.ts';
import { can } from './policy.ts';
import { dashboardPaths } from './paths.ts';

/** What the appearance form shows: the saved values, or the typed ones (a refusal, a preview). */
export interface AppearanceValues {
  name: string;
  displayName: string;
  logoUrl: string;
  accentColor: string;
}

const appearanceOf = (store: StoreView): AppearanceValues => ({
  name: store.name,
  displayName: store.displayName ?? '',
  logoUrl: store.logoUrl ?? '',
  accentColor: store.accentColor ?? '',
});

/** The colour the checkout uses when the store has none (checkout.css --brand). */
export const DEFAULT_ACCENT = '#0a5cc2';

/**
 * The preview's logo: an https URL whose host is a host name (what the checkout would show), else
 * none — its origin goes into the page's img-src, so nothing else (a `;` say) may reach the header.
 */
export function previewLogo(value: string): URL | null {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && isHostName(url.hostname) ? url : null;
  } catch {
    return null;
  }
}

export interface SettingsPageInput {
  root: string;
  viewer: Viewer;
  store: StoreContext;
  saved: StoreView;
  /** Every method of the catalogue, "COIN/CHAIN". */
  catalogue: readonly string[];
  appearance?: AppearanceValues;
  methods?: readonly string[];
  treasury?: string;
  /** The settlement as chosen (deposit or treasury). */
  settlement?: string;
  /** The treasury typed, checked, shown back to confirm (the first post of its form). */
  treasuryConfirm?: TreasuryForms;
  /** The network, for addresses in their user-friendly form. */
  network?: TonNetwork;
  /** The refund window as typed (days). */
  refundWindowDays?: string;
  /** The Telegram fields as typed. */
  telegram?: { bot: string; app: string; botId: string };
  /** The sites that may embed the payment element, as typed. */
  embedOrigins?: string;
  /** The amount under which unmatched money raises no alert, as typed. */
  unmatchedDust?: string;
  /** The URL the Mini App is registered with at BotFather ({checkout_base_url}/tg). */
  miniAppUrl?: string;
  /** A refusal, beside the field it is about (the field's flag) or the form's top ("methods", "treasury", "appearance"). */
  problem?: { field: StoreField | 'appearance'; message: string } | null;
  notice?: string | null;
  /** The appearance shown is typed, not saved (the Preview button). */
  previewing?: boolean;
}

const HEX = /^#[0-9a-fA-F]{6}$/;

/** The two settlements, as the select names them. */
const SETTLEMENT_LABELS = {
  deposit: 'A deposit wallet per payment, swept to the treasury',
  treasury: 'Straight to the treasury, by reference',
} as const;

/** The trade-off in one plain sentence (issue 43). */
const SETTLEMENT_HINT =
  "Straight to the treasury costs no sweep and Kassa holds no key to the money, but every customer must send the payment's reference as the comment (money without it waits in Unmatched money); a deposit wallet per payment needs nothing from the customer. Payments created from now on take it.";

export function settingsPage(input: SettingsPageInput): string {
  const { root, store, saved } = input;
  const at = dashboardPaths(root).store(store.id);
  const owner = can(store.role, 'settings.change');
  const look = input.appearance ?? appearanceOf(saved);
  const methods = input.methods ?? saved.methods.map((m) => `${m.coin}/${m.chain}`);
  // The saved treasury as the owner's wallet app writes it (never the raw 0: form).
  const shownTreasury = saved.treasury === null ? '' : input.network ? addressText(saved.treasury, input.network) : saved.treasury;
  const treasury = input.treasury ?? shownTreasury;
  const settlement = input.settlement ?? saved.settlement;
  const problems: Record<string, string> = input.problem ? { [input.problem.field]: input.problem.message } : {};
  const logo = previewLogo(look.logoUrl);
  const accent = HEX.test(look.accentColor) ? look.accentColor.toLowerCase() : DEFAULT_ACCENT;
  const windowDays = input.refundWindowDays ?? String(saved.refundWindowDays);
  const field = (
    name: Exclude<StoreField, 'methods' | 'treasury' | 'refund-window-days' | 'telegram-bot' | 'telegram-app' | 'telegram-bot-id'>,
    key: keyof AppearanceValues,
    type: string,
    hint: string,
    extra: Html | '' = '',
  ) =>
    html`<label for="settings-${name}">${STORE_FIELDS[name]}</label>
<p class="muted" id="settings-${name}-hint">${hint}</p>
<input id="settings-${name}" name="${name}" type="${type}" value="${look[key]}" aria-describedby="settings-${name}-hint${problems[name] ? ` ${name}-problem` : ''}"${problems[name] ? raw(' aria-invalid="true"') : ''}${extra}>
${problemFor(problems, name)}`;

  const preview = html`<figure class="preview" id="preview" aria-labelledby="preview-caption">
<figcaption id="preview-caption" class="muted">${input.previewing ? 'Preview with the values typed (not saved)' : 'Preview of the checkout'}</figcaption>
<div class="preview-card">
<img id="preview-logo" class="preview-logo" src="${logo ? logo.toString() : ''}" alt="" width="56" height="56"${logo ? '' : raw(' hidden')}>
<p class="preview-label muted">Payment to</p>
<p class="preview-store" id="preview-name">${look.displayName.trim() || look.name.trim() || saved.name}</p>
<p class="preview-amount">10.50 USD</p>
<p class="preview-button" id="preview-button">Pay with ${shownTicker(methods[0]?.split('/')[0] ?? 'TON')}</p>
</div>
</figure>`;

  const appearance = owner
    ? html`<form method="post" action="${at.settingsSection('appearance')}" id="appearance-form" novalidate>
${problems.appearance ? html`<p class="problem" role="alert">${problems.appearance}</p>` : ''}
${field('name', 'name', 'text', 'What you and Kassa call the store (the dashboard, the CLI). Customers see it when there is no display name.', raw(' required maxlength="200"'))}
${field('display-name', 'displayName', 'text', 'The name customers see on the checkout. Empty: the name.', raw(' maxlength="200"'))}
${field('logo-url', 'logoUrl', 'url', 'An https:// image, shown square at 56 px. Empty: no logo.', raw(' spellcheck="false" autocomplete="off"'))}
${field('accent-color', 'accentColor', 'text', 'The main button and the card edge, as #rrggbb (e.g. #1a73e8). Empty: Kassa blue.', raw(' spellcheck="false" autocomplete="off" maxlength="7"'))}
<div class="actions"><button type="submit" name="intent" value="preview" class="secondary">Preview</button> <button type="submit" name="intent" value="save">Save appearance</button></div>
</form>`
    : html`<dl class="facts">
<dt>${STORE_FIELDS.name}</dt><dd>${saved.name}</dd>
<dt>${STORE_FIELDS['display-name']}</dt><dd>${saved.displayName ?? '—'}</dd>
<dt>${STORE_FIELDS['logo-url']}</dt><dd class="mono">${saved.logoUrl ?? '—'}</dd>
<dt>${STORE_FIELDS['accent-color']}</dt><dd class="mono">${saved.accentColor ?? '—'}</dd>
</dl>`;

  const methodsPart = owner
    ? html`<form method="post" action="${at.settingsSection('methods')}">
<fieldset${problems.methods ? raw(' aria-describedby="methods-problem"') : ''}><legend>Methods the checkout offers</legend>
${input.catalogue.map((m) => {
  const id = `method-${m.replace('/', '-')}`;
  return html`<label class="check" for="${id}"><input type="checkbox" id="${id}" name="methods" value="${m}"${methods.includes(m) ? raw(' checked') : ''}> ${methodWords(m)}</label>`;
})}
</fieldset>
${problemFor(problems, 'methods')}
<button type="submit">Save methods</button>
</form>`
    : html`<ul>${saved.methods.map((m) => html`<li>${methodWords(`${m.coin}/${m.chain}`)}</li>`)}</ul>`;

  const confirming = input.treasuryConfirm;
  const treasuryWhy = html`<p id="treasury-why">${
    saved.treasury === null
      ? "Until you set your own wallet here, every sale stays in Kassa's wallets (one per payment); set it and each sale moves to your wallet."
      : 'Each sale moves to this wallet of yours (after the refund window, when the store has one).'
  }</p>`;
  const treasuryConfirmPart = confirming
    ? html`<div class="confirm" id="treasury-confirm" role="status">
<p>Check that this is your wallet, as your wallet app shows it under Receive:</p>
<p class="mono address" id="treasury-confirm-address">${confirming.shown}</p>
<p class="muted">The same wallet is also written <span class="mono" id="treasury-confirm-bounceable">${confirming.bounceable}</span>. Compare the first and last characters with your wallet app.</p>
<form method="post" action="${at.settingsSection('treasury')}">
<input type="hidden" name="treasury" value="${confirming.shown}">
<input type="hidden" name="settlement" value="${settlement}">
<input type="hidden" name="confirmed" value="yes">
<button type="submit">Yes, this is my wallet: save it</button>
</form>
<p><a href="${at.settings()}#treasury-heading">No, change it</a></p>
</div>`
    : '';
  const treasuryPart = owner
    ? html`${treasuryWhy}${treasuryConfirmPart}<form method="post" action="${at.settingsSection('treasury')}">
<label for="settings-treasury">Your wallet's address</label>
<p class="muted" id="settings-treasury-hint">Paste it from your wallet app (Receive). You see it again to confirm before it is saved. Empty: sales stay in Kassa's wallets.</p>
<input id="settings-treasury" name="treasury" type="text" class="mono" spellcheck="false" autocomplete="off" value="${treasury}" aria-describedby="settings-treasury-hint${problems.treasury ? ' treasury-problem' : ''}"${problems.treasury ? raw(' aria-invalid="true"') : ''}>
${problemFor(problems, 'treasury')}
<label for="settings-settlement">${STORE_FIELDS.settlement}</label>
<p class="muted" id="settings-settlement-hint">${SETTLEMENT_HINT}</p>
<select id="settings-settlement" name="settlement" aria-describedby="settings-settlement-hint${problems.settlement ? ' settlement-problem' : ''}"${problems.settlement ? raw(' aria-invalid="true"') : ''}>
<option value="deposit"${settlement === 'deposit' ? raw(' selected') : ''}>${SETTLEMENT_LABELS.deposit}</option>
<option value="treasury"${settlement === 'treasury' ? raw(' selected') : ''}>${SETTLEMENT_LABELS.treasury}</option>
</select>
${problemFor(problems, 'settlement')}
<button type="submit">Check this wallet</button>
</form>`
    : html`${treasuryWhy}<p class="mono" id="treasury">${saved.treasury === null ? "None: sales stay in Kassa's wallets." : shownTreasury}</p>
<p id="settlement">${SETTLEMENT_LABELS[saved.settlement]}</p>`;

  const windowHint =
    "Days a completed sale stays in its deposit wallet, refundable in full or in part; when they end the sweep takes what is left to the treasury. Longer helps a shop that takes returns, and keeps more money in Kassa's wallets for longer. 0: swept at once. Applies to sales completed from now on.";
  const refundWindowPart = owner
    ? html`<form method="post" action="${at.settingsSection('refund-window')}">
<label for="settings-refund-window-days">Refund window (days, 0 to 90)</label>
<p class="muted" id="settings-refund-window-days-hint">${windowHint}</p>
<input id="settings-refund-window-days" name="refund-window-days" type="number" min="0" max="90" step="1" inputmode="numeric" value="${windowDays}" aria-describedby="settings-refund-window-days-hint${problems['refund-window-days'] ? ' refund-window-days-problem' : ''}"${problems['refund-window-days'] ? raw(' aria-invalid="true"') : ''}>
${problemFor(problems, 'refund-window-days')}
<button type="submit">Save refund window</button>
</form>`
    : html`<p id="refund-window">${saved.refundWindowDays === 0 ? 'None: sales are swept at once.' : `${saved.refundWindowDays} days`}</p>`;

  const tg = input.telegram ?? {
    bot: saved.telegramBot ?? '',
    app: saved.telegramApp ?? '',
    botId: saved.telegramBotID === null ? '' : String(saved.telegramBotID),
  };
  const tgField = (name: 'telegram-bot' | 'telegram-app' | 'telegram-bot-id', value: string, hint: string, extra = '') =>
    html`<label for="settings-${name}">${STORE_FIELDS[name]}</label>
<p class="muted" id="settings-${name}-hint">${hint}</p>
<input id="settings-${name}" name="${name}" type="text" value="${value}" autocomplete="off" spellcheck="false"${raw(extra)} aria-describedby="settings-${name}-hint${problems[name] ? ` ${name}-problem` : ''}"${problems[name] ? raw(' aria-invalid="true"') : ''}>
${problemFor(problems, name)}`;
  const miniAppLink = saved.telegramBot && saved.telegramApp ? `https://t.me/${saved.telegramBot}/${saved.telegramApp}` : null;
  const telegramPart = owner
    ? html`<p class="muted">The checkout runs as your bot's Mini App: register it with BotFather (<code>/newapp</code>) with the URL <code class="mono">${input.miniAppUrl ?? '{checkout_base_url}/tg'}</code>. Payments created from now on carry <code>telegramURL</code>, a link that opens their checkout inside Telegram. Empty fields turn it off.</p>
<form method="post" action="${at.settingsSection('telegram')}">
${tgField('telegram-bot', tg.bot, 'The bot\'s username, without the @ (it ends in "bot").')}
${tgField('telegram-app', tg.app, "The Mini App's short name, as given to BotFather's /newapp (t.me/<bot>/<short name>).")}
${tgField('telegram-bot-id', tg.botId, "The digits before the colon of the bot's token (not the token itself). Kassa checks who opened the checkout with it and Telegram's public key.", ' inputmode="numeric"')}
<button type="submit">Save Telegram</button>
</form>`
    : html`<p id="telegram">${miniAppLink ? html`Mini App: <code class="mono">${miniAppLink}</code>` : 'None: the checkout is not offered as a Telegram Mini App.'}</p>`;

  const textField = (name: 'embed-origins' | 'unmatched-dust', value: string, hint: string, extra = '') =>
    html`<label for="settings-${name}">${STORE_FIELDS[name]}</label>
<p class="muted" id="settings-${name}-hint">${hint}</p>
<input id="settings-${name}" name="${name}" type="text" value="${value}" autocomplete="off" spellcheck="false"${raw(extra)} aria-describedby="settings-${name}-hint${problems[name] ? ` ${name}-problem` : ''}"${problems[name] ? raw(' aria-invalid="true"') : ''}>
${problemFor(problems, name)}`;
  const embedPart = owner
    ? html`<form method="post" action="${at.settingsSection('embed')}">
${textField('embed-origins', input.embedOrigins ?? saved.embedOrigins.join(', '), "The addresses of your own website, https:// and its host only, separated by commas (https://shop.example, https://www.shop.example). Its pages may then show the payment element; other sites may not. Empty: only Kassa's own payment page.")}
<button type="submit">Save sites</button>
</form>`
    : html`<p id="embed-origins">${saved.embedOrigins.length ? saved.embedOrigins.join(', ') : "None: only Kassa's own payment page."}</p>`;
  const dustPart = owner
    ? html`<form method="post" action="${at.settingsSection('dust')}">
${textField('unmatched-dust', input.unmatchedDust ?? saved.unmatchedDust, "Money sent to your wallet without a payment's reference, below this amount of its coin, is listed on Unmatched money without an alert: strangers send tiny amounts to make their address look like yours. 0: an alert for every one.", ' inputmode="decimal"')}
<button type="submit">Save amount</button>
</form>`
    : html`<p id="unmatched-dust">${saved.unmatchedDust}</p>`;

  const body = html`<h1>Store settings</h1>
${input.notice ? html`<p class="success" role="status">${input.notice}</p>` : ''}
${input.problem ? html`<p class="problem" role="alert">Nothing was changed: ${input.problem.message}</p>` : ''}
${owner ? '' : html`<p class="muted">Only the store's owners can change these.</p>`}
<section class="card" aria-labelledby="appearance-heading"><h2 id="appearance-heading">Checkout appearance</h2>
<div class="settings-look">${appearance}${preview}</div></section>
<section class="card" aria-labelledby="methods-heading"><h2 id="methods-heading">${STORE_FIELDS.methods}</h2>${methodsPart}</section>
<section class="card" aria-labelledby="treasury-heading"><h2 id="treasury-heading">${STORE_FIELDS.treasury}</h2>${treasuryPart}</section>
<section class="card" aria-labelledby="refund-window-heading"><h2 id="refund-window-heading">${STORE_FIELDS['refund-window-days']}</h2>${refundWindowPart}</section>
<section class="card" aria-labelledby="telegram-heading"><h2 id="telegram-heading">Telegram Mini App</h2>${telegramPart}</section>
<section class="card" aria-labelledby="embed-heading"><h2 id="embed-heading">Your website</h2>${embedPart}</section>
<section class="card" aria-labelledby="dust-heading"><h2 id="dust-heading">${STORE_FIELDS['unmatched-dust']}</h2>${dustPart}</section>`;
  return shell({
    root,
    title: 'Store settings',
    body,
    viewer: input.viewer,
    store,
    current: 'settings',
    styles: [{ href: at.previewCss(accent), id: 'preview-style' }],
  });
}

/** The preview's colour as a stylesheet (the dashboard's CSP takes no inline style). */
export function previewCss(accent: string, text: string): string {
  return `#preview{--preview-accent:${accent};--preview-accent-text:${text}}\n`;
}
