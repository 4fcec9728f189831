-- /ops/jobs with 10,000 waiting jobs (issue 13's bench): ops_job_workspace ran every lookup of
-- sql/060 for each job (six index probes, most for keys the payload does not have), several
-- times per page. Each lookup now runs only when its key is in the payload, as a uuid; the first
-- that finds a row still wins, so the answer is the same.
create or replace function ops_job_workspace(payload json) returns uuid language sql stable as $$
  select coalesce(
    case when payload->>'workspaceId' ~* '^[0-9a-f-]{36}$' then (select id from workspaces where id = (payload->>'workspaceId')::uuid) end,
    case when payload->>'runId' ~* '^[0-9a-f-]{36}$' then (select workspace_id from billing_runs where id = (payload->>'runId')::uuid) end,
    case when payload->>'timesheetId' ~* '^[0-9a-f-]{36}$' then (select workspace_id from timesheets where id = (payload->>'timesheetId')::uuid) end,
    case when payload->>'documentId' ~* '^[0-9a-f-]{36}$' then (select workspace_id from documents where id = (payload->>'documentId')::uuid) end,
    case when payload->>'deliveryId' ~* '^[0-9a-f-]{36}$' then (select workspace_id from document_deliveries where id = (payload->>'deliveryId')::uuid) end,
    case when payload->>'mailboxId' ~* '^[0-9a-f-]{36}$' then (select workspace_id from mailboxes where id = (payload->>'mailboxId')::uuid) end)
$$;
