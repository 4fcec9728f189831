-- Time: periods and time entries (issue 5). Consultant categories, membership timezone and
-- weekly target already live in 001_foundation.sql.

-- Workspace-wide, contiguous periods: calendar months (the first may start mid-month).
-- Contiguity is kept by the code that creates them (under a per-workspace advisory lock):
-- a new period always starts the day after the last one ends.
create table periods (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  period_start date not null,
  period_end date not null,
  closed_at timestamptz,
  closed_by uuid references identities on delete set null,
  created_at timestamptz not null default now(),
  check (period_end >= period_start),
  unique (workspace_id, period_start),
  unique (workspace_id, period_end)
);

-- A date plus minutes on one ticket, always logged as its author. Attribution (project,
-- billing client, category) is fixed when logged; a ticket move does not re-attribute.
-- `billing_run_id` points at the billing run that allocated the entry; the billing
-- migrations (050-059) add its foreign key. Closure data (closedAt/closedBy) is the period's.
create table time_entries (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  ticket_id uuid not null references tickets on delete cascade,
  user_id uuid not null references identities on delete restrict,
  project_id uuid not null references projects on delete restrict,
  billing_client_id uuid references clients on delete restrict,
  category_id uuid references consultant_categories on delete set null,
  period_id uuid not null references periods on delete restrict,
  spent_on date not null,
  started_at time(0) without time zone,
  timezone text not null,
  minutes integer not null check (minutes <> 0 and minutes between -1440 and 1440),
  note text check (note is null or length(note) <= 10000),
  billable boolean not null default true,
  -- no action (checked at statement end), so a ticket delete can cascade an entry and its corrections together
  corrects_entry_id uuid references time_entries,
  billed boolean not null default false,
  billing_run_id uuid,
  created_by uuid references identities on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- negative minutes only on a correction; a correction never corrects itself
  check (minutes > 0 or corrects_entry_id is not null),
  check (corrects_entry_id is null or corrects_entry_id <> id)
);
-- GET /time: one user's entries over a date range
create index time_entries_user_day_idx on time_entries (workspace_id, user_id, spent_on);
create index time_entries_ticket_idx on time_entries (ticket_id);
create index time_entries_period_idx on time_entries (period_id);
create index time_entries_corrects_idx on time_entries (corrects_entry_id) where corrects_entry_id is not null;
create index time_entries_billing_run_idx on time_entries (billing_run_id) where billing_run_id is not null;
