--! Previous: sha1:5d26c62dddb3ffe1034fbf92f3b39bc871c81e2c
--! Hash: sha1:75ba080c8100fc6f1ca903523c735625c99dcf93
--! Message: dashboard accounts

-- Accounts people can manage (issue 35): a session remembers the passkey that opened it (removing
-- the passkey ends it), an invitation may reset its person's password (an owner's new invitation),
-- and the audit log names the password's changes.
alter table dashboard_sessions add column passkey_id uuid references dashboard_passkeys (id) on delete set null;
comment on column dashboard_sessions.passkey_id is 'The passkey this session was signed in with; null for a password or an invitation. Removing the passkey ends its open sessions (src/dashboard/passkeys.ts).';
create index dashboard_sessions_open_by_passkey on dashboard_sessions (passkey_id) where passkey_id is not null and revoked_at is null;
comment on index dashboard_sessions_open_by_passkey is 'Removing a passkey finds the open sessions it opened.';

alter table dashboard_invitations add column resets_password boolean not null default false;
comment on column dashboard_invitations.resets_password is 'A password reset: the link sets a new password for the account of email even when it has one, and ends that account''s sessions. Made by an owner from the Team page for a member whose every store they own (docs/OPERATIONS.md).';

comment on table dashboard_sign_in_failures is 'Failed sign-ins, for the limits per (account, client address) and per client address, and the per-account ceiling that slows sign-ins without refusing them (src/dashboard/signInLimits.ts). Rows older than the window are deleted as new failures are written.';
comment on column audit_log.action is 'What, as noun.verb: refund.create, refund.refused, webhook.redeliver, webhook.refused, token.issue, token.revoke, webhook_key.rotate, member.role_change, member.remove, invitation.create, invitation.accept, passkey.add, passkey.remove (detail.sessions: the sessions it had opened, ended), password.change (detail.sessions: the other sessions ended), password.reset (an invitation that reset it; detail.sessions), session.sign_in (detail.method: password or passkey), session.sign_out, session.sign_out_everywhere, store.update (name, display name, logo, accent colour, payment methods: detail holds the new values), treasury.change (detail: from, to).';
