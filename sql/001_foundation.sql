-- Workspaces, people, clients, projects, workflow, tokens and sessions.

create table workspaces (
  id uuid primary key default gen_random_uuid(),
  slug text not null unique check (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  name text not null check (length(name) between 1 and 200),
  inbox_next_number integer not null default 0,
  created_at timestamptz not null default now()
);

-- A login (person) or an agent account. Email is the login name, unique case-insensitively.
create table identities (
  id uuid primary key default gen_random_uuid(),
  kind text not null default 'person' check (kind in ('person', 'agent')),
  email text check (email is null or email ~ '^[^@\s]+@[^@\s]+$'),
  name text not null check (length(name) between 1 and 200),
  password_hash text,
  created_at timestamptz not null default now()
);
create unique index identities_email_key on identities (lower(email));

create table clients (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  name text not null check (length(name) between 1 and 200),
  code text not null check (code ~ '^[A-Z0-9]{2,12}$'),
  locale text not null default 'en-GB',
  timesheet_layout text not null default 'combined' check (timesheet_layout in ('combined', 'project')),
  billing_policy text not null default 'paid',
  billing_mode text not null default 'period' check (billing_mode in ('period', 'on_close')),
  created_at timestamptz not null default now(),
  unique (workspace_id, code)
);
create index clients_workspace_idx on clients (workspace_id);

-- Who receives a client's timesheet documents. A recipient without an address is skipped.
create table client_billing_recipients (
  id uuid primary key default gen_random_uuid(),
  client_id uuid not null references clients on delete cascade,
  identity_id uuid references identities on delete set null,
  email text,
  name text,
  opted_out boolean not null default false,
  created_at timestamptz not null default now()
);
create index client_billing_recipients_client_idx on client_billing_recipients (client_id);

create table consultant_categories (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  name text not null check (length(name) between 1 and 100),
  created_at timestamptz not null default now()
);
create unique index consultant_categories_name_key on consultant_categories (workspace_id, lower(name));

create table memberships (
  workspace_id uuid not null references workspaces on delete cascade,
  identity_id uuid not null references identities on delete cascade,
  role text not null check (role in ('owner', 'admin', 'member', 'agent', 'client_elevated', 'client')),
  client_id uuid references clients on delete restrict,
  timezone text not null default 'UTC',
  weekly_target_minutes integer check (weekly_target_minutes between 0 and 10080),
  category_id uuid references consultant_categories on delete set null,
  created_at timestamptz not null default now(),
  primary key (workspace_id, identity_id),
  -- client users belong to exactly one client; workspace users to none
  check ((role in ('client', 'client_elevated')) = (client_id is not null))
);
create index memberships_identity_idx on memberships (identity_id);
create index memberships_client_idx on memberships (client_id) where client_id is not null;

create table projects (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  key text not null check (key ~ '^[A-Z][A-Z0-9]{1,9}$'),
  name text not null check (length(name) between 1 and 200),
  billing_client_id uuid references clients on delete restrict,
  billing_policy text,
  billing_mode text check (billing_mode in ('period', 'on_close')),
  next_number integer not null default 0,
  created_at timestamptz not null default now(),
  unique (workspace_id, key)
);

-- Every prefix a project ever had, so renamed prefixes keep resolving.
create table project_prefixes (
  workspace_id uuid not null references workspaces on delete cascade,
  prefix text not null,
  project_id uuid not null references projects on delete cascade,
  primary key (workspace_id, prefix)
);

create table project_collaborators (
  project_id uuid not null references projects on delete cascade,
  client_id uuid not null references clients on delete cascade,
  primary key (project_id, client_id)
);
create index project_collaborators_client_idx on project_collaborators (client_id);

create table project_memberships (
  project_id uuid not null references projects on delete cascade,
  identity_id uuid not null references identities on delete cascade,
  workspace_id uuid not null references workspaces on delete cascade,
  access text not null check (access in ('full', 'limited')),
  is_manager boolean not null default false,
  category_id uuid references consultant_categories on delete set null,
  created_at timestamptz not null default now(),
  primary key (project_id, identity_id)
);
create index project_memberships_identity_idx on project_memberships (identity_id, workspace_id);

create table workflow_states (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  key text not null check (key ~ '^[a-z][a-z0-9_]{0,39}$'),
  name text not null,
  category text not null check (category in ('open', 'closed')),
  position integer not null,
  is_default boolean not null default false,
  is_customer_resolve boolean not null default false,
  unique (workspace_id, key)
);
create unique index workflow_states_default_key on workflow_states (workspace_id) where is_default;
create unique index workflow_states_resolve_key on workflow_states (workspace_id) where is_customer_resolve;

create table ticket_kinds (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  key text not null check (key ~ '^[a-z][a-z0-9_]{0,39}$'),
  name text not null,
  position integer not null default 0,
  is_inbound boolean not null default false,
  unique (workspace_id, key)
);
create unique index ticket_kinds_inbound_key on ticket_kinds (workspace_id) where is_inbound;

create table priorities (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  key text not null check (key ~ '^[a-z][a-z0-9_]{0,39}$'),
  name text not null,
  position integer not null,
  is_default boolean not null default false,
  unique (workspace_id, key)
);
create unique index priorities_default_key on priorities (workspace_id) where is_default;

create table labels (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  name text not null check (length(name) between 1 and 60),
  color text,
  created_at timestamptz not null default now()
);
create unique index labels_name_key on labels (workspace_id, lower(name));

-- API tokens: only a SHA-256 of the secret is stored. `acts_as` is the creator for a
-- delegated token and the agent account for an agent token.
create table api_tokens (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  created_by uuid not null references identities on delete cascade,
  acts_as uuid not null references identities on delete cascade,
  kind text not null check (kind in ('delegated', 'agent')),
  name text not null check (length(name) between 1 and 100),
  token_hash bytea not null unique,
  token_hint text not null,
  scopes text[] not null check (scopes <@ array['read', 'write', 'triage']::text[] and cardinality(scopes) > 0),
  project_ids uuid[],
  expires_at timestamptz,
  revoked_at timestamptz,
  last_used_at timestamptz,
  created_at timestamptz not null default now()
);
create index api_tokens_workspace_idx on api_tokens (workspace_id, created_at desc);

create table sessions (
  id uuid primary key default gen_random_uuid(),
  token_hash bytea not null unique,
  identity_id uuid not null references identities on delete cascade,
  csrf_token text not null,
  reauth_at timestamptz,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  last_seen_at timestamptz not null default now()
);
create index sessions_identity_idx on sessions (identity_id);
