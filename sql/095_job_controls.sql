-- The console's job controls (issue 26): tasks an operator paused, and the error groups of the
-- failed-jobs list.

-- A task paused for one workspace: no worker takes that workspace's jobs of the task until it is
-- resumed. Pausing holds them through graphile-worker's public `reschedule_jobs`: each job not
-- running is moved to run at a far-future moment (src/core/jobs/paused.ts HELD_RUN_AT) and the time
-- it was due is kept in queued_jobs.held_run_at; a job queued while the task is paused is added
-- held; resuming reschedules each to the time it had. No foreign key on the person: the record
-- outlives them, as in ops_audit.
create table paused_tasks (
  workspace_id uuid not null references workspaces (id) on delete cascade,
  task text not null check (length(task) between 1 and 200),
  paused_by uuid,
  paused_by_name text not null,
  paused_at timestamptz not null default now(),
  primary key (workspace_id, task)
);
alter table queued_jobs add column held_run_at timestamptz;

-- The group a job's error belongs to: the whole message on one line, with what differs from one
-- job to the next (ids, long numbers, addresses) replaced, and a zod validation error (whose
-- message is its issues as JSON, so its first line is "[") told by its issues' paths and messages.
create function job_error_group(message text) returns text language plpgsql immutable parallel safe as $$
declare
  m text := coalesce(message, '');
  tail text := substring(m from '(\[\s*\{.*)$');
  issues text;
begin
  if tail is not null then
    begin
      select string_agg(
               coalesce(nullif(array_to_string(array(select jsonb_array_elements_text(i -> 'path')), '.'), '') || ': ', '')
                 || coalesce(i ->> 'message', i ->> 'code', ''),
               '; ' order by n)
        into issues
        from jsonb_array_elements(tail::jsonb) with ordinality as x(i, n);
      m := left(m, length(m) - length(tail)) || coalesce(issues, '');
    exception when others then
      null; -- not JSON after all: the message as it is
    end;
  end if;
  m := regexp_replace(m, '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<id>', 'gi');
  m := regexp_replace(m, '[^\s<>@"'']+@[^\s<>@"'']+', '<address>', 'g');
  m := regexp_replace(m, '\d{4,}', '<n>', 'g');
  m := regexp_replace(m, '\s+', ' ', 'g');
  return left(btrim(m), 300);
end $$;
