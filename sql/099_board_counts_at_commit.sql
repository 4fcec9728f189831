-- Board counters settled at commit (issue 25, "Load").
--
-- sql/077 kept board_counts in the statement that changed the tickets, so the counter row of a
-- (workspace, state, project) stayed locked from that statement to the end of its transaction:
-- every creator of a ticket in one project's first state queued behind the one before it for its
-- whole transaction (under 200 clients on two web processes: 681 ms mean wait for that upsert).
--
-- Now a statement's deltas go to board_count_pending (keyed by transaction, so no two
-- transactions share a row: no wait), and a deferred constraint trigger adds them to
-- board_counts at commit, under the per-workspace advisory lock the change feed already takes at
-- commit (sql/040_changes.sql), the lock always first: a counter row is held only while the
-- commit runs, and no lock order can cross another. The totals are as exact as before once
-- committed; inside the writing transaction they lag its own changes until it commits (nothing
-- reads them there). Keys of a workspace or a state deleted by the same transaction are skipped:
-- no row names a state that is gone.
create unlogged table board_count_pending (
  xid xid8 not null default pg_current_xact_id(),
  workspace_id uuid not null,
  state_id uuid not null,
  project_key uuid not null,
  n integer not null,
  primary key (xid, workspace_id, state_id, project_key)
);

create or replace function board_counts_follow() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into board_count_pending as c (workspace_id, state_id, project_key, n)
    select r.workspace_id, r.state_id, coalesce(r.project_id, '00000000-0000-0000-0000-000000000000'::uuid), count(*)::int
    from new_rows r where not r.archived
    group by 1, 2, 3 order by 1, 2, 3
    on conflict (xid, workspace_id, state_id, project_key) do update set n = c.n + excluded.n;
  elsif tg_op = 'DELETE' then
    insert into board_count_pending as c (workspace_id, state_id, project_key, n)
    select r.workspace_id, r.state_id, coalesce(r.project_id, '00000000-0000-0000-0000-000000000000'::uuid), -count(*)::int
    from old_rows r where not r.archived
    group by 1, 2, 3 order by 1, 2, 3
    on conflict (xid, workspace_id, state_id, project_key) do update set n = c.n + excluded.n;
  else
    insert into board_count_pending as c (workspace_id, state_id, project_key, n)
    select d.workspace_id, d.state_id, d.project_key, sum(d.n)::int
    from (
      select r.workspace_id, r.state_id, coalesce(r.project_id, '00000000-0000-0000-0000-000000000000'::uuid) as project_key, 1 as n
      from new_rows r where not r.archived
      union all
      select r.workspace_id, r.state_id, coalesce(r.project_id, '00000000-0000-0000-0000-000000000000'::uuid), -1
      from old_rows r where not r.archived
    ) d
    group by 1, 2, 3 having sum(d.n) <> 0 order by 1, 2, 3
    on conflict (xid, workspace_id, state_id, project_key) do update set n = c.n + excluded.n;
  end if;
  return null;
end $$;

-- Fires once per pending row at commit; the first firing for a workspace settles all of the
-- transaction's rows of that workspace (keys in sorted order) and the later ones find none.
create function board_counts_settle() returns trigger language plpgsql as $$
begin
  perform pg_advisory_xact_lock(7262100, hashtext(new.workspace_id::text));
  insert into board_counts as c (workspace_id, state_id, project_key, n)
  select d.workspace_id, d.state_id, d.project_key, d.n
  from board_count_pending d
  where d.xid = new.xid and d.workspace_id = new.workspace_id and d.n <> 0
    and exists (select 1 from workspaces w where w.id = d.workspace_id)
    and exists (select 1 from workflow_states s where s.id = d.state_id)
  order by d.state_id, d.project_key
  on conflict (workspace_id, state_id, project_key) do update set n = c.n + excluded.n;
  delete from board_count_pending where xid = new.xid and workspace_id = new.workspace_id;
  return null;
end $$;

create constraint trigger board_count_pending_settle after insert on board_count_pending
  deferrable initially deferred for each row execute function board_counts_settle();
