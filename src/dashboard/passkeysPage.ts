// The Passkeys page ({base_url}/dashboard/passkeys): a signed-in person's passkeys (name, added, last
// used, synced or not), a form to add one (passkeys.js runs the browser's ceremony and posts its
// answer with the form) and a remove button for each. Passkeys belong to the person, not a store.
import { html } from '../web/html.ts';
import { dashboardPaths } from './paths.ts';
import { dateTime, describedBy, problemFor, shell, type Viewer } from './pages.ts';
import { PASSKEY_NAME_MAX, type PasskeyRow } from './passkeys.ts';

export function passkeysPage(input: {
  root: string;
  viewer: Viewer;
  passkeys: readonly PasskeyRow[];
  notice?: string | null;
  problems?: Record<string, string>;
  name?: string;
  /** The session's sign-in is recent enough to add a passkey (sessions.ts RECENT_SIGN_IN_MS). */
  canAdd: boolean;
  /** Adding one asks for the current password (no passkey sign-in of the last minutes stands for it: sessions.ts needsCurrentPassword). */
  askCurrent: boolean;
  recentMinutes: number;
}): string {
  const { root } = input;
  const paths = dashboardPaths(root);
  const problems = input.problems ?? {};
  const body = html`<h1>Passkeys</h1>
<p>A passkey signs you in instead of your password: your device checks it is you (PIN, fingerprint or face) and Kassa checks the device's signature. Your password keeps working.</p>
<p id="passkeys-guard">Every passkey added to your account is listed here with the day it was added, and written to the audit log. If you see one you did not add, change your password: a password change removes every passkey but the one you signed in with, and signs out every other browser. A password reset removes them all.</p>
${input.notice ? html`<p class="success" role="status">${input.notice}</p>` : ''}
${problems.form ? html`<p class="problem" role="alert">${problems.form}</p>` : ''}
<section class="card" aria-labelledby="add-heading"><h2 id="add-heading">Add a passkey</h2>
${
  input.canAdd
    ? html`<form method="post" action="${paths.passkeys()}" data-passkey="register" data-options="${paths.passkeyOptions()}">
<input type="hidden" name="credential" value="">
<input type="hidden" name="username" value="${input.viewer.email}" autocomplete="username">
${
  input.askCurrent
    ? html`<label for="passkey-current">Your current password</label>
<input id="passkey-current" name="current" type="password" autocomplete="current-password" required${describedBy(problems, 'current')}>
${problemFor(problems, 'current')}`
    : html`<p class="muted">You signed in with a passkey a moment ago, so your password is not needed.</p>`
}
<label for="passkey-name">Name</label>
<input id="passkey-name" name="name" type="text" maxlength="${PASSKEY_NAME_MAX}" value="${input.name ?? ''}" placeholder="This laptop"${describedBy(problems, 'name')}>
${problemFor(problems, 'name')}
<button type="submit" id="add-passkey">Add a passkey</button>
<p class="problem" role="alert" data-passkey-problem hidden></p>
</form>`
    : html`<p id="add-needs-sign-in">Adding a passkey needs a sign-in from the last ${input.recentMinutes} minutes: sign out, sign in again, then add it here.</p>`
}</section>
<section class="card" aria-labelledby="passkeys-heading"><h2 id="passkeys-heading">Your passkeys</h2>
${
  input.passkeys.length
    ? html`<div class="table-wrap" tabindex="0"><table id="passkeys"><thead><tr><th scope="col">Name</th><th scope="col">Added</th><th scope="col">Last used</th><th scope="col">Synced</th><th scope="col">Action</th></tr></thead>
<tbody>${input.passkeys.map(
        (
          p,
        ) => html`<tr><td class="passkey-name">${p.name}</td><td class="num">${dateTime(p.created_at)}</td><td class="num">${p.last_used_at ? dateTime(p.last_used_at) : 'never'}</td><td>${p.backed_up ? 'yes' : 'no'}</td>
<td><form method="post" action="${paths.removePasskey(p.id)}" data-confirm="Remove the passkey ${p.name}? It no longer signs you in."><button class="quiet" type="submit" aria-label="Remove ${p.name}">Remove</button></form></td></tr>`,
      )}</tbody></table></div>`
    : html`<p>None yet.</p>`
}</section>`;
  return shell({ root, title: 'Passkeys', body, viewer: input.viewer, scripts: ['passkeys.js'] });
}
