-- Board column totals without counting every ticket (issue 25).
--
-- The number of non-archived tickets per (workspace, state, project), kept by the database in the
-- same transaction as the change, so a board reads a handful of rows per column instead of
-- counting the column. The Inbox (project_id null) is the zero uuid, so the key has no null.
-- A board adds up the rows of the projects the caller sees whole (src/core/board/totals.ts) and
-- counts only the tickets it sees outside them (those the caller takes part in).
create table board_counts (
  workspace_id uuid not null references workspaces on delete cascade,
  state_id uuid not null,
  project_key uuid not null,
  n integer not null,
  primary key (workspace_id, state_id, project_key)
);

-- Statement-level triggers with transition tables: one upsert per statement whatever the number
-- of rows, deltas summed per key (an update that moves nothing between keys writes nothing), keys
-- in sorted order so two transactions never lock the same counters in opposite orders. A key
-- whose workspace is gone (deleted with its tickets) is skipped.
create function board_counts_follow() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into board_counts as c (workspace_id, state_id, project_key, n)
    select r.workspace_id, r.state_id, coalesce(r.project_id, '00000000-0000-0000-0000-000000000000'::uuid), count(*)::int
    from new_rows r where not r.archived
    group by 1, 2, 3 order by 1, 2, 3
    on conflict (workspace_id, state_id, project_key) do update set n = c.n + excluded.n;
  elsif tg_op = 'DELETE' then
    insert into board_counts as c (workspace_id, state_id, project_key, n)
    select r.workspace_id, r.state_id, coalesce(r.project_id, '00000000-0000-0000-0000-000000000000'::uuid), -count(*)::int
    from old_rows r where not r.archived and exists (select 1 from workspaces w where w.id = r.workspace_id)
    group by 1, 2, 3 order by 1, 2, 3
    on conflict (workspace_id, state_id, project_key) do update set n = c.n + excluded.n;
  else
    insert into board_counts as c (workspace_id, state_id, project_key, n)
    select d.workspace_id, d.state_id, d.project_key, sum(d.n)::int
    from (
      select r.workspace_id, r.state_id, coalesce(r.project_id, '00000000-0000-0000-0000-000000000000'::uuid) as project_key, 1 as n
      from new_rows r where not r.archived
      union all
      select r.workspace_id, r.state_id, coalesce(r.project_id, '00000000-0000-0000-0000-000000000000'::uuid), -1
      from old_rows r where not r.archived
    ) d
    group by 1, 2, 3 having sum(d.n) <> 0 order by 1, 2, 3
    on conflict (workspace_id, state_id, project_key) do update set n = c.n + excluded.n;
  end if;
  return null;
end $$;

create trigger board_counts_insert after insert on tickets
  referencing new table as new_rows for each statement execute function board_counts_follow();
create trigger board_counts_update after update on tickets
  referencing old table as old_rows new table as new_rows for each statement execute function board_counts_follow();
create trigger board_counts_delete after delete on tickets
  referencing old table as old_rows for each statement execute function board_counts_follow();

insert into board_counts (workspace_id, state_id, project_key, n)
select workspace_id, state_id, coalesce(project_id, '00000000-0000-0000-0000-000000000000'::uuid), count(*)::int
from tickets where not archived
group by 1, 2, 3;
