-- Tickets and everything that hangs off them.

create table tickets (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  project_id uuid references projects on delete restrict,
  number integer not null,
  title text not null check (length(title) between 1 and 200),
  description text not null default '' check (length(description) <= 50000),
  kind_id uuid not null references ticket_kinds,
  state_id uuid not null references workflow_states,
  priority_id uuid not null references priorities,
  assignee_id uuid references identities on delete set null,
  reporter_id uuid references identities on delete set null,
  billing_client_id uuid references clients on delete restrict,
  billing_policy text check (billing_policy is null or length(billing_policy) <= 60),
  billing_mode text check (billing_mode in ('period', 'on_close')),
  billing_description text check (billing_description is null or length(billing_description) <= 500),
  estimate_minutes integer check (estimate_minutes >= 0),
  start_date date,
  due_date date,
  parent_id uuid references tickets on delete set null,
  source text not null default 'ui' check (source in ('ui', 'email', 'api', 'mcp', 'codehost')),
  started_by text not null default 'workspace' check (started_by in ('workspace', 'client', 'email')),
  archived boolean not null default false,
  closed_at timestamptz,
  redacted_at timestamptz,
  comment_count integer not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index tickets_ws_updated_idx on tickets (workspace_id, updated_at desc, id desc);
create index tickets_project_updated_idx on tickets (project_id, updated_at desc, id desc);
create index tickets_assignee_idx on tickets (assignee_id, updated_at desc) where assignee_id is not null;
create index tickets_reporter_idx on tickets (reporter_id, updated_at desc) where reporter_id is not null;
create index tickets_parent_idx on tickets (parent_id) where parent_id is not null;
create index tickets_state_idx on tickets (workspace_id, state_id);
create index tickets_inbox_idx on tickets (workspace_id, updated_at desc, id desc) where project_id is null;

-- Every (project, number) a ticket ever had: old human ids keep resolving after moves.
-- project_id null is the Inbox.
create table ticket_refs (
  workspace_id uuid not null references workspaces on delete cascade,
  project_id uuid references projects on delete cascade,
  number integer not null,
  -- deferred: the number is taken before the ticket row that uses it is written
  ticket_id uuid not null references tickets on delete cascade deferrable initially deferred
);
create unique index ticket_refs_key on ticket_refs (workspace_id, coalesce(project_id, '00000000-0000-0000-0000-000000000000'::uuid), number);
create index ticket_refs_ticket_idx on ticket_refs (ticket_id);

create table ticket_labels (
  ticket_id uuid not null references tickets on delete cascade,
  label_id uuid not null references labels on delete cascade,
  primary key (ticket_id, label_id)
);
create index ticket_labels_label_idx on ticket_labels (label_id);

create table ticket_viewers (
  ticket_id uuid not null references tickets on delete cascade,
  identity_id uuid not null references identities on delete cascade,
  added_by uuid references identities on delete set null,
  created_at timestamptz not null default now(),
  primary key (ticket_id, identity_id)
);
create index ticket_viewers_identity_idx on ticket_viewers (identity_id);

create table ticket_events (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  ticket_id uuid not null references tickets on delete cascade,
  kind text not null,
  actor_id uuid references identities on delete set null,
  subject text,
  payload jsonb not null default '{}',
  created_at timestamptz not null default now()
);
create index ticket_events_ticket_idx on ticket_events (ticket_id, created_at, id);

create table comments (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  ticket_id uuid not null references tickets on delete cascade,
  author_id uuid references identities on delete set null,
  audience text not null check (audience in ('internal', 'client')),
  body text not null check (length(body) <= 50000),
  source text not null default 'ui' check (source in ('ui', 'email', 'api', 'mcp', 'codehost')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index comments_ticket_idx on comments (ticket_id, created_at, id);

create table ticket_links (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  source_id uuid not null references tickets on delete cascade,
  target_id uuid not null references tickets on delete cascade,
  kind text not null check (kind in ('blocks', 'relates', 'duplicates')),
  created_by uuid references identities on delete set null,
  created_at timestamptz not null default now(),
  unique (source_id, target_id, kind),
  check (source_id <> target_id)
);
create index ticket_links_target_idx on ticket_links (target_id, kind);

create table codehost_links (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  ticket_id uuid not null references tickets on delete cascade,
  repo text not null,
  sha text,
  pr integer,
  url text not null,
  created_by uuid references identities on delete set null,
  created_at timestamptz not null default now()
);
create index codehost_links_ticket_idx on codehost_links (ticket_id);
create index codehost_links_ws_idx on codehost_links (workspace_id, created_at desc);

create table attachments (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  ticket_id uuid not null references tickets on delete cascade,
  comment_id uuid references comments on delete cascade,
  filename text not null,
  content_type text not null,
  size integer not null,
  inline boolean not null default false,
  audience text not null check (audience in ('internal', 'client')),
  data bytea not null,
  uploaded_by uuid references identities on delete set null,
  created_at timestamptz not null default now()
);
create index attachments_ticket_idx on attachments (ticket_id);
