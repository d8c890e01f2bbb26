--! Previous: sha1:6283491c7a07097f0ebbc93ce98e795a02cee67a
--! Hash: sha1:b517d27d81781f1d3178994a0caf54908ff0fb76
--! Message: dashboard users sessions audit log

-- The merchant dashboard ({base_url}/dashboard, issue 24): the people who sign in, their role per
-- store, one-time invitations, sessions, and the audit log of every action that changes money or
-- access. Secrets (invitation and session tokens) are never stored: only their SHA-256.

create table dashboard_users (
  id uuid primary key default gen_random_uuid(),
  email text not null,
  password_hash text,
  created_at timestamptz not null default now(),
  password_changed_at timestamptz,
  constraint dashboard_users_email_is_lower_case check (email = lower(email) and length(email) between 3 and 254 and email like '%_@_%'),
  constraint dashboard_users_password_is_scrypt check (password_hash is null or password_hash like 'scrypt$%')
);
comment on table dashboard_users is 'People who sign in to the dashboard, by email (kept in lower case). A user exists from their first invitation; password_hash is null until they accept it.';
comment on column dashboard_users.password_hash is 'scrypt$<log2 N>$<r>$<p>$<salt, base64>$<key, base64> (src/dashboard/passwords.ts; docs/OPERATIONS.md gives the parameters).';
create unique index dashboard_users_one_per_email on dashboard_users (email);
comment on index dashboard_users_one_per_email is 'One user per email: sign-in finds the user by it.';

create table store_members (
  store_id uuid not null references stores (id) on delete cascade,
  user_id uuid not null references dashboard_users (id) on delete cascade,
  role text not null,
  created_at timestamptz not null default now(),
  primary key (store_id, user_id),
  constraint store_members_role_is_known check (role in ('owner', 'viewer'))
);
comment on table store_members is 'Who may see a store in the dashboard, and what they may do: owner (everything) or viewer (read-only). Checked by the server on every page and action.';
create index store_members_by_user on store_members (user_id);
comment on index store_members_by_user is 'The stores a signed-in user may open.';

create table dashboard_invitations (
  id uuid primary key default gen_random_uuid(),
  store_id uuid not null references stores (id) on delete cascade,
  email text not null,
  role text not null,
  token_hash bytea not null,
  invited_by uuid references dashboard_users (id) on delete set null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  accepted_at timestamptz,
  accepted_by uuid references dashboard_users (id) on delete set null,
  constraint dashboard_invitations_role_is_known check (role in ('owner', 'viewer')),
  constraint dashboard_invitations_email_is_lower_case check (email = lower(email)),
  constraint dashboard_invitations_expire_after_creation check (expires_at > created_at),
  constraint dashboard_invitations_token_hash_is_sha256 check (length(token_hash) = 32)
);
comment on table dashboard_invitations is 'One-time sign-in links ({base_url}/dashboard/invite/<token>): valid until expires_at (24 h), used once (accepted_at). invited_by is null when the operator made it (kassa dashboard invite).';
comment on column dashboard_invitations.token_hash is 'SHA-256 of the link''s token; the token itself is shown once and never stored.';
create unique index dashboard_invitations_by_token on dashboard_invitations (token_hash);
comment on index dashboard_invitations_by_token is 'An invitation link finds its invitation.';
create index dashboard_invitations_by_store on dashboard_invitations (store_id, created_at desc);
comment on index dashboard_invitations_by_store is 'A store''s invitations, newest first (the Team page).';

