-- Issue 22, people: the `admin` token scope, deactivated memberships, invitations, password resets
-- and the workspace's own settings.

-- A token may carry `admin` (only an Owner or Admin mints one; src/core/auth/tokens.ts): administrative
-- operations accept a browser session or a token with this scope.
alter table api_tokens drop constraint api_tokens_scopes_check;
alter table api_tokens add constraint api_tokens_scopes_check
  check (scopes <@ array['read', 'write', 'triage', 'admin']::text[] and cardinality(scopes) > 0);

-- A deactivated member keeps their membership (their name on history, their time and tickets) but
-- no session or token of theirs works in the workspace; reactivating clears the mark.
alter table memberships add column deactivated_at timestamptz;
alter table memberships add column deactivated_by uuid references identities on delete set null;

-- An invitation to join a workspace: the secret of its one-time link is stored as a SHA-256 hash
-- only, made by the job that sends the email (so no secret ever sits in a job's payload); null until
-- then. Pending while neither accepted, revoked nor expired; a resend issues a new secret (the old
-- link stops working) and a new expiry.
create table invitations (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  email text not null check (length(email) <= 254 and email ~ '^[^@[:space:][:cntrl:],;:<>()"]+@[^@[:space:][:cntrl:],;:<>()"]+$'),
  name text not null check (length(name) between 1 and 200),
  role text not null check (role in ('owner', 'admin', 'member', 'client_elevated', 'client')),
  client_id uuid references clients on delete cascade,
  token_hash bytea unique,
  invited_by uuid references identities on delete set null,
  created_at timestamptz not null default now(),
  sent_at timestamptz not null default now(),
  expires_at timestamptz not null,
  accepted_at timestamptz,
  accepted_by uuid references identities on delete set null,
  revoked_at timestamptz,
  -- the Message-ID of the last email sent for it (the outbox files it under the workspace)
  message_id text,
  check ((role in ('client', 'client_elevated')) = (client_id is not null))
);
create index invitations_workspace_idx on invitations (workspace_id, created_at desc);
-- one pending invitation per address and workspace (a second is a resend)
create unique index invitations_pending_key on invitations (workspace_id, lower(email)) where accepted_at is null and revoked_at is null;

-- A password reset link: its secret stored hashed (made by the job that sends it, as above), valid
-- one hour, used once. The email goes out through a workspace of the person (its sender name and
-- reply-to), named here for the job.
create table password_resets (
  id uuid primary key default gen_random_uuid(),
  identity_id uuid not null references identities on delete cascade,
  workspace_id uuid not null references workspaces on delete cascade,
  token_hash bytea unique,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz,
  message_id text
);
create index password_resets_identity_idx on password_resets (identity_id, created_at desc);

-- What a workspace sets for itself: the defaults of a new member, and how its outgoing emails show
-- their sender (the address stays MAIL_FROM: only the name and the Reply-To are the workspace's).
alter table workspaces add column default_timezone text not null default 'UTC';
alter table workspaces add column default_weekly_target_minutes integer check (default_weekly_target_minutes between 0 and 10080);
alter table workspaces add column mail_from_name text check (mail_from_name is null or length(mail_from_name) between 1 and 100);
alter table workspaces add column mail_reply_to text check (mail_reply_to is null or (length(mail_reply_to) <= 254
  and mail_reply_to ~ '^[^@[:space:][:cntrl:],;:<>()"]+@[^@[:space:][:cntrl:],;:<>()"]+$'));
