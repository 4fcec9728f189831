-- Billing runs, their entry sets, timesheets (a numbered document in every format) and their
-- deliveries, banks by foreign key, and the history of every job (issue 11).

-- A run moves allocating -> rendering -> delivering -> completed; failed when a job gives up;
-- voided by an operator (its documents stay, its entries are released).
alter table billing_runs drop constraint billing_runs_status_check;
update billing_runs set status = case status when 'pending' then 'allocating' when 'running' then 'rendering' else status end;
alter table billing_runs
  alter column status set default 'allocating',
  add constraint billing_runs_status_check check (status in ('allocating', 'rendering', 'delivering', 'completed', 'failed', 'voided')),
  add column created_by uuid references identities on delete set null,
  add column allocated_at timestamptz,
  add column completed_at timestamptz,
  add column voided_at timestamptz,
  add column voided_by uuid references identities on delete set null,
  add column void_reason text check (void_reason is null or length(void_reason) between 3 and 500),
  add column error text,
  add check ((status = 'voided') = (voided_at is not null));
create index billing_runs_period_idx on billing_runs (period_id);
create index billing_runs_keyset_idx on billing_runs (workspace_id, created_at desc, id desc);
drop index billing_runs_workspace_idx;

-- A bank policy keeps the contract's text `bank:<uuid>`, resolved to a foreign-keyed bank where
-- it is stored: an unknown bank, or one of another workspace, is refused by the database too.
alter table clients add column billing_bank_id uuid references banks on delete restrict;
alter table projects add column billing_bank_id uuid references banks on delete restrict;
alter table tickets add column billing_bank_id uuid references banks on delete restrict;

create function resolve_billing_bank() returns trigger language plpgsql as $$
begin
  new.billing_bank_id := case when new.billing_policy like 'bank:%' then substr(new.billing_policy, 6)::uuid end;
  if new.billing_bank_id is not null
     and not exists (select 1 from banks b where b.id = new.billing_bank_id and b.workspace_id = new.workspace_id) then
    raise exception 'unknown bank %', new.billing_bank_id using errcode = 'foreign_key_violation', constraint = 'unknown_bank';
  end if;
  return new;
end $$;
create trigger clients_billing_bank before insert or update of billing_policy on clients for each row execute function resolve_billing_bank();
create trigger projects_billing_bank before insert or update of billing_policy on projects for each row execute function resolve_billing_bank();
create trigger tickets_billing_bank before insert or update of billing_policy on tickets for each row execute function resolve_billing_bank();
update clients set billing_policy = billing_policy where billing_policy like 'bank:%';
update projects set billing_policy = billing_policy where billing_policy like 'bank:%';
update tickets set billing_policy = billing_policy where billing_policy like 'bank:%';

-- The exact entry set of a run, with the policy each line was billed under. `active` turns
-- false when the run is voided (the history stays); an entry is in at most one live run: the
-- database guard behind "two runs never bill an entry twice".
create table billing_run_entries (
  run_id uuid not null references billing_runs on delete cascade,
  entry_id uuid not null references time_entries on delete cascade,
  workspace_id uuid not null references workspaces on delete cascade,
  client_id uuid not null references clients on delete restrict,
  project_id uuid not null references projects on delete restrict,
  ticket_id uuid not null,
  minutes integer not null,
  policy text not null check (policy in ('paid', 'free', 'bank')),
  bank_id uuid references banks on delete restrict,
  active boolean not null default true,
  primary key (run_id, entry_id),
  check ((policy = 'bank') = (bank_id is not null))
);
create unique index billing_run_entries_live_key on billing_run_entries (entry_id) where active;
create index billing_run_entries_ticket_idx on billing_run_entries (ticket_id, run_id);
create index billing_run_entries_bank_idx on billing_run_entries (bank_id) where active and bank_id is not null;
create index billing_run_entries_sheet_idx on billing_run_entries (run_id, client_id, project_id);

-- An entry is billed exactly when a run holds it.
alter table time_entries add constraint time_entries_billed_by_run check (billed = (billing_run_id is not null));

