--! Previous: sha1:fd0ce7b7b80fb9664b94443e5cf70558177d7ef8
--! Hash: sha1:db09eb5d30e6f3cdbcd259299a1c9a4e039ca47a
--! Message: first run setup

-- First-run setup in the browser (issue 47 item 1): a Kassa with no store and no dashboard account
-- prints a one-time setup code on its start line; the dashboard's "Set up Kassa" page takes it to
-- create the first store and its owner. One row at most: the code of the newest start (a new code
-- on each start while Kassa is not set up), kept only as its SHA-256, spent once.
create table first_run_setup (
  singleton boolean primary key default true,
  code_hash bytea not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  spent_at timestamptz,
  store_id uuid references stores (id) on delete set null,
  owner_user_id uuid references dashboard_users (id) on delete set null,
  constraint first_run_setup_is_one_row check (singleton),
  constraint first_run_setup_code_hash_is_sha256 check (length(code_hash) = 32),
  constraint first_run_setup_expires_after_creation check (expires_at > created_at)
);
comment on table first_run_setup is 'The one-time setup code of a Kassa not yet set up (no store, no dashboard account): at most one row, replaced at each start of an API process until the code is spent; once spent it is never offered again.';
comment on column first_run_setup.singleton is 'Always true: the table holds one row at most.';
comment on column first_run_setup.code_hash is 'SHA-256 of the setup code (its 12 characters, upper case, without the dashes); the code itself is only printed on the start line.';
comment on column first_run_setup.created_at is 'When the start that printed this code made it.';
comment on column first_run_setup.expires_at is 'After this the code is refused; the next start prints a new one.';
comment on column first_run_setup.spent_at is 'When the code was used to set Kassa up (null: not yet). A spent code is refused forever and no new one is made.';
comment on column first_run_setup.store_id is 'The first store, made by the setup.';
comment on column first_run_setup.owner_user_id is 'The first owner, made by the setup.';
