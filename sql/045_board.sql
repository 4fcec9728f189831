-- Board and My work (issue 4).

-- Board order is priority position first, and the position lives in `priorities`. A copy on the
-- ticket, kept by triggers, makes each board column one ordered index range: the page is an index
-- scan that stops after `limit` rows instead of a sort over the whole column.
alter table tickets add column priority_position integer;
update tickets t set priority_position = p.position from priorities p where p.id = t.priority_id;
alter table tickets alter column priority_position set not null;

create function tickets_priority_position() returns trigger language plpgsql as $$
begin
  new.priority_position := (select p.position from priorities p where p.id = new.priority_id);
  return new;
end $$;

create trigger tickets_priority_position before insert or update of priority_id on tickets
  for each row execute function tickets_priority_position();

-- Priorities reordered (rare, an admin action): every ticket of the priority follows.
create function priorities_position_to_tickets() returns trigger language plpgsql as $$
begin
  update tickets set priority_position = new.position
   where workspace_id = new.workspace_id and priority_id = new.id and priority_position <> new.position;
  return null;
end $$;

create trigger priorities_position_to_tickets after update of position on priorities
  for each row when (new.position is distinct from old.position) execute function priorities_position_to_tickets();

-- A board column in board order: priority position ascending, then updated_at desc, id desc.
-- The position is indexed negated so the whole key runs in one direction, and a column's keyset
-- cursor is one row comparison, (-priority_position, updated_at, id) < (...), that bounds the
-- index scan itself (no re-reading of earlier pages on deep pages).
create index tickets_board_idx on tickets (workspace_id, state_id, (-priority_position) desc, updated_at desc, id desc)
  where not archived;

-- Column totals: an index-only count for every role's visibility (it reads project, assignee,
-- reporter and id), and a project allow-list or projectId filter becomes ranges of the index
-- instead of a filter over the whole column.
create index tickets_board_count_idx on tickets (workspace_id, state_id, project_id)
  include (assignee_id, reporter_id, id) where not archived;

-- My work, "assigned": per open state, priority then due date then activity.
create index tickets_assigned_work_idx on tickets (assignee_id, state_id, priority_position, due_date, updated_at desc, id desc)
  where not archived and assignee_id is not null;

-- My work, "dueSoon": per open state, earliest due date first, then priority.
create index tickets_due_work_idx on tickets (workspace_id, state_id, due_date, priority_position, updated_at desc, id desc)
  where not archived and due_date is not null;
