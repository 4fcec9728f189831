-- Rates and money on the documents (issue 23).

-- Hourly rates per consultant category: the workspace's default (no client, no project), a
-- client's override or a project's override, each in one currency (ISO 4217) from a date on.
-- The rate an entry is billed at is resolved when its run is allocated and stored on the run's
-- line (billing_run_entries), so a later change here never alters an issued document.
create table rates (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  -- a category nothing uses any more may be deleted; its rates go with it
  category_id uuid not null references consultant_categories on delete cascade,
  client_id uuid references clients on delete cascade,
  project_id uuid references projects on delete cascade,
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  -- minor units of the currency per hour; the cap keeps a line's amount (<= 1440 minutes) inside an integer
  hourly_minor integer not null check (hourly_minor between 0 and 50000000),
  effective_from date not null,
  created_at timestamptz not null default now(),
  check (client_id is null or project_id is null)
);
-- one rate per scope, category, currency and day: the one in effect on a date is the latest before it
create unique index rates_key on rates (
  workspace_id, category_id, coalesce(client_id, '00000000-0000-0000-0000-000000000000'::uuid),
  coalesce(project_id, '00000000-0000-0000-0000-000000000000'::uuid), currency, effective_from);
create index rates_lookup_idx on rates (workspace_id, category_id, currency, effective_from desc);
create index rates_client_idx on rates (client_id) where client_id is not null;
create index rates_project_idx on rates (project_id) where project_id is not null;

-- The client's currency: its documents' amounts are in it, and only rates in it apply to its time.
alter table clients add column currency text not null default 'EUR' check (currency ~ '^[A-Z]{3}$');

-- A line's money, fixed at allocation: the currency and hourly rate it was billed at (null rate:
-- no rate applied, billed at zero by the operator's choice), what the minutes cost at that rate
-- (`list_amount_minor`, rounded once) and what is charged (`amount_minor`: the list amount of a
-- paid line, zero for free and bank lines). All null on a line of an hours-only run (a workspace
-- without rates, and every run before this migration).
alter table billing_run_entries
  add column currency text check (currency is null or currency ~ '^[A-Z]{3}$'),
  add column rate_minor integer,
  add column list_amount_minor integer,
  add column amount_minor integer,
  add check ((currency is null) = (amount_minor is null) and (currency is null) = (list_amount_minor is null)),
  add check (rate_minor is null or currency is not null);

-- The operator confirmed billing entries without a rate at zero (POST /billing/runs billUnratedAtZero).
alter table billing_runs add column bill_unrated_at_zero boolean not null default false;
