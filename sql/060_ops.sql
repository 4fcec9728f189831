-- The operators' console (issue 13): who may read it without being an admin, what every operator
-- action did, and a history that links a job's attempts together.

-- A workspace member an admin made a billing operator sees the console read-only.
alter table memberships add column billing_operator boolean not null default false;

-- Every console action (who, what, target, when, outcome), refused ones included. No foreign key
-- on the actor: the record outlives the person.
create table ops_audit (
  id bigint generated always as identity primary key,
  workspace_id uuid not null references workspaces on delete cascade,
  actor_id uuid,
  actor_name text not null,
  action text not null check (length(action) between 1 and 80),
  target text check (target is null or length(target) <= 500),
  outcome text not null check (outcome in ('succeeded', 'failed', 'refused')),
  detail text check (detail is null or length(detail) <= 2000),
  at timestamptz not null default now()
);
create index ops_audit_log_idx on ops_audit (workspace_id, at desc, id desc);

-- Each attempt of a job names the one before it (an automatic retry or an operator's): a retry adds
-- a row linked to the failed attempt, it never overwrites it.
alter table job_history add column follows_id bigint;
create index job_history_job_idx on job_history (job_id, id desc) where job_id is not null;
create index job_history_key_idx on job_history (job_key, started_at desc) where job_key is not null;
create index job_history_workspace_idx on job_history (workspace_id, started_at desc) where workspace_id is not null;

create function job_history_follows() returns trigger language plpgsql as $$
begin
  if new.job_id is not null and new.follows_id is null then
    select h.id into new.follows_id from job_history h where h.job_id = new.job_id order by h.id desc limit 1;
  end if;
  return new;
end $$;
create trigger job_history_follows before insert on job_history for each row execute function job_history_follows();

-- The workspace a queued job works for, read from the objects its payload names (null: a job of
-- the whole process, such as a cleanup). What scopes the console's job views to one workspace.
create function ops_job_workspace(payload json) returns uuid language sql stable as $$
  select coalesce(
    (select id from workspaces where id = case when payload->>'workspaceId' ~* '^[0-9a-f-]{36}$' then (payload->>'workspaceId')::uuid end),
    (select workspace_id from billing_runs where id = case when payload->>'runId' ~* '^[0-9a-f-]{36}$' then (payload->>'runId')::uuid end),
    (select workspace_id from timesheets where id = case when payload->>'timesheetId' ~* '^[0-9a-f-]{36}$' then (payload->>'timesheetId')::uuid end),
    (select workspace_id from documents where id = case when payload->>'documentId' ~* '^[0-9a-f-]{36}$' then (payload->>'documentId')::uuid end),
    (select workspace_id from document_deliveries where id = case when payload->>'deliveryId' ~* '^[0-9a-f-]{36}$' then (payload->>'deliveryId')::uuid end),
    (select workspace_id from mailboxes where id = case when payload->>'mailboxId' ~* '^[0-9a-f-]{36}$' then (payload->>'mailboxId')::uuid end))
$$;
