-- What the console's job pages read without going through every attempt (issue 25).

-- The console's per-task job statistics without reading every attempt of the last 7 days: finished
-- and failed attempts and a histogram of their durations per workspace, task and clock hour (by
-- started_at), kept by statement-level triggers on job_history in the same transaction as the rows
-- (a rolled-back attempt leaves no count). The page reads at most 7 x 24 rows per task from here
-- and only the partial hours at a window's ends from job_history (src/core/ops/stats.ts).

-- A duration's bucket: 0 for 0 ms, else 1 + floor(log base 1.3 of the milliseconds), the last (63)
-- holding everything from about 3 hours on. Percentiles read from it are the bucket's geometric
-- middle: within 14 % of the true value.
create function job_duration_bucket(ms integer) returns integer language sql immutable parallel safe as $$
  select case when ms is null or ms <= 0 then 0 else least(63, 1 + floor(ln(ms) / ln(1.3))::int) end
$$;

create table job_stats_hourly (
  -- the process's attempts (no workspace) under the zero uuid: no null in the key
  workspace_id uuid not null,
  task text not null,
  hour timestamptz not null,
  finished integer not null,
  failed integer not null,
  -- 64 counts, by job_duration_bucket
  buckets integer[] not null,
  primary key (workspace_id, hour, task)
);

-- Adds (sign 1) or takes away (sign -1) finished attempts. Keys in a fixed order, so two
-- transactions never lock two counter rows in opposite orders.
create function job_stats_apply(ws uuid[], tasks text[], started timestamptz[], ms integer[], failed boolean[], sign integer) returns void
language sql as $$
  with r as (
    select coalesce(u.ws, '00000000-0000-0000-0000-000000000000'::uuid) as ws, u.task, date_trunc('hour', u.started, 'UTC') as hour,
           job_duration_bucket(u.ms) as b, count(*)::int as n, count(*) filter (where u.failed)::int as x
    from unnest(ws, tasks, started, ms, failed) as u(ws, task, started, ms, failed)
    group by 1, 2, 3, 4),
  k as (
    select ws, task, hour, sum(n)::int as finished, sum(x)::int as failed, array_agg(b) as bs, array_agg(n) as ns
    from r group by 1, 2, 3)
  insert into job_stats_hourly as s (workspace_id, task, hour, finished, failed, buckets)
  select k.ws, k.task, k.hour, sign * k.finished, sign * k.failed,
         array(select sign * coalesce(k.ns[array_position(k.bs, g)], 0) from generate_series(0, 63) g)
  from k order by k.ws, k.hour, k.task
  on conflict (workspace_id, hour, task) do update
    set finished = s.finished + excluded.finished, failed = s.failed + excluded.failed,
        buckets = array(select coalesce(a, 0) + coalesce(b, 0) from unnest(s.buckets, excluded.buckets) with ordinality as u(a, b, i) order by i)
$$;

create function job_stats_count() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    perform job_stats_apply(array_agg(workspace_id), array_agg(task), array_agg(started_at), array_agg(duration_ms), array_agg(outcome = 'failed'), 1)
    from new_rows where finished_at is not null having count(*) > 0;
  elsif tg_op = 'UPDATE' then
    -- an attempt counts once it has finished (a running row completed by a later flush)
    perform job_stats_apply(array_agg(o.workspace_id), array_agg(o.task), array_agg(o.started_at), array_agg(o.duration_ms), array_agg(o.outcome = 'failed'), -1)
    from old_rows o where o.finished_at is not null having count(*) > 0;
    perform job_stats_apply(array_agg(n.workspace_id), array_agg(n.task), array_agg(n.started_at), array_agg(n.duration_ms), array_agg(n.outcome = 'failed'), 1)
    from new_rows n where n.finished_at is not null having count(*) > 0;
  else
    -- rows older than the hours kept (history:cleanup deletes both) change nothing
    perform job_stats_apply(array_agg(workspace_id), array_agg(task), array_agg(started_at), array_agg(duration_ms), array_agg(outcome = 'failed'), -1)
    from old_rows where finished_at is not null and started_at > now() - interval '8 days' having count(*) > 0;
  end if;
  return null;
end $$;

create trigger job_stats_insert after insert on job_history referencing new table as new_rows
  for each statement execute function job_stats_count();
create trigger job_stats_update after update on job_history referencing old table as old_rows new table as new_rows
  for each statement execute function job_stats_count();
create trigger job_stats_delete after delete on job_history referencing old table as old_rows
  for each statement execute function job_stats_count();

-- The attempts already recorded.
select job_stats_apply(array_agg(workspace_id), array_agg(task), array_agg(started_at), array_agg(duration_ms), array_agg(outcome = 'failed'), 1)
from job_history where finished_at is not null and started_at > now() - interval '8 days' having count(*) > 0;

-- The console's job search matches text inside past attempts' payloads (`payload::text ilike
-- '%q%'`, src/core/ops/job-search.ts): a trigram index answers it without reading every attempt.
create extension if not exists pg_trgm;
create index job_history_payload_trgm on job_history using gin ((payload::text) gin_trgm_ops);
-- and inside queued jobs' payloads (queued_jobs, sql/076), for the jobs still in the queue
create index queued_jobs_payload_trgm on queued_jobs using gin ((payload::text) gin_trgm_ops);

-- A search by an object's id finds the attempts that served it through an index each (run, delivery
-- and mailbox had one; timesheet and document did not, so any id search read every attempt).
create index job_history_timesheet_idx on job_history (timesheet_id) where timesheet_id is not null;
create index job_history_document_idx on job_history (document_id) where document_id is not null;
