-- Email intake (issue 12): one connected IMAP mailbox per workspace, and the intake log of every
-- message it read. The password is stored sealed (AES-256-GCM, src/core/mail/secret-box.ts), never
-- in plain text.

create table mailboxes (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null unique references workspaces on delete cascade,
  host text not null check (length(host) between 1 and 255),
  port integer not null check (port between 1 and 65535),
  secure boolean not null,
  username text not null check (length(username) between 1 and 320),
  -- version byte || 12-byte IV || 16-byte GCM tag || ciphertext, bound to the workspace
  password_sealed bytea not null,
  folder text not null default 'INBOX' check (length(folder) between 1 and 255),
  after_import text not null default 'seen' check (after_import in ('seen', 'move')),
  move_to text check (move_to is null or length(move_to) between 1 and 255),
  enabled boolean not null default true,
  -- Bumped when the server, account or folder changes: a poll still running for the old settings
  -- must not write its position over the new ones.
  settings_version integer not null default 1,
  -- The folder's UIDVALIDITY and the last UID handled under it; null until the first poll read
  -- the folder (and again after the settings change), which then scans the unseen messages.
  uid_validity bigint,
  last_uid bigint not null default 0,
  last_poll_at timestamptz,
  last_error text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((after_import = 'move') = (move_to is not null))
);
-- The cron tick enqueues a poll for every enabled mailbox.
create index mailboxes_enabled_idx on mailboxes (id) where enabled;

-- One row per distinct message read. `dedupe_key` (Message-ID plus a hash of the content) is
-- unique per workspace and written in the same transaction as the ticket or comment, so a
-- message is imported once whatever the poll went through (a crash before the message was
-- flagged, a UIDVALIDITY change, a second copy). The source is kept for audit.
create table intake_messages (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  mailbox_id uuid references mailboxes on delete set null,
  dedupe_key text not null,
  message_id text,
  from_address text,
  subject text,
  received_at timestamptz not null,
  status text not null check (status in ('imported', 'reply', 'ignored', 'quarantined')),
  reason text check (reason is null or length(reason) <= 2000),
  ticket_id uuid references tickets on delete set null,
  comment_id uuid references comments on delete set null,
  uid_validity bigint,
  uid bigint,
  size integer,
  source bytea,
  created_at timestamptz not null default now(),
  unique (workspace_id, dedupe_key)
);
create index intake_messages_log_idx on intake_messages (workspace_id, received_at desc, id desc);
create index intake_messages_status_idx on intake_messages (workspace_id, status, received_at desc, id desc);
-- Replies name earlier messages by Message-ID (In-Reply-To, References).
create index intake_messages_message_id_idx on intake_messages (workspace_id, message_id) where message_id is not null;

-- A reply may name a timesheet email we sent; its Message-ID is stored with or without brackets.
create index document_deliveries_message_id_idx on document_deliveries (workspace_id, btrim(message_id, '<> ')) where message_id is not null;
