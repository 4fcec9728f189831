-- Each workspace's read mark numbered once per transaction (issue 25, "Load").
--
-- sql/098 numbers a workspace's mark at commit, and numbers it again for every note made while
-- the commit runs: a ticket create noted its workspace three times (the ticket insert, then at
-- commit the board counters' upsert of sql/099 and the change feed's seq update of sql/040), so
-- it took the workspace's advisory lock, drew from read_mark_seq and upserted read_marks three
-- times, each through a deferred trigger firing of its own. Once is enough: the whole commit
-- becomes visible at once, so any mark this transaction wrote differs from every mark committed
-- before it, and the row stays locked until the commit ends. A workspace numbered by this
-- transaction is remembered in a transaction-local setting (`wt.read_marked`, reverted with its
-- transaction or savepoint) and later notes of it are not made; any other workspace noted during
-- the commit is still numbered then.
--
-- Taking a ticket number (src/core/tickets/numbering.ts: `update projects set next_number`, a
-- statement and transaction of its own before every create) numbered the workspace's mark too,
-- in a commit of its own, though no board or "my work" answer reads next_number. The projects
-- update trigger now names that column (the trigger's second argument): an UPDATE that changed
-- nothing else notes nothing.

-- Whether this transaction already numbered the workspace's mark.
create function read_mark_done(ws uuid) returns boolean language sql stable as $$
  select position(ws::text in coalesce(current_setting('wt.read_marked', true), '')) > 0
$$;

create or replace function read_mark_number() returns trigger language plpgsql as $$
declare
  k uuid;
begin
  for k in select r.workspace_id from read_mark_pending r where r.xid = new.xid
           order by r.workspace_id = '00000000-0000-0000-0000-000000000000'::uuid, r.workspace_id
  loop
    if not read_mark_done(k) then
      if k <> '00000000-0000-0000-0000-000000000000'::uuid then
        perform pg_advisory_xact_lock(7262100, hashtext(k::text));
      end if;
      insert into read_marks as m (workspace_id, n) values (k, nextval('read_mark_seq'))
        on conflict (workspace_id) do update set n = excluded.n;
      perform set_config('wt.read_marked', coalesce(current_setting('wt.read_marked', true), '') || k::text || ',', true);
    end if;
  end loop;
  delete from read_mark_pending where xid = new.xid;
  return null;
end $$;

create or replace function read_mark_follow() returns trigger language plpgsql as $$
declare
  col text := case tg_argv[0] when 'ticket' then 'ticket_id' when 'project' then 'project_id' else 'workspace_id' end;
  rows_sql text;
  ws_sql text;
begin
  if tg_argv[0] = 'global' then
    if not read_mark_done('00000000-0000-0000-0000-000000000000') then
      insert into read_mark_pending (workspace_id) values ('00000000-0000-0000-0000-000000000000') on conflict do nothing;
    end if;
    return null;
  end if;
  if tg_argv[0] = 'workspace' then
    -- static statements for the common case (tickets): planned once per session
    if tg_op = 'INSERT' then
      insert into read_mark_pending (workspace_id)
      select distinct r.workspace_id from new_rows r where not read_mark_done(r.workspace_id) order by 1 on conflict do nothing;
    elsif tg_op = 'DELETE' then
      insert into read_mark_pending (workspace_id)
      select distinct r.workspace_id from old_rows r where not read_mark_done(r.workspace_id) order by 1 on conflict do nothing;
    else
      -- tg_argv[1]: a column no such answer reads; rows that changed only there are no change
      -- (nested: the query is planned only for a table that passes the argument, which has an id)
      if tg_nargs > 1 then
        if not exists (
          select 1 from new_rows n join old_rows o on o.id = n.id where to_jsonb(n) - tg_argv[1] is distinct from to_jsonb(o) - tg_argv[1]
        ) then
          return null;
        end if;
      end if;
      insert into read_mark_pending (workspace_id)
      select u.workspace_id from (select r.workspace_id from new_rows r union select r.workspace_id from old_rows r) u
      where not read_mark_done(u.workspace_id) order by 1 on conflict do nothing;
    end if;
    return null;
  end if;
  rows_sql := case tg_op when 'INSERT' then format('select %I as k from new_rows', col)
                         when 'DELETE' then format('select %I as k from old_rows', col)
                         else format('select %1$I as k from new_rows union select %1$I from old_rows', col) end;
  ws_sql := case tg_argv[0] when 'ticket' then 'select t.workspace_id from tickets t where t.id = r.k'
                            else 'select p.workspace_id from projects p where p.id = r.k' end;
  execute format('insert into read_mark_pending (workspace_id) select distinct w.id from (%s) r cross join lateral (%s) w(id) where not read_mark_done(w.id) order by 1 on conflict do nothing',
                 rows_sql, ws_sql);
  return null;
end $$;

drop trigger read_mark_update on projects;
create trigger read_mark_update after update on projects referencing old table as old_rows new table as new_rows
  for each statement execute function read_mark_follow('workspace', 'next_number');
