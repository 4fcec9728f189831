-- Billing runs (minimal, the billing area extends them), client timesheet documents, their
-- deliveries, and document grants (issue 6). Rendering and delivery come later; documents are
-- immutable once written.

create table billing_runs (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  period_id uuid not null references periods on delete restrict,
  status text not null default 'pending' check (status in ('pending', 'running', 'completed', 'failed', 'voided')),
  created_at timestamptz not null default now()
);
create index billing_runs_workspace_idx on billing_runs (workspace_id, created_at desc);

-- The foreign key the time migration (030) left to the billing migrations.
alter table time_entries add constraint time_entries_billing_run_fk foreign key (billing_run_id) references billing_runs on delete restrict;

-- One document per run, client, (project for project scope), format and version. A redaction
-- writes a new version and marks the old one redacted; voiding a run marks its documents voided.
-- `content` is null while the file is not available (404 on download).
create table documents (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  run_id uuid not null references billing_runs on delete restrict,
  client_id uuid not null references clients on delete restrict,
  project_id uuid references projects on delete restrict,
  scope text not null check (scope in ('combined', 'project')),
  number text not null check (length(number) between 1 and 60),
  period_start date not null,
  format text not null check (format in ('html', 'pdf', 'csv')),
  version integer not null default 1 check (version >= 1),
  locale text not null,
  checksum text not null,
  bytes integer not null check (bytes >= 0),
  content bytea,
  voided boolean not null default false,
  redacted boolean not null default false,
  supersedes_id uuid references documents on delete restrict,
  created_at timestamptz not null default now(),
  check ((scope = 'project') = (project_id is not null))
);
create unique index documents_version_key on documents (run_id, client_id, coalesce(project_id, '00000000-0000-0000-0000-000000000000'::uuid), format, version);
create index documents_workspace_idx on documents (workspace_id, created_at desc, id desc);
create index documents_client_idx on documents (client_id, created_at desc);
create index documents_project_idx on documents (project_id, created_at desc) where project_id is not null;

-- One delivery per document and billing recipient.
create table document_deliveries (
  id uuid primary key default gen_random_uuid(),
  document_id uuid not null references documents on delete cascade,
  recipient_id uuid references client_billing_recipients on delete set null,
  email text,
  state text not null default 'pending' check (state in ('pending', 'sent', 'failed', 'skipped', 'unknown')),
  detail text,
  attempted_at timestamptz,
  created_at timestamptz not null default now()
);
create index document_deliveries_document_idx on document_deliveries (document_id);

-- A grant lets a workspace user download every document of one client, whatever the projects.
create table document_grants (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  client_id uuid not null references clients on delete cascade,
  identity_id uuid not null references identities on delete cascade,
  granted_by uuid references identities on delete set null,
  created_at timestamptz not null default now(),
  unique (client_id, identity_id)
);
create index document_grants_identity_idx on document_grants (identity_id, workspace_id);
