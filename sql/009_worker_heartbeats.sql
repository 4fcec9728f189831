-- Worker liveness (issue 9). graphile-worker 0.17 frees the jobs of a worker that died only
-- after 4 hours. Every worker process records here, every few seconds, the ids graphile-worker
-- locks its jobs with (the worker pool's id in 0.17); any worker process unlocks (graphile_worker.force_unlock_workers) jobs held for a
-- while by ids that no fresh heartbeat names, so another worker retries them within a minute.
create table worker_heartbeats (
  process_id text primary key,
  worker_ids text[] not null default '{}',
  started_at timestamptz not null default now(),
  beat_at timestamptz not null default now()
);
