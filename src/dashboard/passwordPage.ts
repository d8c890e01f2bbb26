// The Password page ({base_url}/dashboard/password): a signed-in person changes their password. It
// asks for the current one unless the session was opened with a passkey in the last few minutes
// (sessions.ts needsCurrentPassword); changing it signs out every other browser and removes every
// passkey but the one this browser signed in with (listed on the page before the change).
import { html, raw } from '../web/html.ts';
import { dashboardPaths } from './paths.ts';
import { dateTime, describedBy, problemFor, shell, type Viewer } from './pages.ts';
import type { PasskeyRow } from './passkeys.ts';
import { PASSWORD_MIN_LENGTH } from './passwords.ts';

export function passwordPage(input: {
  root: string;
  viewer: Viewer;
  /** The current password is asked for (no recent passkey sign-in stands for it). */
  askCurrent: boolean;
  /** The passkeys the change removes (all but the one this session signed in with). */
  passkeysRemoved?: readonly Pick<PasskeyRow, 'name' | 'created_at'>[];
  notice?: string | null;
  problems?: Record<string, string>;
}): string {
  const { root } = input;
  const problems = input.problems ?? {};
  const body = html`<div class="card narrow">
<h1>Change your password</h1>
<p>Choose a new password for <strong>${input.viewer.email}</strong>. Every other browser where you are signed in is signed out; this one stays signed in.</p>
${
  input.passkeysRemoved?.length
    ? html`<div id="passkeys-removed"><p>It also removes these passkeys (someone who knew your password may have added one; add yours again afterwards):</p>
<ul>${input.passkeysRemoved.map((p) => html`<li>${p.name}, added ${dateTime(p.created_at)}</li>`)}</ul></div>`
    : ''
}
${input.notice ? html`<p class="success" role="status">${input.notice}</p>` : ''}
${problems.form ? html`<p class="problem" role="alert">${problems.form}</p>` : ''}
<form method="post" action="${dashboardPaths(root).passwordPage()}">
<input type="hidden" name="username" value="${input.viewer.email}" autocomplete="username">
${
  input.askCurrent
    ? html`<label for="current">Current password</label>
<input id="current" name="current" type="password" autocomplete="current-password" required${describedBy(problems, 'current')}>
${problemFor(problems, 'current')}`
    : html`<p class="muted">You signed in with a passkey a moment ago, so your current password is not needed.</p>`
}
<label for="next">New password</label>
<p class="muted" id="next-hint">At least ${PASSWORD_MIN_LENGTH} characters.</p>
<input id="next" name="next" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" aria-describedby="next-hint${problems.next ? ' next-problem' : ''}"${problems.next ? raw(' aria-invalid="true"') : ''}>
${problemFor(problems, 'next')}
<label for="confirm">Repeat the new password</label>
<input id="confirm" name="confirm" type="password" autocomplete="new-password" required${describedBy(problems, 'confirm')}>
${problemFor(problems, 'confirm')}
<button type="submit">Change password</button>
</form>
</div>`;
  return shell({ root, title: 'Password', body, viewer: input.viewer });
}
