// The first-run "Set up Kassa" page (the setup code from the start line, the first store, its owner)
// and the "New store" page an owner makes further stores with (dashboard/setup.ts). Both ask for a
// store's essentials with defaults: its name, the coins it accepts, its refund window.
import { shownTicker } from '../money.ts';
import { html, raw, type Html } from '../web/html.ts';
import { dashboardPaths } from './paths.ts';
import { PASSWORD_MIN_LENGTH } from './passwords.ts';
import { describedBy, problemFor, shell, type Viewer } from './pages.ts';

/** A store's essentials as typed (or their defaults). */
export interface StoreEssentials {
  name: string;
  methods: readonly string[];
  refundWindowDays: string;
}

/** What a new store starts with unless the form says otherwise. */
export const DEFAULT_REFUND_WINDOW_DAYS = '7';

/** A payment method ("COIN/CHAIN") as a shop owner reads it. */
const methodLabel = (method: string): string => {
  const [coin = '', chain = ''] = method.split('/');
  return coin === 'TON' ? `Gram (GRAM), the ${chain} network's own coin` : `${shownTicker(coin)} (a token on ${chain})`;
};

function storeFields(input: { catalogue: readonly string[]; typed: StoreEssentials; problems: Record<string, string> }): Html {
  const { typed, problems } = input;
  return html`<label for="name">Store name</label>
<p class="muted" id="name-hint">Customers see it on the payment page. You can change it later in Settings.</p>
<input id="name" name="name" type="text" required maxlength="200" autocomplete="organization" value="${typed.name}" aria-describedby="name-hint${problems.name ? ' name-problem' : ''}"${problems.name ? raw(' aria-invalid="true"') : ''}>
${problemFor(problems, 'name')}
<fieldset${problems.methods ? raw(' aria-describedby="methods-problem"') : ''}><legend>Coins you accept</legend>
${input.catalogue.map((m) => {
  const id = `method-${m.replace('/', '-')}`;
  return html`<label class="check" for="${id}"><input type="checkbox" id="${id}" name="methods" value="${m}"${typed.methods.includes(m) ? raw(' checked') : ''}> ${methodLabel(m)}</label>`;
})}
</fieldset>
${problemFor(problems, 'methods')}
<label for="refund-window-days">Refund window (days, 0 to 90)</label>
<p class="muted" id="refund-window-days-hint">How long a sale can be refunded in full or in part straight from its payment. 7 suits most shops; 0 moves each sale on at once.</p>
<input id="refund-window-days" name="refundWindowDays" type="number" min="0" max="90" step="1" inputmode="numeric" required value="${typed.refundWindowDays}" aria-describedby="refund-window-days-hint${problems.refundWindowDays ? ' refundWindowDays-problem' : ''}"${problems.refundWindowDays ? raw(' aria-invalid="true"') : ''}>
${problemFor(problems, 'refundWindowDays')}`;
}

export function setupPage(input: {
  root: string;
  catalogue: readonly string[];
  typed: StoreEssentials & { code: string; email: string };
  problems?: Record<string, string>;
}): string {
  const problems = input.problems ?? {};
  const paths = dashboardPaths(input.root);
  const body = html`<div class="card narrow setup">
<h1>Set up Kassa</h1>
<p>Make your store and your owner account. This page works once: after it, sign in with the email and password you choose here.</p>
${problems.form ? html`<p class="problem" role="alert">${problems.form}</p>` : ''}
<form method="post" action="${paths.setup()}">
<label for="code">Setup code</label>
<p class="muted" id="code-hint">Kassa printed it when it started, on the line "kassa started" (setupCode=…), in the terminal or log where it runs. It works once, for 24 hours; each restart prints a new one.</p>
<input id="code" name="code" type="text" required autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" maxlength="40" value="${input.typed.code}" aria-describedby="code-hint${problems.code ? ' code-problem' : ''}"${problems.code ? raw(' aria-invalid="true"') : ''}>
${problemFor(problems, 'code')}
<h2>Your store</h2>
${storeFields({ catalogue: input.catalogue, typed: input.typed, problems })}
<h2>Your account</h2>
<p class="muted">You will be the store's owner: you can do everything, and invite others later from the Team page.</p>
<label for="email">Email</label>
<input id="email" name="email" type="email" required autocomplete="username" maxlength="254" value="${input.typed.email}"${describedBy(problems, 'email')}>
${problemFor(problems, 'email')}
<label for="password">Choose a password</label>
<p class="muted" id="password-hint">At least ${PASSWORD_MIN_LENGTH} characters.</p>
<input id="password" name="password" type="password" required autocomplete="new-password" minlength="${PASSWORD_MIN_LENGTH}" aria-describedby="password-hint${problems.password ? ' password-problem' : ''}"${problems.password ? raw(' aria-invalid="true"') : ''}>
${problemFor(problems, 'password')}
<label for="confirm">Repeat the password</label>
<input id="confirm" name="confirm" type="password" required autocomplete="new-password"${describedBy(problems, 'confirm')}>
${problemFor(problems, 'confirm')}
<div><button type="submit">Set up Kassa</button></div>
</form>
</div>`;
  return shell({ root: input.root, title: 'Set up Kassa', body });
}

export function newStorePage(input: {
  root: string;
  viewer: Viewer;
  catalogue: readonly string[];
  typed: StoreEssentials;
  problems?: Record<string, string>;
}): string {
  const problems = input.problems ?? {};
  const paths = dashboardPaths(input.root);
  const body = html`<div class="card narrow">
<h1>New store</h1>
<p>A store of its own: its own payments, settings, API tokens and team. You will be its owner.</p>
${problems.form ? html`<p class="problem" role="alert">${problems.form}</p>` : ''}
<form method="post" action="${paths.newStore()}">
${storeFields({ catalogue: input.catalogue, typed: input.typed, problems })}
<div><button type="submit">Make the store</button></div>
</form>
</div>`;
  return shell({ root: input.root, title: 'New store', body, viewer: input.viewer });
}