create table dashboard_sessions (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references dashboard_users (id) on delete cascade,
  token_hash bytea not null,
  created_at timestamptz not null,
  last_seen_at timestamptz not null,
  expires_at timestamptz not null,
  revoked_at timestamptz,
  client_address text,
  user_agent text,
  constraint dashboard_sessions_token_hash_is_sha256 check (length(token_hash) = 32),
  constraint dashboard_sessions_expire_after_creation check (expires_at > created_at)
);
comment on table dashboard_sessions is 'Signed-in browsers. The cookie holds a random token; a session is valid while not revoked, before expires_at and used within the idle limit (docs/OPERATIONS.md). Sign-out revokes one, sign-out everywhere all of a user''s.';
comment on column dashboard_sessions.token_hash is 'SHA-256 of the cookie''s token.';
create unique index dashboard_sessions_by_token on dashboard_sessions (token_hash);
comment on index dashboard_sessions_by_token is 'Each request finds its session by the cookie.';
create index dashboard_sessions_open_by_user on dashboard_sessions (user_id) where revoked_at is null;
comment on index dashboard_sessions_open_by_user is 'Sign-out everywhere revokes a user''s open sessions.';

create table dashboard_sign_in_failures (
  id bigint generated always as identity primary key,
  email text not null,
  client_address text not null,
  failed_at timestamptz not null
);
comment on table dashboard_sign_in_failures is 'Failed sign-ins, for the limits per account and per client address (src/dashboard/signIn.ts). Rows older than the window are deleted as new failures are written.';
create index dashboard_sign_in_failures_by_email on dashboard_sign_in_failures (email, failed_at);
comment on index dashboard_sign_in_failures_by_email is 'Recent failures of one account.';
create index dashboard_sign_in_failures_by_client on dashboard_sign_in_failures (client_address, failed_at);
comment on index dashboard_sign_in_failures_by_client is 'Recent failures from one client address.';

create table audit_log (
  id bigint generated always as identity primary key,
  at timestamptz not null,
  store_id uuid references stores (id) on delete cascade,
  actor_user_id uuid references dashboard_users (id) on delete set null,
  actor text not null,
  action text not null,
  subject text,
  detail jsonb not null default '{}',
  client_address text,
  user_agent text,
  constraint audit_log_action_is_named check (action ~ '^[a-z_]+\.[a-z_]+$')
);
comment on table audit_log is 'Every action that changes money or access (refunds, redeliveries, invitations, sign-ins, role changes), who did it, when, from where, and for which store. Append-only: Kassa never updates or deletes a row.';
comment on column audit_log.actor is 'Who: the dashboard user''s email at the time, or "cli" for the operator''s command line.';
comment on column audit_log.action is 'What, as noun.verb: refund.create, refund.refused, webhook.redeliver, webhook.refused, token.issue, token.revoke, member.role_change, member.remove, invitation.create, invitation.accept, session.sign_in, session.sign_out, session.sign_out_everywhere.';
comment on column audit_log.subject is 'What it was done to: a payment id, an email, a refund id.';
comment on column audit_log.client_address is 'From where: the client address the request came from (null for the command line).';
create index audit_log_by_store on audit_log (store_id, id desc);
comment on index audit_log_by_store is 'A store''s audit log, newest first (the Audit log page, reporting.audit_log).';

-- The payments page's filters and search (a store's payments by status, by coin; by order id: payments_by_store_order_id, migration payments-by-order-id; a
-- payment by the hash of one of its transfers). Newest first by store is payments_by_store_newest_first.
create index payments_by_store_status on payments (store_id, status, created_at desc, id desc);
comment on index payments_by_store_status is 'The dashboard''s payments filtered by status, newest first.';
create index payments_by_store_coin on payments (store_id, coin_symbol, created_at desc, id desc);
comment on index payments_by_store_coin is 'The dashboard''s payments filtered by coin, newest first.';
create index transfers_by_hash on transfers (hash);
comment on index transfers_by_hash is 'The dashboard''s search by a transfer''s transaction hash.';

create view reporting.audit_log as
  select a.id, a.store_id, a.at, a.actor, a.action, a.subject, a.detail, a.client_address
  from audit_log a;
comment on view reporting.audit_log is 'Who did what to money or access, when and from where (the dashboard''s Audit log). Filter by store_id; rows without a store are the operator''s.';
