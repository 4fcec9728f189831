-- The project's own record of each job it queues: the workspace the job works for and the
-- payload it was queued with, written by the core's enqueue in the same statement as
-- graphile_worker.add_job. The console's job pages join graphile-worker's public `jobs` view to
-- this table instead of reading the library's private tables (whose payload column the public
-- view does not show). A job queued by graphile-worker itself (the crontab) has no row: it is
-- the process's, seen by every operator. Rows of finished jobs are deleted by the history wrapper
-- and by history:cleanup.
create table queued_jobs (
  job_id bigint primary key,
  workspace_id uuid references workspaces (id) on delete cascade,
  task text not null,
  payload jsonb not null,
  queued_at timestamptz not null default now()
);
create index queued_jobs_workspace on queued_jobs (workspace_id, job_id);

-- Jobs queued before this table existed: their workspace as the payload names it. graphile-worker
-- migrates its own schema after ours, so on a new database there is nothing to copy.
do $$
begin
  if to_regclass('graphile_worker._private_jobs') is not null then
    execute $q$
      insert into queued_jobs (job_id, workspace_id, task, payload)
      select j.id, ops_job_workspace(j.payload), t.identifier, coalesce(j.payload::jsonb, '{}'::jsonb)
      from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier not like '%:cleanup' and t.identifier <> 'mail:schedule'
      on conflict do nothing$q$;
  end if;
end $$;

-- Payloads name their workspace now (sql/060's lookup by the objects a payload names is not needed).
drop function ops_job_workspace(json);
