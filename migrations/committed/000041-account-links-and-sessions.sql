--! Previous: sha1:cf9ac14ec3e3eb1f99270a60f8a01b02b6b3048b
--! Hash: sha1:fc923ee0929ef9448eedc48eb025f461880e9299
--! Message: account links and sessions

-- Old links and passkeys give no one back an account (issue 48 items 2–5, 7).

-- A password change or reset ends every session opened before it, atomically: it raises the
-- person's session generation in its own transaction, and a session counts only while it carries
-- the generation its person has now (checked on every request). A sign-in that checked the old
-- password while the change was being made carries the old generation, whenever it commits.
alter table dashboard_users add column session_generation integer not null default 0;
comment on column dashboard_users.session_generation is 'Raised by every password change and reset: sessions of an older generation are closed (src/dashboard/sessions.ts findSession).';
alter table dashboard_sessions add column session_generation integer not null default 0;
comment on column dashboard_sessions.session_generation is 'The person''s session generation when the sign-in was checked (the password read with it); the session is open only while it equals dashboard_users.session_generation.';

-- An invitation or reset link dies before its expiry when something took its ground away: a newer
-- link for the same person, a password change, its maker leaving the store (or no longer owning
-- it), the person's role changing or their removal, or an owner revoking it on the Team page.
alter table dashboard_invitations
  add column revoked_at timestamptz,
  add column revoked_because text,
  add constraint dashboard_invitations_revocation_says_why check ((revoked_at is null) = (revoked_because is null)),
  add constraint dashboard_invitations_revoked_for_a_known_reason check (
    revoked_because in ('superseded', 'password_changed', 'maker_left', 'member_changed', 'rights_changed', 'revoked_by_owner')
  );
comment on column dashboard_invitations.revoked_at is 'When the link died before its expiry (revoked_because says why); a revoked link is refused like an expired one.';
comment on column dashboard_invitations.revoked_because is 'superseded (a newer link for the same person), password_changed, maker_left (its maker left the store or stopped owning it), member_changed (the person''s role changed or they were removed), rights_changed (found at use: the maker may no longer give it), revoked_by_owner (the Team page).';
create index dashboard_invitations_open_by_email on dashboard_invitations (email) where accepted_at is null and revoked_at is null;
comment on index dashboard_invitations_open_by_email is 'A person''s open links, revoked when a newer one is made or their password changes.';
create index dashboard_invitations_open_by_maker on dashboard_invitations (invited_by, store_id) where accepted_at is null and revoked_at is null;
comment on index dashboard_invitations_open_by_maker is 'The open links a person made in a store, revoked when they leave it or stop owning it.';
