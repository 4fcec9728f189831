-- The change feed: one row per ticket change, numbered in COMMIT order per workspace, so a
-- poller that remembers the last number it saw never misses a change committed late by a
-- slower transaction.
--
-- How: rows are inserted with seq null; a deferred constraint trigger numbers them at commit
-- time while holding a per-workspace advisory lock until the transaction ends. A transaction
-- that numbers after another therefore commits after it, and any snapshot that sees a number
-- sees every smaller one of the same workspace.
--
-- For `gone` (the ticket left a caller's sight) each row keeps the ticket's visibility
-- columns as they were just before the change.

create sequence ticket_change_seq;

create table ticket_changes (
  id bigserial primary key,
  seq bigint unique,
  workspace_id uuid not null references workspaces on delete cascade,
  ticket_id uuid not null,
  human_id text not null,
  kind text not null,
  at timestamptz not null default now(),
  prior_project_id uuid,
  prior_reporter_id uuid,
  prior_assignee_id uuid,
  prior_viewer_ids uuid[] not null default '{}',
  prior_archived boolean not null default false
);
create index ticket_changes_feed_idx on ticket_changes (workspace_id, seq) where seq is not null;
create index ticket_changes_ticket_idx on ticket_changes (ticket_id, seq);

create function assign_change_seq() returns trigger language plpgsql as $$
begin
  perform pg_advisory_xact_lock(7262100, hashtext(new.workspace_id::text));
  update ticket_changes set seq = nextval('ticket_change_seq') where id = new.id;
  return null;
end $$;

create constraint trigger ticket_changes_number after insert on ticket_changes
  deferrable initially deferred for each row execute function assign_change_seq();

-- Every timeline event is a change. The prior visibility columns come from the ticket row,
-- corrected by the event's payload for the events that change who can see the ticket.
create function ticket_event_to_change() returns trigger language plpgsql as $$
declare
  t record;
begin
  select tk.project_id, tk.reporter_id, tk.assignee_id, tk.archived, coalesce(p.key, 'INBOX') || '-' || tk.number as human_id,
         array(select v.identity_id from ticket_viewers v where v.ticket_id = tk.id) as viewers
    into t
    from tickets tk left join projects p on p.id = tk.project_id
   where tk.id = new.ticket_id;
  insert into ticket_changes (workspace_id, ticket_id, human_id, kind, at, prior_project_id, prior_reporter_id, prior_assignee_id, prior_viewer_ids, prior_archived)
  values (
    new.workspace_id, new.ticket_id, t.human_id, new.kind, new.created_at,
    case when new.kind = 'moved' then nullif(new.payload->>'fromProjectId', '')::uuid else t.project_id end,
    t.reporter_id,
    case when new.kind = 'field_changed' and new.payload->>'field' in ('assigneeId', 'assignee') then nullif(new.payload->>'old', '')::uuid else t.assignee_id end,
    case when new.kind = 'viewer_removed' then t.viewers || nullif(new.payload->>'identityId', '')::uuid else t.viewers end,
    case when new.kind = 'archived' then false when new.kind = 'restored' then true else t.archived end
  );
  return null;
end $$;

create trigger ticket_events_change after insert on ticket_events for each row execute function ticket_event_to_change();

-- A deleted ticket leaves everyone's sight; its viewers are read before the cascade removes them.
create function ticket_delete_to_change() returns trigger language plpgsql as $$
begin
  insert into ticket_changes (workspace_id, ticket_id, human_id, kind, prior_project_id, prior_reporter_id, prior_assignee_id, prior_viewer_ids, prior_archived)
  select old.workspace_id, old.id, coalesce(p.key, 'INBOX') || '-' || old.number, 'deleted', old.project_id, old.reporter_id, old.assignee_id,
         array(select v.identity_id from ticket_viewers v where v.ticket_id = old.id), old.archived
    from (select 1) one left join projects p on p.id = old.project_id;
  return old;
end $$;

create trigger tickets_delete_change before delete on tickets for each row execute function ticket_delete_to_change();
