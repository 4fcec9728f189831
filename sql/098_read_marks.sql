-- Read marks (issue 25): a number per workspace that changes with every committed change to
-- anything a board or "my work" answer is read from, so a web process may answer an unchanged
-- read from memory after one indexed lookup (src/core/board/remembered.ts).
--
-- Every read looks the mark up in PostgreSQL (nothing is trusted from a notification), and a
-- commit changes it before the commit returns: the next request to any web process after a
-- change sees a new mark and reads afresh.
--
-- How: statement-level triggers on every table such an answer reads note the workspaces a
-- statement touched in read_mark_pending (one row per transaction and workspace, so bulk writes
-- add nothing per row); a deferred constraint trigger on that table numbers the workspace's mark
-- at commit time. The row lock on read_marks is therefore held only from the commit's start to
-- its end, under the per-workspace advisory lock the change feed already takes at commit
-- (sql/040_changes.sql), in the same order: no new wait for ticket writes, no lock-order
-- deadlock with it. Two commits of one workspace update one row, so a snapshot that sees a mark
-- sees every commit numbered before it.
--
-- Identities (a person's name) belong to no workspace: their changes number the zero key, read
-- beside every workspace's.
create sequence read_mark_seq;

create table read_marks (
  workspace_id uuid primary key,
  n bigint not null
);

-- Emptied by the commit that filled it; unlogged: nothing in it outlives its transaction.
create unlogged table read_mark_pending (
  xid xid8 not null default pg_current_xact_id(),
  workspace_id uuid not null,
  primary key (xid, workspace_id)
);

-- The first firing in a transaction numbers every workspace it noted, in key order, the global
-- key last: every transaction takes these locks in one order (workspaces' advisory locks, sorted,
-- then the global row), so two of them never wait for each other in a circle; later firings find
-- nothing left (rows noted during the commit itself fire again and are numbered then).
create function read_mark_number() returns trigger language plpgsql as $$
declare
  k uuid;
begin
  for k in select r.workspace_id from read_mark_pending r where r.xid = new.xid
           order by r.workspace_id = '00000000-0000-0000-0000-000000000000'::uuid, r.workspace_id
  loop
    if k <> '00000000-0000-0000-0000-000000000000'::uuid then
      perform pg_advisory_xact_lock(7262100, hashtext(k::text));
    end if;
    insert into read_marks as m (workspace_id, n) values (k, nextval('read_mark_seq'))
      on conflict (workspace_id) do update set n = excluded.n;
  end loop;
  delete from read_mark_pending where xid = new.xid;
  return null;
end $$;

create constraint trigger read_mark_pending_number after insert on read_mark_pending
  deferrable initially deferred for each row execute function read_mark_number();

-- tg_argv[0]: how a row names its workspace: 'workspace' (its workspace_id), 'ticket' (through
-- ticket_id), 'project' (through project_id) or 'global' (the zero key). A row whose ticket or
-- project is already gone was removed by a cascade whose own statement noted the workspace.
create function read_mark_follow() returns trigger language plpgsql as $$
declare
  col text := case tg_argv[0] when 'ticket' then 'ticket_id' when 'project' then 'project_id' else 'workspace_id' end;
  rows_sql text;
  ws_sql text;
begin
  if tg_argv[0] = 'global' then
    insert into read_mark_pending (workspace_id) values ('00000000-0000-0000-0000-000000000000') on conflict do nothing;
    return null;
  end if;
  if tg_argv[0] = 'workspace' then
    -- static statements for the common case (tickets): planned once per session
    if tg_op = 'INSERT' then
      insert into read_mark_pending (workspace_id) select distinct r.workspace_id from new_rows r order by 1 on conflict do nothing;
    elsif tg_op = 'DELETE' then
      insert into read_mark_pending (workspace_id) select distinct r.workspace_id from old_rows r order by 1 on conflict do nothing;
    else
      insert into read_mark_pending (workspace_id)
      select r.workspace_id from new_rows r union select r.workspace_id from old_rows r order by 1 on conflict do nothing;
    end if;
    return null;
  end if;
  rows_sql := case tg_op when 'INSERT' then format('select %I as k from new_rows', col)
                         when 'DELETE' then format('select %I as k from old_rows', col)
                         else format('select %1$I as k from new_rows union select %1$I from old_rows', col) end;
  ws_sql := case tg_argv[0] when 'ticket' then 'select t.workspace_id from tickets t where t.id = r.k'
                            else 'select p.workspace_id from projects p where p.id = r.k' end;
  execute format('insert into read_mark_pending (workspace_id) select distinct w.id from (%s) r cross join lateral (%s) w(id) order by 1 on conflict do nothing',
                 rows_sql, ws_sql);
  return null;
end $$;

-- Every table a board, a column page or "my work" reads (summaries, visibility, totals, filters'
-- ids, the change mark of cursors, the caller's timezone).
do $$
declare
  t record;
begin
  for t in select * from (values
    ('tickets', 'workspace'), ('board_counts', 'workspace'), ('ticket_changes', 'workspace'), ('comments', 'workspace'),
    ('workflow_states', 'workspace'), ('ticket_kinds', 'workspace'), ('priorities', 'workspace'), ('labels', 'workspace'),
    ('projects', 'workspace'), ('project_memberships', 'workspace'), ('memberships', 'workspace'), ('clients', 'workspace'),
    ('contact_names', 'workspace'),
    ('ticket_labels', 'ticket'), ('ticket_viewers', 'ticket'),
    ('project_collaborators', 'project'),
    ('identities', 'global')) as v(tab, via)
  loop
    if t.via = 'global' then
      execute format('create trigger read_mark_change after insert or update or delete on %I for each statement execute function read_mark_follow(%L)', t.tab, t.via);
    else
      execute format('create trigger read_mark_insert after insert on %I referencing new table as new_rows for each statement execute function read_mark_follow(%L)', t.tab, t.via);
      execute format('create trigger read_mark_update after update on %I referencing old table as old_rows new table as new_rows for each statement execute function read_mark_follow(%L)', t.tab, t.via);
      execute format('create trigger read_mark_delete after delete on %I referencing old table as old_rows for each statement execute function read_mark_follow(%L)', t.tab, t.via);
    end if;
    execute format('create trigger read_mark_truncate after truncate on %I for each statement execute function read_mark_follow(%L)', t.tab, 'global');
  end loop;
end $$;
