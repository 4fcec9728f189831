-- Jobs queued before payloads named their workspace (sql/076) get it from queued_jobs, which 076
-- backfilled from the objects each payload names: the worker checks every payload against its
-- declaration (src/core/jobs/catalog.ts), where workspaceId is required, so such a job would
-- otherwise fail instead of running after an upgrade. graphile-worker migrates its own schema
-- after ours, so on a new database there is nothing to rewrite.
do $$
begin
  if to_regclass('graphile_worker._private_jobs') is not null then
    execute $q$
      update graphile_worker._private_jobs j
      set payload = jsonb_set(coalesce(j.payload::jsonb, '{}'::jsonb), '{workspaceId}', to_jsonb(q.workspace_id::text))::json
      from queued_jobs q
      where q.job_id = j.id and q.workspace_id is not null and (j.payload::jsonb ->> 'workspaceId') is null$q$;
    execute $q$
      update queued_jobs q
      set payload = jsonb_set(q.payload, '{workspaceId}', to_jsonb(q.workspace_id::text))
      where q.workspace_id is not null and (q.payload ->> 'workspaceId') is null$q$;
  end if;
end $$;