-- A timesheet is one numbered document of a run (per client, or per client and project) in one
-- version; its renderings by format are the contract's Documents. Numbers are gap-free per
-- client and year: taken from document_counters in the transaction that writes the timesheet.
create table timesheets (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  run_id uuid not null references billing_runs on delete restrict,
  client_id uuid not null references clients on delete restrict,
  project_id uuid references projects on delete restrict,
  scope text not null check (scope in ('combined', 'project')),
  number text not null check (length(number) between 1 and 60),
  version integer not null default 1 check (version >= 1),
  formats text[] not null check (formats <@ array['html', 'pdf', 'csv']::text[] and cardinality(formats) > 0),
  supersedes_id uuid references timesheets on delete restrict,
  created_at timestamptz not null default now(),
  check ((scope = 'project') = (project_id is not null)),
  unique (workspace_id, number, version)
);
create unique index timesheets_run_key on timesheets (run_id, client_id, coalesce(project_id, '00000000-0000-0000-0000-000000000000'::uuid), version);

create table document_counters (
  client_id uuid not null references clients on delete cascade,
  year integer not null,
  last_number integer not null check (last_number >= 1),
  primary key (client_id, year)
);

-- Documents written before timesheets existed (by hand) get one each, so every document has one.
alter table documents add column timesheet_id uuid references timesheets on delete restrict;
insert into timesheets (workspace_id, run_id, client_id, project_id, scope, number, version, formats)
select distinct on (d.workspace_id, d.number, d.version) d.workspace_id, d.run_id, d.client_id, d.project_id, d.scope, d.number, d.version,
       array(select distinct f.format from documents f where f.workspace_id = d.workspace_id and f.number = d.number and f.version = d.version)
from documents d order by d.workspace_id, d.number, d.version;
update documents d set timesheet_id = s.id from timesheets s
where s.workspace_id = d.workspace_id and s.number = d.number and s.version = d.version;
alter table documents alter column timesheet_id set not null;
create unique index documents_timesheet_format_key on documents (timesheet_id, format);
create unique index documents_number_key on documents (workspace_id, number, format, version);

-- A delivery sends one timesheet (all its formats in one email) to one billing recipient.
-- `message_id` is stored before sending; `sending_at` marks an attempt under way, so a retry after
-- a crash mid-send knows the outcome is unknown and never sends a second email.
alter table document_deliveries add column timesheet_id uuid references timesheets on delete cascade;
update document_deliveries dd set timesheet_id = d.timesheet_id from documents d where d.id = dd.document_id;
alter table document_deliveries
  alter column timesheet_id set not null,
  drop column document_id,
  add column workspace_id uuid references workspaces on delete cascade,
  add column message_id text,
  add column attempts integer not null default 0,
  add column sending_at timestamptz,
  add column updated_at timestamptz not null default now();
update document_deliveries dd set workspace_id = s.workspace_id from timesheets s where s.id = dd.timesheet_id;
alter table document_deliveries alter column workspace_id set not null;
drop index if exists document_deliveries_document_idx;
create unique index document_deliveries_recipient_key on document_deliveries (timesheet_id, recipient_id);
create index document_deliveries_pending_idx on document_deliveries (timesheet_id) where state = 'pending';

-- Operator decisions on deliveries (a resend of a failed or unknown one), kept as history.
create table delivery_resends (
  id uuid primary key default gen_random_uuid(),
  delivery_id uuid not null references document_deliveries on delete cascade,
  previous_state text not null,
  previous_detail text,
  requested_by uuid references identities on delete set null,
  requested_at timestamptz not null default now()
);
create index delivery_resends_delivery_idx on delivery_resends (delivery_id, requested_at);

-- Every job attempt's outcome (graphile-worker deletes finished jobs): one row per attempt,
-- written when it starts and completed when it ends. No foreign keys: history outlives its objects.
create table job_history (
  id bigint generated always as identity primary key,
  job_id bigint,
  task text not null,
  job_key text,
  queue_name text,
  attempt integer not null,
  max_attempts integer,
  worker_id text,
  workspace_id uuid,
  run_id uuid,
  timesheet_id uuid,
  document_id uuid,
  delivery_id uuid,
  payload jsonb,
  outcome text not null default 'running' check (outcome in ('running', 'succeeded', 'failed')),
  error text,
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  duration_ms integer
);
create index job_history_task_idx on job_history (task, started_at desc);
create index job_history_started_idx on job_history (started_at desc);
create index job_history_run_idx on job_history (run_id) where run_id is not null;
create index job_history_delivery_idx on job_history (delivery_id) where delivery_id is not null;
