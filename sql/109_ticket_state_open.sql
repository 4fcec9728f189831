-- Whether a ticket's state is open, kept on the ticket (issue 25, "Board": GET /my).
--
-- "My work"'s assigned and dueSoon lists are of open tickets, and openness belongs to the state
-- (workflow_states.category). Each list read one ordered index range per open state, up to a page
-- of rows from each (300 rows for six open states), and sorted them into one page: a third of the
-- statement. With the category copied on the ticket, as the priority's position is (sql/045), each
-- list is one ordered index range that stops after a page.

alter table tickets add column state_open boolean;
update tickets t set state_open = (s.category = 'open') from workflow_states s where s.id = t.state_id;
alter table tickets alter column state_open set not null;

create function tickets_state_open() returns trigger language plpgsql as $$
begin
  new.state_open := (select s.category = 'open' from workflow_states s where s.id = new.state_id);
  return new;
end $$;

create trigger tickets_state_open before insert or update of state_id on tickets
  for each row execute function tickets_state_open();

-- A state's category changed (rare, an admin action): every ticket in it follows.
create function workflow_states_open_to_tickets() returns trigger language plpgsql as $$
begin
  update tickets set state_open = (new.category = 'open')
   where workspace_id = new.workspace_id and state_id = new.id and state_open is distinct from (new.category = 'open');
  return null;
end $$;

create trigger workflow_states_open_to_tickets after update of category on workflow_states
  for each row when (new.category is distinct from old.category) execute function workflow_states_open_to_tickets();

-- My work, "assigned": open tickets, priority then due date then activity.
drop index tickets_assigned_work_idx;
create index tickets_assigned_open_idx on tickets (assignee_id, priority_position, due_date, updated_at desc, id desc)
  where not archived and state_open and assignee_id is not null;

-- My work, "dueSoon": open tickets with a due date, earliest first, then priority.
drop index tickets_due_work_idx;
create index tickets_due_open_idx on tickets (workspace_id, due_date, priority_position, updated_at desc, id desc)
  where not archived and state_open and due_date is not null;
