--! Previous: sha1:37aef057ed26836fa5f1ea1cbf29463960a71cb0
--! Hash: sha1:f58b18259d86b517cd444812eef95336df51e385
--! Message: token scopes and passkeys

-- API token scopes (docs/API.md, Token scopes) and dashboard passkeys (WebAuthn, docs/OPERATIONS.md).

alter table api_tokens add column scope text not null default 'full';
alter table api_tokens add constraint api_tokens_scope_is_known check (scope in ('full', 'read_only', 'create_payments'));
comment on column api_tokens.scope is 'What the token may do: full (everything; every token issued before scopes), read_only (reads only), create_payments (reads and creating payments: no refund, no cancel, no webhook redelivery). The same scope is signed into the token (its scope claim), which the API enforces; a scope never changes: a narrower one is a new token.';

create table dashboard_passkeys (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references dashboard_users (id) on delete cascade,
  credential_id text not null,
  public_key bytea not null,
  sign_count bigint not null default 0,
  transports text[] not null default '{}',
  backed_up boolean not null default false,
  name text not null,
  created_at timestamptz not null,
  last_used_at timestamptz,
  constraint dashboard_passkeys_credential_id_is_base64url check (credential_id ~ '^[A-Za-z0-9_-]+$' and length(credential_id) between 16 and 1366),
  constraint dashboard_passkeys_sign_count_is_not_negative check (sign_count >= 0),
  constraint dashboard_passkeys_name_is_short check (length(name) between 1 and 64)
);
comment on table dashboard_passkeys is 'Passkeys (WebAuthn credentials) a dashboard user signs in with instead of the password. Only the public key is kept; the private key never leaves the person''s authenticator.';
comment on column dashboard_passkeys.credential_id is 'The credential id the authenticator chose, base64url (a sign-in names it).';
comment on column dashboard_passkeys.public_key is 'The credential''s public key, COSE-encoded, that checks each sign-in''s signature.';
comment on column dashboard_passkeys.sign_count is 'The authenticator''s signature counter at the last sign-in; a sign-in whose counter does not grow (when the authenticator counts) is refused as a possible clone. 0 for authenticators that do not count (most synced passkeys).';
comment on column dashboard_passkeys.transports is 'How the browser reaches the authenticator (internal, usb, nfc, ble, hybrid), as it said at registration.';
comment on column dashboard_passkeys.backed_up is 'Whether the passkey is synced to other devices (a multi-device credential).';
comment on column dashboard_passkeys.name is 'The name its owner gave it (shown on the Passkeys page).';
create unique index dashboard_passkeys_by_credential_id on dashboard_passkeys (credential_id);
comment on index dashboard_passkeys_by_credential_id is 'A passkey sign-in finds its credential (and a credential is registered once).';
create index dashboard_passkeys_by_user on dashboard_passkeys (user_id, created_at);
comment on index dashboard_passkeys_by_user is 'A user''s passkeys, oldest first (the Passkeys page).';

create table dashboard_passkey_challenges (
  challenge text primary key,
  purpose text not null,
  user_id uuid references dashboard_users (id) on delete cascade,
  client_address text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  constraint dashboard_passkey_challenges_purpose_is_known check (purpose in ('registration', 'sign_in')),
  constraint dashboard_passkey_challenges_registration_has_user check (purpose <> 'registration' or user_id is not null),
  constraint dashboard_passkey_challenges_expire_after_creation check (expires_at > created_at)
);
comment on table dashboard_passkey_challenges is 'The random challenges of passkey ceremonies not yet answered: each is used once (its row is deleted when an answer is checked) and only before expires_at (5 minutes). A registration''s belongs to the signed-in user adding a passkey; a sign-in''s to nobody yet. Expired rows are deleted as new challenges are made.';
comment on column dashboard_passkey_challenges.challenge is 'The challenge the browser''s authenticator signs, base64url.';
comment on column dashboard_passkey_challenges.client_address is 'The client address that asked for it: one client may hold at most 20 unanswered sign-in challenges (src/dashboard/passkeys.ts).';
create index dashboard_passkey_challenges_by_expiry on dashboard_passkey_challenges (expires_at);
comment on index dashboard_passkey_challenges_by_expiry is 'Expired challenges are found and deleted.';
create index dashboard_passkey_challenges_by_client on dashboard_passkey_challenges (client_address, expires_at);
comment on index dashboard_passkey_challenges_by_client is 'A client''s unanswered challenges are counted before it gets another.';

